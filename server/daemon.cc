// Daemon assembly, gauges refreshed at scrape time, and the graceful stop.
#include "server/daemon.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/logging.h"
#include "base/status.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/auth_metadata_processor.h"

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
  GE_RETURN_IF_ERROR(d->StartRuntime());
  const int64_t budget = config.memory_budget_bytes > 0
                             ? config.memory_budget_bytes
                             : device::DefaultMemoryBudgetBytes(device::ReadHostMemoryLimits());
  d->memory_budget_ =
      std::make_shared<device::MemoryQuota>("the daemon", budget, nullptr, "memory_budget_bytes", "memory budget");
  Logger("server").info("memory budget {} bytes (memory_budget_bytes)", budget);
  d->tenants_ = std::make_unique<TenantRegistry>(config.tenants, d->memory_budget_);
  GE_RETURN_IF_ERROR(d->StartDevices());
  d->metrics_ = std::make_unique<ServerMetrics>(d->registry_);
  d->registry_.AddCollector([raw = d.get()] { raw->RefreshGauges(); });
  ServiceContext& ctx = d->context_;
  ctx.config = &d->config_;
  ctx.runtime = d->runtime_.get();
  ctx.tenants = d->tenants_.get();
  ctx.sessions = d->sessions_.get();
  ctx.devices = &d->devices_;
  ctx.metrics = d->metrics_.get();
  d->op_cache_ = std::make_unique<OpCache>(static_cast<size_t>(config.op_cache_capacity));
  ctx.op_cache = d->op_cache_.get();
  if (config.shared_memory) {
    d->shared_memory_ = std::make_unique<SharedMemoryRegistry>();
    ctx.shared_memory = d->shared_memory_.get();
  }
  d->thread_budget_ = std::make_unique<ThreadBudget>(config.max_inter_op_threads);
  ctx.thread_budget = d->thread_budget_.get();
  ctx.start_ns = SteadyNowNs();
  GE_RETURN_IF_ERROR(d->OpenRepository());
  GE_RETURN_IF_ERROR(d->StartGrpc());
  GE_RETURN_IF_ERROR(d->StartHttp());
  GE_RETURN_IF_ERROR(d->StartKServeHttp());
  if (d->repository_ != nullptr) {
    // The ready file, health SERVING and ServerReady wait for every
    // start-up model to load or fail; ServerLive answers meanwhile.
    Logger("server").info("loading the models of {}", config.model_repository);
    d->repository_->LoadStartupModels();
    d->repository_started_ = true;
    d->last_poll_ns_ = SteadyNowNs();
    d->server_->GetHealthCheckService()->SetServingStatus(true);
    d->server_->GetHealthCheckService()->SetServingStatus(kServiceName, true);
  }
  Logger("server").info("ged serving gRPC on {} and metrics on {}{}{}", d->grpc_address(), d->metrics_address(),
                        d->http_address().empty() ? "" : ", KServe HTTP on ", d->http_address());
  return d;
}

// The runtime root: engines (built-in, then plugin_dir's), the cache and
// one runtime device per configured device. A cache that cannot be opened
// is a warning (the daemon serves without it); a remote tier without its
// key is an error (ValidateConfig says so first).
absl::Status Daemon::StartRuntime() {
  session::RuntimeOptions options;
  if (!config_.plugin_dir.empty()) options.plugin_dirs.push_back(config_.plugin_dir);
  // The daemon's loop cap is the control_flow engine's hard cap: no graph
  // attribute or input lifts it.
  options.engine_options = {
      {"ge.exec.max_loop_iterations", std::to_string(config_.max_loop_iterations)},
      {"ge.exec.max_loop_iterations_source", StrCat("max_loop_iterations=", config_.max_loop_iterations)}};
  if (!config_.cache_dir.empty()) {
    session::CacheConfig cache;
    cache.dir = config_.cache_dir;
    cache.max_bytes = config_.cache_max_bytes;
    cache.remote = config_.cache_remote;
    cache.remote_key_file = config_.cache_remote_key_file;
    options.cache = cache;
  }
  options.devices.clear();
  for (const DeviceConfig& c : config_.devices) {
    options.devices.push_back(session::DeviceConfig{c.name, c.threads, c.memory_bytes});
  }
  // Every compile the daemon's sessions make is bounded, whoever asks for it.
  options.compile_timeout_seconds = config_.compile_timeout_seconds;
  options.compile_timeout_setting = "compile_timeout_seconds";
  GE_ASSIGN_OR_RETURN(runtime_, session::Runtime::Create(options));
  if (runtime_->cache() != nullptr) Logger("server").info("compiled-model cache at {}", runtime_->cache()->dir());
  return absl::OkStatus();
}

