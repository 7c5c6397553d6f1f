// dlopen-based engine plugin loading with ABI and version checks, and the
// plugin's json (its attributes).
#include "runtime/engines/plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "base/logging.h"
#include "base/status.h"
#include "base/version.h"
#include "runtime/engines/api/attributes.h"
#include "runtime/engines/api/plugin.h"

namespace ge::engine {
namespace {

namespace fs = std::filesystem;

// The plugin's json: the text its entry embeds, else `<dir>/<engine>.json`
// beside the library (the one source either way: a file beside a plugin
// that embeds its json is not read).
absl::StatusOr<EngineAttributes> ReadAttributes(const std::string& plugin_path, const GeEnginePlugin& plugin) {
  const std::string name = plugin.engine_name;
  if (plugin.attributes_json != nullptr) {
    return ParseEngineAttributes(plugin.attributes_json, name + ".json (embedded)", name);
  }
  const fs::path conf = fs::path(plugin_path).parent_path() / (name + ".json");
  std::ifstream in(conf);
  if (!in) {
    return FailedPrecondition("engine '", name, "' has no attributes: its plugin embeds no json and ", conf.string(),
                              " cannot be read");
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseEngineAttributes(text.str(), conf.string(), name);
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
  if (plugin->create == nullptr || plugin->destroy == nullptr || plugin->engine_name == nullptr) {
    return FailedPrecondition("engine plugin ", path, ": entry lacks engine_name/create/destroy");
  }
  absl::StatusOr<EngineAttributes> attributes = ReadAttributes(path, *plugin);
  if (!attributes.ok()) return Annotate(attributes.status(), StrCat("engine plugin ", path));
  loaded->engine_ = plugin->create();
  loaded->destroy_ = plugin->destroy;
  if (loaded->engine_ == nullptr) {
    return FailedPrecondition("engine plugin ", path, ": create() returned null");
  }
  loaded->engine_->set_attributes(*std::move(attributes));
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
