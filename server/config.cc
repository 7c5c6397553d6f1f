// Daemon configuration: defaults, YAML (yaml-cpp), device flag parsing,
// validation and printing.
#include "server/config.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "base/status.h"
#include "base/strings.h"
#include "session/runtime.h"
#include "yaml-cpp/yaml.h"

namespace ge::server {
namespace {

template <typename T>
absl::Status Read(const YAML::Node& node, std::string_view key, std::string_view source, T& out) {
  try {
    out = node.as<T>();
  } catch (const std::exception& e) {
    return InvalidArgument(source, ": bad value for '", key, "': ", e.what());
  }
  return absl::OkStatus();
}

absl::Status ApplyDevice(const YAML::Node& node, std::string_view source, DeviceConfig& device) {
  if (!node.IsMap()) return InvalidArgument(source, ": each entry of 'devices' must be a map");
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key == "name") GE_RETURN_IF_ERROR(Read(kv.second, "devices.name", source, device.name));
    else if (key == "threads") GE_RETURN_IF_ERROR(Read(kv.second, "devices.threads", source, device.threads));
    else if (key == "workers") GE_RETURN_IF_ERROR(Read(kv.second, "devices.workers", source, device.workers));
    else if (key == "queue_capacity") {
      GE_RETURN_IF_ERROR(Read(kv.second, "devices.queue_capacity", source, device.queue_capacity));
    } else if (key == "memory_bytes") {
      GE_RETURN_IF_ERROR(Read(kv.second, "devices.memory_bytes", source, device.memory_bytes));
    } else {
      return InvalidArgument(source, ": unknown key 'devices.", key,
                             "' (name, threads, workers, queue_capacity, memory_bytes)");
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyTenant(const YAML::Node& node, std::string_view source, TenantConfig& tenant) {
  if (!node.IsMap()) return InvalidArgument(source, ": each entry of 'tenants' must be a map");
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key == "name") GE_RETURN_IF_ERROR(Read(kv.second, "tenants.name", source, tenant.name));
    else if (key == "token_sha256") GE_RETURN_IF_ERROR(Read(kv.second, "tenants.token_sha256", source, tenant.token_sha256));
    else if (key == "max_sessions") GE_RETURN_IF_ERROR(Read(kv.second, "tenants.max_sessions", source, tenant.max_sessions));
    else if (key == "max_concurrent_runs") {
      GE_RETURN_IF_ERROR(Read(kv.second, "tenants.max_concurrent_runs", source, tenant.max_concurrent_runs));
    } else if (key == "max_device_memory_bytes") {
      GE_RETURN_IF_ERROR(
          Read(kv.second, "tenants.max_device_memory_bytes", source, tenant.max_device_memory_bytes));
    } else if (key == "max_queued_calls") {
      GE_RETURN_IF_ERROR(Read(kv.second, "tenants.max_queued_calls", source, tenant.max_queued_calls));
    } else if (key == "max_memory_bytes") {
      GE_RETURN_IF_ERROR(Read(kv.second, "tenants.max_memory_bytes", source, tenant.max_memory_bytes));
    } else if (key == "admin") {
      GE_RETURN_IF_ERROR(Read(kv.second, "tenants.admin", source, tenant.admin));
    } else if (key == "models") {
      GE_RETURN_IF_ERROR(Read(kv.second, "tenants.models", source, tenant.models));
    } else {
      return InvalidArgument(source, ": unknown key 'tenants.", key,
                             "' (name, token_sha256, max_sessions, max_concurrent_runs, max_device_memory_bytes, "
                             "max_queued_calls, max_memory_bytes, admin, models)");
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyKey(const std::string& key, const YAML::Node& value, std::string_view source, ServerConfig& c) {
  if (key == "listen") return Read(value, key, source, c.listen);
  if (key == "metrics_listen") return Read(value, key, source, c.metrics_listen);
  if (key == "http_listen") return Read(value, key, source, c.http_listen);
  if (key == "http_threads") return Read(value, key, source, c.http_threads);
  if (key == "max_json_elements") return Read(value, key, source, c.max_json_elements);
  if (key == "ready_file") return Read(value, key, source, c.ready_file);
  if (key == "cache_dir") return Read(value, key, source, c.cache_dir);
  if (key == "cache_max_bytes") return Read(value, key, source, c.cache_max_bytes);
  if (key == "cache_remote") return Read(value, key, source, c.cache_remote);
  if (key == "cache_remote_key_file") return Read(value, key, source, c.cache_remote_key_file);
  if (key == "weights_root") return Read(value, key, source, c.weights_root);
  if (key == "plugin_dir") return Read(value, key, source, c.plugin_dir);
  if (key == "log_level") return Read(value, key, source, c.log_level);
  if (key == "session_idle_timeout_seconds") return Read(value, key, source, c.session_idle_timeout_seconds);
  if (key == "shutdown_timeout_seconds") return Read(value, key, source, c.shutdown_timeout_seconds);
  if (key == "max_message_bytes") return Read(value, key, source, c.max_message_bytes);
  if (key == "max_tensor_bytes") return Read(value, key, source, c.max_tensor_bytes);
  if (key == "max_outputs") return Read(value, key, source, c.max_outputs);
  if (key == "max_graphs_per_session") return Read(value, key, source, c.max_graphs_per_session);
  if (key == "max_graph_nodes") return Read(value, key, source, c.max_graph_nodes);
  if (key == "max_inter_op_threads") return Read(value, key, source, c.max_inter_op_threads);
  if (key == "max_loop_iterations") return Read(value, key, source, c.max_loop_iterations);
  if (key == "compile_timeout_seconds") return Read(value, key, source, c.compile_timeout_seconds);
  if (key == "allow_insecure_transport") return Read(value, key, source, c.allow_insecure_transport);
  if (key == "unix_socket") return Read(value, key, source, c.unix_socket);
  if (key == "tls_cert_file") return Read(value, key, source, c.tls_cert_file);
  if (key == "tls_key_file") return Read(value, key, source, c.tls_key_file);
  if (key == "tls_client_ca_file") return Read(value, key, source, c.tls_client_ca_file);
  if (key == "reflection") return Read(value, key, source, c.reflection);
  if (key == "op_cache_capacity") return Read(value, key, source, c.op_cache_capacity);
  if (key == "memory_budget_bytes") return Read(value, key, source, c.memory_budget_bytes);
  if (key == "shared_memory") return Read(value, key, source, c.shared_memory);
  if (key == "testing_retain_bytes_per_run") return Read(value, key, source, c.testing_retain_bytes_per_run);
  if (key == "model_repository") return Read(value, key, source, c.model_repository);
  if (key == "model_control_mode") return Read(value, key, source, c.model_control_mode);
  if (key == "load_model") return Read(value, key, source, c.load_model);
  if (key == "repository_poll_secs") return Read(value, key, source, c.repository_poll_secs);
  if (key == "serving_max_queue_size") return Read(value, key, source, c.serving_max_queue_size);
  if (key == "devices") {
    if (!value.IsSequence()) return InvalidArgument(source, ": 'devices' must be a list");
    c.devices.clear();
    for (const auto& item : value) {
      c.devices.emplace_back();
      GE_RETURN_IF_ERROR(ApplyDevice(item, source, c.devices.back()));
    }
    return absl::OkStatus();
  }
  if (key == "tenants") {
    if (!value.IsSequence()) return InvalidArgument(source, ": 'tenants' must be a list");
    c.tenants.clear();
    for (const auto& item : value) {
      c.tenants.emplace_back();
      GE_RETURN_IF_ERROR(ApplyTenant(item, source, c.tenants.back()));
    }
    return absl::OkStatus();
  }
  return InvalidArgument(source, ": unknown configuration key '", key, "'");
}

absl::Status CheckBound(std::string_view key, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high) return InvalidArgument(key, " must be in [", low, ", ", high, "], not ", value);
  return absl::OkStatus();
}

bool IsHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char ch : s) {
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return true;
}

}  // namespace

ServerConfig DefaultConfig() {
  ServerConfig config;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg != nullptr && *xdg != '\0') config.cache_dir = StrCat(xdg, "/ged");
  else if (home != nullptr && *home != '\0') config.cache_dir = StrCat(home, "/.cache/ged");
  else config.cache_dir = "/var/cache/ged";
  return config;
}

