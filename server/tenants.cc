// Tenant authentication: SHA-256 (OpenSSL libcrypto) of the bearer token,
// compared in constant time against every configured hash.
#include "server/tenants.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "base/logging.h"
#include "base/status.h"

namespace ge::server {
namespace {

bool ParseHexDigest(std::string_view hex, Sha256Digest& out) {
  if (hex.size() != 64) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < 32; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

}  // namespace

bool ConstantTimeEquals(const Sha256Digest& a, const Sha256Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string RandomHex(size_t bytes) {
  std::vector<uint8_t> buffer(bytes);
  GE_CHECK(RAND_bytes(buffer.data(), static_cast<int>(bytes)) == 1);
  return ToHex(buffer.data(), bytes);
}

namespace {

// The tenant's quota chain: device memory -> all memory -> the daemon budget.
void MakeQuotas(Tenant& t, int64_t max_device_memory_bytes, int64_t max_memory_bytes,
                std::shared_ptr<device::MemoryQuota> budget) {
  const std::string owner = "tenant " + t.name;
  t.memory =
      std::make_shared<device::MemoryQuota>(owner, max_memory_bytes, std::move(budget), "max_memory_bytes of " + owner);
  t.device_memory = std::make_shared<device::MemoryQuota>(owner, max_device_memory_bytes, t.memory,
                                                          "max_device_memory_bytes of " + owner, "device memory quota");
}

}  // namespace

TenantRegistry::TenantRegistry(const std::vector<TenantConfig>& configs, std::shared_ptr<device::MemoryQuota> budget) {
  if (configs.empty()) {
    open_ = true;
    auto t = std::make_unique<Tenant>();
    t->name = "default";
    t->max_sessions = 1024;
    t->max_concurrent_runs = 1024;
    t->max_queued_calls = int64_t{1} << 40;  // the only tenant: the queues' capacity bounds it
    t->admin = true;                         // open mode: every caller is the operator's local user
    MakeQuotas(*t, 0, 0, budget);
    tenants_.push_back(std::move(t));
    return;
  }
  for (const TenantConfig& c : configs) {
    auto t = std::make_unique<Tenant>();
    t->name = c.name;
    GE_CHECK(ParseHexDigest(c.token_sha256, t->token_hash));  // ValidateConfig checked it
    t->max_sessions = c.max_sessions;
    t->max_concurrent_runs = c.max_concurrent_runs;
    t->max_queued_calls = c.max_queued_calls;
    t->admin = c.admin;
    t->models = c.models;
    MakeQuotas(*t, c.max_device_memory_bytes, c.max_memory_bytes, budget);
    tenants_.push_back(std::move(t));
  }
}

bool Tenant::MayUseModel(std::string_view model) const {
  return models.empty() || std::find(models.begin(), models.end(), model) != models.end();
}

absl::StatusOr<Tenant*> TenantRegistry::Authenticate(std::string_view authorization) const {
  if (open_) return tenants_.front().get();
  constexpr std::string_view kPrefix = "Bearer ";
  if (authorization.empty()) {
    return Unauthenticated("missing 'authorization: Bearer <token>' metadata (gectl --token or $GED_TOKEN)");
  }
  if (authorization.substr(0, kPrefix.size()) != kPrefix || authorization.size() == kPrefix.size()) {
    return Unauthenticated("malformed authorization metadata: expected 'Bearer <token>'");
  }
  const Sha256Digest hash = Sha256(authorization.substr(kPrefix.size()));
  Tenant* found = nullptr;
  for (const auto& t : tenants_) {  // every hash is compared: no early exit
    if (ConstantTimeEquals(hash, t->token_hash)) found = t.get();
  }
  if (found == nullptr) return Unauthenticated("the bearer token matches no tenant");
  return found;
}

}  // namespace ge::server
