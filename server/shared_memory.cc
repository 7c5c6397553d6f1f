// SharedMemoryRegistry: shm_open + mmap of client regions, per-tenant names,
// and bounds checks on every reference.
#include "server/shared_memory.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "base/status.h"
#include "base/strings.h"
#include "server/grpc_status.h"

namespace ge::server {
namespace {

template <typename... Args>
absl::Status OutOfRange(const Args&... args) {
  return absl::OutOfRangeError(StrCat(args...));
}

// The fault guard: a SIGBUS (a page past the end of a shrunk object) or
// SIGSEGV raised on a thread inside GuardedCopy jumps back to it; any other
// fault goes on to the handler that was there before (or the default
// action), as if the guard were not installed.
// volatile, and signal fences around the copy: the compiler sees no reader
// of guard_jump between its two stores (the handler is invisible to it) and
// would otherwise drop the first store or move the copy past the second.
thread_local sigjmp_buf* volatile guard_jump = nullptr;
struct sigaction previous_bus, previous_segv;

void OnFault(int sig, siginfo_t* info, void* context) {
  if (sigjmp_buf* jump = guard_jump; jump != nullptr) {
    guard_jump = nullptr;
    siglongjmp(*jump, 1);
  }
  const struct sigaction& previous = sig == SIGBUS ? previous_bus : previous_segv;
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_IGN && previous.sa_handler != SIG_DFL) {
    previous.sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

void InstallFaultGuard() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = OnFault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous_bus);
    sigaction(SIGSEGV, &action, &previous_segv);
  });
}

}  // namespace

bool GuardedCopy(void* dst, const void* src, size_t bytes) {
  InstallFaultGuard();
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1) != 0) return false;  // faulted: guard_jump was cleared by the handler
  guard_jump = &jump;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memmove(dst, src, bytes);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  guard_jump = nullptr;
  return true;
}

// One mapping of [offset, offset + byte_size) of a shared-memory object.
// The descriptor stays open so every use can check the object's size.
class SharedMemoryRegistry::Region {
 public:
  static absl::StatusOr<std::shared_ptr<Region>> Open(const SharedMemoryRegionInfo& info) {
    const int fd = shm_open(info.key.c_str(), O_RDWR, 0);
    if (fd < 0) {
      return NotFound("shared memory ", info.name, ": cannot open ", info.key, ": ", std::strerror(errno),
                      " (the client must create it with shm_open and keep it until unregistered)");
    }
    auto region = std::shared_ptr<Region>(new Region(info, fd));
    // Only the daemon's own uid's objects: the unix socket (mode 0600) admits
    // peers of that uid only (or root), so the caller owns what it names.
    struct stat st;
    if (fstat(fd, &st) != 0) return Internal("shared memory ", info.name, ": fstat: ", std::strerror(errno));
    if (st.st_uid != geteuid()) {
      return PermissionDenied("shared memory ", info.name, ": ", info.key, " belongs to uid ", st.st_uid,
                              ", not to the uid of ged and its unix-socket clients (", geteuid(), ")");
    }
    GE_RETURN_IF_ERROR(region->CheckSize());
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t start = info.offset / page * page;
    region->map_bytes_ = info.offset - start + info.byte_size;
    void* base = mmap(nullptr, region->map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(start));
    if (base == MAP_FAILED) {
      return ResourceExhausted("shared memory ", info.name, ": cannot map ", info.byte_size, " bytes of ", info.key,
                               ": ", std::strerror(errno));
    }
    region->base_ = base;
    region->data_ = static_cast<char*>(base) + (info.offset - start);
    return region;
  }

  ~Region() {
    if (base_ != nullptr) munmap(base_, map_bytes_);
    close(fd_);
  }

  // The object must still hold the registered range: a client that shrank
  // it would otherwise make the daemon fault on the missing pages.
  absl::Status CheckSize() const {
    struct stat st;
    if (fstat(fd_, &st) != 0) return Internal("shared memory ", info_.name, ": fstat: ", std::strerror(errno));
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (info_.offset > size || info_.byte_size > size - info_.offset) {
      return OutOfRange("shared memory ", info_.name, ": ", info_.key, " holds ", size, " bytes, less than offset ",
                        info_.offset, " + byte_size ", info_.byte_size);
    }
    return absl::OkStatus();
  }

  const SharedMemoryRegionInfo& info() const { return info_; }
  char* data() const { return data_; }

 private:
  Region(SharedMemoryRegionInfo info, int fd) : info_(std::move(info)), fd_(fd) {}
  SharedMemoryRegionInfo info_;
  int fd_;
  void* base_ = nullptr;
  size_t map_bytes_ = 0;
  char* data_ = nullptr;
};

SharedMemoryRegistry::SharedMemoryRegistry(size_t max_regions_per_tenant)
    : max_regions_per_tenant_(max_regions_per_tenant) {}

