// ModelCache: the on-disk compiled-model cache shared by every process of a
// host (daemons, gectl, tests), with an optional remote tier for many hosts.
//
// Layout under the cache directory (created 0700; a directory owned by
// another user is refused at Open):
//   v3/ns/<namespace>/<first two key digits>/<key>/{model.gem, model.gem.weights, meta}
//   v3/ns/<namespace>/<..>/<key>/verified    the files' stamps once their CRCs matched
//   v3/ns/<namespace>/<..>/<key>/{export.gem, export.meta}  the entry's .gem with inline
//                                  weights, once `gectl compile -o` wrote one (an export)
//   v3/ns/<namespace>/<first two key digits>/<key>/direct   a direct-mode entry
//   v3/digests/<SHA-256 of a path>  a file's bytes digest by its identity (RecallDigest)
//   v3/ns/<namespace>/<..>/.tmp-*  entries being written (or left by killed writers)
//   corrupt/<key>.<time>.*        entries found corrupt, moved aside
// Namespaces (cache_key.h): "operator" for gectl, the daemon in open mode
// and models the operator configures; "t-<tenant>" for each tenant of a
// daemon. The namespace is also part of the key. Which namespaces a caller
// reads and writes is the caller's policy (session::CacheScope): a tenant
// writes its own and reads its own and the operator's. Entries of earlier
// formats (v1: before namespaces; v2: before direct mode, whose keys hash
// otherwise) are never read; `Verify` counts them and `Collect` removes them.
// An entry is a .gem with external weights and a metadata record holding
// both files' checksums (cache_entry.h); a hit maps both files, and checks
// the checksums once per file identity (the `verified` record beside them). A direct-mode
// entry (direct_entry.h) is one small record under a direct key naming the
// content entry of the model and the files the model read; it lives in the
// local tier only (its file identities are this host's). Writers publish
// atomically (cache_files.h): readers see a whole entry or none, concurrent
// writers of one key both succeed and the first rename wins. Readers never
// report a bad entry as an error: a corrupt or unloadable entry is a miss,
// moved aside and logged. A hit touches the entry's record, and after each
// store the least recently used entries are evicted while the directory
// holds more than max_bytes.
//
// Lookup order: local, then remote; a remote hit is written locally. The
// remote tier needs the operator's mac key (remote_mac_key): every entry it
// holds is signed (cache_entry.h), and a remote entry is verified once,
// when it is published into the local tier. Every method is thread-safe;
// processes share the directory without locks.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cache/cache_entry.h"
#include "runtime/cache/direct_entry.h"
#include "runtime/cache/remote_tier.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/model/gem.h"

