// Direct-mode entries: the record, and file identities (see direct_entry.h).
#include "runtime/cache/direct_entry.h"

#include <sys/stat.h>

#include <time.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/sha256.h"
#include "base/status.h"
#include "runtime/cache/cache_key.h"

namespace ge::cache {
namespace {

constexpr char kMagic[] = "ged-cache-direct 1";
constexpr std::string_view kDigestPrefix = "record_sha256 ";

// A path on one line: '%' and newlines escaped.
std::string EscapePath(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\n') {
      out += "%0A";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string UnescapePath(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && text.substr(i, 3) == "%25") {
      out.push_back('%');
      i += 2;
    } else if (text[i] == '%' && text.substr(i, 3) == "%0A") {
      out.push_back('\n');
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

int64_t Nanoseconds(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

std::string FileLine(const FileIdentity& f) {
  return StrCat("file ", f.size, " ", f.mtime_ns, " ", f.ctime_ns, " ", f.inode, " ", f.device, " ",
                f.sha256.empty() ? "-" : f.sha256, " ", EscapePath(f.path), "\n");
}

absl::StatusOr<FileIdentity> ParseFileLine(std::string_view value) {
  // <size> <mtime_ns> <ctime_ns> <inode> <device> <sha256 or -> <path>
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (int i = 0; i < 6; ++i) {
    const size_t space = value.find(' ', start);
    if (space == std::string_view::npos) return absl::DataLossError("the direct record has a malformed file line");
    parts.push_back(value.substr(start, space - start));
    start = space + 1;
  }
  FileIdentity f;
  f.path = UnescapePath(value.substr(start));
  if (parts[5] != "-") f.sha256 = std::string(parts[5]);
  if (!absl::SimpleAtoi(AbslView(parts[0]), &f.size) || !absl::SimpleAtoi(AbslView(parts[1]), &f.mtime_ns) ||
      !absl::SimpleAtoi(AbslView(parts[2]), &f.ctime_ns) || !absl::SimpleAtoi(AbslView(parts[3]), &f.inode) ||
      !absl::SimpleAtoi(AbslView(parts[4]), &f.device) || f.path.empty() ||
      (!f.sha256.empty() && f.sha256.size() != 64)) {
    return absl::DataLossError("the direct record has a malformed file line");
  }
  return f;
}

// The SHA-256 (hex) of the file at `path`, read in pieces.
absl::StatusOr<std::string> ContentDigest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  Sha256Hasher hasher;
  std::vector<char> buffer(size_t{1} << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hasher.Update(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return absl::InternalError(StrCat("reading ", path, " failed"));
  return ToHex(hasher.Finish());
}

// Whether a change made now could leave the times of `f` as they are.
bool IsRacy(const FileIdentity& f) {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const int64_t limit = Nanoseconds(now) - kRacySeconds * 1000000000;
  return f.mtime_ns >= limit || f.ctime_ns >= limit;
}

}  // namespace

absl::StatusOr<FileIdentity> IdentifyFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    const int error = errno;
    const std::string message = StrCat("cannot stat ", path, ": ", std::strerror(error));
    return error == ENOENT || error == ENOTDIR ? absl::NotFoundError(message) : absl::InternalError(message);
  }
  FileIdentity f;
  f.path = path;
  f.size = static_cast<int64_t>(st.st_size);
  f.mtime_ns = Nanoseconds(st.st_mtim);
  f.ctime_ns = Nanoseconds(st.st_ctim);
  f.inode = static_cast<uint64_t>(st.st_ino);
  f.device = static_cast<uint64_t>(st.st_dev);
  if (IsRacy(f)) {
    GE_ASSIGN_OR_RETURN(f.sha256, ContentDigest(path));
  }
  return f;
}

std::string DirectRecord(std::string_view key, const DirectEntry& entry) {
  std::string body =
      StrCat(kMagic, "\nkey ", key, "\ncontent_ns ", entry.content_ns, "\ncontent_key ", entry.content_key, "\n");
  for (const FileIdentity& f : entry.files) body += FileLine(f);
  return StrCat(body, kDigestPrefix, ToHex(Sha256(body)), "\n");
}

absl::StatusOr<DirectEntry> ParseDirectRecord(std::string_view record, std::string_view key) {
  const size_t last = record.rfind(kDigestPrefix);
  if (record.substr(0, sizeof(kMagic) - 1) != kMagic || last == std::string_view::npos) {
    return absl::DataLossError("the direct record is not a ged direct-mode record (truncated?)");
  }
  const std::string_view body = record.substr(0, last);
  const std::string_view digest =
      StdView(absl::StripSuffix(AbslView(record.substr(last + kDigestPrefix.size())), "\n"));
  if (ToHex(Sha256(body)) != digest) return absl::DataLossError("the direct record's checksum does not match");
  DirectEntry entry;
  std::string named_key;
  for (absl::string_view piece : absl::StrSplit(AbslView(body), '\n', absl::SkipEmpty())) {
    const std::string_view line = StdView(piece);
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, space), value = line.substr(space + 1);
    if (name == "key") {
      named_key = std::string(value);
    } else if (name == "content_ns") {
      entry.content_ns = std::string(value);
    } else if (name == "content_key") {
      entry.content_key = std::string(value);
    } else if (name == "file") {
      GE_ASSIGN_OR_RETURN(FileIdentity f, ParseFileLine(value));
      entry.files.push_back(std::move(f));
    }
  }
  if (named_key != key) return absl::DataLossError(StrCat("the direct record names key ", named_key, ", not ", key));
  if (!IsValidNamespace(entry.content_ns) || !IsCacheKey(entry.content_key)) {
    return absl::DataLossError("the direct record names no valid content entry");
  }
  return entry;
}

absl::Status CheckDirectFiles(const DirectEntry& entry) {
  for (const FileIdentity& recorded : entry.files) {
    absl::StatusOr<FileIdentity> now = IdentifyFile(recorded.path);
    if (!now.ok()) return FailedPrecondition("file ", recorded.path, " the model read is gone");
    const bool same_stat = now->size == recorded.size && now->mtime_ns == recorded.mtime_ns &&
                           now->ctime_ns == recorded.ctime_ns && now->inode == recorded.inode &&
                           now->device == recorded.device;
    if (!same_stat) return FailedPrecondition("file ", recorded.path, " the model read has changed");
    if (!recorded.sha256.empty()) {
      // Racy when recorded: its content decides.
      absl::StatusOr<std::string> digest = now->sha256.empty() ? ContentDigest(recorded.path) : now->sha256;
      if (!digest.ok() || *digest != recorded.sha256) {
        return FailedPrecondition("file ", recorded.path, " the model read has changed");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ge::cache
