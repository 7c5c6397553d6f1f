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
// Trust: the daemon maps memory a client owns. Regions come only from
// unix-socket clients (the service checks the peer; the socket admits
// only peers of ged's uid, by SO_PEERCRED: server/unix_listener.h) and only
// objects of ged's uid are mapped, so an object is the registering peer's. Every use checks that the object is still as
// large as registered, and the bytes cross between the object and the daemon's own memory only through GuardedCopy
// (Read, Write): a client that shrinks its object during a run fails that call with OUT_OF_RANGE naming the region,
// never the daemon (kernels never read client memory in place). Off unless the operator enables it (`shared_memory:
// true`).
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

// Copies `bytes` from `src` to `dst` (memmove); false, and the daemon
// unharmed, when a page of either faults (SIGBUS/SIGSEGV on this thread
// during the copy): how a truncated shared-memory object is survived.
bool GuardedCopy(void* dst, const void* src, size_t bytes);

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

  // Map's range copied into memory of the daemon's own, under the fault
  // guard (OUT_OF_RANGE naming the region when the object shrank).
  absl::StatusOr<std::shared_ptr<Buffer>> Read(const std::string& tenant, const std::string& name, uint64_t offset,
                                               uint64_t capacity, uint64_t bytes, const std::string& what) const;
  // `bytes` of `data` into Map's range, under the fault guard.
  absl::Status Write(const std::string& tenant, const std::string& name, uint64_t offset, uint64_t capacity,
                     const void* data, uint64_t bytes, const std::string& what) const;

  size_t size() const;

 private:
  class Region;
  size_t max_regions_per_tenant_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Region>> regions_;  // (tenant, name)
};

}  // namespace ge::server
