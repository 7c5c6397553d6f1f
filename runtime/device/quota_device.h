// QuotaDevice: a view of a Device that charges every allocation to a shared
// MemoryQuota (and so to the quota's chain: the tenant's memory quota and the
// daemon's memory budget), so that one owner (a tenant of the daemon) cannot
// take more than its share of a device however many sessions it opens.
//
// Memory still comes from the underlying device, which keeps its own
// capacity and statistics; the quota is checked first, and the device's own
// refusal releases what the quota reserved. Everything else (streams,
// copies, threads) is the device's. A QuotaDevice must outlive the memory it
// hands out; the quota and the device must outlive the QuotaDevice.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "runtime/device/device.h"
#include "runtime/device/memory_quota.h"

namespace ge::device {

class QuotaDevice final : public Device {
 public:
  QuotaDevice(Device& device, std::shared_ptr<MemoryQuota> quota);
  ~QuotaDevice() override;

  std::string_view name() const override { return device_.name(); }
  // ResourceExhausted naming the owner, its limit, what it holds and what
  // was asked when the quota is short; the device's own error otherwise.
  absl::StatusOr<void*> Malloc(size_t bytes) override;
  absl::Status FreeMemory(void* ptr) override;
  absl::Status Memcpy(void* dst, size_t dst_capacity, const void* src, size_t count, MemcpyKind kind) override {
    return device_.Memcpy(dst, dst_capacity, src, count, kind);
  }
  std::unique_ptr<Stream> CreateStream(std::string name) override { return device_.CreateStream(std::move(name)); }
  // This view's own allocations; capacity is the quota's limit.
  MemoryStats memory_stats() const override;
  ThreadPool* thread_pool() override { return device_.thread_pool(); }
  int num_threads() const override { return device_.num_threads(); }

  void* Allocate(size_t bytes, size_t alignment) override;
  void Free(void* ptr, size_t bytes) override;

  const MemoryQuota& quota() const { return *quota_; }

 private:
  Device& device_;
  std::shared_ptr<MemoryQuota> quota_;
  mutable std::mutex mu_;
  absl::flat_hash_map<void*, int64_t> live_;  // pointer -> bytes charged
  MemoryStats stats_;
};

}  // namespace ge::device
