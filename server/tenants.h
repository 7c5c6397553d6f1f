// Tenants: who may call the daemon, and their quotas.
//
// A tenant is declared in the configuration with the SHA-256 of its bearer
// token (the token itself is never stored). A call authenticates by the
// metadata entry `authorization: Bearer <token>`: the token is hashed and
// compared with every tenant's hash in constant time (no early exit on the
// first match, no data-dependent branches in the comparison). With no
// tenants configured, every call belongs to the built-in tenant "default"
// and the daemon listens on loopback only (ValidateConfig).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/sha256.h"
#include "server/config.h"
#include "server/grpc_status.h"
#include "session/runtime.h"

namespace ge::server {

// SHA-256 and hex live in base/sha256.h (shared with the model cache).
using ::ge::Sha256;
using ::ge::Sha256Digest;
using ::ge::ToHex;

// Equality that takes the same time wherever the inputs differ.
bool ConstantTimeEquals(const Sha256Digest& a, const Sha256Digest& b);
// `bytes` random bytes from the OS CSPRNG, as lowercase hex.
std::string RandomHex(size_t bytes);

struct Tenant {
  std::string name;
  Sha256Digest token_hash{};
  int64_t max_sessions = 0;
  int64_t max_concurrent_runs = 0;
  // Device memory held by the tenant's sessions on every device
  // (max_device_memory_bytes; 0: unlimited, counted only); its parent is
  // `memory`.
  std::shared_ptr<device::MemoryQuota> device_memory;
  int64_t max_queued_calls = 0;  // calls waiting in run queues, all devices
  // Every byte the tenant's calls hold: device memory, dynamic outputs,
  // intermediates, workspaces, ExecuteOp (max_memory_bytes; 0: unlimited);
  // its parent is the daemon's memory budget.
  std::shared_ptr<device::MemoryQuota> memory;
  std::atomic<int64_t> sessions{0};
  std::atomic<int64_t> running{0};
  std::atomic<int64_t> queued{0};  // calls in a run queue, not yet started
  // Model repositories: repository control (load, unload) needs admin (the
  // open mode's default tenant has it); a non-empty `models` limits the
  // repository models the tenant may use.
  bool admin = false;
  std::vector<std::string> models;
  bool MayUseModel(std::string_view model) const;
};

class TenantRegistry {
 public:
  // The tenants of `configs` (already validated); the default tenant when
  // `configs` is empty. Their memory quotas charge `budget` (may be null).
  explicit TenantRegistry(const std::vector<TenantConfig>& configs,
                          std::shared_ptr<device::MemoryQuota> budget = nullptr);

  // The tenant of an `authorization` metadata value ("" when absent).
  // UNAUTHENTICATED when the header is missing, malformed or matches no
  // tenant; the message never echoes the token.
  absl::StatusOr<Tenant*> Authenticate(std::string_view authorization) const;
  bool open() const { return open_; }
  const std::vector<std::unique_ptr<Tenant>>& tenants() const { return tenants_; }

 private:
  bool open_ = false;  // the default tenant, no token needed
  std::vector<std::unique_ptr<Tenant>> tenants_;
};

}  // namespace ge::server
