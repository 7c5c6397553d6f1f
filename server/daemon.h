// Daemon: the assembled ged server — engines, devices with their run
// queues, tenants, sessions, the gRPC service (plus grpc.health.v1), and the
// HTTP endpoints for metrics and probes and for KServe v2 over HTTP/REST.
//
// Lifecycle: Start binds both addresses (port 0 picks free ports, reported
// by grpc_address()/metrics_address()) and serves. Tick() runs periodic work
// (idle session expiry; idle sessions' output caches trimmed). Shutdown() is
// the graceful stop of SIGTERM: new calls get UNAVAILABLE and health turns
// NOT_SERVING at once; calls in flight get up to shutdown_timeout_seconds to
// finish; then the gRPC server stops (cancelling what is left) and the run
// queues drain.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "server/config.h"
#include "server/http_endpoint.h"
#include "server/kserve_http.h"
#include "server/kserve_service.h"
#include "server/metrics.h"
#include "server/prometheus.h"
#include "server/service.h"
#include "server/serving/repository.h"
#include "server/unix_listener.h"

namespace ge::server {

class Daemon {
 public:
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const ServerConfig& config);
  ~Daemon();

  std::string grpc_address() const;
  std::string metrics_address() const;
  // The KServe v2 HTTP/REST address, "" when not served (http_listen).
  std::string http_address() const;
  void Tick();
  // Returns whether every in-flight call finished within the timeout.
  bool Shutdown();

  // What a closed daemon left behind: every call state and session it
  // created must have been released (calls_left and sessions_left zero).
  struct ReleaseReport {
    int64_t calls_total = 0;  // calls and streams served over the daemon's life
    int64_t calls_left = 0;   // of those, not finished
    int64_t sessions_left = 0;
  };
  // Shuts down (if not yet), then releases the server, the run queues (which
  // finish what they hold) and every session, and counts what is left.
  ReleaseReport Close();

 private:
  Daemon() = default;
  absl::Status StartRuntime();
  absl::Status StartDevices();
  absl::Status StartGrpc();
  absl::Status StartHttp();
  // KServe v2 over HTTP/REST on http_listen (when it resolves to one).
  absl::Status StartKServeHttp();
  // The model repository (model_repository): opened before gRPC starts,
  // its start-up models loaded once gRPC serves (health NOT_SERVING until
  // then).
  absl::Status OpenRepository();
  void RefreshGauges();

  ServerConfig config_;
  std::string grpc_host_;
  int grpc_port_ = 0;
  // Engines, the compiled-model cache and the devices' pools and memory.
  std::unique_ptr<session::Runtime> runtime_;
  // memory_budget_bytes: what every tenant's memory quota charges.
  std::shared_ptr<device::MemoryQuota> memory_budget_;
  std::unique_ptr<TenantRegistry> tenants_;
  std::vector<Device> devices_;
  std::unique_ptr<ThreadBudget> thread_budget_;  // max_inter_op_threads; outlives the sessions
  std::unique_ptr<SessionManager> sessions_;
  std::unique_ptr<OpCache> op_cache_;
  std::unique_ptr<SharedMemoryRegistry> shared_memory_;  // when config.shared_memory
  cache::CacheStats exported_cache_stats_;               // what the metrics counted so far
  int64_t exported_imports_ = 0;                         // runtime_->imports() counted so far
  prometheus::Registry registry_;
  std::unique_ptr<ServerMetrics> metrics_;
  ServiceContext context_;
  std::unique_ptr<GraphEngineService> service_;
  std::unique_ptr<serving::ModelRepository> repository_;  // when model_repository is set
  std::unique_ptr<KServeService> kserve_;
  std::atomic<bool> repository_started_{false};  // start-up models loaded or failed
  int64_t last_poll_ns_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<UnixListener> unix_listener_;  // when config.unix_socket
  std::unique_ptr<HttpEndpoint> http_;
  std::unique_ptr<KServeHttp> kserve_http_;
  std::unique_ptr<HttpEndpoint> kserve_http_endpoint_;
  std::string kserve_http_host_;
  bool stopped_ = false;
  bool closed_ = false;
};

}  // namespace ge::server
