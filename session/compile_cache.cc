// Compile-through-cache (see compile_cache.h).
#include "session/compile_cache.h"

#include <chrono>

#include "base/logging.h"
#include "base/status.h"
#include "compiler/build/model_builder.h"

namespace ge::session {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

cache::KeyContext ContextFor(const engine::EngineRegistry& engines, ThreadPool* pool, std::string_view ns) {
  cache::KeyContext context{&engines, pool ? pool->num_threads() + 1 : 1, pool};
  context.cache_namespace = std::string(ns);
  return context;
}

}  // namespace

absl::StatusOr<runtime::CompiledModel> CompileThroughCache(std::unique_ptr<ir::Graph>& graph, const OptionMap& options,
                                                           const engine::EngineRegistry& engines, ThreadPool* pool,
                                                           const CacheScope& scope, CacheUse* use, bool lookup) {
  if (graph == nullptr) return FailedPrecondition("no graph to compile");
  CacheUse local_use;
  CacheUse& u = use != nullptr ? *use : local_use;
  cache::ModelCache* cache = scope.cache;
  if (cache != nullptr) {
    const auto start = std::chrono::steady_clock::now();
    const cache::KeyContext own = ContextFor(engines, pool, scope.ns);
    const std::string user_key = OptionOrDefault(options, "ge.graph_key");
    std::string operator_key;  // a tenant's content key in the operator's namespace
    if (!user_key.empty()) {
      u.key = cache::UserCacheKey(user_key, options, own);
    } else if (absl::StatusOr<Sha256Digest> digest = cache::GraphDigest(*graph, pool); digest.ok()) {
      u.key = cache::CacheKeyOfDigest(*digest, options, own);
      if (!scope.is_operator()) {
        operator_key = cache::CacheKeyOfDigest(*digest, options, ContextFor(engines, pool, cache::kOperatorNamespace));
      }
    } else {
      Logger("cache").warn("compiling without the cache: {}", digest.status().message());
      cache = nullptr;
    }
    u.hash_seconds = Since(start);
    if (cache != nullptr && lookup) {
      absl::StatusOr<runtime::CompiledModel> hit = cache->LookupIn(scope.ns, u.key, engines, &u.lookup);
      if (!hit.ok() && !operator_key.empty()) {
        hit = cache->LookupIn(cache::kOperatorNamespace, operator_key, engines, &u.lookup);
      }
      if (hit.ok()) {
        u.hit = true;
        return hit;
      }
    }
  }
  u.hit = false;
  GE_ASSIGN_OR_RETURN(runtime::CompiledModel model,
                      compiler::BuildCompiledModel(std::move(graph), options, engines, pool));
  if (cache != nullptr) {
    // A static graph needs only its program; a mixed one its partitioned form.
    absl::Status stored =
        cache->StoreModelIn(scope.ns, u.key, *model.graph, model.program ? &*model.program : nullptr, model.options,
                            engines, model.program ? nullptr : model.partitioned.get(), &model.variables);
    if (!stored.ok()) {
      u.store_error = std::string(stored.message());
      Logger("cache").warn("the model is compiled but not cached: {}", stored.message());
    }
  }
  return model;
}

absl::StatusOr<runtime::CompiledModel> LoadCachedModel(const CacheScope& scope, const std::string& key,
                                                       const engine::EngineRegistry& engines) {
  if (scope.cache == nullptr) return FailedPrecondition("no compiled-model cache to load key ", key, " from");
  absl::StatusOr<runtime::CompiledModel> model = scope.cache->LookupIn(scope.ns, key, engines);
  if (!model.ok() && model.status().code() == absl::StatusCode::kNotFound && !scope.is_operator()) {
    model = scope.cache->LookupIn(cache::kOperatorNamespace, key, engines);
  }
  if (!model.ok() && model.status().code() == absl::StatusCode::kNotFound) {
    // One message for every miss: it must not tell whether the key exists
    // in a namespace the caller cannot read.
    return NotFound("no compiled model with cache key ", key);
  }
  return model;
}

}  // namespace ge::session
