// Compile-through-cache (see compile_cache.h).
#include "session/compile_cache.h"

#include <chrono>
#include <optional>

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

// Writes the direct entry of `direct` in the caller's namespace, naming the
// content entry `key` of namespace `content_ns`. A failure is a warning.
void StoreDirect(const CacheScope& scope, const DirectTarget* direct, std::string_view content_ns,
                 const std::string& key) {
  if (scope.cache == nullptr || direct == nullptr || direct->key.empty() || key.empty()) return;
  cache::DirectEntry entry{std::string(content_ns), key, direct->files};
  if (absl::Status s = scope.cache->StoreDirectIn(scope.ns, direct->key, entry); !s.ok()) {
    Logger("cache").warn("the model is cached but not under its direct key: {}", s.message());
  }
}

}  // namespace

absl::StatusOr<runtime::CompiledModel> CompileThroughCache(std::unique_ptr<ir::Graph>& graph, const OptionMap& options,
                                                           const engine::EngineRegistry& engines, ThreadPool* pool,
                                                           const CacheScope& scope, CacheUse* use, bool lookup,
                                                           const DirectTarget* direct) {
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
    u.hash_seconds += Since(start);
    if (cache != nullptr && lookup) {
      absl::StatusOr<runtime::CompiledModel> hit = cache->LookupIn(scope.ns, u.key, engines, &u.lookup);
      std::string_view found_in = scope.ns;
      if (!hit.ok() && !operator_key.empty()) {
        hit = cache->LookupIn(cache::kOperatorNamespace, operator_key, engines, &u.lookup);
        found_in = cache::kOperatorNamespace;
      }
      if (hit.ok()) {
        u.hit = true;
        StoreDirect(scope, direct, found_in, found_in == scope.ns ? u.key : operator_key);
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
    } else {
      StoreDirect(scope, direct, scope.ns, u.key);
    }
  }
  return model;
}

absl::StatusOr<cache::DirectEntry> ResolveSource(const GraphSource& source, const OptionMap& options,
                                                 const engine::EngineRegistry& engines, ThreadPool* pool,
                                                 const CacheScope& scope, CacheUse* use) {
  CacheUse local_use;
  CacheUse& u = use != nullptr ? *use : local_use;
  cache::ModelCache* cache = scope.cache;
  if (cache == nullptr) return FailedPrecondition("no compiled-model cache");
  const auto start = std::chrono::steady_clock::now();
  const cache::KeyContext own = ContextFor(engines, pool, scope.ns);
  const std::string user_key = OptionOrDefault(options, "ge.graph_key");
  if (!user_key.empty()) {
    // The user names the model: its entry needs no import either (own
    // namespace only, as for every user key).
    u.key = cache::UserCacheKey(user_key, options, own);
    u.hash_seconds += Since(start);
    return cache::DirectEntry{scope.ns, u.key, {}};
  }
  if (u.direct_key.empty()) {
    cache::DirectSource direct = source.direct;
    if (source.digest) {
      direct.bytes = *source.digest;
    } else {
      direct.bytes = cache::ModelBytesDigest(source.bytes, pool);
      if (source.file_identity) cache->RememberDigest(*source.file_identity, direct.bytes);
    }
    u.direct_key = cache::DirectCacheKey(direct, options, own);
    u.hash_seconds += Since(start);
  }
  GE_ASSIGN_OR_RETURN(cache::DirectEntry entry, cache->LookupDirectIn(scope.ns, u.direct_key));
  // Only namespaces the caller may read: its own, and the operator's.
  if (entry.content_ns != scope.ns && entry.content_ns != cache::kOperatorNamespace) {
    Logger("cache").warn("direct entry {} names namespace {}, which its namespace {} may not read; ignored",
                         u.direct_key, entry.content_ns, scope.ns);
    return NotFound("no usable direct entry ", u.direct_key);
  }
  return entry;
}

absl::StatusOr<runtime::CompiledModel> LookupSource(const GraphSource& source, const OptionMap& options,
                                                    const engine::EngineRegistry& engines, ThreadPool* pool,
                                                    const CacheScope& scope, CacheUse* use) {
  CacheUse local_use;
  CacheUse& u = use != nullptr ? *use : local_use;
  GE_ASSIGN_OR_RETURN(cache::DirectEntry entry, ResolveSource(source, options, engines, pool, scope, &u));
  absl::StatusOr<runtime::CompiledModel> hit =
      scope.cache->LookupIn(entry.content_ns, entry.content_key, engines, &u.lookup);
  if (!hit.ok()) return hit.status();
  u.key = entry.content_key;
  u.hit = u.direct_hit = true;
  return hit;
}

absl::StatusOr<ImportedGraph> ImportSource(const GraphSource& source, const CacheUse& use, DirectTarget* target) {
  if (source.import == nullptr) return FailedPrecondition("the model source has no importer");
  // The file as it was when its digest was taken (or now).
  std::optional<cache::FileIdentity> before = source.file_identity;
  if (!before && !source.file.empty()) {
    if (absl::StatusOr<cache::FileIdentity> f = cache::IdentifyFile(source.file); f.ok()) before = *f;
  }
  GE_ASSIGN_OR_RETURN(ImportedGraph imported, source.import());
  if (target == nullptr) return imported;
  *target = DirectTarget{};
  if (use.direct_key.empty()) return imported;
  if (!source.file.empty()) {
    absl::StatusOr<cache::FileIdentity> after = cache::IdentifyFile(source.file);
    if (!before || !after.ok() || !(*after == *before)) {
      Logger("cache").info("{} changed while it was read: no direct entry for it", source.file);
      return imported;
    }
  }
  for (const std::string& file : imported.files) {
    absl::StatusOr<cache::FileIdentity> f = cache::IdentifyFile(file);
    if (!f.ok()) {
      Logger("cache").info("no direct entry: {}", f.status().message());
      return imported;
    }
    target->files.push_back(*std::move(f));
  }
  target->key = use.direct_key;
  return imported;
}

absl::StatusOr<runtime::CompiledModel> CompileSourceThroughCache(const GraphSource& source, const OptionMap& options,
                                                                 const engine::EngineRegistry& engines,
                                                                 ThreadPool* pool, const CacheScope& scope,
                                                                 CacheUse* use) {
  CacheUse local_use;
  CacheUse& u = use != nullptr ? *use : local_use;
  if (scope.cache != nullptr) {
    absl::StatusOr<runtime::CompiledModel> hit = LookupSource(source, options, engines, pool, scope, &u);
    if (hit.ok()) return hit;
  }
  DirectTarget target;
  GE_ASSIGN_OR_RETURN(ImportedGraph imported, ImportSource(source, u, &target));
  return CompileThroughCache(imported.graph, options, engines, pool, scope, &u, /*lookup=*/true, &target);
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
