// Compile-through-cache: the one path by which a source graph becomes a
// compiled model with the compiled-model cache in front (Session::
// CompileGraph, and through it gectl compile / run / bench and the
// daemon's CompileGraph).
//
// The key (runtime/cache/cache_key.h) is the graph's digest, or the user's
// `ge.graph_key`, with the options, engines, host and the caller's cache
// namespace. A caller looks up its own namespace; a tenant that misses its
// own namespace on a content key also reads the operator's (the same graph
// compiled by the operator is the same model), but never on a user key: a
// name is the naming tenant's promise, not another's. A miss is compiled and
// stored in the caller's own namespace only, so nobody writes another's
// namespace and a tenant never writes the operator's. A cache problem never
// fails a compile: it is a warning, and the graph compiles without it.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "base/thread_pool.h"
#include "runtime/cache/cache_key.h"
#include "runtime/cache/model_cache.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/model/gem.h"

namespace ge::session {

// Where a caller uses the cache: the cache (null: none) and its namespace.
struct CacheScope {
  cache::ModelCache* cache = nullptr;
  std::string ns = std::string(cache::kOperatorNamespace);
  // The scope of daemon tenant `tenant` in `cache`.
  static CacheScope ForTenant(cache::ModelCache* cache, std::string_view tenant) {
    return CacheScope{cache, cache::TenantNamespace(tenant)};
  }
  bool is_operator() const { return ns == cache::kOperatorNamespace; }
};

// How a compile used the cache.
struct CacheUse {
  std::string key;  // empty: no cache
  bool hit = false;
  double hash_seconds = 0;  // computing the key
  cache::LookupTimings lookup;
  std::string store_error;  // why a miss could not be stored ("" when it was)
};

// Looks `graph` (compiled with `options`) up in `scope` and returns the hit,
// else compiles it (compiler::BuildCompiledModel) and stores the result.
// `graph` is consumed only when it is compiled: after a hit it is left to
// the caller (who may compile it after all, with `lookup` false, when the
// hit cannot be loaded). `use` (may be null) says what happened.
absl::StatusOr<runtime::CompiledModel> CompileThroughCache(std::unique_ptr<ir::Graph>& graph, const OptionMap& options,
                                                           const engine::EngineRegistry& engines, ThreadPool* pool,
                                                           const CacheScope& scope, CacheUse* use, bool lookup = true);

// The model of cache key `key` for a caller in `scope`: its own namespace,
// then (for a tenant) the operator's. NotFound with the same message
// whether the key exists in another namespace or nowhere.
absl::StatusOr<runtime::CompiledModel> LoadCachedModel(const CacheScope& scope, const std::string& key,
                                                       const engine::EngineRegistry& engines);

}  // namespace ge::session
