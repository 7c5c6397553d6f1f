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
//
// Direct mode (ccache's): a model not yet imported comes as a GraphSource
// (its bytes, who sent it and the checks its import passes, and how to
// import it). LookupSource finds its compiled model by the direct key
// computed from the bytes (or by its ge.graph_key) without importing it:
// the direct entry in the caller's own namespace names the content entry
// (in the caller's namespace or, for a tenant, the operator's). On a miss
// the caller imports (ImportSource: the checks of the source's provenance
// run then) and compiles through the cache with the DirectTarget it gets;
// once the content entry is found or stored, the direct entry is written
// in the caller's own namespace. A direct key is only ever looked up in the
// namespace of the caller that computed it, and hashes the provenance and
// the checks, so an entry is reachable only by the same namespace and
// provenance whose import passed the same checks.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  std::string key;  // the content (or user) key; empty: no cache
  bool hit = false;
  std::string direct_key;   // direct mode: the key of the source bytes ("" when not used)
  bool direct_hit = false;  // the hit came without importing the model
  double hash_seconds = 0;  // computing the key
  cache::LookupTimings lookup;
  std::string store_error;  // why a miss could not be stored ("" when it was)
};

// What an import gave: the graph, and the files it reads (an operator
// model's external data and FileConstant files, resolved).
struct ImportedGraph {
  std::unique_ptr<ir::Graph> graph;
  std::vector<std::string> files;
};

// A model before import (see above).
struct GraphSource {
  // What the direct key hashes besides the bytes (its `bytes` digest is
  // computed from `bytes` here).
  cache::DirectSource direct;
  // The source bytes; they must stay valid while the source is used.
  std::string_view bytes;
  // Keeps `bytes` alive (a mapped file), may be null.
  std::shared_ptr<const void> keep_alive;
  // The digest of the bytes when it is known already (remembered by the
  // file's identity): `bytes` are then not read. And the identity of the
  // file the digest (or `bytes`) is of, which a digest computed from
  // `bytes` is remembered under.
  std::optional<Sha256Digest> digest;
  std::optional<cache::FileIdentity> file_identity;
  // The file `bytes` came from (may be empty): a file that changes between
  // hashing and importing gets no direct entry.
  std::string file;
  // Imports the bytes, with the checks of their provenance.
  std::function<absl::StatusOr<ImportedGraph>()> import;
};

// The direct entry a compile writes once its content entry is known.
struct DirectTarget {
  std::string key;
  std::vector<cache::FileIdentity> files;
};

// Direct mode: where the compiled model of `source` with `options` in
// `scope` is (its content entry's namespace and key), by its direct key
// (or its ge.graph_key), without importing or loading anything; NotFound
// on a miss. Sets use->direct_key (or use->key), and reuses a direct key
// already there (computed for the same source, options and scope).
absl::StatusOr<cache::DirectEntry> ResolveSource(const GraphSource& source, const OptionMap& options,
                                                 const engine::EngineRegistry& engines, ThreadPool* pool,
                                                 const CacheScope& scope, CacheUse* use);

// Direct mode: the compiled model of `source` with `options` in `scope`,
// by its direct key (or its ge.graph_key), without importing it. NotFound
// on a miss (FailedPrecondition without a cache). `use` says what happened.
absl::StatusOr<runtime::CompiledModel> LookupSource(const GraphSource& source, const OptionMap& options,
                                                    const engine::EngineRegistry& engines, ThreadPool* pool,
                                                    const CacheScope& scope, CacheUse* use);

// Imports `source` after LookupSource missed; `target` (may be null) gets
// the direct entry to write after the compile (its key "" when none should
// be: no cache, a user key, or a file that changed meanwhile).
absl::StatusOr<ImportedGraph> ImportSource(const GraphSource& source, const CacheUse& use, DirectTarget* target);

// LookupSource, then on a miss ImportSource and CompileThroughCache.
absl::StatusOr<runtime::CompiledModel> CompileSourceThroughCache(const GraphSource& source, const OptionMap& options,
                                                                 const engine::EngineRegistry& engines,
                                                                 ThreadPool* pool, const CacheScope& scope,
                                                                 CacheUse* use);

// Looks `graph` (compiled with `options`) up in `scope` and returns the hit,
// else compiles it (compiler::BuildCompiledModel) and stores the result.
// `graph` is consumed only when it is compiled: after a hit it is left to
// the caller (who may compile it after all, with `lookup` false, when the
// hit cannot be loaded). `use` (may be null) says what happened. With
// `direct` (may be null; its key set), the direct entry is written once
// the content entry is found or stored.
absl::StatusOr<runtime::CompiledModel> CompileThroughCache(std::unique_ptr<ir::Graph>& graph, const OptionMap& options,
                                                           const engine::EngineRegistry& engines, ThreadPool* pool,
                                                           const CacheScope& scope, CacheUse* use, bool lookup = true,
                                                           const DirectTarget* direct = nullptr);

// The model of cache key `key` for a caller in `scope`: its own namespace,
// then (for a tenant) the operator's. NotFound with the same message
// whether the key exists in another namespace or nowhere.
absl::StatusOr<runtime::CompiledModel> LoadCachedModel(const CacheScope& scope, const std::string& key,
                                                       const engine::EngineRegistry& engines);

}  // namespace ge::session
