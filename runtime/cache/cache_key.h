// Keys of the compiled-model cache.
//
// A key is the SHA-256 (64 lowercase hex digits) of everything a compiled
// model depends on:
//   - the graph in a canonical form: every node (name, type, inputs by
//     producer name and port, sorted control inputs, types, attributes with
//     their tensors, i.e. the weights), each subgraph the same way, with the
//     nodes of a graph taken as a sorted set, so the order of nodes in the
//     source file does not matter. Input shapes (and so shape gears),
//     Variable descriptions (shape, dtype, attributes: GE's VarMatchInfo)
//     and input order (the Data `index`) are part of the nodes;
//   - every option that can change the result: all keys of the option table
//     (base/options.h) at their effective value (explicit or default),
//     except those listed by IsOptionIgnoredByCacheKey (dumps, the cache's
//     own options);
//   - the intra-op thread count kernels are prepared for;
//   - every loaded engine with its version and scheduling attributes;
//   - the ged version, the .gem format version, the build IDs of the
//     compiler and engine libraries (build_identity.h), and this CPU's
//     features;
//   - the cache namespace of whoever compiles (KeyContext::cache_namespace:
//     the operator's, or one per tenant of the daemon), so that one key never
//     names two tenants' models.
//
// GE's own form (`ge.graph_compiler_cache_dir` + `ge.graph_key`): the user
// names the graph; UserCacheKey replaces the graph digest by that name and
// keeps everything else, so a stale entry is never loaded on another engine
// version or CPU.
//
// Direct mode (as ccache's): DirectCacheKey is computed from the model's
// source bytes, not from the imported graph, so a hit needs no import. It
// hashes the bytes (ModelBytesDigest), the source format, the provenance
// and the checks the import passed (so an entry is reachable only by
// callers whose import would pass the same checks), the model's location
// for operator files (where its external data is looked up), the build of
// the importer and the ingestion checks, and everything the content key
// hashes besides the graph. The files a model reads (ONNX external data,
// FileConstant files) are known only after an import: the direct entry
// lists them with their identities (direct_entry.h), checked on every hit.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "base/sha256.h"
#include "base/thread_pool.h"
#include "runtime/engines/engine_registry.h"

namespace ge::cache {

// The namespace of the operator (gectl, the daemon in open mode, models the
// operator configures). Tenants read it but never write it.
inline constexpr std::string_view kOperatorNamespace = "operator";

// The namespace of daemon tenant `tenant`: "t-" and the name, every byte
// outside [A-Za-z0-9_-] written as %XX, so that it is one safe path
// component and two names never share one.
std::string TenantNamespace(std::string_view tenant);

// Whether `ns` may name a namespace directory: 1 to 200 bytes of
// [A-Za-z0-9_%-] (the forms above).
bool IsValidNamespace(std::string_view ns);

// What a compiled model depends on besides the graph.
struct KeyContext {
  const engine::EngineRegistry* engines = nullptr;
  int threads = 1;  // intra-op threads kernels are prepared for
  // Hashes nodes in parallel when set (the weights dominate); the key is
  // the same either way.
  ThreadPool* pool = nullptr;
  // Whose cache the key is in (see above).
  std::string cache_namespace = std::string(kOperatorNamespace);
};

// The canonical digest of `graph` (the root of a tree with its subgraphs);
// `pool` may be null.
absl::StatusOr<Sha256Digest> GraphDigest(const ir::Graph& graph, ThreadPool* pool = nullptr);

// The cache key of compiling `graph` with `options` in `context`.
absl::StatusOr<std::string> ComputeCacheKey(const ir::Graph& graph, const OptionMap& options,
                                            const KeyContext& context);

// The key of a graph whose GraphDigest is `digest` (ComputeCacheKey without
// hashing the graph again, e.g. for a second namespace).
std::string CacheKeyOfDigest(const Sha256Digest& digest, const OptionMap& options, const KeyContext& context);

// The key of GE's user-named form (`ge.graph_key`).
std::string UserCacheKey(std::string_view graph_key, const OptionMap& options, const KeyContext& context);

// What a direct key hashes besides the options and the context.
struct DirectSource {
  std::string format;      // the importer of the bytes ("onnx")
  std::string provenance;  // "client" or "operator" (session/ingest.h)
  // The parameters of the checks the import passed ("max_graph_nodes=...");
  // the caller's own, never a client's.
  std::string checks;
  // Operator files: the model's directory and weights root, as resolved;
  // empty for bytes.
  std::string origin;
  Sha256Digest bytes{};  // ModelBytesDigest of the source bytes
};

// The digest of a model's source bytes (base/sha256.h; clients compute it too).
using ::ge::ModelBytesDigest;

// The direct-mode key of `source` compiled with `options` in `context`.
std::string DirectCacheKey(const DirectSource& source, const OptionMap& options, const KeyContext& context);

// Options that never change the compiled model.
bool IsOptionIgnoredByCacheKey(std::string_view key);

// Whether `key` has the form of a cache key (64 lowercase hex digits); only
// such keys ever reach the file system.
bool IsCacheKey(std::string_view key);

}  // namespace ge::cache
