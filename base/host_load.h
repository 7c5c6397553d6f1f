// How busy the host's CPUs are with work other than this process's: the
// signal behind the OpenMP wait policy ged's programs choose at start-up
// (base/openmp_env.h).
//
// The kernel counts, per CPU, the clock ticks spent busy and idle
// (/proc/stat). Over a short window the busy ticks of the CPUs this process
// may run on (its affinity mask), less the CPU time the process itself used
// meanwhile, say how many CPUs other processes kept busy. The figure is a
// sample: a tick is charged to whatever ran when it fell, so a window of
// tens of milliseconds sees a process that holds a core and misses one that
// woke for a moment, which is what a start-up decision wants.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ge {

// Clock ticks summed over a set of CPUs.
struct CpuTicks {
  uint64_t busy = 0;  // user, nice, system, irq, softirq
  uint64_t idle = 0;  // idle, iowait
  int cpus = 0;       // the CPUs summed
};

// Sums the "cpuN" lines of /proc/stat text for the CPUs in `cpus` (every
// cpuN line when empty). Steal time (a hypervisor running someone else) is
// neither: it is not work of this host's processes. Fails when a line is
// malformed or no listed CPU has a line.
absl::StatusOr<CpuTicks> ParseProcStat(std::string_view text, const std::vector<int>& cpus);

// The CPUs this process may run on (sched_getaffinity); empty when unknown.
std::vector<int> AllowedCpus();

// A measured window.
struct HostLoad {
  int cpus = 0;             // CPUs this process may run on
  double other_cpus = 0.0;  // CPUs kept busy by other processes, 0..cpus
};

// Samples /proc/stat and this process's CPU time, waits `window`, samples
// again. Fails where /proc/stat is not readable (not Linux, a sandbox).
absl::StatusOr<HostLoad> MeasureHostLoad(std::chrono::milliseconds window);

}  // namespace ge
