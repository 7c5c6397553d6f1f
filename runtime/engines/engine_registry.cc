// EngineRegistry: loading, initialization and cost ordering of engines.
#include "runtime/engines/engine_registry.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "base/logging.h"
#include "base/status.h"

namespace ge::engine {

EngineRegistry::~EngineRegistry() {
  // No engine keeps the reference engine past this point; then destroy in
  // reverse order; plugins close their libraries last.
  for (const Entry& e : entries_) e.engine->SetReferenceEngine(nullptr);
  while (!entries_.empty()) entries_.pop_back();
}

absl::Status EngineRegistry::Insert(Entry entry, const EngineOptions& options) {
  const EngineAttributes& attrs = entry.engine->attributes();
  const std::string& name = attrs.name;
  if (name.empty()) return InvalidArgument("an engine from ", entry.origin, " has no name");
  if (Find(name) != nullptr) {
    return AlreadyExists("engine '", name, "' from ", entry.origin, " is already loaded");
  }
  if (const Engine* reference = Reference(); attrs.reference && reference != nullptr) {
    return AlreadyExists("engine '", name, "' from ", entry.origin, " declares itself the reference engine, but '",
                         reference->attributes().name, "' already is");
  }
  GE_RETURN_IF_ERROR(Annotate(entry.engine->Initialize(options),
                              StrCat("engine '", name, "' (", entry.origin, ") failed to initialize")));
  auto pos = std::lower_bound(entries_.begin(), entries_.end(), entry, [](const Entry& a, const Entry& b) {
    const EngineAttributes& x = a.engine->attributes();
    const EngineAttributes& y = b.engine->attributes();
    if (x.compute_cost != y.compute_cost) return x.compute_cost < y.compute_cost;
    return x.name < y.name;
  });
  entries_.insert(pos, std::move(entry));
  // Every engine learns the reference engine (possibly the one just added).
  const Engine* reference = Reference();
  for (const Entry& e : entries_) e.engine->SetReferenceEngine(reference);
  return absl::OkStatus();
}

absl::Status EngineRegistry::LoadPlugin(const std::string& path, const EngineOptions& options) {
  GE_ASSIGN_OR_RETURN(auto plugin, LoadEnginePlugin(path));
  Entry entry;
  entry.engine = &plugin->engine();
  entry.origin = path;
  entry.plugin = std::move(plugin);
  return Insert(std::move(entry), options);
}

absl::Status EngineRegistry::AddEngine(std::unique_ptr<Engine> engine, const EngineOptions& options) {
  Entry entry;
  entry.engine = engine.get();
  entry.origin = "builtin";
  entry.owned = std::move(engine);
  return Insert(std::move(entry), options);
}

std::vector<absl::Status> EngineRegistry::LoadDirectories(const std::vector<std::string>& dirs,
                                                          const EngineOptions& options) {
  std::vector<absl::Status> failures;
  for (const std::string& dir : dirs) {
    auto plugins = ListEnginePlugins(dir);
    if (!plugins.ok()) {
      failures.push_back(plugins.status());
      continue;
    }
    for (const std::string& path : *plugins) {
      absl::Status s = LoadPlugin(path, options);
      if (!s.ok()) {
        GE_LOG_WARN("engine", "skipping engine plugin: {}", s.message());
        failures.push_back(std::move(s));
      }
    }
  }
  return failures;
}

Engine* EngineRegistry::Find(std::string_view name) const {
  for (const Entry& e : entries_) {
    if (e.engine->attributes().name == name) return e.engine;
  }
  return nullptr;
}

const EngineAttributes* EngineRegistry::FindAttributes(std::string_view name) const {
  const Engine* engine = Find(name);
  return engine == nullptr ? nullptr : &engine->attributes();
}

Engine* EngineRegistry::Reference() const {
  for (const Entry& e : entries_) {
    if (e.engine->attributes().reference) return e.engine;
  }
  return nullptr;
}

std::vector<Engine*> EngineRegistry::ByCost() const {
  std::vector<Engine*> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.engine);
  return out;
}

std::vector<std::string> EngineRegistry::Names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.engine->attributes().name);
  return out;
}

absl::StatusOr<std::unique_ptr<EngineRegistry>> CreateEngineRegistry(
    const std::vector<std::string>& extra_dirs, const EngineOptions& options) {
  auto registry = std::make_unique<EngineRegistry>();
  std::vector<std::string> dirs = {DefaultEngineDirectory()};
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  std::vector<absl::Status> failures = registry->LoadDirectories(dirs, options);
  if (registry->empty()) {
    std::vector<std::string> messages;
    for (const auto& f : failures) messages.emplace_back(f.message());
    return FailedPrecondition("no engine could be loaded from ", absl::StrJoin(dirs, ", "),
                              messages.empty() ? "" : ": ", absl::StrJoin(messages, "; "));
  }
  return registry;
}

}  // namespace ge::engine
