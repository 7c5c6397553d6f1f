// The remote tier of the compiled-model cache: a store shared by many hosts
// (Redis, runtime/cache/redis_tier.h). It keeps whole entries by key; the
// local cache checks every entry it gets before trusting it (the mac of the
// operator key, cache_entry.h, then the checksums), so a remote store needs
// no integrity of its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/cache/cache_entry.h"

namespace ge::cache {

class RemoteTier {
 public:
  virtual ~RemoteTier() = default;
  // The entry of `key`; nullopt when the store has none. An error when the
  // store cannot be reached (the caller logs it and treats it as a miss).
  virtual absl::StatusOr<std::optional<EntryBlobs>> Get(std::string_view key) = 0;
  virtual absl::Status Put(std::string_view key, const EntryBlobs& entry) = 0;
  // Where the store is, for messages ("redis://127.0.0.1:6379").
  virtual std::string address() const = 0;
};

}  // namespace ge::cache
