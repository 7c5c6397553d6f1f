// ModelCache administration: listing, checking every entry, eviction of the
// least recently used entries, and cleanup of stale temporaries.
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "base/logging.h"
#include "base/status.h"
#include "runtime/cache/cache_files.h"
#include "runtime/cache/cache_key.h"
#include "runtime/cache/model_cache.h"

namespace ge::cache {
namespace {

namespace fs = std::filesystem;

// A temporary whose writer cannot be checked (another host) is stale
// after this long; no write takes an hour.
constexpr int64_t kTempMaxAgeSeconds = 3600;

int64_t MTimeUnix(const fs::path& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtime);
}

bool IsTempName(const std::string& name) { return name.rfind(kTempPrefix, 0) == 0; }

// Calls `fn(path, name, ns)` for every directory two levels under a
// namespace of <layout>/ns/ (layout in model_cache.h).
template <typename Fn>
void ForEachSlotOf(const fs::path& namespaces, Fn&& fn) {
  std::error_code ec;
  for (const auto& space : fs::directory_iterator(namespaces, ec)) {
    std::error_code outer;
    const std::string ns = space.path().filename().string();
    if (!space.is_directory(outer) || !IsValidNamespace(ns)) continue;
    for (const auto& bucket : fs::directory_iterator(space.path(), outer)) {
      std::error_code inner;
      if (!bucket.is_directory(inner)) continue;
      for (const auto& slot : fs::directory_iterator(bucket.path(), inner)) {
        std::error_code is_dir;
        if (slot.is_directory(is_dir)) fn(slot.path(), slot.path().filename().string(), ns);
      }
    }
  }
}

template <typename Fn>
void ForEachSlot(const std::string& dir, Fn&& fn) {
  ForEachSlotOf(fs::path(dir) / kCacheLayoutDir / "ns", fn);
}

// Entries of the formats before this one: v1 (<dir>/v1/<kk>/<key>) and v2
// (<dir>/v2/ns/<namespace>/<kk>/<key>).
constexpr const char* kOldLayoutDirs[] = {"v1", "v2"};

int64_t CountOldFormatEntries(const std::string& dir) {
  int64_t count = 0;
  std::error_code ec;
  for (const auto& bucket : fs::directory_iterator(fs::path(dir) / "v1", ec)) {
    std::error_code inner;
    for (const auto& slot : fs::directory_iterator(bucket.path(), inner)) {
      count += IsCacheKey(slot.path().filename().string()) ? 1 : 0;
    }
  }
  ForEachSlotOf(fs::path(dir) / "v2" / "ns", [&](const fs::path&, const std::string& name, const std::string&) {
    count += IsCacheKey(name) ? 1 : 0;
  });
  return count;
}

// Whether the slot at `path` holds a direct-mode entry.
bool IsDirectSlot(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path / kDirectFile, ec) && !fs::exists(path / kMetaFile, ec);
}

}  // namespace

int64_t ModelCache::RemoveStaleTemps() {
  int64_t removed = 0;
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  ForEachSlot(options_.dir, [&](const fs::path& path, const std::string& name, const std::string&) {
    if (!IsTempName(name) || !IsStaleTemp(name, now - MTimeUnix(path), kTempMaxAgeSeconds)) return;
    RemoveTree(path.string());
    ++removed;
  });
  // Digests remembered by file identity are written beside their final
  // names too (RememberDigest).
  std::error_code ec;
  for (const auto& file : fs::directory_iterator(fs::path(options_.dir) / kCacheLayoutDir / "digests", ec)) {
    const std::string name = file.path().filename().string();
    if (IsTempName(name) && IsStaleTemp(name, now - MTimeUnix(file.path()), kTempMaxAgeSeconds)) {
      RemoveTree(file.path().string());
      ++removed;
    }
  }
  if (removed > 0) Logger("cache").info("compiled-model cache {}: removed {} stale temporary entries", dir(), removed);
  return removed;
}

