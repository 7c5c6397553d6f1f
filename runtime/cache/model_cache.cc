// ModelCache: lookup, publication, eviction and checking of the on-disk
// compiled-model cache (see model_cache.h for the layout and guarantees).
#include "runtime/cache/model_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <tuple>

#include "base/logging.h"
#include "base/status.h"
#include "runtime/cache/cache_files.h"
#include "runtime/cache/cache_key.h"

namespace ge::cache {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLayoutDir = kCacheLayoutDir;
constexpr char kNamespacesDir[] = "ns";
constexpr char kCorruptDir[] = "corrupt";
double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

spdlog::logger& Log() { return Logger("cache"); }

}  // namespace

std::string DefaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return StrCat(xdg, "/ged");
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return StrCat(home, "/.cache/ged");
  return "/var/cache/ged";
}

namespace {

// Creates `dir` (mode 0700) when missing, then checks that it is a
// directory (not a link to one) owned by `owner`.
absl::Status CheckCacheDirectory(const std::string& dir, int64_t owner) {
  std::error_code ec;
  const fs::path path(dir);
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return FailedPrecondition("cannot create the compiled-model cache directory ", dir, ": ", std::strerror(errno));
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    return FailedPrecondition("cannot stat the compiled-model cache directory ", dir, ": ", std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return FailedPrecondition("the compiled-model cache directory ", dir, " is not a directory (or is a symlink)");
  }
  if (static_cast<int64_t>(st.st_uid) != owner) {
    return FailedPrecondition("the compiled-model cache directory ", dir, " belongs to uid ", st.st_uid,
                              ", not to this process's uid ", owner, ": refusing to use another user's cache");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelCache>> ModelCache::Open(ModelCacheOptions options) {
  if (options.dir.empty()) return InvalidArgument("the compiled-model cache needs a directory");
  if (options.max_bytes < 0) return InvalidArgument("cache size limit ", options.max_bytes, " is negative");
  if (options.remote != nullptr && options.remote_mac_key.empty()) {
    return InvalidArgument("the remote cache tier ", options.remote->address(),
                           " needs the operator's mac key (cache_remote_key_file, gectl --cache-remote-key-file): "
                           "its entries are signed and checked");
  }
  if (options.owner_uid < 0) options.owner_uid = static_cast<int64_t>(geteuid());
  GE_RETURN_IF_ERROR(CheckCacheDirectory(options.dir, options.owner_uid));
  std::error_code ec;
  fs::create_directories(fs::path(options.dir) / kLayoutDir / kNamespacesDir, ec);
  if (ec) {
    return FailedPrecondition("cannot create the compiled-model cache directory ", options.dir, ": ", ec.message());
  }
  auto cache = std::unique_ptr<ModelCache>(new ModelCache(std::move(options)));
  cache->RemoveStaleTemps();
  cache->bytes_ = cache->ScanBytes();
  return cache;
}

std::string ModelCache::EntryPath(std::string_view ns, const std::string& key) const {
  return (fs::path(options_.dir) / kLayoutDir / kNamespacesDir / std::string(ns) / key.substr(0, 2) / key).string();
}

bool ModelCache::ContainsIn(std::string_view ns, const std::string& key) const {
  std::error_code ec;
  return IsValidNamespace(ns) && IsCacheKey(key) && fs::exists(fs::path(EntryPath(ns, key)) / kMetaFile, ec);
}

bool ModelCache::Contains(const std::string& key) const { return ContainsIn(kOperatorNamespace, key); }

absl::StatusOr<EntryBlobs> ModelCache::ReadLocal(std::string_view ns, const std::string& key) const {
  const std::string path = EntryPath(ns, key);
  GE_ASSIGN_OR_RETURN(DirHandle dir, DirHandle::Open(path));
  EntryBlobs entry;
  auto unreadable = [&](const char* name, const absl::Status& status) {
    std::error_code ec;
    // Evicted while we read: a plain miss. Otherwise a published entry
    // (always complete) lacks a file: corrupt.
    if (!fs::exists(path, ec)) return absl::NotFoundError(StrCat("entry ", key, " was removed while read"));
    return absl::DataLossError(StrCat(name, " is unreadable: ", status.message()));
  };
  absl::StatusOr<std::string> meta = dir.ReadFile(kMetaFile);
  if (!meta.ok() && dir.ReadFile(kDirectFile).ok()) {
    // A direct-mode entry, not a model: a miss for this kind of lookup.
    return absl::NotFoundError(StrCat(key, " is a direct-mode entry, not a compiled model"));
  }
  if (!meta.ok()) return unreadable(kMetaFile, meta.status());
  entry.meta = *std::move(meta);
  // Both files mapped: their pages stay the page cache's, shared by every
  // process that loads the entry.
  for (auto [name, blob, stamp] : {std::tuple{kGemFile, &entry.mapped_gem, &entry.gem_stamp},
                                   {kWeightsFile, &entry.mapped_weights, &entry.weights_stamp}}) {
    absl::StatusOr<std::shared_ptr<Buffer>> mapped = dir.MapFile(name, stamp);
    if (!mapped.ok()) return unreadable(name, mapped.status());
    *blob = *std::move(mapped);
  }
  if (absl::StatusOr<std::string> verified = dir.ReadFile(kVerifiedFile); verified.ok()) {
    entry.verified = *std::move(verified);
  }
  return entry;
}

void ModelCache::MoveAside(std::string_view ns, const std::string& key, const absl::Status& why,
                           std::string* moved_to) {
  const fs::path corrupt = fs::path(options_.dir) / kCorruptDir;
  std::error_code ec;
  fs::create_directories(corrupt, ec);
  const std::string target =
      (corrupt / StrCat(key, ".", static_cast<int64_t>(std::time(nullptr)), TempName("bad").substr(4))).string();
  absl::Status renamed = RenameNoReplace(EntryPath(ns, key), target);
  if (!renamed.ok()) {
    // Someone else moved or evicted it first; nothing left to do.
    Log().warn("compiled-model cache {}: entry {} is corrupt ({}) and could not be moved aside: {}", options_.dir,
               key, why.message(), renamed.message());
    return;
  }
  corrupt_.fetch_add(1);
  Log().warn("compiled-model cache {}: entry {} is corrupt ({}); moved aside to {}", options_.dir, key,
             why.message(), target);
  if (moved_to != nullptr) *moved_to = target;
}

void ModelCache::CountMiss() { misses_.fetch_add(1); }

namespace {

// Whether a write made now could leave `s`'s times as they are (the racy
// rule of direct_entry.h): such a stamp vouches for nothing yet.
bool IsRacyStamp(const FileStamp& s, int64_t racy_seconds) {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const int64_t limit = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec - racy_seconds * 1000000000;
  return s.mtime_ns >= limit || s.ctime_ns >= limit;
}

}  // namespace

void ModelCache::RememberVerified(std::string_view ns, const std::string& key, const EntryBlobs& entry) {
  if (IsRacyStamp(entry.gem_stamp, options_.racy_seconds) || IsRacyStamp(entry.weights_stamp, options_.racy_seconds)) {
    return;
  }
  // Beside the entry's files, renamed into place; an entry evicted
  // meanwhile just loses it.
  const fs::path dir(EntryPath(ns, key));
  const fs::path temp = dir / TempName("verified");
  if (!WriteFileDurably(temp.string(), VerifiedRecord(key, entry)).ok() ||
      rename(temp.c_str(), (dir / kVerifiedFile).c_str()) != 0) {
    std::error_code ec;
    fs::remove(temp, ec);
  }
}

absl::StatusOr<runtime::CompiledModel> ModelCache::Lookup(const std::string& key,
                                                          const engine::EngineRegistry& engines,
                                                          LookupTimings* timings) {
  return LookupIn(kOperatorNamespace, key, engines, timings);
}

absl::StatusOr<runtime::CompiledModel> ModelCache::LookupIn(std::string_view ns, const std::string& key,
                                                            const engine::EngineRegistry& engines,
                                                            LookupTimings* timings) {
  if (!IsCacheKey(key)) return InvalidArgument("'", key.substr(0, 80), "' is not a cache key (64 hex digits)");
  if (!IsValidNamespace(ns)) return InvalidArgument("'", ns.substr(0, 80), "' is not a cache namespace");
  LookupTimings local_timings;
  LookupTimings& t = timings ? *timings : local_timings;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<EntryBlobs> entry = ReadLocal(ns, key);
  t.read = SecondsSince(start);
  if (!entry.ok() && entry.status().code() != absl::StatusCode::kNotFound) {
    MoveAside(ns, key, entry.status(), nullptr);
  }
  if (!entry.ok()) return LookupRemote(ns, key, engines, timings);
  start = std::chrono::steady_clock::now();
  // CRCs once per file identity (cache_entry.h): skipped while the files
  // keep the stamps a reader recorded after checking them.
  const bool vouched = !entry->verified.empty() && entry->verified == VerifiedRecord(key, *entry);
  absl::Status checked = CheckEntry(*entry, key, /*checksums=*/!vouched).status();
  if (checked.ok() && !vouched) RememberVerified(ns, key, *entry);
  t.verify = SecondsSince(start);
  if (!checked.ok()) {
    MoveAside(ns, key, checked, nullptr);
    return LookupRemote(ns, key, engines, timings);
  }
  start = std::chrono::steady_clock::now();
  absl::StatusOr<runtime::CompiledModel> model =
      runtime::LoadGemWithWeights(entry->gem_view(), entry->mapped_weights, StrCat("cache entry ", key), engines);
  t.load = SecondsSince(start);
  if (!model.ok()) {
    MoveAside(ns, key, model.status(), nullptr);
    return LookupRemote(ns, key, engines, timings);
  }
  TouchFile((fs::path(EntryPath(ns, key)) / kMetaFile).string());
  hits_.fetch_add(1);
  return model;
}

// Remote entries are named "<namespace>:<key>" (redis_tier.h).
absl::StatusOr<runtime::CompiledModel> ModelCache::LookupRemote(std::string_view ns, const std::string& key,
                                                                const engine::EngineRegistry& engines,
                                                                LookupTimings* timings) {
  if (options_.remote == nullptr) {
    CountMiss();
    return absl::NotFoundError(StrCat("no entry ", key, " in the compiled-model cache ", options_.dir));
  }
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::optional<EntryBlobs>> got = options_.remote->Get(StrCat(ns, ":", key));
  if (timings != nullptr) timings->read += SecondsSince(start);
  if (!got.ok()) {
    Log().warn("compiled-model cache: remote tier {} unavailable: {}", options_.remote->address(),
               got.status().message());
  }
  if (!got.ok() || !got->has_value()) {
    CountMiss();
    return absl::NotFoundError(StrCat("no entry ", key, " in the compiled-model cache ", options_.dir, " or at ",
                                      options_.remote->address()));
  }
  EntryBlobs& entry = **got;
  // Verified once, here, before it is published into the local tier.
  absl::Status checked = VerifyRemoteEntry(options_.remote_mac_key, ns, key, entry);
  if (checked.ok()) checked = CheckEntry(entry, key).status();
  absl::StatusOr<runtime::CompiledModel> model =
      checked.ok() ? runtime::LoadGemFromBuffers(entry.gem, entry.weights, StrCat("remote cache entry ", key), engines)
                   : absl::StatusOr<runtime::CompiledModel>(checked);
  if (!model.ok()) {
    Log().warn("compiled-model cache: remote entry {} at {} is unusable: {}", key, options_.remote->address(),
               model.status().message());
    CountMiss();
    return absl::NotFoundError(StrCat("remote entry ", key, " is unusable"));
  }
  if (absl::Status s = Publish(ns, key, entry); !s.ok() && s.code() != absl::StatusCode::kAlreadyExists) {
    Log().warn("compiled-model cache {}: cannot keep remote entry {} locally: {}", options_.dir, key, s.message());
  }
  hits_.fetch_add(1);
  remote_hits_.fetch_add(1);
  return model;
}

absl::Status ModelCache::Publish(std::string_view ns, const std::string& key, const EntryBlobs& entry) {
  const fs::path parent = fs::path(EntryPath(ns, key)).parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return FailedPrecondition("cannot create ", parent.string(), ": ", ec.message());
  const fs::path temp = parent / TempName("put");
  if (!fs::create_directory(temp, ec) || ec) {
    return FailedPrecondition("cannot create ", temp.string(), ": ", ec.message());
  }
  absl::Status written = WriteFileDurably((temp / kGemFile).string(), entry.gem_view());
  if (written.ok()) written = WriteFileDurably((temp / kWeightsFile).string(), entry.weights_view());
  // The record last: an entry with a record has both files.
  if (written.ok()) written = WriteFileDurably((temp / kMetaFile).string(), entry.meta);
  if (written.ok()) written = SyncDirectory(temp.string());
  if (written.ok()) written = RenameNoReplace(temp.string(), EntryPath(ns, key));
  if (!written.ok()) {
    RemoveTree(temp.string());
    return written;
  }
  (void)SyncDirectory(parent.string());
  bytes_.fetch_add(entry.size());
  return absl::OkStatus();
}

absl::Status ModelCache::Store(const std::string& key, runtime::GemBytes bytes) {
  return StoreIn(kOperatorNamespace, key, std::move(bytes));
}

absl::Status ModelCache::StoreIn(std::string_view ns, const std::string& key, runtime::GemBytes bytes) {
  if (!IsCacheKey(key)) return InvalidArgument("'", key.substr(0, 80), "' is not a cache key (64 hex digits)");
  if (!IsValidNamespace(ns)) return InvalidArgument("'", ns.substr(0, 80), "' is not a cache namespace");
  const EntryBlobs entry = MakeEntry(key, std::move(bytes));
  absl::Status published = Publish(ns, key, entry);
  if (published.code() == absl::StatusCode::kAlreadyExists) published = absl::OkStatus();  // another writer won
  if (!published.ok()) {
    store_failures_.fetch_add(1);
    return Annotate(published, StrCat("storing entry ", key, " in the compiled-model cache ", options_.dir));
  }
  stores_.fetch_add(1);
  if (options_.remote != nullptr) {
    EntryBlobs signed_entry;
    signed_entry.meta = SignedRemoteMeta(options_.remote_mac_key, ns, key, entry);
    signed_entry.gem = entry.gem;
    signed_entry.weights = entry.weights;
    if (absl::Status s = options_.remote->Put(StrCat(ns, ":", key), signed_entry); !s.ok()) {
      Log().warn("compiled-model cache: cannot store entry {} at {}: {}", key, options_.remote->address(),
                 s.message());
    }
  }
  if (options_.max_bytes > 0 && bytes_.load() > options_.max_bytes) {
    absl::StatusOr<GcReport> gc = Collect(options_.max_bytes);
    if (!gc.ok()) Log().warn("compiled-model cache {}: eviction failed: {}", options_.dir, gc.status().message());
  }
  return absl::OkStatus();
}

absl::Status ModelCache::StoreModel(const std::string& key, const ir::Graph& graph,
                                    const runtime::StaticProgram* program, const OptionMap& options,
                                    const engine::EngineRegistry& engines, const ir::Graph* partitioned,
                                    const variables::VarManagerInfo* variables) {
  return StoreModelIn(kOperatorNamespace, key, graph, program, options, engines, partitioned, variables);
}

absl::Status ModelCache::StoreModelIn(std::string_view ns, const std::string& key, const ir::Graph& graph,
                                      const runtime::StaticProgram* program, const OptionMap& options,
                                      const engine::EngineRegistry& engines, const ir::Graph* partitioned,
                                      const variables::VarManagerInfo* variables) {
  GE_ASSIGN_OR_RETURN(runtime::GemBytes bytes, runtime::SerializeGem(graph, program, options, engines,
                                                                     /*external_weights=*/true, kWeightsFile,
                                                                     partitioned, variables));
  return StoreIn(ns, key, std::move(bytes));
}

absl::StatusOr<DirectEntry> ModelCache::LookupDirectIn(std::string_view ns, const std::string& key) {
  if (!IsCacheKey(key)) return InvalidArgument("'", key.substr(0, 80), "' is not a cache key (64 hex digits)");
  if (!IsValidNamespace(ns)) return InvalidArgument("'", ns.substr(0, 80), "' is not a cache namespace");
  const std::string path = EntryPath(ns, key);
  absl::StatusOr<DirHandle> dir = DirHandle::Open(path);
  absl::StatusOr<std::string> record = dir.ok() ? dir->ReadFile(kDirectFile) : dir.status();
  if (!record.ok()) {
    direct_misses_.fetch_add(1);
    return absl::NotFoundError(StrCat("no direct entry ", key, " in the compiled-model cache ", options_.dir));
  }
  absl::StatusOr<DirectEntry> entry = ParseDirectRecord(*record, key);
  if (!entry.ok()) {
    MoveAside(ns, key, entry.status(), nullptr);
    direct_misses_.fetch_add(1);
    return absl::NotFoundError(StrCat("direct entry ", key, " is corrupt"));
  }
  if (absl::Status files = CheckDirectFiles(*entry); !files.ok()) {
    // Stale, not corrupt: the next compile of the model replaces it.
    Log().info("compiled-model cache {}: direct entry {} is stale: {}", options_.dir, key, files.message());
    direct_misses_.fetch_add(1);
    return absl::NotFoundError(StrCat("direct entry ", key, " is stale: ", files.message()));
  }
  TouchFile((fs::path(path) / kDirectFile).string());
  direct_hits_.fetch_add(1);
  // Files recorded with their content (racy then) that are settled now:
  // recorded again by their identity alone, so later hits read no content.
  const bool had_content =
      std::any_of(entry->files.begin(), entry->files.end(), [](const FileIdentity& f) { return !f.sha256.empty(); });
  if (had_content) {
    DirectEntry settled = *entry;
    bool racy = false;
    for (FileIdentity& f : settled.files) {
      absl::StatusOr<FileIdentity> now = IdentifyFile(f.path);
      racy = racy || !now.ok() || !now->sha256.empty();
      if (now.ok()) f = *std::move(now);
    }
    if (!racy) (void)StoreDirectIn(ns, key, settled);
  }
  return entry;
}

absl::Status ModelCache::StoreDirectIn(std::string_view ns, const std::string& key, const DirectEntry& entry) {
  if (!IsCacheKey(key)) return InvalidArgument("'", key.substr(0, 80), "' is not a cache key (64 hex digits)");
  if (!IsValidNamespace(ns)) return InvalidArgument("'", ns.substr(0, 80), "' is not a cache namespace");
  const fs::path target(EntryPath(ns, key));
  const fs::path parent = target.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return FailedPrecondition("cannot create ", parent.string(), ": ", ec.message());
  const fs::path temp = parent / TempName("direct");
  if (!fs::create_directory(temp, ec) || ec) {
    return FailedPrecondition("cannot create ", temp.string(), ": ", ec.message());
  }
  const std::string record = DirectRecord(key, entry);
  absl::Status written = WriteFileDurably((temp / kDirectFile).string(), record);
  if (written.ok()) written = SyncDirectory(temp.string());
  if (written.ok()) {
    written = RenameNoReplace(temp.string(), target.string());
    if (written.code() == absl::StatusCode::kAlreadyExists) {
      // A stale entry (or a concurrent writer's): out of the way, then ours.
      const fs::path doomed = parent / TempName("del");
      if (RenameNoReplace(target.string(), doomed.string()).ok()) RemoveTree(doomed.string());
      written = RenameNoReplace(temp.string(), target.string());
      if (written.code() == absl::StatusCode::kAlreadyExists) written = absl::OkStatus();  // another writer won
    }
  }
  if (!written.ok()) {
    RemoveTree(temp.string());
    return Annotate(written, StrCat("storing direct entry ", key, " in the compiled-model cache ", options_.dir));
  }
  RemoveTree(temp.string());  // when another writer won
  (void)SyncDirectory(parent.string());
  bytes_.fetch_add(static_cast<int64_t>(record.size()));
  return absl::OkStatus();
}

namespace {

std::string DigestRecord(const FileIdentity& f, const Sha256Digest& digest) {
  const std::string body = StrCat("ged-digest 1\npath ", f.path, "\nidentity ", f.size, " ", f.mtime_ns, " ",
                                  f.ctime_ns, " ", f.inode, " ", f.device, "\ndigest ", ToHex(digest), "\n");
  return StrCat(body, "record_sha256 ", ToHex(Sha256(body)), "\n");
}

}  // namespace

std::optional<Sha256Digest> ModelCache::RecallDigest(const FileIdentity& file) const {
  if (!file.sha256.empty()) return std::nullopt;  // racy: its times cannot vouch for it
  const std::string path = (fs::path(options_.dir) / kLayoutDir / "digests" / ToHex(Sha256(file.path))).string();
  absl::StatusOr<DirHandle> dir = DirHandle::Open(fs::path(path).parent_path().string());
  if (!dir.ok()) return std::nullopt;
  absl::StatusOr<std::string> record = dir->ReadFile(fs::path(path).filename().c_str());
  if (!record.ok()) return std::nullopt;
  constexpr std::string_view kDigestLine = "\ndigest ";
  const size_t digest_at = record->find(kDigestLine);
  if (digest_at == std::string::npos || digest_at + kDigestLine.size() + 64 > record->size()) return std::nullopt;
  const std::string hex = record->substr(digest_at + kDigestLine.size(), 64);
  // The same identity and a sound record: the same record made now.
  Sha256Digest digest{};
  for (size_t i = 0; i < digest.size(); ++i) {
    unsigned value = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &value) != 1) return std::nullopt;
    digest[i] = static_cast<uint8_t>(value);
  }
  if (*record != DigestRecord(file, digest)) return std::nullopt;
  return digest;
}

void ModelCache::RememberDigest(const FileIdentity& file, const Sha256Digest& digest) {
  if (!file.sha256.empty()) return;
  const fs::path dir = fs::path(options_.dir) / kLayoutDir / "digests";
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path temp = dir / TempName("digest");
  if (!WriteFileDurably(temp.string(), DigestRecord(file, digest)).ok()) {
    RemoveTree(temp.string());
    return;
  }
  if (rename(temp.c_str(), (dir / ToHex(Sha256(file.path))).c_str()) != 0) RemoveTree(temp.string());
}

CacheStats ModelCache::stats() const {
  CacheStats s;
  s.hits = hits_.load();
  s.remote_hits = remote_hits_.load();
  s.misses = misses_.load();
  s.evictions = evictions_.load();
  s.stores = stores_.load();
  s.store_failures = store_failures_.load();
  s.corrupt = corrupt_.load();
  s.bytes = bytes_.load();
  s.direct_hits = direct_hits_.load();
  s.direct_misses = direct_misses_.load();
  return s;
}

}  // namespace ge::cache
