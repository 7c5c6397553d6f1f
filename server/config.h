// ServerConfig: everything the daemon is configured with, from embedded
// defaults, then a YAML file (--config), then flags of the same names
// (server/main.cc). Parsed and validated once here; the rest of server/
// reads typed fields only. docs/cli.md lists every key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ge::server {

struct TenantConfig {
  std::string name;
  std::string token_sha256;  // 64 hex digits: SHA-256 of the bearer token
  int64_t max_sessions = 64;
  int64_t max_concurrent_runs = 16;
  int64_t max_device_memory_bytes = 0;  // static arenas + variables, all devices; 0: unlimited
  // Calls of the tenant waiting in device run queues (not yet running), all
  // devices: one tenant cannot fill a queue the others share.
  int64_t max_queued_calls = 32;
  // Every byte the tenant's calls hold (device memory above, dynamic
  // outputs, intermediates, workspaces, ExecuteOp); 0: unlimited.
  int64_t max_memory_bytes = 0;
  // Model repositories (docs/serving.md): an admin tenant may load and
  // unload models; `models`, when not empty, lists the repository models
  // the tenant may infer and see (empty: all of them).
  bool admin = false;
  std::vector<std::string> models = {};
};

struct DeviceConfig {
  std::string name = "cpu:0";
  int threads = 0;               // intra-op threads; 0: every core
  int workers = 2;               // runs executing at once on the device
  int64_t queue_capacity = 64;   // runs waiting beyond the workers
  int64_t memory_bytes = 0;      // device memory capacity; 0: the host's memory
};

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  std::string metrics_listen = "127.0.0.1:9464";
  // KServe v2 over HTTP/REST (docs/serving.md): empty means 127.0.0.1:8000
  // when model_repository is set, else none; "off": none.
  std::string http_listen;
  int64_t http_threads = 16;  // HTTP requests served at once (civetweb workers)
  // Elements (values, arrays, objects) of one HTTP request's JSON; deeper
  // than 64 levels is refused whatever this says.
  int64_t max_json_elements = 4194304;
  std::string ready_file;
  std::string cache_dir;  // default: $XDG_CACHE_HOME/ged or ~/.cache/ged; empty: no cache
  int64_t cache_max_bytes = int64_t{8} << 30;  // LRU eviction beyond (0: no limit)
  std::string cache_remote;  // redis://HOST:PORT or unix:/PATH; empty: no remote tier
  std::string cache_remote_key_file;  // the remote tier's HMAC key (required with cache_remote)
  // Operator models (named in this configuration) read their files only
  // beneath this directory (empty: each model's own directory).
  std::string weights_root;
  std::string plugin_dir;
  std::string log_level = "info";
  std::vector<DeviceConfig> devices = {DeviceConfig()};
  std::vector<TenantConfig> tenants;  // empty: one default tenant, loopback only
  double session_idle_timeout_seconds = 3600;
  double shutdown_timeout_seconds = 30;
  // Bounds on what one request may ask for (docs/security.md, "Bounds").
  // Each refusal is RESOURCE_EXHAUSTED naming its key; each is checked
  // before anything of that size or count is allocated.
  int64_t max_message_bytes = 268435456;   // requests and replies beyond: RESOURCE_EXHAUSTED
  int64_t max_tensor_bytes = 1073741824;   // a request's tensor, or an output of a static shape
  int64_t max_outputs = 1024;              // outputs one call may ask for (ExecuteOp num_outputs, ...)
  int64_t max_graphs_per_session = 256;    // graphs and loaded models of one session
  int64_t max_graph_nodes = 1000000;       // nodes of one graph, its subgraphs included
  int64_t max_inter_op_threads = 256;      // daemon total of ge.exec.inter_op_parallelism workers
  int64_t max_loop_iterations = 10000000;  // one While/Loop execution; attributes cannot lift it
  double compile_timeout_seconds = 600;    // one graph's compilation
  // Transport: a non-loopback listen needs TLS unless this is set; a
  // unix_socket (mode 0600) serves local clients besides `listen`.
  bool allow_insecure_transport = false;
  std::string unix_socket;
  // TLS on the gRPC port: certificate and key (PEM) of the daemon; with a
  // client CA, mutual TLS (clients must present a certificate it signed).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  bool reflection = false;  // the gRPC server reflection service
  // What all tenants together may hold (their max_memory_bytes accounts);
  // 0: 80% of the smallest of physical memory, the cgroup memory limit and
  // RLIMIT_AS.
  int64_t memory_budget_bytes = 0;
  int64_t op_cache_capacity = 256;  // ExecuteOp's compiled single ops kept (0: none)
  // Shared-memory I/O for clients on this host (RegisterSharedMemory);
  // off by default, as in Triton: the daemon then maps client memory.
  bool shared_memory = false;
  // Testing only: every RunGraph keeps this many bytes for the daemon's life,
  // a deliberate leak (the negative control of the memory-growth test).
  int64_t testing_retain_bytes_per_run = 0;
  // Model repository (docs/serving.md): a Triton-layout directory served
  // over the KServe v2 protocol; empty: none.
  std::string model_repository;
  std::string model_control_mode = "none";  // none, explicit or poll
  std::vector<std::string> load_model;      // explicit mode: the models loaded at start-up
  double repository_poll_secs = 15;         // poll mode: rescan period
  // A model's batch queue bound when its config sets no max_queue_size.
  int64_t serving_max_queue_size = 1024;
};

// The defaults with the cache directory resolved from the environment.
ServerConfig DefaultConfig();

// Applies a YAML document's keys over `config`; unknown keys and bad values
// are InvalidArgument naming the key (and `source`, the file name).
absl::Status ApplyYaml(std::string_view yaml_text, std::string_view source, ServerConfig& config);
absl::Status ApplyYamlFile(const std::string& path, ServerConfig& config);

// "cpu:0,cpu:1=4": device names, each optionally with its thread count.
absl::StatusOr<std::vector<DeviceConfig>> ParseDevicesFlag(std::string_view text);

// Cross-field checks: addresses parse, devices are unique cpu:N names,
// tenants have names and 64-hex-digit hashes, without tenants the gRPC
// address is a loopback one, a non-loopback one needs TLS (or
// allow_insecure_transport), and every bound is positive.
absl::Status ValidateConfig(const ServerConfig& config);

// The configuration as YAML that ApplyYaml reads back (--print-config).
std::string ConfigToYaml(const ServerConfig& config);

// Splits "HOST:PORT" ("[::1]:50051" too); port 0 is allowed.
absl::Status SplitHostPort(std::string_view address, std::string* host, int* port);
bool IsLoopbackHost(std::string_view host);

// The HTTP/REST address the daemon serves (http_listen resolved), "" for none.
std::string EffectiveHttpListen(const ServerConfig& config);

}  // namespace ge::server