absl::Status ApplyYaml(std::string_view yaml_text, std::string_view source, ServerConfig& config) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const std::exception& e) {
    return InvalidArgument(source, ": not valid YAML: ", e.what());
  }
  if (root.IsNull()) return absl::OkStatus();
  if (!root.IsMap()) return InvalidArgument(source, ": the configuration must be a YAML map");
  for (const auto& kv : root) {
    GE_RETURN_IF_ERROR(ApplyKey(kv.first.as<std::string>(), kv.second, source, config));
  }
  return absl::OkStatus();
}

absl::Status ApplyYamlFile(const std::string& path, ServerConfig& config) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read configuration file ", path);
  std::stringstream text;
  text << in.rdbuf();
  return ApplyYaml(text.str(), path, config);
}

absl::StatusOr<std::vector<DeviceConfig>> ParseDevicesFlag(std::string_view text) {
  std::vector<DeviceConfig> devices;
  std::stringstream in{std::string(text)};
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    DeviceConfig device;
    const size_t eq = item.find('=');
    device.name = item.substr(0, eq);
    if (eq != std::string::npos) {
      char* end = nullptr;
      const long threads = std::strtol(item.c_str() + eq + 1, &end, 10);
      if (*end != '\0' || threads < 0 || threads > 4096) {
        return InvalidArgument("bad --devices entry '", item, "': expected cpu:N or cpu:N=THREADS");
      }
      device.threads = static_cast<int>(threads);
    }
    devices.push_back(device);
  }
  if (devices.empty()) return InvalidArgument("--devices names no device (expected e.g. cpu:0,cpu:1=4)");
  return devices;
}