absl::Status Daemon::OpenRepository() {
  if (config_.model_repository.empty()) return absl::OkStatus();
  serving::RepositoryOptions options;
  options.dir = config_.model_repository;
  GE_ASSIGN_OR_RETURN(options.mode, serving::ParseControlMode(config_.model_control_mode));
  options.startup_models = config_.load_model;
  options.load.memory = memory_budget_;  // executors count against the daemon's budget
  options.load.max_tensor_bytes = config_.max_tensor_bytes;
  options.load.compile_timeout_seconds = config_.compile_timeout_seconds;
  options.load.default_max_queue_size = config_.serving_max_queue_size;
  ServerMetrics* metrics = metrics_.get();
  options.load.observer.request = [metrics](const std::string& model, const std::string& version,
                                            absl::StatusCode code) {
    metrics->inference_requests_total.WithLabels({model, version, absl::StatusCodeToString(code)}).Increment();
  };
  options.load.observer.batch = [metrics](const std::string& model, int64_t rows) {
    metrics->inference_batch_size.WithLabels({model}).Observe(static_cast<double>(rows));
  };
  options.load.observer.queue = [metrics](const std::string& model, double seconds) {
    metrics->inference_queue_duration.WithLabels({model}).Observe(seconds);
  };
  GE_ASSIGN_OR_RETURN(repository_, serving::ModelRepository::Open(*runtime_, std::move(options)));
  kserve_ = std::make_unique<KServeService>(context_, *repository_);
  return absl::OkStatus();
}

absl::Status Daemon::StartDevices() {
  for (int i = 0; i < runtime_->num_devices(); ++i) {
    const session::RuntimeDevice& rd = runtime_->device(i);
    const DeviceConfig& c = config_.devices[i];
    Device d;
    d.name = rd.name();
    d.threads = rd.threads();
    d.index = i;
    d.queue = std::make_unique<RunQueue>(c.name, c.workers, c.queue_capacity);
    devices_.push_back(std::move(d));
  }
  // Each session allocates through a view of its device charged to its
  // tenant's device-memory quota, and uses the cache in its tenant's
  // namespace (the operator's in open mode: every caller is the operator's
  // local user then).
  sessions_ = std::make_unique<SessionManager>(
      [this](const OptionMap& options, ManagedSession& entry) -> absl::Status {
        const session::CacheScope scope =
            tenants_->open() ? runtime_->OperatorScope() : runtime_->TenantScope(entry.tenant->name);
        entry.session = runtime_->NewSession(options, devices_[entry.device].index, scope, entry.tenant->device_memory);
        // Host memory of its runs: the tenant's max_memory_bytes, then the budget;
        // no single allocation beyond max_tensor_bytes.
        entry.session->set_memory_quota(entry.tenant->memory, config_.max_tensor_bytes);
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

// Authenticates calls from their metadata in gRPC's auth filter, before the
// call reaches the service and its message is parsed (secure and local
// credentials only: grpc++ offers no hook for insecure ones). The health
// service stays open; the service's own AdmitCall checks again.
class TokenAuthProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenAuthProcessor(const TenantRegistry& tenants) : tenants_(tenants) {}
  bool IsBlocking() const override { return false; }  // a hash and compares
  grpc::Status Process(const InputMetadata& metadata, grpc::AuthContext*, OutputMetadata*, OutputMetadata*) override {
    auto path = metadata.find(":path");
    if (path == metadata.end()) return grpc::Status::OK;  // not shown to us: the service decides
    const std::string_view method(path->second.data(), path->second.size());
    if (method.rfind("/grpc.health.v1.Health/", 0) == 0) return grpc::Status::OK;
    std::string_view authorization;
    if (auto it = metadata.find("authorization"); it != metadata.end()) {
      authorization = std::string_view(it->second.data(), it->second.size());
    }
    absl::StatusOr<Tenant*> tenant = tenants_.Authenticate(authorization);
    if (tenant.ok()) return grpc::Status::OK;
    AuditRefusal("", method, tenant.status());
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, std::string(tenant.status().message()));
  }

 private:
  const TenantRegistry& tenants_;
};

// Removes a socket left by an earlier daemon (only a socket: never another
// kind of file at that path).
absl::Status RemoveStaleSocket(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return absl::OkStatus();
  if (!S_ISSOCK(st.st_mode)) return InvalidArgument("unix_socket ", path, " exists and is not a socket");
  if (unlink(path.c_str()) != 0) return InvalidArgument("unix_socket ", path, ": cannot remove the old socket");
  return absl::OkStatus();
}

}  // namespace

