// MemoryQuota: reservations along the chain (see the header).
#include "runtime/device/memory_quota.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "base/status.h"

namespace ge::device {

bool MemoryQuota::ReserveHere(int64_t bytes) {
  int64_t held = in_use_.load(std::memory_order_relaxed);
  do {
    if (limit_bytes_ > 0 && (bytes > limit_bytes_ || held > limit_bytes_ - bytes)) {
      failed_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!in_use_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (held + bytes > peak && !peak_.compare_exchange_weak(peak, held + bytes, std::memory_order_relaxed)) {
  }
  return true;
}

void MemoryQuota::ReleaseHere(int64_t bytes) { in_use_.fetch_sub(bytes, std::memory_order_relaxed); }

std::string MemoryQuota::DescribeShortage(int64_t held, bool self) const {
  return StrCat(self ? std::string("it") : owner_, " holds ", held, " of its ", limit_bytes_, "-byte ", what_,
                key_.empty() ? "" : StrCat(" (", key_, ")"));
}

absl::Status MemoryQuota::Reserve(int64_t bytes, int64_t asked) {
  if (bytes < 0) return InvalidArgument(owner_, ": cannot reserve a negative byte count (", bytes, ")");
  for (MemoryQuota* q = this; q != nullptr; q = q->parent_.get()) {
    if (q->ReserveHere(bytes)) continue;
    const int64_t held = q->in_use_bytes();
    // Undo what the chain below `q` took.
    for (MemoryQuota* u = this; u != q; u = u->parent_.get()) u->ReleaseHere(bytes);
    return ResourceExhausted(owner_, " cannot allocate ", asked >= 0 ? asked : bytes,
                             " bytes: ", q->DescribeShortage(held, q == this));
  }
  return absl::OkStatus();
}

bool MemoryQuota::TryReserve(int64_t bytes) { return Reserve(bytes).ok(); }

void MemoryQuota::Release(int64_t bytes) {
  for (MemoryQuota* q = this; q != nullptr; q = q->parent_.get()) q->ReleaseHere(bytes);
}

namespace {

// The first line of `path` as a byte count; 0 when absent, "max" or absurd.
int64_t ReadLimitFile(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return 0;
  int64_t value = 0;
  // cgroup v1 reports "no limit" as a page-rounded INT64_MAX.
  if (!absl::SimpleAtoi(line, &value) || value <= 0 || value >= (int64_t{1} << 60)) return 0;
  return value;
}

// This process's cgroup path ("/..."), v2 entry ("0::PATH") or v1 memory
// controller ("N:memory:PATH" or a list containing memory).
std::string CgroupPath(bool v2) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const bool memory = ("," + controllers + ",").find(",memory,") != std::string::npos;
    if ((v2 && line.compare(0, 3, "0::") == 0) || (!v2 && memory)) return line.substr(b + 1);
  }
  return "";
}

}  // namespace

HostMemoryLimits ReadHostMemoryLimits() {
  HostMemoryLimits limits;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) limits.physical_bytes = static_cast<int64_t>(pages) * page;
  // cgroup v2: the limit of our group, else of the mount root.
  int64_t cgroup = 0;
  if (const std::string path = CgroupPath(true); !path.empty()) {
    cgroup = ReadLimitFile("/sys/fs/cgroup" + path + "/memory.max");
  }
  if (cgroup == 0) cgroup = ReadLimitFile("/sys/fs/cgroup/memory.max");
  if (cgroup == 0) {
    if (const std::string path = CgroupPath(false); !path.empty()) {
      cgroup = ReadLimitFile("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
    }
    if (cgroup == 0) cgroup = ReadLimitFile("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  }
  limits.cgroup_bytes = cgroup;
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && as.rlim_cur < (rlim_t{1} << 62)) {
    limits.rlimit_as_bytes = static_cast<int64_t>(as.rlim_cur);
  }
  return limits;
}

int64_t DefaultMemoryBudgetBytes(const HostMemoryLimits& limits) {
  int64_t smallest = 0;
  for (int64_t b : {limits.physical_bytes, limits.cgroup_bytes, limits.rlimit_as_bytes}) {
    if (b > 0 && (smallest == 0 || b < smallest)) smallest = b;
  }
  return smallest / 5 * 4;
}

}  // namespace ge::device
