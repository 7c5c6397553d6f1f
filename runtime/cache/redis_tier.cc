// RedisTier: HSET/HMGET of whole cache entries over hiredis.
#include "runtime/cache/redis_tier.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include "absl/strings/numbers.h"
#include "base/status.h"

namespace ge::cache {
namespace {

constexpr char kRedisPrefix[] = "redis://";
constexpr char kUnixPrefix[] = "unix:";

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

timeval ToTimeval(double seconds) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(tv.tv_sec)) * 1e6);
  return tv;
}

// Keys are "<namespace>:<key>" and records carry a mac (cache_entry.h); v3
// is the cache format version of model_cache.h (v2 entries are never read).
std::string RedisKey(std::string_view key) { return StrCat("ged:cache:v3:", key); }

}  // namespace

absl::StatusOr<std::unique_ptr<RedisTier>> RedisTier::Create(const std::string& address, double timeout_seconds) {
  auto tier = std::unique_ptr<RedisTier>(new RedisTier());
  tier->address_ = address;
  tier->timeout_seconds_ = timeout_seconds > 0 ? timeout_seconds : 5;
  std::string_view a = address;
  if (a.rfind(kUnixPrefix, 0) == 0 && a.size() > sizeof(kUnixPrefix) - 1) {
    tier->unix_path_ = std::string(a.substr(sizeof(kUnixPrefix) - 1));
    return tier;
  }
  if (a.rfind(kRedisPrefix, 0) == 0) a.remove_prefix(sizeof(kRedisPrefix) - 1);
  if (!a.empty() && a.back() == '/') a.remove_suffix(1);
  const size_t colon = a.rfind(':');
  int port = 6379;
  if (colon != std::string_view::npos) {
    if (!absl::SimpleAtoi(AbslView(a.substr(colon + 1)), &port) || port <= 0 || port > 65535) {
      return InvalidArgument("bad Redis address '", address, "': expected redis://HOST:PORT or unix:/PATH");
    }
    a = a.substr(0, colon);
  }
  if (a.empty()) return InvalidArgument("bad Redis address '", address, "': no host");
  tier->host_ = std::string(a);
  tier->port_ = port;
  return tier;
}

RedisTier::~RedisTier() { DisconnectLocked(); }

void RedisTier::DisconnectLocked() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

absl::Status RedisTier::ConnectLocked() {
  if (context_ != nullptr) return absl::OkStatus();
  const auto now = std::chrono::steady_clock::now();
  if (now < retry_after_) return absl::UnavailableError(StrCat(address_, " was unreachable moments ago"));
  // Until this attempt succeeds, later calls do not wait for the timeout.
  retry_after_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(kRetrySeconds));
  const timeval tv = ToTimeval(timeout_seconds_);
  context_ = unix_path_.empty() ? redisConnectWithTimeout(host_.c_str(), port_, tv)
                                : redisConnectUnixWithTimeout(unix_path_.c_str(), tv);
  if (context_ == nullptr) return absl::UnavailableError(StrCat("cannot connect to ", address_));
  if (context_->err != 0) {
    const std::string error = context_->errstr;
    DisconnectLocked();
    return absl::UnavailableError(StrCat("cannot connect to ", address_, ": ", error));
  }
  redisSetTimeout(context_, tv);
  retry_after_ = {};
  return absl::OkStatus();
}

absl::StatusOr<std::optional<EntryBlobs>> RedisTier::Get(std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  GE_RETURN_IF_ERROR(ConnectLocked());
  const std::string name = RedisKey(key);
  const char* argv[] = {"HMGET", name.c_str(), "meta", "gem", "weights"};
  const size_t lens[] = {5, name.size(), 4, 3, 7};
  Reply reply(static_cast<redisReply*>(redisCommandArgv(context_, 5, argv, lens)));
  if (reply == nullptr) {
    const std::string error = context_->errstr;
    DisconnectLocked();
    return absl::UnavailableError(StrCat("HMGET at ", address_, " failed: ", error));
  }
  if (reply->type == REDIS_REPLY_ERROR) return absl::InternalError(StrCat(address_, ": ", reply->str));
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3) {
    return absl::InternalError(StrCat(address_, ": unexpected reply to HMGET"));
  }
  std::string* fields[3];
  EntryBlobs entry;
  fields[0] = &entry.meta;
  fields[1] = &entry.gem;
  fields[2] = &entry.weights;
  for (size_t i = 0; i < 3; ++i) {
    const redisReply* r = reply->element[i];
    if (r->type == REDIS_REPLY_NIL) return std::optional<EntryBlobs>();
    if (r->type != REDIS_REPLY_STRING) return absl::InternalError(StrCat(address_, ": unexpected field type"));
    fields[i]->assign(r->str, r->len);
  }
  return std::optional<EntryBlobs>(std::move(entry));
}

absl::Status RedisTier::Put(std::string_view key, const EntryBlobs& entry) {
  std::lock_guard<std::mutex> lock(mu_);
  GE_RETURN_IF_ERROR(ConnectLocked());
  const std::string name = RedisKey(key);
  const std::string_view weights = entry.weights_view();
  const std::string_view gem = entry.gem_view();
  const char* argv[] = {"HSET", name.c_str(), "meta", entry.meta.data(), "gem", gem.data(), "weights", weights.data()};
  const size_t lens[] = {4, name.size(), 4, entry.meta.size(), 3, gem.size(), 7, weights.size()};
  Reply reply(static_cast<redisReply*>(redisCommandArgv(context_, 8, argv, lens)));
  if (reply == nullptr) {
    const std::string error = context_->errstr;
    DisconnectLocked();
    return absl::UnavailableError(StrCat("HSET at ", address_, " failed: ", error));
  }
  if (reply->type == REDIS_REPLY_ERROR) return absl::InternalError(StrCat(address_, ": ", reply->str));
  return absl::OkStatus();
}

}  // namespace ge::cache
