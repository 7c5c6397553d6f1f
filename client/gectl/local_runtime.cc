// LocalRuntime and model loading for gectl's in-process commands.
#include "client/gectl/local_runtime.h"

#include <filesystem>
#include <thread>

#include "base/logging.h"
#include "base/status.h"
#include "compiler/frontend/onnx_importer.h"
#include "runtime/cache/redis_tier.h"
#include "runtime/model/gem.h"

namespace ge::gectl {
namespace {

std::vector<std::string>& PluginDirectories() {
  static std::vector<std::string> dirs;
  return dirs;
}

// The engines of the process: the built-in ones, then those of the
// --plugin-dir directories. Loaded once, before the first import, because
// plugins register the schemas of their custom operators while they load.
absl::StatusOr<const engine::EngineRegistry*> ProcessEngines() {
  static absl::StatusOr<std::unique_ptr<engine::EngineRegistry>>* engines =
      new absl::StatusOr<std::unique_ptr<engine::EngineRegistry>>(
          engine::CreateEngineRegistry(PluginDirectories(), {}));
  if (!engines->ok()) return engines->status();
  return engines->value().get();
}

CacheSettings& MutableCacheSettings() {
  static CacheSettings settings;
  return settings;
}

}  // namespace

absl::Status SetCacheSettings(const CacheSettings& settings) {
  if (settings.max_bytes < 0) return InvalidArgument("--cache-max-size must not be negative");
  if (!settings.remote.empty()) GE_RETURN_IF_ERROR(cache::RedisTier::Create(settings.remote).status());
  MutableCacheSettings() = settings;
  return absl::OkStatus();
}

const CacheSettings& GetCacheSettings() { return MutableCacheSettings(); }

cache::ModelCache* ProcessCache() {
  static cache::ModelCache* opened = [] () -> cache::ModelCache* {
    const CacheSettings& settings = GetCacheSettings();
    if (settings.disabled) return nullptr;
    cache::ModelCacheOptions options;
    options.dir = settings.dir.empty() ? cache::DefaultCacheDir() : settings.dir;
    options.max_bytes = settings.max_bytes;
    if (!settings.remote.empty()) {
      auto tier = cache::RedisTier::Create(settings.remote);
      if (tier.ok()) options.remote = std::shared_ptr<cache::RemoteTier>(*std::move(tier));
    }
    absl::StatusOr<std::unique_ptr<cache::ModelCache>> cache = cache::ModelCache::Open(options);
    if (!cache.ok()) {
      Logger("cache").warn("compiling without the compiled-model cache: {}", cache.status().message());
      return nullptr;
    }
    return cache->release();
  }();
  return opened;
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
  GE_ASSIGN_OR_RETURN(rt->engines_, ProcessEngines());
  // The caller thread takes part in ParallelFor, so one worker fewer than threads.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  rt->pool_ = std::make_unique<ThreadPool>((threads > 0 ? threads : cores) - 1, "gectl-intra");
  return rt;
}

absl::StatusOr<std::unique_ptr<session::Session>> LocalRuntime::NewSession(std::unique_ptr<ir::Graph> graph,
                                                                           const OptionMap& options) {
  auto session = std::make_unique<session::Session>(*engines_, OptionMap(), pool_.get());
  GE_RETURN_IF_ERROR(session->AddGraph(0, std::move(graph), options));
  return session;
}

absl::StatusOr<std::unique_ptr<session::Session>> LocalRuntime::OpenModel(const std::string& path,
                                                                          const OptionMap& options) {
  if (!runtime::IsGemPath(path)) {
    GE_ASSIGN_OR_RETURN(auto graph, LoadModel(path, options));
    auto session = std::make_unique<session::Session>(*engines_, OptionMap(), pool_.get());
    session->set_model_cache(ProcessCache());
    GE_RETURN_IF_ERROR(session->AddGraph(0, std::move(graph), options));
    GE_RETURN_IF_ERROR(session->CompileGraph(0));
    return session;
  }
  if (!options.empty()) {
    return InvalidArgument("--option applies when compiling; ", path, " is already compiled (gectl compile takes them)");
  }
  GE_RETURN_IF_ERROR(CheckModelPath(path));
  GE_ASSIGN_OR_RETURN(runtime::CompiledModel model, runtime::LoadGem(path, *engines_));
  auto session = std::make_unique<session::Session>(*engines_, OptionMap(), pool_.get());
  GE_RETURN_IF_ERROR(session->AddCompiledModel(0, std::move(model)));
  return session;
}

absl::Status CheckModelPath(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("model file ", path, " does not exist");
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument("model path ", path, " is a directory");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ir::Graph>> LoadModel(const std::string& path, const OptionMap& options) {
  GE_RETURN_IF_ERROR(CheckModelPath(path));
  if (runtime::IsGemPath(path)) {
    return InvalidArgument(path, " is a compiled model (.gem); this command takes a source model (.onnx)");
  }
  GE_RETURN_IF_ERROR(ProcessEngines().status());  // plugins' operators first
  return frontend::ImportOnnxFile(path, frontend::OnnxImportOptionsFromMap(options));
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