SharedMemoryRegistry::~SharedMemoryRegistry() = default;

absl::Status SharedMemoryRegistry::Register(const std::string& tenant, const SharedMemoryRegionInfo& info) {
  if (info.name.empty()) return InvalidArgument("RegisterSharedMemory: the region needs a name");
  if (info.key.size() < 2 || info.key[0] != '/' || info.key.find('/', 1) != std::string::npos ||
      info.key.size() > 255) {
    return InvalidArgument("shared memory ", info.name, ": key '", info.key,
                           "' is not a POSIX shared-memory name (/NAME, no other slash)");
  }
  if (info.byte_size == 0) return InvalidArgument("shared memory ", info.name, ": byte_size is 0");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (regions_.count({tenant, info.name}) != 0) {
      return AlreadyExists("shared memory ", info.name, " is already registered (unregister it first)");
    }
    size_t count = 0;
    for (auto it = regions_.lower_bound({tenant, ""}); it != regions_.end() && it->first.first == tenant; ++it) {
      ++count;
    }
    if (count >= max_regions_per_tenant_) {
      return ResourceExhausted("tenant ", tenant, " already has ", count, " shared-memory regions (the limit)");
    }
  }
  GE_ASSIGN_OR_RETURN(std::shared_ptr<Region> region, Region::Open(info));
  std::lock_guard<std::mutex> lock(mu_);
  if (!regions_.emplace(std::make_pair(tenant, info.name), std::move(region)).second) {
    return AlreadyExists("shared memory ", info.name, " is already registered (unregister it first)");
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegistry::Unregister(const std::string& tenant, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (name.empty()) {
    for (auto it = regions_.lower_bound({tenant, ""}); it != regions_.end() && it->first.first == tenant;) {
      it = regions_.erase(it);
    }
    return absl::OkStatus();
  }
  if (regions_.erase({tenant, name}) == 0) return NotFound("shared memory ", name, " is not registered");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SharedMemoryRegionInfo>> SharedMemoryRegistry::Status(const std::string& tenant,
                                                                                 const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SharedMemoryRegionInfo> out;
  if (!name.empty()) {
    auto it = regions_.find({tenant, name});
    if (it == regions_.end()) return NotFound("shared memory ", name, " is not registered");
    out.push_back(it->second->info());
    return out;
  }
  for (auto it = regions_.lower_bound({tenant, ""}); it != regions_.end() && it->first.first == tenant; ++it) {
    out.push_back(it->second->info());
  }
  return out;
}

absl::StatusOr<std::shared_ptr<Buffer>> SharedMemoryRegistry::Map(const std::string& tenant, const std::string& name,
                                                                  uint64_t offset, uint64_t capacity, uint64_t bytes,
                                                                  const std::string& what) const {
  std::shared_ptr<Region> region;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = regions_.find({tenant, name});
    if (it == regions_.end()) {
      return NotFound(what, ": shared memory ", name, " is not registered (RegisterSharedMemory it first)");
    }
    region = it->second;
  }
  if (capacity < bytes) {
    return InvalidArgument(what, ": needs ", bytes, " bytes, but its shared-memory reference offers ", capacity);
  }
  const uint64_t size = region->info().byte_size;
  if (offset > size || capacity > size - offset) {
    return OutOfRange(what, ": shared memory ", name, " has ", size, " bytes, less than offset ", offset,
                      " + byte_size ", capacity);
  }
  GE_RETURN_IF_ERROR(Annotate(region->CheckSize(), what));
  // The buffer holds the region: the mapping outlives an Unregister that
  // comes while a run still reads or writes it.
  return Buffer::Wrap(region->data() + offset, bytes, [region] {});
}

absl::StatusOr<std::shared_ptr<Buffer>> SharedMemoryRegistry::Read(const std::string& tenant, const std::string& name,
                                                                   uint64_t offset, uint64_t capacity, uint64_t bytes,
                                                                   const std::string& what) const {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> view, Map(tenant, name, offset, capacity, bytes, what));
  GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> copy, Buffer::Allocate(bytes));
  if (bytes > 0 && !GuardedCopy(copy->data(), view->data(), bytes)) {
    return OutOfRange(what, ": shared memory ", name, " shrank while ged read it (its object was truncated)");
  }
  return copy;
}

absl::Status SharedMemoryRegistry::Write(const std::string& tenant, const std::string& name, uint64_t offset,
                                         uint64_t capacity, const void* data, uint64_t bytes,
                                         const std::string& what) const {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> target, Map(tenant, name, offset, capacity, bytes, what));
  // memmove: an output may alias an input that lives in the same region.
  if (bytes > 0 && !GuardedCopy(target->data(), data, bytes)) {
    return OutOfRange(what, ": shared memory ", name, " shrank while ged wrote it (its object was truncated)");
  }
  return absl::OkStatus();
}

size_t SharedMemoryRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return regions_.size();
}

}  // namespace ge::server