absl::Status SplitHostPort(std::string_view address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgument("bad address '", address, "': expected HOST:PORT");
  }
  std::string h(address.substr(0, colon));
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  const std::string p(address.substr(colon + 1));
  char* end = nullptr;
  const long value = std::strtol(p.c_str(), &end, 10);
  if (p.empty() || *end != '\0' || value < 0 || value > 65535) {
    return InvalidArgument("bad port in address '", address, "': expected 0..65535");
  }
  *host = h;
  *port = static_cast<int>(value);
  return absl::OkStatus();
}

std::string EffectiveHttpListen(const ServerConfig& config) {
  if (config.http_listen == "off") return "";
  if (!config.http_listen.empty()) return config.http_listen;
  return config.model_repository.empty() ? "" : "127.0.0.1:8000";
}

bool IsLoopbackHost(std::string_view host) {
  return host == "localhost" || host == "::1" || host.substr(0, 4) == "127.";
}

absl::Status ValidateConfig(const ServerConfig& config) {
  if (config.cache_max_bytes < 0) return InvalidArgument("cache_max_bytes must be >= 0 (0: no limit)");
  if (!config.cache_remote.empty()) {
    GE_RETURN_IF_ERROR(session::CheckRemoteCacheSettings(config.cache_remote, config.cache_remote_key_file));
  }
  std::string host;
  int port = 0;
  GE_RETURN_IF_ERROR(SplitHostPort(config.listen, &host, &port));
  if (config.tenants.empty() && !IsLoopbackHost(host)) {
    return InvalidArgument("listen address ", config.listen,
                           " is not loopback: without tenants (and their tokens) ged serves loopback only");
  }
  if (!IsLoopbackHost(host) && config.tls_cert_file.empty() && !config.allow_insecure_transport) {
    return InvalidArgument("listen address ", config.listen,
                           " is not loopback and has no TLS: bearer tokens would cross the network in cleartext. "
                           "Set tls_cert_file and tls_key_file, or allow_insecure_transport: true when a "
                           "trusted layer below (a service mesh, a private link) encrypts the traffic");
  }
  if (!config.unix_socket.empty()) {
    if (config.unix_socket.front() != '/' || config.unix_socket.size() > 100) {
      return InvalidArgument("unix_socket '", config.unix_socket,
                             "' must be an absolute path of at most 100 characters");
    }
  }
  std::string mhost;
  GE_RETURN_IF_ERROR(SplitHostPort(config.metrics_listen, &mhost, &port));
  if (const std::string http = EffectiveHttpListen(config); !http.empty()) {
    std::string hhost;
    GE_RETURN_IF_ERROR(SplitHostPort(http, &hhost, &port));
    if (config.tenants.empty() && !IsLoopbackHost(hhost)) {
      return InvalidArgument("http_listen address ", http,
                             " is not loopback: without tenants (and their tokens) ged serves loopback only");
    }
    if (!IsLoopbackHost(hhost) && !config.allow_insecure_transport) {
      return InvalidArgument("http_listen address ", http,
                             " is not loopback and ged's HTTP has no TLS: bearer tokens would cross the network in "
                             "cleartext. Put a TLS proxy in front and set allow_insecure_transport: true, or "
                             "listen on loopback");
    }
  }
  GE_RETURN_IF_ERROR(CheckBound("http_threads", config.http_threads, 1, 1024));
  GE_RETURN_IF_ERROR(CheckBound("max_json_elements", config.max_json_elements, 16, int64_t{1} << 32));
  if (config.devices.empty()) return InvalidArgument("no device configured");
  std::set<std::string> names;
  for (const DeviceConfig& d : config.devices) {
    if (d.name.rfind("cpu:", 0) != 0 || d.name.size() == 4) {
      return InvalidArgument("device '", d.name, "' is not a cpu:N device");
    }
    if (!names.insert(d.name).second) return InvalidArgument("device ", d.name, " is configured twice");
    if (d.workers < 1 || d.queue_capacity < 0 || d.threads < 0 || d.memory_bytes < 0) {
      return InvalidArgument("device ", d.name,
                             ": workers must be >= 1, threads, queue_capacity and memory_bytes >= 0");
    }
  }
  std::set<std::string> tenants;
  for (const TenantConfig& t : config.tenants) {
    if (t.name.empty()) return InvalidArgument("a tenant has no name");
    if (!tenants.insert(t.name).second) return InvalidArgument("tenant ", t.name, " is configured twice");
    if (!IsHex64(t.token_sha256)) {
      return InvalidArgument("tenant ", t.name, ": token_sha256 must be 64 lowercase hex digits");
    }
    if (t.max_sessions < 1 || t.max_concurrent_runs < 1) {
      return InvalidArgument("tenant ", t.name, ": max_sessions and max_concurrent_runs must be >= 1");
    }
    if (t.max_device_memory_bytes < 0) {
      return InvalidArgument("tenant ", t.name, ": max_device_memory_bytes must be >= 0 (0: unlimited)");
    }
    if (t.max_queued_calls < 1) return InvalidArgument("tenant ", t.name, ": max_queued_calls must be >= 1");
    if (t.max_memory_bytes < 0) {
      return InvalidArgument("tenant ", t.name, ": max_memory_bytes must be >= 0 (0: unlimited)");
    }
  }
  if (config.session_idle_timeout_seconds <= 0 || config.shutdown_timeout_seconds < 0) {
    return InvalidArgument("session_idle_timeout_seconds must be > 0 and shutdown_timeout_seconds >= 0");
  }
  if (config.max_message_bytes < 1024 || config.max_message_bytes > 2147483647) {
    return InvalidArgument("max_message_bytes must be in [1024, 2147483647]");
  }
  GE_RETURN_IF_ERROR(CheckBound("max_tensor_bytes", config.max_tensor_bytes, 1, int64_t{1} << 50));
  GE_RETURN_IF_ERROR(CheckBound("max_outputs", config.max_outputs, 1, 1000000));
  GE_RETURN_IF_ERROR(CheckBound("max_graphs_per_session", config.max_graphs_per_session, 1, 1000000));
  GE_RETURN_IF_ERROR(CheckBound("max_graph_nodes", config.max_graph_nodes, 1, int64_t{1} << 31));
  GE_RETURN_IF_ERROR(CheckBound("max_inter_op_threads", config.max_inter_op_threads, 0, 65536));
  GE_RETURN_IF_ERROR(CheckBound("max_loop_iterations", config.max_loop_iterations, 1, int64_t{1} << 50));
  if (!(config.compile_timeout_seconds > 0) || config.compile_timeout_seconds > 86400 * 7) {
    return InvalidArgument("compile_timeout_seconds must be > 0 and at most a week (604800)");
  }
  if (config.tls_cert_file.empty() != config.tls_key_file.empty()) {
    return InvalidArgument("tls_cert_file and tls_key_file go together: set both for TLS, or neither");
  }
  if (!config.tls_client_ca_file.empty() && config.tls_cert_file.empty()) {
    return InvalidArgument("tls_client_ca_file (mutual TLS) needs tls_cert_file and tls_key_file");
  }
  if (config.memory_budget_bytes < 0) {
    return InvalidArgument("memory_budget_bytes must be >= 0 (0: 80% of the host's memory limit)");
  }
  if (config.op_cache_capacity < 0 || config.op_cache_capacity > 1000000) {
    return InvalidArgument("op_cache_capacity must be in [0, 1000000]");
  }
  if (config.testing_retain_bytes_per_run < 0 || config.testing_retain_bytes_per_run > (int64_t{1} << 30)) {
    return InvalidArgument("testing_retain_bytes_per_run must be in [0, 1 GiB]");
  }
  if (config.model_control_mode != "none" && config.model_control_mode != "explicit" &&
      config.model_control_mode != "poll") {
    return InvalidArgument("model_control_mode must be none, explicit or poll, not '", config.model_control_mode, "'");
  }
  if (!config.load_model.empty() && config.model_control_mode != "explicit") {
    return InvalidArgument("load_model needs model_control_mode explicit (the other modes load every model)");
  }
  if (!config.load_model.empty() && config.model_repository.empty()) {
    return InvalidArgument("load_model needs model_repository");
  }
  if (!(config.repository_poll_secs >= 1) || config.repository_poll_secs > 86400) {
    return InvalidArgument("repository_poll_secs must be in [1, 86400]");
  }
  GE_RETURN_IF_ERROR(CheckBound("serving_max_queue_size", config.serving_max_queue_size, 1, 1000000));
  return absl::OkStatus();
}

