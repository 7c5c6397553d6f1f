// SharedMemoryRegistry: POSIX shared-memory regions registered by local
// clients, so run inputs and outputs travel through shared memory instead of
// gRPC messages (Triton's system shared memory; docs/api.md, "Shared memory").
//
// A region is `byte_size` bytes at `offset` of the object shm_open(key)
// names; Register maps it read-write and keeps it under (tenant, name), so a
// region is reachable only by the tenant that registered it, and a name is
// registered once (ALREADY_EXISTS). Unregister drops it; a run that still
// uses its memory keeps the mapping until the run's tensors are gone.
//
// Trust: the daemon maps memory a client owns. Every use checks that the
// object is still as large as registered (a shrunk object is
// OUT_OF_RANGE, not a SIGBUS), but a client shrinking it *during* a
// run can still fault the daemon, so the feature is off unless the
// operator enables it for trusted local clients (`shared_memory: true`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/tensor.h"

namespace ge::server {

struct SharedMemoryRegionInfo {
  std::string name;
  std::string key;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

class SharedMemoryRegistry {
 public:
  // At most `max_regions_per_tenant` regions per tenant (RESOURCE_EXHAUSTED
  // beyond).
  explicit SharedMemoryRegistry(size_t max_regions_per_tenant = 1024);
  ~SharedMemoryRegistry();

  // INVALID_ARGUMENT for an empty name, a key that is not "/NAME" or a
  // zero size; NOT_FOUND when shm_open fails; OUT_OF_RANGE when the range
  // passes the end of the object.
  absl::Status Register(const std::string& tenant, const SharedMemoryRegionInfo& info);
  // An empty name drops every region of `tenant`; else NOT_FOUND when unknown.
  absl::Status Unregister(const std::string& tenant, const std::string& name);
  // `name` empty: all of the tenant's regions, by name.
  absl::StatusOr<std::vector<SharedMemoryRegionInfo>> Status(const std::string& tenant,
                                                             const std::string& name) const;

  // `bytes` at `offset` of region `name`, as a Buffer that keeps the mapping
  // alive. `capacity` is what the caller says is there (the reference's
  // byte_size): INVALID_ARGUMENT when it is less than `bytes`, OUT_OF_RANGE
  // when offset + capacity passes the region's end. `what` names the value
  // in messages.
  absl::StatusOr<std::shared_ptr<Buffer>> Map(const std::string& tenant, const std::string& name, uint64_t offset,
                                              uint64_t capacity, uint64_t bytes, const std::string& what) const;

  size_t size() const;

 private:
  class Region;
  size_t max_regions_per_tenant_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Region>> regions_;  // (tenant, name)
};

}  // namespace ge::server
