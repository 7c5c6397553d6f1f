// Daemon assembly, gauges refreshed at scrape time, and the graceful stop.
#include "server/daemon.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/logging.h"
#include "base/status.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "runtime/cache/redis_tier.h"

namespace ge::server {
namespace {

constexpr char kServiceName[] = "ge.v1.GraphEngine";

void CounterAdd(prometheus::CounterFamily& family, int64_t delta) {
  if (delta > 0) family.Get().Increment(static_cast<double>(delta));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const ServerConfig& config) {
  GE_RETURN_IF_ERROR(ValidateConfig(config));
  auto d = std::unique_ptr<Daemon>(new Daemon());
  d->config_ = config;
  std::vector<std::string> plugin_dirs;
  if (!config.plugin_dir.empty()) plugin_dirs.push_back(config.plugin_dir);
  GE_ASSIGN_OR_RETURN(d->engines_, engine::CreateEngineRegistry(plugin_dirs, {}));
  const int64_t budget = config.memory_budget_bytes > 0
                             ? config.memory_budget_bytes
                             : device::DefaultMemoryBudgetBytes(device::ReadHostMemoryLimits());
  d->memory_budget_ = std::make_shared<device::MemoryQuota>("the daemon", budget, nullptr, "memory_budget_bytes",
                                                            "memory budget");
  Logger("server").info("memory budget {} bytes (memory_budget_bytes)", budget);
  d->tenants_ = std::make_unique<TenantRegistry>(config.tenants, d->memory_budget_);
  d->OpenModelCache();
  GE_RETURN_IF_ERROR(d->StartDevices());
  d->metrics_ = std::make_unique<ServerMetrics>(d->registry_);
  d->registry_.AddCollector([raw = d.get()] { raw->RefreshGauges(); });
  ServiceContext& ctx = d->context_;
  ctx.config = &d->config_;
  ctx.engines = d->engines_.get();
  ctx.tenants = d->tenants_.get();
  ctx.sessions = d->sessions_.get();
  ctx.devices = &d->devices_;
  ctx.metrics = d->metrics_.get();
  ctx.op_session_factory = [raw = d.get()](const OptionMap& options, const Tenant& tenant) {
    const Device& device = raw->devices_.front();
    auto session =
        std::make_unique<session::Session>(*raw->engines_, options, device.intra_op.get(), device.memory.get());
    // ExecuteOp's outputs are the calling tenant's memory.
    session->set_memory_quota(tenant.memory);
    return absl::StatusOr<std::unique_ptr<session::Session>>(std::move(session));
  };
  d->op_cache_ = std::make_unique<OpCache>(static_cast<size_t>(config.op_cache_capacity));
  ctx.op_cache = d->op_cache_.get();
  if (config.shared_memory) {
    d->shared_memory_ = std::make_unique<SharedMemoryRegistry>();
    ctx.shared_memory = d->shared_memory_.get();
  }
  ctx.model_cache = d->model_cache_.get();
  ctx.start_ns = SteadyNowNs();
  GE_RETURN_IF_ERROR(d->StartGrpc());
  GE_RETURN_IF_ERROR(d->StartHttp());
  Logger("server").info("ged serving gRPC on {} and metrics on {}", d->grpc_address(), d->metrics_address());
  return d;
}

// A cache that cannot be opened is a warning: the daemon serves without it.
void Daemon::OpenModelCache() {
  if (config_.cache_dir.empty()) return;
  cache::ModelCacheOptions options;
  options.dir = config_.cache_dir;
  options.max_bytes = config_.cache_max_bytes;
  if (!config_.cache_remote.empty()) {
    absl::StatusOr<std::unique_ptr<cache::RedisTier>> tier = cache::RedisTier::Create(config_.cache_remote);
    if (tier.ok()) {
      options.remote = std::shared_ptr<cache::RemoteTier>(*std::move(tier));
    } else {
      Logger("server").warn("cache_remote: {}; using the local cache only", tier.status().message());
    }
  }
  absl::StatusOr<std::unique_ptr<cache::ModelCache>> opened = cache::ModelCache::Open(std::move(options));
  if (!opened.ok()) {
    Logger("server").warn("serving without the compiled-model cache: {}", opened.status().message());
    return;
  }
  model_cache_ = *std::move(opened);
  Logger("server").info("compiled-model cache at {}", model_cache_->dir());
}

absl::Status Daemon::StartDevices() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const DeviceConfig& c : config_.devices) {
    Device d;
    d.name = c.name;
    d.threads = c.threads > 0 ? c.threads : cores;
    // The run's own thread joins ParallelFor, so one worker fewer.
    d.intra_op = std::make_unique<ThreadPool>(d.threads - 1, "intra-" + c.name);
    d.queue = std::make_unique<RunQueue>(c.name, c.workers, c.queue_capacity);
    // Memory only: kernels run on intra_op.
    d.memory = std::make_unique<device::CpuDevice>(device::DeviceSpec{c.name, c.memory_bytes, /*num_threads=*/1});
    devices_.push_back(std::move(d));
  }
  // Each session allocates through a view of its device charged to its
  // tenant's device-memory quota.
  sessions_ = std::make_unique<SessionManager>(
      [this](const OptionMap& options, ManagedSession& entry) -> absl::Status {
        Device& device = devices_[entry.device];
        entry.memory = std::make_unique<device::QuotaDevice>(*device.memory, entry.tenant->device_memory);
        entry.session =
            std::make_unique<session::Session>(*engines_, options, device.intra_op.get(), entry.memory.get());
        // Host memory of its runs: the tenant's max_memory_bytes, then the budget.
        entry.session->set_memory_quota(entry.tenant->memory);
        entry.session->set_model_cache(model_cache_.get());
        // Runs of multi-batch graphs, by path (ged_gear_runs_total).
        entry.session->set_run_path_observer([this](session::RunPath path) {
          metrics_->gear_runs_total.WithLabels({path == session::RunPath::kGear ? "gear" : "dynamic"}).Increment();
        });
        return absl::OkStatus();
      },
      static_cast<int>(devices_.size()));
  return absl::OkStatus();
}

namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* key) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in || bytes.str().empty()) return InvalidArgument(key, ": cannot read ", path);
  return bytes.str();
}

// Insecure unless tls_cert_file is set; mutual TLS with tls_client_ca_file.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const ServerConfig& config) {
  if (config.tls_cert_file.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(config.tls_client_ca_file.empty()
                                            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  GE_ASSIGN_OR_RETURN(pair.cert_chain, ReadPem(config.tls_cert_file, "tls_cert_file"));
  GE_ASSIGN_OR_RETURN(pair.private_key, ReadPem(config.tls_key_file, "tls_key_file"));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!config.tls_client_ca_file.empty()) {
    GE_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPem(config.tls_client_ca_file, "tls_client_ca_file"));
  }
  return grpc::SslServerCredentials(ssl);
}

// Loads grpc++'s reflection library, whose static initializer registers the
// reflection service with every ServerBuilder made afterwards.
absl::Status LoadReflection() {
  if (dlopen(GED_GRPC_REFLECTION_LIBRARY, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    return FailedPrecondition("reflection: cannot load ", GED_GRPC_REFLECTION_LIBRARY, ": ", dlerror());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Daemon::StartGrpc() {
  GE_RETURN_IF_ERROR(SplitHostPort(config_.listen, &grpc_host_, &grpc_port_));
  service_ = std::make_unique<GraphEngineService>(context_);
  grpc::EnableDefaultHealthCheckService(true);
  GE_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials, ServerCredentials(config_));
  if (config_.reflection) GE_RETURN_IF_ERROR(LoadReflection());
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(config_.listen, credentials, &bound);
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(config_.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config_.max_message_bytes));
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || bound == 0) {
    return absl::UnavailableError(StrCat("cannot serve gRPC on ", config_.listen, ": address in use or not local"));
  }
  grpc_port_ = bound;
  server_->GetHealthCheckService()->SetServingStatus(true);
  server_->GetHealthCheckService()->SetServingStatus(kServiceName, true);
  return absl::OkStatus();
}

absl::Status Daemon::StartHttp() {
  std::map<std::string, HttpEndpoint::Handler> routes;
  routes["/metrics"] = [this] {
    return HttpReply{200, "text/plain; version=0.0.4; charset=utf-8", registry_.Render()};
  };
  routes["/healthz"] = [] { return HttpReply{200, "text/plain; charset=utf-8", "ok\n"}; };
  routes["/readyz"] = [this] {
    if (context_.draining.load()) return HttpReply{503, "text/plain; charset=utf-8", "draining\n"};
    return HttpReply{200, "text/plain; charset=utf-8", "ready\n"};
  };
  GE_ASSIGN_OR_RETURN(http_, HttpEndpoint::Start(config_.metrics_listen, std::move(routes)));
  return absl::OkStatus();
}

std::string Daemon::grpc_address() const {
  const bool v6 = grpc_host_.find(':') != std::string::npos;
  return StrCat(v6 ? "[" : "", grpc_host_, v6 ? "]" : "", ":", grpc_port_);
}

