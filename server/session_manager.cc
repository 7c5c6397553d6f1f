// SessionManager: id generation, tenant checks, quotas and idle expiry.
#include "server/session_manager.h"

#include "base/status.h"
#include "server/grpc_status.h"

namespace ge::server {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
std::atomic<int64_t> live_sessions{0};
}  // namespace

ManagedSession::ManagedSession() { live_sessions.fetch_add(1); }

ManagedSession::~ManagedSession() {
  if (thread_budget != nullptr) {
    for (const auto& [graph, threads] : inter_op_threads) thread_budget->Release(threads);
  }
  if (tenant != nullptr) tenant->sessions.fetch_sub(1);
  live_sessions.fetch_sub(1);
}

int64_t ManagedSession::Live() { return live_sessions.load(); }

SessionManager::SessionManager(SessionFactory factory, int num_devices)
    : factory_(std::move(factory)), num_devices_(std::max(1, num_devices)) {}

absl::StatusOr<std::shared_ptr<ManagedSession>> SessionManager::Create(Tenant* tenant, const OptionMap& options) {
  if (tenant->sessions.fetch_add(1) >= tenant->max_sessions) {
    tenant->sessions.fetch_sub(1);
    return ResourceExhausted("tenant ", tenant->name, " has reached its quota of ", tenant->max_sessions,
                             " sessions (max_sessions); destroy one first");
  }
  auto entry = std::make_shared<ManagedSession>();
  entry->tenant = tenant;  // from here the destructor returns the quota
  entry->options = options;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry->device = next_device_;
    next_device_ = (next_device_ + 1) % num_devices_;
  }
  GE_RETURN_IF_ERROR(factory_(options, *entry));
  entry->last_used_ns = SteadyNowNs();
  std::lock_guard<std::mutex> lock(mu_);
  do {
    entry->id = RandomHex(16);
  } while (sessions_.count(entry->id) != 0);
  sessions_[entry->id] = entry;
  return entry;
}

absl::StatusOr<std::shared_ptr<ManagedSession>> SessionManager::Lookup(const Tenant* tenant,
                                                                       const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    return NotFound("session '", id, "' does not exist (destroyed, expired, or from before a restart)");
  }
  if (it->second->tenant != tenant) {
    return PermissionDenied("session '", id, "' belongs to another tenant");
  }
  return it->second;
}

absl::StatusOr<std::shared_ptr<ManagedSession>> SessionManager::Get(const Tenant* tenant, const std::string& id) {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<ManagedSession> entry, Lookup(tenant, id));
  entry->last_used_ns = SteadyNowNs();
  return entry;
}

absl::Status SessionManager::Destroy(const Tenant* tenant, const std::string& id) {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<ManagedSession> entry, Lookup(tenant, id));
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(id);
  return absl::OkStatus();
}

std::vector<std::shared_ptr<ManagedSession>> SessionManager::List(const Tenant* tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<ManagedSession>> out;
  for (const auto& [id, entry] : sessions_) {
    if (tenant == nullptr || entry->tenant == tenant) out.push_back(entry);
  }
  return out;
}

int SessionManager::ExpireIdle(std::chrono::nanoseconds idle) {
  const int64_t now = SteadyNowNs();
  std::vector<std::shared_ptr<ManagedSession>> expired;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      const ManagedSession& s = *it->second;
      if (s.active_calls.load() == 0 && now - s.last_used_ns.load() > idle.count()) {
        expired.push_back(it->second);
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  return static_cast<int>(expired.size());
}

size_t SessionManager::TrimIdleCaches() {
  size_t bytes = 0;
  for (const std::shared_ptr<ManagedSession>& s : List(nullptr)) {
    if (s->session != nullptr) bytes += s->session->TrimIdleCaches();
  }
  return bytes;
}

size_t SessionManager::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

}  // namespace ge::server