std::string ConfigToYaml(const ServerConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "listen" << YAML::Value << config.listen;
  out << YAML::Key << "metrics_listen" << YAML::Value << config.metrics_listen;
  out << YAML::Key << "http_listen" << YAML::Value << config.http_listen;
  out << YAML::Key << "http_threads" << YAML::Value << config.http_threads;
  out << YAML::Key << "max_json_elements" << YAML::Value << config.max_json_elements;
  out << YAML::Key << "ready_file" << YAML::Value << config.ready_file;
  out << YAML::Key << "cache_dir" << YAML::Value << config.cache_dir;
  out << YAML::Key << "cache_max_bytes" << YAML::Value << config.cache_max_bytes;
  out << YAML::Key << "cache_remote" << YAML::Value << config.cache_remote;
  out << YAML::Key << "cache_remote_key_file" << YAML::Value << config.cache_remote_key_file;
  out << YAML::Key << "weights_root" << YAML::Value << config.weights_root;
  out << YAML::Key << "plugin_dir" << YAML::Value << config.plugin_dir;
  out << YAML::Key << "log_level" << YAML::Value << config.log_level;
  out << YAML::Key << "session_idle_timeout_seconds" << YAML::Value << config.session_idle_timeout_seconds;
  out << YAML::Key << "shutdown_timeout_seconds" << YAML::Value << config.shutdown_timeout_seconds;
  out << YAML::Key << "max_message_bytes" << YAML::Value << config.max_message_bytes;
  out << YAML::Key << "max_tensor_bytes" << YAML::Value << config.max_tensor_bytes;
  out << YAML::Key << "max_outputs" << YAML::Value << config.max_outputs;
  out << YAML::Key << "max_graphs_per_session" << YAML::Value << config.max_graphs_per_session;
  out << YAML::Key << "max_graph_nodes" << YAML::Value << config.max_graph_nodes;
  out << YAML::Key << "max_inter_op_threads" << YAML::Value << config.max_inter_op_threads;
  out << YAML::Key << "max_loop_iterations" << YAML::Value << config.max_loop_iterations;
  out << YAML::Key << "compile_timeout_seconds" << YAML::Value << config.compile_timeout_seconds;
  out << YAML::Key << "allow_insecure_transport" << YAML::Value << config.allow_insecure_transport;
  out << YAML::Key << "unix_socket" << YAML::Value << config.unix_socket;
  out << YAML::Key << "tls_cert_file" << YAML::Value << config.tls_cert_file;
  out << YAML::Key << "tls_key_file" << YAML::Value << config.tls_key_file;
  out << YAML::Key << "tls_client_ca_file" << YAML::Value << config.tls_client_ca_file;
  out << YAML::Key << "reflection" << YAML::Value << config.reflection;
  out << YAML::Key << "op_cache_capacity" << YAML::Value << config.op_cache_capacity;
  out << YAML::Key << "memory_budget_bytes" << YAML::Value << config.memory_budget_bytes;
  out << YAML::Key << "shared_memory" << YAML::Value << config.shared_memory;
  if (config.testing_retain_bytes_per_run > 0) {
    out << YAML::Key << "testing_retain_bytes_per_run" << YAML::Value << config.testing_retain_bytes_per_run;
  }
  out << YAML::Key << "model_repository" << YAML::Value << config.model_repository;
  out << YAML::Key << "model_control_mode" << YAML::Value << config.model_control_mode;
  out << YAML::Key << "load_model" << YAML::Value << YAML::Flow << config.load_model;
  out << YAML::Key << "repository_poll_secs" << YAML::Value << config.repository_poll_secs;
  out << YAML::Key << "serving_max_queue_size" << YAML::Value << config.serving_max_queue_size;
  out << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (const DeviceConfig& d : config.devices) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name << YAML::Key << "threads"
        << YAML::Value << d.threads << YAML::Key << "workers" << YAML::Value << d.workers << YAML::Key
        << "queue_capacity" << YAML::Value << d.queue_capacity << YAML::Key << "memory_bytes" << YAML::Value
        << d.memory_bytes << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "tenants" << YAML::Value << YAML::BeginSeq;
  for (const TenantConfig& t : config.tenants) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.name << YAML::Key << "token_sha256" << YAML::Value
        << t.token_sha256 << YAML::Key << "max_sessions" << YAML::Value << t.max_sessions << YAML::Key
        << "max_concurrent_runs" << YAML::Value << t.max_concurrent_runs << YAML::Key << "max_device_memory_bytes"
        << YAML::Value << t.max_device_memory_bytes << YAML::Key << "max_queued_calls" << YAML::Value
        << t.max_queued_calls << YAML::Key << "max_memory_bytes" << YAML::Value << t.max_memory_bytes << YAML::Key
        << "admin" << YAML::Value << t.admin << YAML::Key << "models" << YAML::Value << YAML::Flow << t.models
        << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ge::server