std::string Daemon::metrics_address() const {
  std::string host;
  int port = 0;
  (void)SplitHostPort(config_.metrics_listen, &host, &port);
  const bool v6 = host.find(':') != std::string::npos;
  return StrCat(v6 ? "[" : "", host, v6 ? "]" : "", ":", http_ ? http_->port() : port);
}

void Daemon::RefreshGauges() {
  std::map<std::string, std::pair<int64_t, int64_t>> per_tenant;  // sessions, graphs
  for (const auto& t : tenants_->tenants()) per_tenant[t->name] = {0, 0};
  for (const auto& s : sessions_->List(nullptr)) {
    auto& [sessions, graphs] = per_tenant[s->tenant->name];
    ++sessions;
    std::lock_guard<std::mutex> lock(s->mu);
    graphs += static_cast<int64_t>(s->graphs.size());
  }
  for (const auto& [tenant, counts] : per_tenant) {
    metrics_->sessions.WithLabels({tenant}).Set(static_cast<double>(counts.first));
    metrics_->graphs.WithLabels({tenant}).Set(static_cast<double>(counts.second));
  }
  if (model_cache_ != nullptr) {
    // Counters only grow: export what the cache counted since the last scrape.
    const cache::CacheStats now = model_cache_->stats();
    CounterAdd(metrics_->cache_hits_total, now.hits - exported_cache_stats_.hits);
    CounterAdd(metrics_->cache_misses_total, now.misses - exported_cache_stats_.misses);
    CounterAdd(metrics_->cache_evictions_total, now.evictions - exported_cache_stats_.evictions);
    metrics_->cache_bytes.Get().Set(static_cast<double>(now.bytes));
    exported_cache_stats_ = now;
  }
  metrics_->pending_requests.Get().Set(static_cast<double>(context_.inflight.load()));
  // Sessions run on host memory: the devices share the process's resident
  // set and the host's physical memory until they run on HAL devices.
  // Device memory is what sessions hold on the device (static arenas,
  // variables); a device without a capacity shares the host's memory.
  const double host = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  for (const Device& d : devices_) {
    const device::MemoryStats stats = d.memory->memory_stats();
    const double total = stats.capacity_bytes > 0 ? static_cast<double>(stats.capacity_bytes) : host / devices_.size();
    metrics_->device_memory_total_bytes.WithLabels({d.name}).Set(total);
    metrics_->device_memory_used_bytes.WithLabels({d.name}).Set(static_cast<double>(stats.in_use_bytes));
  }
  for (const auto& t : tenants_->tenants()) {
    metrics_->tenant_device_memory_used_bytes.WithLabels({t->name}).Set(
        static_cast<double>(t->device_memory->in_use_bytes()));
    metrics_->tenant_memory_used_bytes.WithLabels({t->name}).Set(static_cast<double>(t->memory->in_use_bytes()));
  }
  metrics_->memory_budget_used_bytes.Get().Set(static_cast<double>(memory_budget_->in_use_bytes()));
  metrics_->memory_budget_bytes.Get().Set(static_cast<double>(memory_budget_->limit_bytes()));
}

void Daemon::Tick() {
  const auto idle = std::chrono::duration<double>(config_.session_idle_timeout_seconds);
  const int expired = sessions_->ExpireIdle(std::chrono::duration_cast<std::chrono::nanoseconds>(idle));
  if (expired > 0) Logger("server").info("expired {} idle session(s)", expired);
  const size_t trimmed = sessions_->TrimIdleCaches();
  if (trimmed > 0) Logger("server").debug("returned {} bytes of idle sessions' output caches", trimmed);
}

bool Daemon::Shutdown() {
  if (stopped_ || server_ == nullptr) return true;
  stopped_ = true;
  context_.draining = true;
  server_->GetHealthCheckService()->SetServingStatus(false);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(config_.shutdown_timeout_seconds);
  while (context_.inflight.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const bool drained = context_.inflight.load() == 0;
  if (!drained) {
    Logger("server").warn("{} call(s) still in flight after {} s; cancelling them", context_.inflight.load(),
                          config_.shutdown_timeout_seconds);
  }
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  server_->Wait();
  return drained;
}

Daemon::ReleaseReport Daemon::Close() {
  ReleaseReport report;
  if (closed_) return report;
  closed_ = true;
  Shutdown();
  server_.reset();
  http_.reset();
  for (Device& d : devices_) d.queue.reset();  // drains: runs still use sessions and pools
  op_cache_.reset();
  sessions_.reset();
  model_cache_.reset();
  devices_.clear();
  shared_memory_.reset();
  report.calls_total = context_.calls_total.load();
  report.calls_left = context_.inflight.load();
  report.sessions_left = ManagedSession::Live();
  return report;
}

Daemon::~Daemon() { Close(); }

}  // namespace ge::server