void ModelCache::RemoveStaleEntryTemps() {
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  ForEachSlot(options_.dir, [&](const fs::path& path, const std::string& name, const std::string&) {
    if (!IsCacheKey(name)) return;
    std::error_code ec;
    for (const auto& file : fs::directory_iterator(path, ec)) {
      const std::string file_name = file.path().filename().string();
      if (IsTempName(file_name) && IsStaleTemp(file_name, now - MTimeUnix(file.path()), kTempMaxAgeSeconds)) {
        RemoveTree(file.path().string());
      }
    }
  });
}

int64_t ModelCache::RemoveOldFormats() {
  const int64_t count = CountOldFormatEntries(options_.dir);
  for (const char* layout : kOldLayoutDirs) RemoveTree((fs::path(options_.dir) / layout).string());
  if (count > 0) Logger("cache").info("compiled-model cache {}: removed {} entries of earlier formats", dir(), count);
  return count;
}

int64_t ModelCache::ScanBytes() const {
  int64_t bytes = 0;
  ForEachSlot(options_.dir, [&](const fs::path& path, const std::string& name, const std::string&) {
    if (IsCacheKey(name)) bytes += DirectoryBytes(path.string());
  });
  return bytes;
}

absl::StatusOr<std::vector<EntryInfo>> ModelCache::List() const {
  std::error_code ec;
  if (!fs::is_directory(options_.dir, ec)) return NotFound("no compiled-model cache at ", options_.dir);
  std::vector<EntryInfo> entries;
  ForEachSlot(options_.dir, [&](const fs::path& path, const std::string& name, const std::string& ns) {
    if (!IsCacheKey(name)) return;
    EntryInfo info;
    info.ns = ns;
    info.key = name;
    info.path = path.string();
    info.direct = IsDirectSlot(path);
    info.bytes = DirectoryBytes(info.path);
    info.last_used_unix = MTimeUnix(path / (info.direct ? kDirectFile : kMetaFile));
    if (info.direct) {
      entries.push_back(std::move(info));
      return;
    }
    if (auto dir = DirHandle::Open(info.path); dir.ok()) {
      if (auto meta = dir->ReadFile(kMetaFile); meta.ok()) {
        if (auto parsed = ParseMeta(*meta, name); parsed.ok()) {
          info.created_unix = parsed->created_unix;
          info.ged_version = parsed->ged_version;
        }
      }
    }
    entries.push_back(std::move(info));
  });
  std::sort(entries.begin(), entries.end(),
            [](const EntryInfo& a, const EntryInfo& b) { return a.last_used_unix > b.last_used_unix; });
  return entries;
}

VerifyReport ModelCache::Verify(const engine::EngineRegistry* engines) {
  VerifyReport report;
  report.temps_removed = RemoveStaleTemps();
  std::vector<std::pair<std::string, std::string>> keys;  // namespace, key
  ForEachSlot(options_.dir, [&](const fs::path& path, const std::string& name, const std::string& ns) {
    if (IsCacheKey(name)) {
      keys.emplace_back(ns, name);
    } else if (!IsTempName(name)) {
      // No reader ever opens it: not corrupt, just not ours.
      Logger("cache").warn("compiled-model cache {}: {} is not an entry; left in place", dir(), path.string());
    }
  });
  report.old_format = CountOldFormatEntries(options_.dir);
  RemoveStaleEntryTemps();
  for (const auto& [ns, key] : keys) {
    if (IsDirectSlot(fs::path(EntryPath(ns, key)))) {
      // A direct-mode entry: its record must be sound (a stale or dangling
      // one is a miss, not corruption).
      absl::StatusOr<DirHandle> dir = DirHandle::Open(EntryPath(ns, key));
      if (!dir.ok()) continue;  // evicted meanwhile
      absl::StatusOr<std::string> record = dir->ReadFile(kDirectFile);
      absl::Status bad = record.ok() ? ParseDirectRecord(*record, key).status() : record.status();
      if (bad.ok()) {
        ++report.direct_entries;
        continue;
      }
      std::string moved_to;
      MoveAside(ns, key, bad, &moved_to);
      report.moved_aside.push_back(StrCat(key, ": ", bad.message(), moved_to.empty() ? "" : " -> " + moved_to));
      continue;
    }
    absl::StatusOr<EntryBlobs> entry = ReadLocal(ns, key);
    if (!entry.ok() && entry.status().code() == absl::StatusCode::kNotFound) continue;  // evicted meanwhile
    absl::Status bad = entry.ok() ? CheckEntry(*entry, key).status() : entry.status();
    if (bad.ok() && engines != nullptr) {
      bad = runtime::LoadGemWithWeights(entry->gem_view(), entry->mapped_weights, StrCat("cache entry ", key), *engines)
                .status();
      // Intact but built for other engines, another CPU or format: another
      // ged on a shared directory may load it; this one never looks it up
      // (its key differs), so it is not corrupt.
      if (bad.code() == absl::StatusCode::kFailedPrecondition) {
        ++report.other_hosts;
        continue;
      }
    }
    if (bad.ok()) {
      ++report.entries;
      if (CheckExport(ns, key).status().code() == absl::StatusCode::kDataLoss) ++report.exports_removed;
      continue;
    }
    std::string moved_to;
    MoveAside(ns, key, bad, &moved_to);
    report.moved_aside.push_back(StrCat(key, ": ", bad.message(), moved_to.empty() ? "" : " -> " + moved_to));
  }
  return report;
}

