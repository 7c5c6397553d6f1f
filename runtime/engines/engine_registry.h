// EngineRegistry: the engines of a process, in placement order.
//
// Engines come from plugin directories (built-ins first) or, in tests, from
// objects handed in directly. A plugin that fails to load or initialize is
// reported and skipped, so one broken plugin does not take the host down.
// At most one engine is the reference engine (its attribute); every engine
// is told which one it is (Engine::SetReferenceEngine) whenever the set
// changes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "runtime/engines/api/engine.h"
#include "runtime/engines/plugin_loader.h"

namespace ge::engine {

class EngineRegistry {
 public:
  EngineRegistry() = default;
  ~EngineRegistry();
  EngineRegistry(const EngineRegistry&) = delete;
  EngineRegistry& operator=(const EngineRegistry&) = delete;

  // Loads and initializes every plugin in `dirs`, in order. Failures (and
  // duplicate engine names, a second reference engine) are logged, returned,
  // and skipped.
  std::vector<absl::Status> LoadDirectories(const std::vector<std::string>& dirs,
                                            const EngineOptions& options);
  // Loads and initializes one plugin.
  absl::Status LoadPlugin(const std::string& path, const EngineOptions& options);
  // Adds an engine object (tests, statically linked engines).
  absl::Status AddEngine(std::unique_ptr<Engine> engine, const EngineOptions& options);

  // The engine called `name`, or null.
  Engine* Find(std::string_view name) const;
  // The attributes of `name`; null if absent.
  const EngineAttributes* FindAttributes(std::string_view name) const;
  // The reference engine (EngineAttributes::reference), or null when none
  // is loaded. The compiler asks for it instead of naming an engine.
  Engine* Reference() const;
  // Engines by ascending compute cost, ties broken by name.
  std::vector<Engine*> ByCost() const;
  std::vector<std::string> Names() const;
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    std::unique_ptr<LoadedEngine> plugin;  // set for plugins
    std::unique_ptr<Engine> owned;         // set for directly added engines
    Engine* engine = nullptr;
    std::string origin;  // plugin path or "builtin"
  };
  absl::Status Insert(Entry entry, const EngineOptions& options);

  std::vector<Entry> entries_;  // sorted by (cost, name)
};

// Returns a registry with the engines of DefaultEngineDirectory() plus
// `extra_dirs`; errors only when no engine at all could be loaded.
absl::StatusOr<std::unique_ptr<EngineRegistry>> CreateEngineRegistry(
    const std::vector<std::string>& extra_dirs, const EngineOptions& options);

}  // namespace ge::engine
