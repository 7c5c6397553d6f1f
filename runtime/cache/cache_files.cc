// POSIX helpers of the compiled-model cache (see cache_files.h).
#include "runtime/cache/cache_files.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/status.h"

namespace ge::cache {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "host";
  std::string out(name);
  for (char& c : out) {
    if (c == '-' || c == '/' || c == '.') c = '_';
  }
  return out;
}

const std::string& ThisHost() {
  static const std::string* host = new std::string(HostName());
  return *host;
}

absl::Status ErrnoStatus(int error, std::string_view what) {
  const std::string message = StrCat(what, ": ", ErrnoText(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == ENOSPC || error == EFBIG || error == EDQUOT) return absl::ResourceExhaustedError(message);
  if (error == EACCES || error == EPERM || error == EROFS) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

}  // namespace

std::string ErrnoText(int error) { return std::strerror(error); }

std::string TempName(std::string_view purpose) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  return StrCat(kTempPrefix, purpose, "-", ThisHost(), "-", getpid(), "-", counter.fetch_add(1), random() % 1000000);
}

bool IsStaleTemp(std::string_view name, int64_t age_seconds, int64_t max_age_seconds) {
  if (age_seconds > max_age_seconds) return true;
  // .tmp-<purpose>-<host>-<pid>-<n>
  std::vector<absl::string_view> parts = absl::StrSplit(AbslView(name), '-');
  if (parts.size() != 5) return age_seconds > 60;  // not ours: only when old
  int pid = 0;
  if (StdView(parts[2]) != ThisHost() || !absl::SimpleAtoi(parts[3], &pid) || pid <= 0) return false;
  return kill(pid, 0) != 0 && errno == ESRCH;
}

absl::Status WriteFileDurably(const std::string& path, std::string_view data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, StrCat("cannot create ", path));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      close(fd);
      return ErrnoStatus(error, StrCat("writing ", path, " failed after ", done, " of ", data.size(), " bytes"));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    const int error = errno;
    close(fd);
    return ErrnoStatus(error, StrCat("fsync of ", path, " failed"));
  }
  if (close(fd) != 0) return ErrnoStatus(errno, StrCat("closing ", path, " failed"));
  return absl::OkStatus();
}

absl::Status SyncDirectory(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, StrCat("cannot open directory ", path));
  const int rc = fsync(fd);
  const int error = errno;
  close(fd);
  if (rc != 0) return ErrnoStatus(error, StrCat("fsync of directory ", path, " failed"));
  return absl::OkStatus();
}

absl::Status RenameNoReplace(const std::string& from, const std::string& to) {
  if (rename(from.c_str(), to.c_str()) == 0) return absl::OkStatus();
  if (errno == ENOTEMPTY || errno == EEXIST) return absl::AlreadyExistsError(StrCat(to, " already exists"));
  return ErrnoStatus(errno, StrCat("cannot rename ", from, " to ", to));
}

absl::StatusOr<DirHandle> DirHandle::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, StrCat("cannot open ", path));
  return DirHandle(fd);
}

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

DirHandle::~DirHandle() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<std::string> DirHandle::ReadFile(const char* name) const {
  const int fd = openat(fd_, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, StrCat("cannot open ", name));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return ErrnoStatus(error, StrCat("cannot stat ", name));
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = pread(fd, data.data() + done, data.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  data.resize(done);  // a short read shows up as a size mismatch
  return data;
}

absl::StatusOr<std::shared_ptr<Buffer>> DirHandle::MapFile(const char* name, FileStamp* stamp) const {
  const int fd = openat(fd_, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, StrCat("cannot open ", name));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return ErrnoStatus(error, StrCat("cannot stat ", name));
  }
  if (stamp != nullptr) {
    *stamp = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_size),
              static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
              static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return Buffer::Wrap(nullptr, 0, [] {});
  }
  void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  const int error = errno;
  close(fd);
  if (data == MAP_FAILED) return ErrnoStatus(error, StrCat("cannot map ", name));
  return Buffer::Wrap(data, size, [data, size] { munmap(data, size); });
}

void TouchFile(const std::string& path) { utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

int64_t DirectoryBytes(const std::string& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code size_ec;
    if (!file.is_regular_file(size_ec)) continue;
    const auto size = file.file_size(size_ec);
    if (!size_ec) total += static_cast<int64_t>(size);
  }
  return total;
}

void RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

namespace {

absl::Status FdErrno(std::string_view what) { return ErrnoStatus(errno, what); }

// Copies `size` bytes from `in` to `out` in the kernel (no trip through user
// space); removes `to` on failure.
absl::StatusOr<std::string> CopyFileData(int in, int out, off_t size, const std::string& from, const std::string& to) {
  off_t offset = 0;
  while (offset < size) {
    const ssize_t n = copy_file_range(in, &offset, out, nullptr, static_cast<size_t>(size - offset), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const absl::Status failed = n < 0 ? FdErrno(StrCat("copying ", from, " to ", to))
                                        : absl::InternalError(StrCat("copying ", from, " to ", to, ": short copy"));
      unlink(to.c_str());
      return failed;
    }
  }
  return std::string("copy");
}

}  // namespace

absl::StatusOr<std::string> LinkOrCopyFile(const std::string& from, const std::string& to, LinkMode mode) {
  Fd in(open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) return FdErrno(StrCat("cannot open ", from));
  struct stat st;
  if (fstat(in.get(), &st) != 0) return FdErrno(StrCat("cannot stat ", from));
  Fd out(open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (out.get() < 0) return FdErrno(StrCat("cannot create ", to));
  // A reflink shares the blocks copy-on-write: free, and independent.
  if (ioctl(out.get(), FICLONE, in.get()) == 0) return std::string("reflink");
  // A hard link shares the inode: free too, but a write into one is a write
  // into both (the caller allows it and can detect it).
  if (mode == LinkMode::kHardLinkOk && unlink(to.c_str()) == 0) {
    if (link(from.c_str(), to.c_str()) == 0) return std::string("link");
    // Another file system (EXDEV), or links refused: copy instead.
    Fd again(open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (again.get() < 0) return FdErrno(StrCat("cannot create ", to));
    return CopyFileData(in.get(), again.get(), st.st_size, from, to);
  }
  // Otherwise an in-kernel copy (no trip through user space).
  return CopyFileData(in.get(), out.get(), st.st_size, from, to);
}

}  // namespace ge::cache
