// Runtime: the root of an in-process ged (docs/architecture.md, "The runtime
// root"). One object owns what the daemon and gectl used to assemble each
// on their own:
//   - the engine registry (the built-in engines, then the plugin
//     directories' engines);
//   - the compiled-model cache (a local directory, optionally a Redis tier
//     whose entries are signed with the operator's key);
//   - the devices: each an intra-op thread pool and the memory sessions
//     allocate from (through a tenant's quota when one is given);
// and offers the one ingestion path (AddModel) and sessions wired to all of
// it (NewSession). Front ends (server/, client/gectl) use this header, the
// Session API and base/ and proto/ only.
//
// Ingestion: AddModel takes a ModelSource (an ONNX path or bytes, a
// GraphDef, a .gem's bytes or path) and IngestOptions (provenance, weights
// root, options) and returns the imported graph, or the compiled model of a
// .gem, ready for Session::AddGraph / AddCompiledModel. Client input gets
// the checks of session/ingest.h before the importer adds anything; operator
// input has its files resolved beneath the weights root.
//
// Direct mode (session/compile_cache.h): DirectSource turns an ONNX model
// (path or bytes) into a GraphSource, whose import is AddModel with the same
// options, so a cache hit by its direct key needs no import at all, and a
// miss imports through the same checks. imports() counts the models this
// runtime imported (ONNX and GraphDef), which shows that a hit did not.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "base/compute_budget.h"
#include "base/thread_pool.h"
#include "ge/v1/graph.pb.h"
#include "runtime/device/quota_device.h"
#include "session/compile_cache.h"
#include "session/ingest.h"
#include "session/session.h"

namespace ge::session {

// The compiled-model cache a Runtime opens.
struct CacheConfig {
  std::string dir;  // the local tier (created 0700)
  int64_t max_bytes = cache::kDefaultCacheMaxBytes;
  std::string remote;           // redis://HOST:PORT or unix:/PATH; empty: none
  std::string remote_key_file;  // the remote tier's HMAC key (required with `remote`)
};

struct DeviceConfig {
  std::string name = "cpu0";
  int threads = 0;           // intra-op threads, the caller's included; 0: every core
  int64_t memory_bytes = 0;  // 0: unlimited
};

struct RuntimeOptions {
  std::vector<std::string> plugin_dirs;
  // Options every engine gets at Initialize (the daemon's loop cap, say).
  std::map<std::string, std::string, std::less<>> engine_options;
  std::optional<CacheConfig> cache;  // none: no cache
  // A cache that cannot be opened: an error (true) or a warning, the runtime
  // then working without one (false).
  bool cache_required = false;
  std::vector<DeviceConfig> devices = {DeviceConfig{}};
  // Every session's default compile bound (Session::set_compile_timeout):
  // > 0 bounds the compilations no caller gave a timeout of its own (a
  // RunGraph before CompileGraph, a JIT graph's per-shape plans and its
  // dynamic form), named by `compile_timeout_setting` in the error.
  double compile_timeout_seconds = 0;
  std::string compile_timeout_setting;
};

// Checks a remote tier's settings (address syntax, a readable key file).
absl::Status CheckRemoteCacheSettings(const std::string& remote, const std::string& key_file);

// One device of the runtime: its thread count, the budget of compute
// threads every session on it shares (at most `threads` busy at once,
// however many runs execute), the pool of the compiler's parallel passes,
// and the memory sessions allocate from.
class RuntimeDevice {
 public:
  explicit RuntimeDevice(const DeviceConfig& config);
  const std::string& name() const { return name_; }
  int threads() const { return threads_; }
  ThreadPool* pool() const { return pool_.get(); }
  ComputeBudget* compute_budget() const { return budget_.get(); }
  device::MemoryStats memory_stats() const { return memory_->memory_stats(); }

 private:
  friend class Runtime;
  std::string name_;
  int threads_ = 1;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ComputeBudget> budget_;
  std::unique_ptr<device::CpuDevice> memory_;
};

// A model to ingest.
struct ModelSource {
  enum class Kind { kOnnxPath, kOnnxBytes, kGraphDef, kGemBytes, kGemPath };
  Kind kind = Kind::kOnnxBytes;
  std::string path;  // kOnnxPath, kGemPath
  // kOnnxBytes, kGemBytes (not owned); for kOnnxPath, when set, the file's
  // bytes as already read (imported as the file, not read again).
  std::string_view bytes;
  const v1::GraphDef* graph_def = nullptr;  // kGraphDef (not owned)

