// LocalRuntime: gectl's view of the process's runtime root (session::
// Runtime: engines, the compiled-model cache, devices) to compile and run in
// process. Models come in as the operator's (Provenance::kOperator): their
// files are resolved beneath the model's own directory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "base/thread_pool.h"
#include "session/runtime.h"
#include "session/session.h"

namespace ge::gectl {

// Engine plugin directories named on the command line (`--plugin-dir`),
// loaded after the built-in engines into the one engine registry of the
// process (every LocalRuntime shares it). Call before any other function
// here. NotFound naming a directory that does not exist.
absl::Status SetPluginDirectories(const std::vector<std::string>& dirs);

// The compiled-model cache of the process (`--cache-dir`, `--no-cache`,
// `--cache-remote`, `--cache-max-size`). Call before any other function
// here, like SetPluginDirectories.
struct CacheSettings {
  std::string dir;           // empty: cache::DefaultCacheDir()
  bool disabled = false;     // --no-cache
  std::string remote;        // redis://HOST:PORT or unix:/PATH; empty: none
  std::string remote_key_file;  // --cache-remote-key-file: the remote tier's HMAC key
  int64_t max_bytes = cache::kDefaultCacheMaxBytes;
};
absl::Status SetCacheSettings(const CacheSettings& settings);
const CacheSettings& GetCacheSettings();
// The cache, opened on first use; null with --no-cache, or when it cannot
// be opened (a warning: commands then compile without it).
cache::ModelCache* ProcessCache();

class LocalRuntime {
 public:
  // `threads` intra-op threads (the caller included); 0 means every core.
  static absl::StatusOr<std::unique_ptr<LocalRuntime>> Create(int threads = 0);
  const engine::EngineRegistry& engines() const { return root_->engines(); }
  ThreadPool* pool() { return root_->device(device_).pool(); }
  const session::Runtime& root() const { return *root_; }

  // The model at `path` (.onnx) as a source to compile in direct mode
  // (session/compile_cache.h): read and hashed, imported as the operator's
  // (with `options`) only on a cache miss.
  absl::StatusOr<session::GraphSource> Source(const std::string& path, const OptionMap& options) const;

  // A session holding `graph` as graph 0 with `options`.
  absl::StatusOr<std::unique_ptr<session::Session>> NewSession(std::unique_ptr<ir::Graph> graph,
                                                               const OptionMap& options);
  // A session holding the model at `path` as graph 0, compiled: a .gem is
  // loaded (and checked against this host's engines and CPU; `options`
  // must be empty, they were fixed at compile time), any other model is
  // compiled with `options` through the process's cache in direct mode (a
  // hit imports nothing).
  absl::StatusOr<std::unique_ptr<session::Session>> OpenModel(const std::string& path, const OptionMap& options);

 private:
  session::Runtime* root_ = nullptr;  // the process's
  int device_ = 0;                    // this runtime's device (its thread count)
};

// Imports a model file (.onnx) with the import options `options` sets
// (frontend::OnnxImportOptionsFromMap); a .gem is refused (use OpenModel).
absl::StatusOr<std::unique_ptr<ir::Graph>> LoadModel(const std::string& path, const OptionMap& options = {});
// NotFound / InvalidArgument when `path` is missing or a directory.
absl::Status CheckModelPath(const std::string& path);

// Parses repeated KEY=VALUE flags and validates them against the option table.
absl::StatusOr<OptionMap> ParseOptionFlags(const std::vector<std::string>& flags);

// atc's gear flags (compile, run, bench, partition); each is an option key
// (docs/options.md).
struct GearFlags {
  std::string dynamic_batch_size;  // ge.dynamicBatchSize
  std::string dynamic_image_size;  // ge.dynamicImageSize
  std::string dynamic_dims;        // ge.dynamicDims
  std::string input_shape;         // ge.inputShape
  bool hybrid = false;             // ge.compileHybridMode=1
};

// Appends the gear flags that are set to `options` as KEY=VALUE; an
// --option giving the same key another value is an error naming both.
absl::Status AddGearFlags(const GearFlags& gears, std::vector<std::string>& options);

}  // namespace ge::gectl
