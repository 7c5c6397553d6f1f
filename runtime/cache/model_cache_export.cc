// ModelCache exports: the .gem of an entry as `gectl compile -o` writes it
// (weights inline), kept beside the entry's files so that a hit writes its
// output by a reflink, a hard link or a copy instead of serializing the
// model again.
//
// An export is two files in the entry's directory: export.gem and
// export.meta, a record (as the entry's own, cache_entry.h) with the
// export's size, CRC-32C, the file's identity (device, inode, modification
// time) when the CRC was taken, and a one-line summary of the model for the
// command's output. A hit whose export still has that identity reads none of
// it; otherwise it checks the CRC. Both are written under temporary names and renamed in
// place, the .gem first; a reader checks the .gem against the record, so a
// damaged or half-replaced export is a miss (removed), never a bad output.
// Exports live in the local tier only and count towards its size.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/crc32c.h"
#include "base/logging.h"
#include "base/sha256.h"
#include "base/status.h"
#include "runtime/cache/cache_files.h"
#include "runtime/cache/model_cache.h"

namespace ge::cache {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[] = "ged-cache-export 1";
constexpr std::string_view kDigestPrefix = "record_sha256 ";

absl::Status Errno(std::string_view what) {
  const int error = errno;
  const std::string message = StrCat(what, ": ", std::strerror(error));
  return error == ENOENT ? absl::NotFoundError(message) : absl::InternalError(message);
}

// The CRC-32C of an open file's `size` bytes, read through a mapping.
absl::StatusOr<uint32_t> FileCrc(int fd, size_t size) {
  if (size == 0) return Crc32c(nullptr, 0);
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (data == MAP_FAILED) return Errno("cannot map the export");
  const uint32_t crc = Crc32c(data, size);
  munmap(data, size);
  return crc;
}

// The export file's identity when its CRC was taken: while the file keeps
// it, its bytes are the ones checked (a write changes the modification
// time). The export is a fresh inode with one name when it is recorded, so
// no write can slip into the same clock tick.
struct ExportIdentity {
  uint64_t dev = 0, ino = 0;
  int64_t mtime_ns = 0;
  bool operator==(const ExportIdentity&) const = default;
};

ExportIdentity IdentityOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::string ExportRecord(std::string_view key, int64_t bytes, uint32_t crc, const ExportIdentity& identity,
                         std::string_view summary) {
  std::string clean(summary);
  for (char& c : clean) {
    if (c == '\n') c = ' ';
  }
  const std::string body = StrCat(kMagic, "\nkey ", key, "\nbytes ", bytes, "\ncrc32c ", crc, "\nidentity ",
                                  identity.dev, " ", identity.ino, " ", identity.mtime_ns, "\nsummary ", clean, "\n");
  return StrCat(body, kDigestPrefix, ToHex(Sha256(body)), "\n");
}

struct ExportMeta {
  int64_t bytes = 0;
  uint32_t crc = 0;
  std::optional<ExportIdentity> identity;  // absent in records of earlier builds
  std::string summary;
};

std::optional<ExportIdentity> ParseIdentity(std::string_view value) {
  std::vector<absl::string_view> parts = absl::StrSplit(AbslView(value), ' ');
  ExportIdentity id;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &id.dev) || !absl::SimpleAtoi(parts[1], &id.ino) ||
      !absl::SimpleAtoi(parts[2], &id.mtime_ns)) {
    return std::nullopt;
  }
  return id;
}

absl::StatusOr<ExportMeta> ParseExportRecord(std::string_view record, std::string_view key) {
  const size_t last = record.rfind(kDigestPrefix);
  if (record.substr(0, sizeof(kMagic) - 1) != kMagic || last == std::string_view::npos) {
    return absl::DataLossError("the export record is not a ged export record");
  }
  const std::string_view body = record.substr(0, last);
  const std::string_view digest =
      StdView(absl::StripSuffix(AbslView(record.substr(last + kDigestPrefix.size())), "\n"));
  if (ToHex(Sha256(body)) != digest) return absl::DataLossError("the export record's checksum does not match");
  ExportMeta meta;
  std::string named;
  bool ok = true;
  for (absl::string_view piece : absl::StrSplit(AbslView(body), '\n', absl::SkipEmpty())) {
    const std::string_view line = StdView(piece);
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, space), value = line.substr(space + 1);
    if (name == "key")
      named = std::string(value);
    else if (name == "bytes")
      ok = ok && absl::SimpleAtoi(AbslView(value), &meta.bytes);
    else if (name == "crc32c")
      ok = ok && absl::SimpleAtoi(AbslView(value), &meta.crc);
    else if (name == "identity")
      meta.identity = ParseIdentity(value);
    else if (name == "summary")
      meta.summary = std::string(value);
  }
  if (!ok || named != key) return absl::DataLossError("the export record is malformed or names another key");
  return meta;
}

}  // namespace

