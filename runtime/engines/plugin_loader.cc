// dlopen-based engine plugin loading with ABI and version checks, and the
// per-plugin configuration file.
#include "runtime/engines/plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "base/logging.h"
#include "base/status.h"
#include "base/version.h"
#include "runtime/engines/api/plugin.h"
#include "yaml-cpp/yaml.h"

namespace ge::engine {
namespace {

namespace fs = std::filesystem;

// [call_ns, element_ns]: two finite, non-negative numbers.
absl::Status ParseOpCost(const YAML::Node& node, const std::string& where, OpCost& out) {
  if (!node.IsSequence() || node.size() != 2) {
    return InvalidArgument(where, ": expected [call_ns, element_ns]");
  }
  const double call = node[0].as<double>();
  const double element = node[1].as<double>();
  if (!std::isfinite(call) || !std::isfinite(element) || call < 0 || element < 0) {
    return InvalidArgument(where, ": costs must be finite and not negative");
  }
  out = {call, element};
  return absl::OkStatus();
}

// "cost": {"ops": {"<op type or *>": [call_ns, element_ns], ...},
//          "boundary": [call_ns, element_ns]} (engine.h CostTable).
absl::Status ParseCostTable(const YAML::Node& node, const std::string& file, CostTable& table) {
  if (!node.IsMap()) return InvalidArgument(file, ": cost must be an object");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (key != "ops" && key != "boundary") {
      return InvalidArgument(file, ": cost has unknown key '", key, "' (expected ops, boundary)");
    }
  }
  CostTable parsed;
  if (node["boundary"]) GE_RETURN_IF_ERROR(ParseOpCost(node["boundary"], file + ": cost.boundary", parsed.boundary));
  if (!node["ops"] || !node["ops"].IsMap() || node["ops"].size() == 0) {
    return InvalidArgument(file, ": cost.ops must be a non-empty object of op type -> [call_ns, element_ns]");
  }
  for (const auto& entry : node["ops"]) {
    const std::string op = entry.first.as<std::string>();
    GE_RETURN_IF_ERROR(ParseOpCost(entry.second, StrCat(file, ": cost.ops.", op), parsed.ops[op]));
  }
  table = std::move(parsed);
  return absl::OkStatus();
}

// Applies `<dir>/<engine name>.json` when present. YAML is a superset of
// JSON, so yaml-cpp reads GE's engine_conf.json form.
absl::Status ApplyConfigFile(const std::string& plugin_path, EngineAttributes& attrs) {
  fs::path conf = fs::path(plugin_path).parent_path() / (attrs.name + ".json");
  std::error_code ec;
  if (!fs::exists(conf, ec)) return absl::OkStatus();
  try {
    YAML::Node root = YAML::LoadFile(conf.string());
    if (!root.IsMap()) return InvalidArgument(conf.string(), ": expected a JSON object");
    if (root["name"] && root["name"].as<std::string>() != attrs.name) {
      return InvalidArgument(conf.string(), ": names engine '", root["name"].as<std::string>(),
                             "' but the plugin provides '", attrs.name, "'");
    }
    if (root["compute_cost"]) {
      int cost = root["compute_cost"].as<int>();
      if (cost < 0 || cost > 10) {
        return InvalidArgument(conf.string(), ": compute_cost ", cost, " is outside 0..10");
      }
      attrs.compute_cost = cost;
    }
    if (root["runtime_type"]) {
      std::string type = root["runtime_type"].as<std::string>();
      if (type != "host" && type != "device") {
        return InvalidArgument(conf.string(), ": runtime_type must be host or device, not '",
                               type, "'");
      }
      attrs.runtime_type = type == "host" ? RuntimeType::kHost : RuntimeType::kDevice;
    }
    if (root["atomic"]) attrs.atomic = root["atomic"].as<bool>();
    if (root["composite_engine"]) attrs.composite_engine = root["composite_engine"].as<std::string>();
    if (root["independent"]) attrs.independent_stream = root["independent"].as<bool>();
    if (root["attach"]) attrs.attach = root["attach"].as<bool>();
    if (root["skip_assign_stream"]) attrs.skip_assign_stream = root["skip_assign_stream"].as<bool>();
    if (root["cost"]) GE_RETURN_IF_ERROR(ParseCostTable(root["cost"], conf.string(), attrs.cost));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(conf.string(), ": ", e.what());
  }
  return absl::OkStatus();
}

}  // namespace

LoadedEngine::~LoadedEngine() {
  if (engine_ != nullptr) {
    engine_->Finalize();
    destroy_(engine_);
  }
  if (handle_ != nullptr) dlclose(handle_);
}

absl::StatusOr<std::unique_ptr<LoadedEngine>> LoadEnginePlugin(const std::string& path) {
  std::unique_ptr<LoadedEngine> loaded(new LoadedEngine());
  loaded->path_ = path;
  loaded->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (loaded->handle_ == nullptr) {
    const char* err = dlerror();
    return FailedPrecondition("engine plugin ", path, ": cannot load: ", err ? err : "unknown");
  }
  auto entry = reinterpret_cast<GeEnginePluginEntryFn>(
      dlsym(loaded->handle_, GE_ENGINE_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    return FailedPrecondition("engine plugin ", path, ": missing entry point '",
                              GE_ENGINE_PLUGIN_ENTRY_SYMBOL, "'");
  }
  const GeEnginePlugin* plugin = entry();
  if (plugin == nullptr) return FailedPrecondition("engine plugin ", path, ": entry returned null");
  if (plugin->abi_version != GE_ENGINE_ABI_VERSION) {
    return FailedPrecondition("engine plugin ", path, ": built for engine ABI version ",
                              plugin->abi_version, ", this ged needs ", GE_ENGINE_ABI_VERSION);
  }
  if (plugin->ged_version == nullptr || std::string(plugin->ged_version) != GED_VERSION_STRING) {
    return FailedPrecondition("engine plugin ", path, ": built against ged ",
                              plugin->ged_version ? plugin->ged_version : "(unknown)",
                              ", this is ged ", GED_VERSION_STRING);
  }
  if (plugin->create == nullptr || plugin->destroy == nullptr) {
    return FailedPrecondition("engine plugin ", path, ": entry lacks create/destroy");
  }
  loaded->engine_ = plugin->create();
  loaded->destroy_ = plugin->destroy;
  if (loaded->engine_ == nullptr) {
    return FailedPrecondition("engine plugin ", path, ": create() returned null");
  }
  loaded->attributes_ = loaded->engine_->attributes();
  if (plugin->engine_name == nullptr || loaded->attributes_.name != plugin->engine_name) {
    return FailedPrecondition("engine plugin ", path, ": entry names engine '",
                              plugin->engine_name ? plugin->engine_name : "", "' but the engine is '",
                              loaded->attributes_.name, "'");
  }
  GE_RETURN_IF_ERROR(Annotate(ApplyConfigFile(path, loaded->attributes_),
                              StrCat("engine plugin ", path)));
  return loaded;
}

std::string DefaultEngineDirectory() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "lib/ged/engines";
  return (exe.parent_path().parent_path() / "lib" / "ged" / "engines").string();
}

absl::StatusOr<std::vector<std::string>> ListEnginePlugins(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return NotFound("engine directory ", dir, ": ", ec.message());
  std::vector<std::string> out;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("lib", 0) == 0 && entry.path().extension() == ".so") {
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ge::engine
