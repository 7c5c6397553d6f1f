// OpCache: compiled single-operator graphs for ExecuteOp, kept by what makes
// them differ (op type, attributes, input types and options), least
// recently used first out. A hit skips import, compilation and kernel
// preparation: ExecuteOp then costs one run (ACL's single-op model cache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "session/session.h"

namespace ge::server {

class OpCache {
 public:
  using Factory = std::function<absl::StatusOr<std::unique_ptr<session::Session>>()>;

  // `capacity` 0 disables the cache (every lookup is a miss, nothing kept).
  explicit OpCache(size_t capacity) : capacity_(capacity) {}

  // The session for `key`, made by `make` on a miss; `*hit` says which.
  // Failures are not cached. Two misses of one key at once may both make
  // a session; the first kept wins.
  absl::StatusOr<std::shared_ptr<session::Session>> GetOrCreate(const std::string& key, const Factory& make,
                                                                bool* hit);

  size_t size() const;
  size_t capacity() const { return capacity_; }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<session::Session>>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace ge::server