namespace ge::cache {

inline constexpr int64_t kDefaultCacheMaxBytes = int64_t{8} << 30;

// The directory of this cache format (see above).
inline constexpr char kCacheLayoutDir[] = "v3";

struct ModelCacheOptions {
  std::string dir;                          // created when missing
  int64_t max_bytes = kDefaultCacheMaxBytes;  // 0: no limit
  std::shared_ptr<RemoteTier> remote;       // may be null
  // The HMAC key of the remote tier's entries; required with `remote`.
  std::string remote_mac_key;
  // The uid the directory must belong to; -1: this process's effective uid.
  int64_t owner_uid = -1;
  // A file stamp younger than this vouches for nothing (the `verified`
  // record, cache_entry.h; direct_entry.h's racy rule). Tests set 0.
  int64_t racy_seconds = kRacySeconds;
};

// Counters of this process's use of the cache (the daemon's metrics).
struct CacheStats {
  int64_t hits = 0;         // local and remote
  int64_t remote_hits = 0;  // of hits, served by the remote tier
  int64_t misses = 0;
  int64_t evictions = 0;
  int64_t stores = 0;
  int64_t store_failures = 0;
  int64_t corrupt = 0;      // entries moved aside
  int64_t bytes = 0;        // held in the directory, as last counted
  // Direct-mode lookups (LookupDirectIn): hits, and misses (absent or
  // stale: a file the model read changed).
  int64_t direct_hits = 0;
  int64_t direct_misses = 0;
};

// Where a lookup spent its time (seconds), for benchmarks.
struct LookupTimings {
  double read = 0;    // reading the entry's files (or the remote)
  double verify = 0;  // checksums
  double load = 0;    // parsing and checking the .gem
};

struct EntryInfo {
  std::string ns;  // namespace
  std::string key;
  bool direct = false;  // a direct-mode entry (else a compiled model)
  std::string path;
  int64_t bytes = 0;
  int64_t last_used_unix = 0;  // the record's modification time
  int64_t created_unix = 0;
  std::string ged_version;
};

struct VerifyReport {
  int64_t entries = 0;                 // entries that passed
  int64_t direct_entries = 0;          // direct-mode entries that passed
  int64_t old_format = 0;              // entries of earlier cache formats (ignored; gc removes them)
  int64_t other_hosts = 0;             // intact, built for other engines, CPUs or versions
  std::vector<std::string> moved_aside;  // "<key>: <reason> -> <path>"
  int64_t temps_removed = 0;           // left by killed writers
  int64_t exports_removed = 0;         // damaged exports (the entries themselves were sound)
};

struct GcReport {
  int64_t entries_removed = 0;
  int64_t bytes_removed = 0;
  int64_t bytes_left = 0;
  int64_t temps_removed = 0;
  int64_t corrupt_removed = 0;  // entries moved aside earlier, now deleted
  int64_t old_format_removed = 0;  // entries of earlier cache formats
  int64_t dangling_removed = 0;    // direct-mode entries whose model entry is gone
};

// $XDG_CACHE_HOME/ged, else $HOME/.cache/ged, else /var/cache/ged.
std::string DefaultCacheDir();

class ModelCache {
 public:
  // Creates the directory when missing and removes stale temporaries.
  static absl::StatusOr<std::unique_ptr<ModelCache>> Open(ModelCacheOptions options);

  // The model of `key` in namespace `ns`, loaded and checked against
  // `engines`; NotFound on a miss (including a corrupt entry, which is
  // moved aside). InvalidArgument for a malformed key or namespace.
  absl::StatusOr<runtime::CompiledModel> LookupIn(std::string_view ns, const std::string& key,
                                                  const engine::EngineRegistry& engines,
                                                  LookupTimings* timings = nullptr);
  // Publishes an entry in `ns` (also to the remote tier), then evicts over
  // the limit. An error (a full disk, no permission) leaves no trace in the
  // cache; callers warn and go on with the model they have.
  absl::Status StoreIn(std::string_view ns, const std::string& key, runtime::GemBytes bytes);
  // Serializes and stores a compiled graph (`program`, `partitioned` (a
  // mixed graph's partitioned form) and `variables` may be null).
  absl::Status StoreModelIn(std::string_view ns, const std::string& key, const ir::Graph& graph,
                            const runtime::StaticProgram* program, const OptionMap& options,
                            const engine::EngineRegistry& engines, const ir::Graph* partitioned = nullptr,
                            const variables::VarManagerInfo* variables = nullptr);
  bool ContainsIn(std::string_view ns, const std::string& key) const;

  // Exports (model_cache_export.cc): an entry's .gem as `gectl compile -o`
  // writes it (weights inline), kept beside the entry once one was written,
  // so that a hit writes its output without serializing the model.
  // ExportTo checks the export (size, and its identity since the CRC-32C
  // was taken, else the CRC) and writes it to `path` (replacing it
  // atomically) by a reflink, else a hard link (the output then shares the
  // read-only export's inode), else a copy (`how` says which); it returns
  // the model's summary recorded with it. NotFound when the entry has none
  // (a damaged one is removed).
  absl::StatusOr<std::string> ExportTo(std::string_view ns, const std::string& key, const std::string& path,
                                       std::string* how = nullptr);
  // Keeps a copy (or reflink) of the .gem at `path`, written for entry
  // `key`, as its export with `summary` (one line).
  absl::Status AddExport(std::string_view ns, const std::string& key, const std::string& path,
                         const std::string& summary);