absl::Status Daemon::StartGrpc() {
  GE_RETURN_IF_ERROR(SplitHostPort(config_.listen, &grpc_host_, &grpc_port_));
  service_ = std::make_unique<GraphEngineService>(context_);
  grpc::EnableDefaultHealthCheckService(true);
  GE_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials, ServerCredentials(config_));
  if (config_.reflection) GE_RETURN_IF_ERROR(LoadReflection());
  // With tenants, tokens are checked from the metadata before the message
  // is read wherever the credentials allow it (TLS, the unix socket).
  std::shared_ptr<grpc::AuthMetadataProcessor> auth;
  if (!tenants_->open()) auth = std::make_shared<TokenAuthProcessor>(*tenants_);
  if (auth != nullptr && !config_.tls_cert_file.empty()) credentials->SetAuthMetadataProcessor(auth);
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(config_.listen, credentials, &bound);
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> unix_acceptor;
  if (!config_.unix_socket.empty()) {
    GE_RETURN_IF_ERROR(RemoveStaleSocket(config_.unix_socket));
    // ged accepts on its socket itself (0600 from the start) and admits
    // only peers of its own uid (SO_PEERCRED: server/unix_listener.h); the
    // connections it admits get local credentials, which carry the auth
    // processor.
    GE_ASSIGN_OR_RETURN(unix_listener_, UnixListener::Bind(config_.unix_socket));
    std::shared_ptr<grpc::ServerCredentials> local = grpc::experimental::LocalServerCredentials(UDS);
    if (auth != nullptr) local->SetAuthMetadataProcessor(auth);
    unix_acceptor = builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, local);
  }
  builder.RegisterService(service_.get());
  if (kserve_ != nullptr) builder.RegisterService(kserve_.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(config_.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config_.max_message_bytes));
  const mode_t old_umask = umask(0177);
  server_ = builder.BuildAndStart();
  umask(old_umask);
  if (server_ == nullptr || bound == 0) {
    return absl::UnavailableError(StrCat("cannot serve gRPC on ", config_.listen, ": address in use or not local"));
  }
  if (unix_listener_ != nullptr) {
    unix_listener_->Start(std::move(unix_acceptor), geteuid(), [](uid_t uid, pid_t pid) {
      Logger("audit").warn("refused unix-socket peer uid={} pid={} class=transport: not ged's uid", uid, pid);
    });
  }
  grpc_port_ = bound;
  const bool serving = repository_ == nullptr;  // else once the start-up models are loaded
  server_->GetHealthCheckService()->SetServingStatus(serving);
  server_->GetHealthCheckService()->SetServingStatus(kServiceName, serving);
  return absl::OkStatus();
}

absl::Status Daemon::StartHttp() {
  std::map<std::string, HttpEndpoint::Handler> routes;
  routes["/metrics"] = [this](const HttpRequest&) {
    return HttpReply{200, "text/plain; version=0.0.4; charset=utf-8", registry_.Render()};
  };
  routes["/healthz"] = [](const HttpRequest&) { return HttpReply{200, "text/plain; charset=utf-8", "ok\n"}; };
  routes["/readyz"] = [this](const HttpRequest&) {
    if (context_.draining.load()) return HttpReply{503, "text/plain; charset=utf-8", "draining\n"};
    if (repository_ != nullptr && !repository_started_.load()) {
      return HttpReply{503, "text/plain; charset=utf-8", "loading models\n"};
    }
    return HttpReply{200, "text/plain; charset=utf-8", "ready\n"};
  };
  GE_ASSIGN_OR_RETURN(http_, HttpEndpoint::Start(config_.metrics_listen, std::move(routes)));
  return absl::OkStatus();
}

