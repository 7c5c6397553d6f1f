// SessionManager: the daemon's sessions, by unguessable id, each owned by
// one tenant.
//
// Ids are 128 random bits from the OS CSPRNG in hex, so knowing one
// session's id says nothing about another's. A session is reachable only by
// its own tenant: another tenant's lookup is PERMISSION_DENIED, an unknown
// id NOT_FOUND. Sessions count against their tenant's max_sessions quota
// (RESOURCE_EXHAUSTED past it). Sessions idle longer than the configured
// time are destroyed by ExpireIdle, unless a call is using them. A session
// handed out by Get stays alive until its last user drops it, even when it
// is destroyed meanwhile (an in-flight run finishes).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/options.h"
#include "server/bounds.h"
#include "server/tenants.h"
#include "session/session.h"

namespace ge::server {

struct ManagedSession {
  ManagedSession();
  ~ManagedSession();
  ManagedSession(const ManagedSession&) = delete;
  ManagedSession& operator=(const ManagedSession&) = delete;
  // How many exist in this process (created and not yet destroyed): the
  // daemon checks it is back at zero once it has shut down.
  static int64_t Live();

  std::string id;
  Tenant* tenant = nullptr;
  int device = 0;  // index of the device whose run queue serves it
  // Allocates from its device charged to the tenant's quota (the session
  // owns that view: session::Runtime::NewSession).
  std::unique_ptr<session::Session> session;
  std::atomic<int64_t> last_used_ns{0};  // steady clock
  std::atomic<int> active_calls{0};
  std::mutex mu;
  std::map<uint32_t, std::string> graphs;  // graph id -> model name; guarded by mu
  std::map<uint32_t, std::string> models;  // LoadModel's model id -> model name; guarded by mu
  uint32_t next_model_id = 1;              // guarded by mu
  OptionMap options;                       // CreateSession's options
  // Bounds (server/bounds.h): graph slots taken by AddGraph/LoadModel calls
  // not yet finished, and the inter-op threads each graph holds of the
  // daemon's budget (returned on RemoveGraph and when the session goes).
  int64_t pending_graphs = 0;                    // guarded by mu
  std::map<uint32_t, int64_t> inter_op_threads;  // graph id -> threads; guarded by mu
  ThreadBudget* thread_budget = nullptr;
};

// Makes entry.session for `options` (entry.tenant and entry.device are set).
using SessionFactory = std::function<absl::Status(const OptionMap& options, ManagedSession& entry)>;

class SessionManager {
 public:
  SessionManager(SessionFactory factory, int num_devices);

  absl::StatusOr<std::shared_ptr<ManagedSession>> Create(Tenant* tenant, const OptionMap& options);
  // Marks the session used now.
  absl::StatusOr<std::shared_ptr<ManagedSession>> Get(const Tenant* tenant, const std::string& id);
  absl::Status Destroy(const Tenant* tenant, const std::string& id);
  // The sessions of `tenant` (all when null), by id.
  std::vector<std::shared_ptr<ManagedSession>> List(const Tenant* tenant) const;
  // Destroys sessions unused for longer than `idle` and with no active call;
  // returns how many.
  int ExpireIdle(std::chrono::nanoseconds idle);
  // Session::TrimIdleCaches on every session; the bytes returned in all.
  size_t TrimIdleCaches();
  size_t size() const;

 private:
  absl::StatusOr<std::shared_ptr<ManagedSession>> Lookup(const Tenant* tenant, const std::string& id) const;

  SessionFactory factory_;
  int num_devices_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ManagedSession>> sessions_;
  int next_device_ = 0;  // round robin; guarded by mu_
};

int64_t SteadyNowNs();

}  // namespace ge::server