absl::StatusOr<std::string> ModelCache::CheckExport(std::string_view ns, const std::string& key) {
  if (!ContainsIn(ns, key)) return absl::NotFoundError(StrCat("no entry ", key));
  const fs::path entry(EntryPath(ns, key));
  absl::StatusOr<DirHandle> dir = DirHandle::Open(entry.string());
  if (!dir.ok()) return absl::NotFoundError(StrCat("no entry ", key));
  absl::StatusOr<std::string> record = dir->ReadFile(kExportMetaFile);
  if (!record.ok()) return absl::NotFoundError(StrCat("entry ", key, " has no export"));
  absl::StatusOr<ExportMeta> meta = ParseExportRecord(*record, key);
  const std::string gem = (entry / kExportFile).string();
  auto damaged = [&](const absl::Status& why) {
    Logger("cache").warn("compiled-model cache {}: the export of entry {} is damaged ({}); removed", options_.dir, key,
                         why.message());
    unlink((entry / kExportMetaFile).c_str());
    unlink(gem.c_str());
    return absl::DataLossError(StrCat("the export of entry ", key, " was damaged: ", why.message()));
  };
  if (!meta.ok()) return damaged(meta.status());
  Fd in(open(gem.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (in.get() < 0 || fstat(in.get(), &st) != 0) return damaged(absl::DataLossError("export.gem is unreadable"));
  if (st.st_size != meta->bytes) return damaged(absl::DataLossError("export.gem has another size"));
  // Unchanged since its CRC was taken: nothing to read.
  if (meta->identity.has_value() && *meta->identity == IdentityOf(st)) return meta->summary;
  absl::StatusOr<uint32_t> crc = FileCrc(in.get(), static_cast<size_t>(st.st_size));
  if (!crc.ok()) return crc.status();
  if (*crc != meta->crc) return damaged(absl::DataLossError("export.gem's checksum does not match"));
  return meta->summary;
}

absl::StatusOr<std::string> ModelCache::ExportTo(std::string_view ns, const std::string& key, const std::string& path,
                                                 std::string* how) {
  absl::StatusOr<std::string> summary = CheckExport(ns, key);
  if (!summary.ok()) return absl::NotFoundError(StrCat("entry ", key, " has no sound export"));
  const fs::path entry(EntryPath(ns, key));
  const std::string gem = (entry / kExportFile).string();
  // Beside the output, then renamed over it: readers see the old file or
  // the whole new one.
  const fs::path target(path);
  const fs::path temp = target.parent_path() / StrCat(".", target.filename().string(), TempName("out"));
  // A hard link where there is no reflink: the output shares the export's
  // inode (read-only); a later write into it changes the identity, and the
  // next hit then checks the CRC and drops a damaged export.
  GE_ASSIGN_OR_RETURN(std::string method, LinkOrCopyFile(gem, temp.string(), LinkMode::kHardLinkOk));
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const absl::Status failed = Errno(StrCat("cannot rename ", temp.string(), " to ", path));
    unlink(temp.c_str());
    return failed;
  }
  // When `path` already was a link to the export, rename() of one link of
  // an inode over another does nothing (POSIX) and the temporary name stays.
  unlink(temp.c_str());
  TouchFile((entry / kMetaFile).string());
  if (how != nullptr) *how = std::move(method);
  return summary;
}

absl::Status ModelCache::AddExport(std::string_view ns, const std::string& key, const std::string& path,
                                   const std::string& summary) {
  if (!ContainsIn(ns, key)) return absl::NotFoundError(StrCat("no entry ", key));
  const fs::path entry(EntryPath(ns, key));
  const fs::path gem_temp = entry / TempName("export");
  const fs::path meta_temp = entry / TempName("exportmeta");
  auto cleanup = [&] {
    unlink(gem_temp.c_str());
    unlink(meta_temp.c_str());
  };
  absl::StatusOr<std::string> copied = LinkOrCopyFile(path, gem_temp.string());
  if (!copied.ok()) return copied.status();
  Fd in(open(gem_temp.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (in.get() < 0 || fstat(in.get(), &st) != 0) {
    const absl::Status failed = Errno(StrCat("cannot read ", gem_temp.string()));
    cleanup();
    return failed;
  }
  absl::StatusOr<uint32_t> crc = FileCrc(in.get(), static_cast<size_t>(st.st_size));
  absl::Status written = crc.status();
  // Read-only: outputs linked to it later cannot be written in place by
  // mistake (root still can; the identity check catches that).
  if (written.ok() && fchmod(in.get(), 0444) != 0) written = Errno(StrCat("chmod of ", gem_temp.string()));
  if (written.ok() && fsync(in.get()) != 0) written = Errno(StrCat("fsync of ", gem_temp.string()));
  if (written.ok() && fstat(in.get(), &st) != 0) written = Errno(StrCat("cannot stat ", gem_temp.string()));
  if (written.ok()) {
    written = WriteFileDurably(meta_temp.string(), ExportRecord(key, st.st_size, *crc, IdentityOf(st), summary));
  }
  // The .gem first: a record never names a .gem that is not there yet.
  if (written.ok() && rename(gem_temp.c_str(), (entry / kExportFile).c_str()) != 0) {
    written = Errno("cannot publish the export");
  }
  if (written.ok() && rename(meta_temp.c_str(), (entry / kExportMetaFile).c_str()) != 0) {
    written = Errno("cannot publish the export's record");
  }
  if (!written.ok()) {
    cleanup();
    return Annotate(written, StrCat("keeping the export of entry ", key));
  }
  (void)SyncDirectory(entry.string());
  bytes_.fetch_add(static_cast<int64_t>(st.st_size));
  return absl::OkStatus();
}

}  // namespace ge::cache
