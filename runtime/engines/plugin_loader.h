// Loading engine plugins (shared libraries with one versioned C entry point).
//
// Built-in engines are plugins too, found in the engine directory beside the
// binaries (<exe dir>/../lib/ged/engines), so that adding an engine touches
// no compiler or runtime code. An engine's attributes are its json (GE's
// engine_conf.json, api/attributes.h): embedded in the plugin (built-ins) or
// shipped beside it as `<engine name>.json`; the loader hands them to the
// engine before it is initialized.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/engines/api/engine.h"

namespace ge::engine {

// One loaded plugin: the library handle and the engine it created. The
// engine is destroyed through the plugin before the library is closed.
class LoadedEngine {
 public:
  ~LoadedEngine();
  LoadedEngine(const LoadedEngine&) = delete;
  LoadedEngine& operator=(const LoadedEngine&) = delete;

  Engine& engine() const { return *engine_; }
  const std::string& path() const { return path_; }
  // The engine's attributes (from its json).
  const EngineAttributes& attributes() const { return engine_->attributes(); }

 private:
  friend absl::StatusOr<std::unique_ptr<LoadedEngine>> LoadEnginePlugin(const std::string&);
  LoadedEngine() = default;

  void* handle_ = nullptr;
  Engine* engine_ = nullptr;
  void (*destroy_)(Engine*) = nullptr;
  std::string path_;
};

// Loads one plugin. Errors name the file: cannot open (dlerror), missing
// entry symbol, ABI or ged version mismatch, no json or one that does not
// parse or names another engine.
absl::StatusOr<std::unique_ptr<LoadedEngine>> LoadEnginePlugin(const std::string& path);

// The directory of the built-in engines for the running executable.
std::string DefaultEngineDirectory();

// The plugin files (lib*.so) in `dir`, sorted by name.
absl::StatusOr<std::vector<std::string>> ListEnginePlugins(const std::string& dir);

}  // namespace ge::engine