  static ModelSource OnnxPath(std::string path) { return {Kind::kOnnxPath, std::move(path), {}, nullptr}; }
  static ModelSource OnnxBytes(std::string_view bytes) { return {Kind::kOnnxBytes, {}, bytes, nullptr}; }
  static ModelSource GraphDef(const v1::GraphDef& def) { return {Kind::kGraphDef, {}, {}, &def}; }
  static ModelSource GemBytes(std::string_view bytes) { return {Kind::kGemBytes, {}, bytes, nullptr}; }
  static ModelSource GemPath(std::string path) { return {Kind::kGemPath, std::move(path), {}, nullptr}; }
  // A path by its extension (.gem or not).
  static ModelSource File(std::string path);
};

struct IngestOptions {
  Provenance provenance = Provenance::kClient;
  // Operator: the directory every file the model names must lie beneath.
  // Empty: the model file's directory (paths), none for bytes (a model
  // from bytes then may not name files).
  std::string weights_root;
  // The graph's options (import options; for the operator also
  // ge.exec.value_bins). Client options are checked for operator-only keys.
  OptionMap options;
  // Prefixes errors ("session 3 graph 1").
  std::string label;
  // ONNX bytes: called as they are parsed; the importer reads the bytes
  // before `end` no more (OnnxImportOptions::parsed_through).
  std::function<void(size_t end)> parsed_through;
};

// What AddModel returns: a source graph to compile, or a compiled model.
struct IngestedModel {
  std::unique_ptr<ir::Graph> graph;
  std::optional<runtime::CompiledModel> compiled;
  // The files the graph reads (an operator model's external data and
  // FileConstant files), resolved: what a direct-mode entry checks.
  std::vector<std::string> files;
};

class Runtime {
 public:
  static absl::StatusOr<std::unique_ptr<Runtime>> Create(const RuntimeOptions& options);
  ~Runtime();

  const engine::EngineRegistry& engines() const { return *engines_; }
  // Null without a cache.
  cache::ModelCache* cache() const { return cache_.get(); }
  // The operator's and a tenant's scope in the cache.
  CacheScope OperatorScope() const { return CacheScope{cache_.get()}; }
  CacheScope TenantScope(std::string_view tenant) const { return CacheScope::ForTenant(cache_.get(), tenant); }

  int num_devices() const { return static_cast<int>(devices_.size()); }
  // Adds a device (before sessions use the runtime from other threads);
  // its index.
  int AddDevice(const DeviceConfig& config);
  RuntimeDevice& device(int index) const { return *devices_.at(index); }

  // The one ingestion path (see above).
  absl::StatusOr<IngestedModel> AddModel(const ModelSource& source, const IngestOptions& options) const;

  // Direct mode: `source` (an ONNX path, read here, or ONNX bytes, which
  // must outlive the result) as a GraphSource whose import is AddModel with
  // `options`. `checks` names the parameters of the caller's own checks
  // after the import (the daemon's max_graph_nodes), and `after_import`
  // (may be null) runs them. InvalidArgument for other kinds of source.
  absl::StatusOr<GraphSource> DirectSource(const ModelSource& source, const IngestOptions& options,
                                           std::string checks = "",
                                           std::function<absl::Status(const ir::Graph&)> after_import = nullptr) const;

  // How many models AddModel imported (ONNX and GraphDef sources).
  int64_t imports() const { return imports_.load(); }

  // A session on device `device` with `options`, compiling through `scope`.
  // With `quota` (may be null) its memory is charged to that quota.
  std::unique_ptr<Session> NewSession(const OptionMap& options, int device, const CacheScope& scope,
                                      std::shared_ptr<device::MemoryQuota> quota = nullptr) const;

 private:
  Runtime() = default;
  absl::StatusOr<std::unique_ptr<ir::Graph>> ImportOnnx(const ModelSource& source, const IngestOptions& options,
                                                        std::vector<std::string>* files) const;

  std::unique_ptr<engine::EngineRegistry> engines_;
  std::unique_ptr<cache::ModelCache> cache_;
  mutable std::atomic<int64_t> imports_{0};
  std::vector<std::unique_ptr<RuntimeDevice>> devices_;
  double compile_timeout_seconds_ = 0;
  std::string compile_timeout_setting_;
};

}  // namespace ge::session
