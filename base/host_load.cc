// ParseProcStat / MeasureHostLoad: per-CPU tick counters from /proc/stat,
// this process's CPU time from CLOCK_PROCESS_CPUTIME_ID.
#include "base/host_load.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/status.h"

namespace ge {
namespace {

int64_t ProcessCpuNanos() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t MonotonicNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

absl::StatusOr<std::string> ReadProcStat() {
  std::ifstream in("/proc/stat");
  if (!in) return absl::UnavailableError("cannot read /proc/stat");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::StatusOr<CpuTicks> ParseProcStat(std::string_view text, const std::vector<int>& cpus) {
  CpuTicks sum;
  // Debian's abseil has its own string_view.
  const absl::string_view all(text.data(), text.size());
  for (absl::string_view line : absl::StrSplit(all, '\n')) {
    // "cpuN ..." lines only: "cpu " is the total over every CPU.
    if (line.size() < 4 || line.substr(0, 3) != "cpu" || line[3] < '0' || line[3] > '9') continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int cpu = -1;
    if (!absl::SimpleAtoi(fields[0].substr(3), &cpu) || cpu < 0) {
      return InvalidArgument("/proc/stat: malformed CPU line '", line, "'");
    }
    if (!cpus.empty() && std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    // cpuN user nice system idle iowait irq softirq [steal guest guest_nice];
    // guest time is already inside user and nice.
    if (fields.size() < 8) return InvalidArgument("/proc/stat: '", fields[0], "' has ", fields.size() - 1, " fields");
    uint64_t v[7];
    for (int i = 0; i < 7; ++i) {
      if (!absl::SimpleAtoi(fields[i + 1], &v[i])) {
        return InvalidArgument("/proc/stat: '", fields[0], "' field ", i + 1, " is not a count");
      }
    }
    sum.busy += v[0] + v[1] + v[2] + v[5] + v[6];
    sum.idle += v[3] + v[4];
    ++sum.cpus;
  }
  if (sum.cpus == 0) return InvalidArgument("/proc/stat: no line for the CPUs asked for");
  return sum;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(i, &set)) cpus.push_back(i);
  }
  return cpus;
}

absl::StatusOr<HostLoad> MeasureHostLoad(std::chrono::milliseconds window) {
  const std::vector<int> cpus = AllowedCpus();
  GE_ASSIGN_OR_RETURN(std::string before_text, ReadProcStat());
  GE_ASSIGN_OR_RETURN(CpuTicks before, ParseProcStat(before_text, cpus));
  const int64_t own_before = ProcessCpuNanos();
  const int64_t wall_before = MonotonicNanos();
  // A measurement window, not a synchronization: other processes run now.
  std::this_thread::sleep_for(window);
  GE_ASSIGN_OR_RETURN(std::string after_text, ReadProcStat());
  GE_ASSIGN_OR_RETURN(CpuTicks after, ParseProcStat(after_text, cpus));
  const int64_t own_nanos = ProcessCpuNanos() - own_before;
  const int64_t wall_nanos = MonotonicNanos() - wall_before;

  HostLoad load;
  load.cpus = after.cpus;
  const uint64_t busy = after.busy >= before.busy ? after.busy - before.busy : 0;
  const uint64_t idle = after.idle >= before.idle ? after.idle - before.idle : 0;
  if (busy + idle == 0 || wall_nanos <= 0) return load;  // no tick fell: nothing seen busy
  // The busy share of the ticks, in CPUs, less this process's own CPUs.
  const double busy_cpus = static_cast<double>(busy) / static_cast<double>(busy + idle) * after.cpus;
  const double own_cpus = static_cast<double>(own_nanos) / static_cast<double>(wall_nanos);
  load.other_cpus = std::clamp(busy_cpus - own_cpus, 0.0, static_cast<double>(after.cpus));
  return load;
}

}  // namespace ge
