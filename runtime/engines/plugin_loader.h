// Loading engine plugins (shared libraries with one versioned C entry point).
//
// Built-in engines are plugins too, found in the engine directory beside the
// binaries (<exe dir>/../lib/ged/engines), so that adding an engine touches
// no compiler or runtime code. Each plugin may ship a configuration file
// `<engine name>.json` beside it (GE's engine_conf.json): its fields
// override the engine's compiled-in scheduling attributes.
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
  // Attributes after the configuration file was applied.
  const EngineAttributes& attributes() const { return attributes_; }

 private:
  friend absl::StatusOr<std::unique_ptr<LoadedEngine>> LoadEnginePlugin(const std::string&);
  LoadedEngine() = default;

  void* handle_ = nullptr;
  Engine* engine_ = nullptr;
  void (*destroy_)(Engine*) = nullptr;
  std::string path_;
  EngineAttributes attributes_;
};

// Loads one plugin. Errors name the file: cannot open (dlerror), missing
// entry symbol, ABI or ged version mismatch, a configuration file that does
// not parse or contradicts the engine (another name).
absl::StatusOr<std::unique_ptr<LoadedEngine>> LoadEnginePlugin(const std::string& path);

// The directory of the built-in engines for the running executable.
std::string DefaultEngineDirectory();

// The plugin files (lib*.so) in `dir`, sorted by name.
absl::StatusOr<std::vector<std::string>> ListEnginePlugins(const std::string& dir);

}  // namespace ge::engine