absl::StatusOr<GcReport> ModelCache::Collect(int64_t max_bytes) {
  if (max_bytes < 0) return InvalidArgument("cache size limit ", max_bytes, " is negative");
  GcReport report;
  report.temps_removed = RemoveStaleTemps();
  std::error_code ec;
  for (const auto& aside : fs::directory_iterator(fs::path(options_.dir) / "corrupt", ec)) {
    RemoveTree(aside.path().string());
    ++report.corrupt_removed;
  }
  report.old_format_removed = RemoveOldFormats();
  RemoveStaleEntryTemps();
  GE_ASSIGN_OR_RETURN(std::vector<EntryInfo> entries, List());  // most recently used first
  // Direct-mode entries whose model entry is gone lead nowhere.
  auto dangling = [this](const EntryInfo& e) {
    if (!e.direct) return false;
    absl::StatusOr<DirHandle> dir = DirHandle::Open(e.path);
    absl::StatusOr<std::string> record = dir.ok() ? dir->ReadFile(kDirectFile) : dir.status();
    absl::StatusOr<DirectEntry> parsed = record.ok() ? ParseDirectRecord(*record, e.key) : record.status();
    return parsed.ok() && !ContainsIn(parsed->content_ns, parsed->content_key);
  };
  for (auto it = entries.begin(); it != entries.end();) {
    const std::string doomed = (fs::path(it->path).parent_path() / TempName("del")).string();
    if (dangling(*it) && RenameNoReplace(it->path, doomed).ok()) {
      RemoveTree(doomed);
      ++report.dangling_removed;
      it = entries.erase(it);
    } else {
      ++it;
    }
  }
  int64_t total = 0;
  for (const EntryInfo& e : entries) total += e.bytes;
  while (total > max_bytes && !entries.empty()) {
    const EntryInfo victim = entries.back();
    entries.pop_back();
    // Rename first so readers see the entry whole or not at all; readers
    // that already opened it keep reading the unlinked files.
    const std::string doomed = (fs::path(victim.path).parent_path() / TempName("del")).string();
    if (!RenameNoReplace(victim.path, doomed).ok()) continue;  // someone else removed it
    RemoveTree(doomed);
    total -= victim.bytes;
    report.bytes_removed += victim.bytes;
    ++report.entries_removed;
    evictions_.fetch_add(1);
    Logger("cache").info("compiled-model cache {}: evicted {} ({} bytes)", dir(), victim.key, victim.bytes);
  }
  report.bytes_left = total;
  bytes_ = total;
  return report;
}

}  // namespace ge::cache
