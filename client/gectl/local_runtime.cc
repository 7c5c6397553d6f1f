// LocalRuntime and model loading for gectl's in-process commands.
#include "client/gectl/local_runtime.h"

#include <filesystem>

#include "base/logging.h"
#include "base/status.h"
#include "session/tools.h"

namespace ge::gectl {
namespace {

std::vector<std::string>& PluginDirectories() {
  static std::vector<std::string> dirs;
  return dirs;
}

CacheSettings& MutableCacheSettings() {
  static CacheSettings settings;
  return settings;
}

// The runtime root of the process: the built-in engines, then those of the
// --plugin-dir directories, and the cache of the cache flags. Made once,
// before the first import, because plugins register the schemas of their
// custom operators while they load; devices are added per LocalRuntime.
absl::StatusOr<session::Runtime*> ProcessRoot() {
  static absl::StatusOr<std::unique_ptr<session::Runtime>>* root = [] {
    const CacheSettings& settings = MutableCacheSettings();
    session::RuntimeOptions options;
    options.plugin_dirs = PluginDirectories();
    options.devices.clear();
    if (!settings.disabled) {
      session::CacheConfig cache;
      cache.dir = settings.dir.empty() ? cache::DefaultCacheDir() : settings.dir;
      cache.max_bytes = settings.max_bytes;
      cache.remote = settings.remote;
      cache.remote_key_file = settings.remote_key_file;
      options.cache = cache;
    }
    return new absl::StatusOr<std::unique_ptr<session::Runtime>>(session::Runtime::Create(options));
  }();
  if (!root->ok()) return root->status();
  return root->value().get();
}

}  // namespace

absl::Status SetCacheSettings(const CacheSettings& settings) {
  if (settings.max_bytes < 0) return InvalidArgument("--cache-max-size must not be negative");
  if (!settings.remote.empty() && settings.remote_key_file.empty()) {
    return InvalidArgument("--cache-remote ", settings.remote,
                           " needs --cache-remote-key-file: the remote tier's entries are signed with the "
                           "operator's key and checked before use");
  }
  GE_RETURN_IF_ERROR(session::CheckRemoteCacheSettings(settings.remote, settings.remote_key_file));
  MutableCacheSettings() = settings;
  return absl::OkStatus();
}

const CacheSettings& GetCacheSettings() { return MutableCacheSettings(); }

cache::ModelCache* ProcessCache() {
  absl::StatusOr<session::Runtime*> root = ProcessRoot();
  return root.ok() ? (*root)->cache() : nullptr;
}

absl::Status SetPluginDirectories(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return NotFound("plugin directory ", dir, " does not exist");
  }
  PluginDirectories() = dirs;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LocalRuntime>> LocalRuntime::Create(int threads) {
  auto rt = std::unique_ptr<LocalRuntime>(new LocalRuntime());
  GE_ASSIGN_OR_RETURN(rt->root_, ProcessRoot());
  rt->device_ = rt->root_->AddDevice(session::DeviceConfig{"gectl", threads, 0});
  return rt;
}

absl::StatusOr<std::unique_ptr<session::Session>> LocalRuntime::NewSession(std::unique_ptr<ir::Graph> graph,
                                                                           const OptionMap& options) {
  // No cache: commands that only inspect (dump, partition) compile afresh.
  std::unique_ptr<session::Session> session = root_->NewSession(OptionMap(), device_, session::CacheScope{});
  GE_RETURN_IF_ERROR(session->AddGraph(0, std::move(graph), options));
  return session;
}

absl::StatusOr<std::unique_ptr<session::Session>> LocalRuntime::OpenModel(const std::string& path,
                                                                          const OptionMap& options) {
  std::unique_ptr<session::Session> session = root_->NewSession(OptionMap(), device_, root_->OperatorScope());
  if (!session::IsCompiledModelPath(path)) {
    GE_ASSIGN_OR_RETURN(session::GraphSource source, Source(path, options));
    GE_RETURN_IF_ERROR(session->AddGraph(0, source, options));
    GE_RETURN_IF_ERROR(session->CompileGraph(0));
    return session;
  }
  if (!options.empty()) {
    return InvalidArgument("--option applies when compiling; ", path, " is already compiled (gectl compile takes them)");
  }
  GE_RETURN_IF_ERROR(CheckModelPath(path));
  session::IngestOptions ingest;
  ingest.provenance = session::Provenance::kOperator;
  GE_ASSIGN_OR_RETURN(session::IngestedModel model, root_->AddModel(session::ModelSource::GemPath(path), ingest));
  GE_RETURN_IF_ERROR(session->AddCompiledModel(0, *std::move(model.compiled)));
  return session;
}

absl::StatusOr<session::GraphSource> LocalRuntime::Source(const std::string& path, const OptionMap& options) const {
  GE_RETURN_IF_ERROR(CheckModelPath(path));
  if (session::IsCompiledModelPath(path)) {
    return InvalidArgument(path, " is a compiled model (.gem); this command takes a source model (.onnx)");
  }
  // The operator's model: its files beneath its own directory.
  session::IngestOptions ingest;
  ingest.provenance = session::Provenance::kOperator;
  ingest.options = options;
  return root_->DirectSource(session::ModelSource::OnnxPath(path), ingest);
}

absl::Status CheckModelPath(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("model file ", path, " does not exist");
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument("model path ", path, " is a directory");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ir::Graph>> LoadModel(const std::string& path, const OptionMap& options) {
  GE_RETURN_IF_ERROR(CheckModelPath(path));
  if (session::IsCompiledModelPath(path)) {
    return InvalidArgument(path, " is a compiled model (.gem); this command takes a source model (.onnx)");
  }
  GE_ASSIGN_OR_RETURN(session::Runtime * root, ProcessRoot());  // plugins' operators first
  // The operator's model: its files beneath its own directory.
  session::IngestOptions ingest;
  ingest.provenance = session::Provenance::kOperator;
  ingest.options = options;
  GE_ASSIGN_OR_RETURN(session::IngestedModel model, root->AddModel(session::ModelSource::OnnxPath(path), ingest));
  return std::move(model.graph);
}

absl::StatusOr<OptionMap> ParseOptionFlags(const std::vector<std::string>& flags) {
  OptionMap options;
  for (const std::string& flag : flags) GE_RETURN_IF_ERROR(ParseOptionAssignment(flag, options));
  GE_RETURN_IF_ERROR(ValidateOptions(options));
  return options;
}

}  // namespace ge::gectl

namespace ge::gectl {

absl::Status AddGearFlags(const GearFlags& gears, std::vector<std::string>& options) {
  const std::pair<std::string_view, std::string> flags[] = {
      {"--dynamic_batch_size=ge.dynamicBatchSize", gears.dynamic_batch_size},
      {"--dynamic_image_size=ge.dynamicImageSize", gears.dynamic_image_size},
      {"--dynamic_dims=ge.dynamicDims", gears.dynamic_dims},
      {"--input_shape=ge.inputShape", gears.input_shape},
      {"--compile_hybrid_mode=ge.compileHybridMode", gears.hybrid ? "1" : ""},
  };
  for (const auto& [names, value] : flags) {
    if (value.empty()) continue;
    const std::string_view flag = names.substr(0, names.find('='));
    const std::string key(names.substr(names.find('=') + 1));
    for (const std::string& option : options) {
      if (option.rfind(key + "=", 0) == 0 && option.substr(key.size() + 1) != value) {
        return InvalidArgument(flag, " '", value, "' and --option ", option, " disagree: give one of them");
      }
    }
    options.push_back(StrCat(key, "=", value));
  }
  return absl::OkStatus();
}

}  // namespace ge::gectl