  // The digest of a file's bytes remembered by its identity (as ccache's
  // inode cache), so a direct lookup of an unchanged operator file reads
  // nothing of it: `v3/digests/<SHA-256 of the path>`, a record with the
  // identity and the digest. Racy identities (direct_entry.h) are never
  // remembered; a record whose identity differs is no memory.
  std::optional<Sha256Digest> RecallDigest(const FileIdentity& file) const;
  void RememberDigest(const FileIdentity& file, const Sha256Digest& digest);

  // Direct mode: the entry of direct key `key` in `ns`, when its record is
  // sound and every file it lists is unchanged; NotFound otherwise (a
  // corrupt record is moved aside). The caller then looks its content
  // entry up (LookupIn), in a namespace it may read.
  absl::StatusOr<DirectEntry> LookupDirectIn(std::string_view ns, const std::string& key);
  // Publishes (or replaces) the direct entry of `key` in `ns` (local only).
  absl::Status StoreDirectIn(std::string_view ns, const std::string& key, const DirectEntry& entry);

  // The same in the operator's namespace (kOperatorNamespace).
  absl::StatusOr<runtime::CompiledModel> Lookup(const std::string& key, const engine::EngineRegistry& engines,
                                                LookupTimings* timings = nullptr);
  absl::Status Store(const std::string& key, runtime::GemBytes bytes);
  absl::Status StoreModel(const std::string& key, const ir::Graph& graph, const runtime::StaticProgram* program,
                          const OptionMap& options, const engine::EngineRegistry& engines,
                          const ir::Graph* partitioned = nullptr,
                          const variables::VarManagerInfo* variables = nullptr);
  bool Contains(const std::string& key) const;

  absl::StatusOr<std::vector<EntryInfo>> List() const;
  // Checks every entry (checksums, and with `engines` that it loads);
  // moves bad ones aside and removes stale temporaries.
  VerifyReport Verify(const engine::EngineRegistry* engines);
  // Removes stale temporaries and the entries moved aside as corrupt, then
  // least recently used entries until at most `max_bytes` remain.
  absl::StatusOr<GcReport> Collect(int64_t max_bytes);

  CacheStats stats() const;
  const std::string& dir() const { return options_.dir; }
  RemoteTier* remote() const { return options_.remote.get(); }

 private:
  explicit ModelCache(ModelCacheOptions options) : options_(std::move(options)) {}
  std::string EntryPath(std::string_view ns, const std::string& key) const;
  // Reads and checks the local entry; NotFound when absent, DataLoss when
  // corrupt.
  absl::StatusOr<EntryBlobs> ReadLocal(std::string_view ns, const std::string& key) const;
  absl::Status Publish(std::string_view ns, const std::string& key, const EntryBlobs& entry);
  void MoveAside(std::string_view ns, const std::string& key, const absl::Status& why, std::string* moved_to);
  // Keeps the `verified` record of an entry whose CRCs just matched, unless
  // its files' stamps are too recent to vouch for them.
  void RememberVerified(std::string_view ns, const std::string& key, const EntryBlobs& entry);
  absl::StatusOr<runtime::CompiledModel> LookupRemote(std::string_view ns, const std::string& key,
                                                      const engine::EngineRegistry& engines, LookupTimings* timings);
  int64_t RemoveStaleTemps();
  // The bytes of every entry, from file sizes only (no record is read).
  int64_t ScanBytes() const;
  void CountMiss();
  // Removes entries of earlier cache formats; how many there were.
  int64_t RemoveOldFormats();
  // The summary of entry `key`'s export after checking it; NotFound when
  // it has none, DataLoss when it was damaged (then removed).
  absl::StatusOr<std::string> CheckExport(std::string_view ns, const std::string& key);
  // Removes temporaries left inside entries (exports being added).
  void RemoveStaleEntryTemps();

  ModelCacheOptions options_;
  std::atomic<int64_t> hits_{0}, remote_hits_{0}, misses_{0}, evictions_{0}, stores_{0}, store_failures_{0},
      corrupt_{0}, bytes_{0}, direct_hits_{0}, direct_misses_{0};
};

}  // namespace ge::cache
