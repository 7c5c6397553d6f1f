// RedisTier: the remote tier of the compiled-model cache on a Redis server
// (hiredis, synchronous). An entry is one hash `ged:cache:v3:<namespace>:<key>` with
// the fields meta, gem and weights, written in one HSET (Redis applies a
// command atomically, so readers never see half an entry). Eviction on the
// server side is Redis's own (maxmemory-policy allkeys-lru).
//
// Addresses: redis://HOST:PORT or unix:/path/to/socket. One connection,
// serialized by a mutex and re-opened after an error; every call has a
// timeout, and a server that cannot be reached is an error the cache logs
// and treats as a miss; after a failed connection, calls fail at once for
// kRetrySeconds instead of waiting for the timeout every time.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cache/remote_tier.h"

struct redisContext;

namespace ge::cache {

class RedisTier final : public RemoteTier {
 public:
  static constexpr double kRetrySeconds = 10;

  // Parses `address`; connects lazily (InvalidArgument for a bad address).
  static absl::StatusOr<std::unique_ptr<RedisTier>> Create(const std::string& address, double timeout_seconds = 5);
  ~RedisTier() override;

  absl::StatusOr<std::optional<EntryBlobs>> Get(std::string_view key) override;
  absl::Status Put(std::string_view key, const EntryBlobs& entry) override;
  std::string address() const override { return address_; }

 private:
  RedisTier() = default;
  absl::Status ConnectLocked();
  void DisconnectLocked();

  std::string address_;
  std::string host_;
  int port_ = 0;
  std::string unix_path_;
  double timeout_seconds_ = 5;
  std::mutex mu_;
  redisContext* context_ = nullptr;
  std::chrono::steady_clock::time_point retry_after_{};  // no connection attempt before
};

}  // namespace ge::cache
