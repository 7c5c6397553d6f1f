// OpCache: an LRU of compiled single-op sessions.
#include "server/op_cache.h"

namespace ge::server {

absl::StatusOr<std::shared_ptr<session::Session>> OpCache::GetOrCreate(const std::string& key, const Factory& make,
                                                                       bool* hit) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      *hit = true;
      return it->second->second;
    }
  }
  *hit = false;
  absl::StatusOr<std::unique_ptr<session::Session>> made = make();
  if (!made.ok()) return made.status();
  std::shared_ptr<session::Session> session = *std::move(made);
  if (capacity_ == 0) return session;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second->second;  // made meanwhile by another call
  lru_.emplace_front(key, session);
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return session;
}

size_t OpCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

}  // namespace ge::server
