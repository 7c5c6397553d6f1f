// ged: the graph engine daemon. Flag parsing (CLI11 lives in this file
// only), configuration layering (defaults, --config YAML, flags), the ready
// file, and the signal loop: SIGTERM or SIGINT drains and exits 0.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "base/logging.h"
#include "base/openmp_env.h"
#include "base/version.h"
#include "server/config.h"
#include "server/daemon.h"

namespace {

// ged's exit status when it stopped with call states or sessions it could
// not release (docs/cli.md): a bug of ged's, never of the client's.
constexpr int kExitStateLeaked = 3;

// Writes the ready file atomically (temp file + rename) so a reader never
// sees half of it.
absl::Status WriteReadyFile(const std::string& path, const ge::server::Daemon& daemon) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << "{\"grpc\": \"" << daemon.grpc_address() << "\", \"metrics\": \"" << daemon.metrics_address() << "\"";
    if (!daemon.http_address().empty()) out << ", \"http\": \"" << daemon.http_address() << "\"";
    out << ", \"pid\": " << getpid() << "}\n";
    if (!out) return ge::InvalidArgument("cannot write the ready file ", tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return ge::InvalidArgument("cannot write the ready file ", path, ": ", ec.message());
  return absl::OkStatus();
}

int Fail(const absl::Status& status) {
  std::cerr << "ged: error: " << status.message() << std::endl;
  return status.code() == absl::StatusCode::kInvalidArgument || status.code() == absl::StatusCode::kNotFound ? 1 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any engine plugin loads libgomp (base/openmp_env.h).
  const ge::OpenMpWaiting omp_waiting = ge::ConfigureOpenMpWaiting();
  CLI::App app{"ged: the graph engine daemon"};
  app.set_version_flag("--version", std::string("ged ") + GED_VERSION_STRING);
  std::string config_path, listen, metrics_listen, ready_file, cache_dir, plugin_dir, devices, log_level, unix_socket;
  std::string model_repository, model_control_mode, http_listen;
  std::vector<std::string> load_models;
  double idle_timeout = 0, shutdown_timeout = -1, poll_secs = 0;
  bool print_config = false, shared_memory = false, no_cache = false;
  app.add_option("--config", config_path, "YAML configuration file (docs/cli.md lists the keys)");
  app.add_option("--listen", listen, "gRPC address HOST:PORT (default 127.0.0.1:50051; port 0: a free port)");
  app.add_option("--unix-socket", unix_socket, "Also serve gRPC on this unix socket (mode 0600; clients: unix:PATH)");
  app.add_option("--metrics-listen", metrics_listen, "HTTP address for /metrics, /healthz, /readyz (default 127.0.0.1:9464)");
  app.add_option("--http-listen", http_listen,
                 "KServe v2 HTTP/REST address HOST:PORT (default 127.0.0.1:8000 with --model-repository, else "
                 "none; off: none; port 0: a free port)");
  app.add_option("--ready-file", ready_file,
                 "Write {\"grpc\", \"metrics\", \"http\" (when served), \"pid\"} as JSON here once serving");
  app.add_option("--cache-dir", cache_dir, "Compiled-model cache directory");
  app.add_flag("--no-cache", no_cache, "Run without the compiled-model cache");
  app.add_option("--plugin-dir", plugin_dir, "Extra directory of engine plugins");
  app.add_option("--devices", devices, "Devices: cpu:0,cpu:1=THREADS,...");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off");
  app.add_option("--session-idle-timeout", idle_timeout, "Seconds before an unused session is destroyed");
  app.add_option("--shutdown-timeout", shutdown_timeout, "Seconds in-flight calls get on SIGTERM");
  app.add_flag("--shared-memory", shared_memory,
               "Enable shared-memory I/O for clients on this host (RegisterSharedMemory; off by default)");
  app.add_option("--model-repository", model_repository,
                 "Serve the Triton-layout model repository DIR over the KServe v2 protocol (docs/serving.md)");
  app.add_option("--model-control-mode", model_control_mode,
                 "none (load every model, no load/unload), explicit (--load-model, then RepositoryModelLoad) or poll");
  app.add_option("--load-model", load_models, "Explicit mode: a model to load at start-up (repeatable)");
  app.add_option("--repository-poll-secs", poll_secs, "Poll mode: seconds between rescans of the repository");
  app.add_flag("--print-config", print_config, "Print the effective configuration as YAML and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "ged: error: " << e.what() << " (see ged --help)" << std::endl;
    return 1;
  }
  ge::server::ServerConfig config = ge::server::DefaultConfig();
  if (!config_path.empty()) {
    if (absl::Status s = ge::server::ApplyYamlFile(config_path, config); !s.ok()) return Fail(s);
  }
  if (!listen.empty()) config.listen = listen;
  if (!unix_socket.empty()) config.unix_socket = unix_socket;
  if (!metrics_listen.empty()) config.metrics_listen = metrics_listen;
  if (!http_listen.empty()) config.http_listen = http_listen;
  if (!ready_file.empty()) config.ready_file = ready_file;
  if (!cache_dir.empty()) config.cache_dir = cache_dir;
  if (no_cache) config.cache_dir.clear();
  if (!plugin_dir.empty()) config.plugin_dir = plugin_dir;
  if (!log_level.empty()) config.log_level = log_level;
  if (idle_timeout > 0) config.session_idle_timeout_seconds = idle_timeout;
  if (shutdown_timeout >= 0) config.shutdown_timeout_seconds = shutdown_timeout;
  if (shared_memory) config.shared_memory = true;
  if (!model_repository.empty()) config.model_repository = model_repository;
  if (!model_control_mode.empty()) config.model_control_mode = model_control_mode;
  if (!load_models.empty()) config.load_model = load_models;
  if (poll_secs > 0) config.repository_poll_secs = poll_secs;
  if (!devices.empty()) {
    auto parsed = ge::server::ParseDevicesFlag(devices);
    if (!parsed.ok()) return Fail(parsed.status());
    config.devices = *parsed;
  }
  if (absl::Status s = ge::server::ValidateConfig(config); !s.ok()) return Fail(s);
  if (print_config) {
    std::cout << ge::server::ConfigToYaml(config);
    return 0;
  }
  if (absl::Status s = ge::SetLogLevel(config.log_level); !s.ok()) return Fail(s);
  ge::LogOpenMpWaiting(omp_waiting);

  // Block the stop signals in every thread (threads inherit the mask), and
  // take them synchronously below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<std::unique_ptr<ge::server::Daemon>> daemon = ge::server::Daemon::Start(config);
  if (!daemon.ok()) return Fail(daemon.status());
  if (!config.ready_file.empty()) {
    if (absl::Status s = WriteReadyFile(config.ready_file, **daemon); !s.ok()) return Fail(s);
  }
  timespec tick{1, 0};
  for (;;) {
    const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT) {
      ge::Logger("server").info("signal {}: draining", sig);
      break;
    }
    (*daemon)->Tick();
  }
  const bool drained = (*daemon)->Shutdown();
  const ge::server::Daemon::ReleaseReport released = (*daemon)->Close();
  daemon->reset();
  if (!config.ready_file.empty()) std::remove(config.ready_file.c_str());
  if (released.calls_left != 0 || released.sessions_left != 0) {
    // A leak of ged's own: say so, and fail the exit so supervisors and
    // tests notice.
    ge::Logger("server").error("ged stopped with state left: {} of {} call(s) not released, {} session(s) alive",
                               released.calls_left, released.calls_total, released.sessions_left);
    return kExitStateLeaked;
  }
  ge::Logger("server").info("ged stopped{}; released every call state ({} calls) and session",
                            drained ? "" : " (some calls were cancelled)", released.calls_total);
  return 0;
}
