// POSIX file helpers of the compiled-model cache: durable writes, reads
// through a directory descriptor, atomic publication and removal.
//
// Publication is "write a temporary directory beside the target, fsync
// every file and the directory, rename": rename(2) of a directory onto a
// missing name is atomic, and onto an existing entry fails, so the first
// writer wins and readers never see a partial entry. Temporary names start
// with ".tmp-" and carry the host and pid of their writer, which is how a
// stale one (its writer is gone) is recognized.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/tensor.h"

namespace ge::cache {

inline constexpr char kTempPrefix[] = ".tmp-";

// A fresh temporary name "<prefix>.tmp-<host>-<pid>-<random>".
std::string TempName(std::string_view purpose);
// Whether a ".tmp-" entry named `name`, last modified `age_seconds` ago, is
// left over by a writer that no longer runs (this host, dead pid) or is
// older than `max_age_seconds`.
bool IsStaleTemp(std::string_view name, int64_t age_seconds, int64_t max_age_seconds);

// Creates `path` with `data`, then fsyncs it. The file must not exist.
absl::Status WriteFileDurably(const std::string& path, std::string_view data);
// fsyncs a directory (after creating or renaming entries in it).
absl::Status SyncDirectory(const std::string& path);
// Renames `from` to `to`; AlreadyExists when `to` exists (someone else won).
absl::Status RenameNoReplace(const std::string& from, const std::string& to);

// A file's identity as fstat(2) gives it. While a file keeps it, its bytes
// are those it had when the stamp was taken: a write changes the
// modification and status-change times (and a replacement the inode) —
// unless it lands within the same clock tick, which is why a stamp taken
// moments after a write vouches for nothing (model_cache.cc's racy rule).
struct FileStamp {
  uint64_t dev = 0, ino = 0;
  int64_t size = 0, mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// An open directory, so files are read from the same entry even if its
// name is renamed or removed meanwhile.
class DirHandle {
 public:
  // NotFound when `path` does not exist.
  static absl::StatusOr<DirHandle> Open(const std::string& path);
  DirHandle(DirHandle&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirHandle& operator=(DirHandle&&) = delete;
  ~DirHandle();
  // NotFound when the file does not exist.
  absl::StatusOr<std::string> ReadFile(const char* name) const;
  // The file mapped copy-on-write (pages are shared with the page cache
  // and every other reader; writes stay private). Unmapped when the last
  // user of the buffer goes. `stamp` (may be null) gets the mapped file's.
  absl::StatusOr<std::shared_ptr<Buffer>> MapFile(const char* name, FileStamp* stamp = nullptr) const;

 private:
  explicit DirHandle(int fd) : fd_(fd) {}
  int fd_;
};

// An open file descriptor, closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }

 private:
  int fd_;
};

// How LinkOrCopyFile may create its file.
enum class LinkMode {
  kIndependent,  // a reflink or a copy: the two files never share a write
  kHardLinkOk,   // also a hard link (same inode) before a copy
};

// Creates `to` (which must not exist) with the content of `from`: a reflink
// (blocks shared copy-on-write) where the file system has them, else, with
// kHardLinkOk and `from` on the same file system, a hard link, else an
// in-kernel copy. How it was done ("reflink", "link" or "copy").
absl::StatusOr<std::string> LinkOrCopyFile(const std::string& from, const std::string& to,
                                           LinkMode mode = LinkMode::kIndependent);

// Sets the modification time of `path` to now (the LRU clock).
void TouchFile(const std::string& path);
// The total size of the regular files directly in `dir` (0 if unreadable).
int64_t DirectoryBytes(const std::string& dir);
// Removes a tree; errors are ignored (best effort cleanup).
void RemoveTree(const std::string& path);
// The errno text of the last failure, for messages.
std::string ErrnoText(int error);

}  // namespace ge::cache