absl::Status Daemon::StartKServeHttp() {
  const std::string address = EffectiveHttpListen(config_);
  if (address.empty()) return absl::OkStatus();
  int port = 0;
  GE_RETURN_IF_ERROR(SplitHostPort(address, &kserve_http_host_, &port));
  JsonLimits limits;
  limits.max_elements = config_.max_json_elements;
  limits.max_tensor_bytes = config_.max_tensor_bytes;
  kserve_http_ = std::make_unique<KServeHttp>(context_, repository_.get(), limits);
  HttpOptions options;
  options.what = "KServe HTTP, http_listen";
  options.threads = static_cast<int>(config_.http_threads);
  options.max_body_bytes = config_.max_message_bytes;
  options.keep_alive = true;
  KServeHttp* handler = kserve_http_.get();
  std::map<std::string, HttpEndpoint::Handler> routes;
  routes["/v2"] = [handler](const HttpRequest& request) { return handler->Handle(request); };
  GE_ASSIGN_OR_RETURN(kserve_http_endpoint_, HttpEndpoint::Start(address, std::move(routes), options));
  return absl::OkStatus();
}

std::string Daemon::http_address() const {
  if (kserve_http_endpoint_ == nullptr) return "";
  const bool v6 = kserve_http_host_.find(':') != std::string::npos;
  return StrCat(v6 ? "[" : "", kserve_http_host_, v6 ? "]" : "", ":", kserve_http_endpoint_->port());
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
  if (runtime_->cache() != nullptr) {
    // Counters only grow: export what the cache counted since the last scrape.
    const cache::CacheStats now = runtime_->cache()->stats();
    CounterAdd(metrics_->cache_hits_total, now.hits - exported_cache_stats_.hits);
    CounterAdd(metrics_->cache_misses_total, now.misses - exported_cache_stats_.misses);
    CounterAdd(metrics_->cache_evictions_total, now.evictions - exported_cache_stats_.evictions);
    CounterAdd(metrics_->cache_direct_hits_total, now.direct_hits - exported_cache_stats_.direct_hits);
    CounterAdd(metrics_->cache_direct_misses_total, now.direct_misses - exported_cache_stats_.direct_misses);
    metrics_->cache_bytes.Get().Set(static_cast<double>(now.bytes));
    exported_cache_stats_ = now;
  }
  const int64_t imports = runtime_->imports();
  CounterAdd(metrics_->model_imports_total, imports - exported_imports_);
  exported_imports_ = imports;
  metrics_->pending_requests.Get().Set(static_cast<double>(context_.inflight.load()));
  // Sessions run on host memory: the devices share the process's resident
  // set and the host's physical memory until they run on HAL devices.
  // Device memory is what sessions hold on the device (static arenas,
  // variables); a device without a capacity shares the host's memory.
  const double host = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  for (const Device& d : devices_) {
    const device::MemoryStats stats = runtime_->device(d.index).memory_stats();
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
  if (repository_ != nullptr) {
    if (config_.model_control_mode == "poll" &&
        SteadyNowNs() - last_poll_ns_ >= static_cast<int64_t>(config_.repository_poll_secs * 1e9)) {
      last_poll_ns_ = SteadyNowNs();
      repository_->Poll();
    }
    repository_->Reap();
  }
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
  if (unix_listener_ != nullptr) unix_listener_->Stop();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  server_->Wait();
  if (repository_ != nullptr) repository_->Shutdown();
  return drained;
}

Daemon::ReleaseReport Daemon::Close() {
  ReleaseReport report;
  if (closed_) return report;
  closed_ = true;
  Shutdown();
  unix_listener_.reset();
  server_.reset();
  kserve_http_endpoint_.reset();  // its workers finish their requests first
  kserve_http_.reset();
  kserve_.reset();
  repository_.reset();
  http_.reset();
  for (Device& d : devices_) d.queue.reset();  // drains: runs still use sessions and pools
  op_cache_.reset();
  sessions_.reset();
  devices_.clear();
  shared_memory_.reset();
  if (!config_.unix_socket.empty()) unlink(config_.unix_socket.c_str());
  report.calls_total = context_.calls_total.load();
  report.calls_left = context_.inflight.load();
  report.sessions_left = ManagedSession::Live();
  return report;
}

Daemon::~Daemon() { Close(); }

}  // namespace ge::server
