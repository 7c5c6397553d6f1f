// The device HAL, shaped like ACL's runtime (aclrtMalloc, aclrtMemcpy,
// streams, events): the only way the runtime touches device memory and
// schedules device work. CPU devices `cpu:N` carve the host into logical
// devices, each with its own memory capacity, thread count and streams; an
// accelerator backend would be another Device implementation.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/allocator.h"
#include "base/thread_pool.h"
#include "runtime/device/stream.h"

namespace ge::device {

enum class MemcpyKind : uint8_t { kHostToHost, kHostToDevice, kDeviceToHost, kDeviceToDevice };

// How to carve one logical device.
struct DeviceSpec {
  std::string name = "cpu:0";
  int64_t memory_bytes = 0;  // capacity; 0 means no limit beyond the host's memory
  int num_threads = 0;       // intra-op threads; 0 means every core
};

struct MemoryStats {
  int64_t capacity_bytes = 0;  // 0 when unlimited
  int64_t in_use_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t allocations = 0;         // successful, since creation
  int64_t failed_allocations = 0;  // refused for capacity or by the host
};

class Device : public Allocator {
 public:
  ~Device() override = default;

  std::string_view name() const override = 0;
  // Allocates `bytes` (kTensorAlignment aligned). ResourceExhausted naming
  // the device, the request and what is free when capacity is short.
  virtual absl::StatusOr<void*> Malloc(size_t bytes) = 0;
  // Frees memory from Malloc or Allocate; InvalidArgument for a pointer this
  // device did not hand out.
  virtual absl::Status FreeMemory(void* ptr) = 0;
  // Copies `count` bytes; InvalidArgument when count exceeds `dst_capacity`.
  virtual absl::Status Memcpy(void* dst, size_t dst_capacity, const void* src, size_t count,
                              MemcpyKind kind) = 0;
  virtual std::unique_ptr<Stream> CreateStream(std::string name) = 0;
  virtual MemoryStats memory_stats() const = 0;
  // The device's intra-op pool (workers = threads - 1: the caller joins in).
  virtual ThreadPool* thread_pool() = 0;
  virtual int num_threads() const = 0;
};

// A logical CPU device: memory from the host with capacity accounting.
class CpuDevice final : public Device {
 public:
  explicit CpuDevice(DeviceSpec spec);
  ~CpuDevice() override;

  std::string_view name() const override { return spec_.name; }
  absl::StatusOr<void*> Malloc(size_t bytes) override;
  absl::Status FreeMemory(void* ptr) override;
  absl::Status Memcpy(void* dst, size_t dst_capacity, const void* src, size_t count, MemcpyKind kind) override;
  std::unique_ptr<Stream> CreateStream(std::string name) override;
  MemoryStats memory_stats() const override;
  ThreadPool* thread_pool() override { return pool_.get(); }
  int num_threads() const override { return num_threads_; }

  // Allocator: nullptr when refused (the reason is logged and counted).
  void* Allocate(size_t bytes, size_t alignment) override;
  void Free(void* ptr, size_t bytes) override;

 private:
  DeviceSpec spec_;
  int num_threads_;
  std::unique_ptr<ThreadPool> pool_;
  mutable std::mutex mu_;
  absl::flat_hash_map<void*, size_t> live_;  // pointer -> rounded size
  MemoryStats stats_;
};

// The devices of a process, by name.
class DeviceManager {
 public:
  // InvalidArgument for duplicate or malformed names (expected "cpu:N").
  static absl::StatusOr<std::unique_ptr<DeviceManager>> Create(const std::vector<DeviceSpec>& specs);
  // Parses "cpu:0,cpu:1:threads=2:memory=4G" (memory takes K, M, G suffixes,
  // powers of 1024).
  static absl::StatusOr<std::vector<DeviceSpec>> ParseDeviceSpecs(std::string_view text);

  // NotFound naming the known devices.
  absl::StatusOr<Device*> Get(std::string_view name) const;
  std::vector<Device*> devices() const;

 private:
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace ge::device
