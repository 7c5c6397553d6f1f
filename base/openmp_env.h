// How OpenMP's idle threads wait, set by ged's programs at start-up.
//
// libgomp (the OpenMP runtime under Debian's oneDNN and every engine's
// parallel loops, runtime/engines/sdk/parallel.h) reads OMP_WAIT_POLICY and
// GOMP_SPINCOUNT once, when it is loaded; afterwards there is no way to
// change them. After a parallel region its workers spin for GOMP_SPINCOUNT
// iterations (300,000 by default, about a millisecond) waiting for the next
// region, which keeps cores from the run's other threads and from every other
// run and process on the machine, and makes more threads busy than the
// device's compute-thread budget allows (the spinning threads hold no
// token). ged's programs (ged, gectl) call ConfigureOpenMpWaiting before
// any engine plugin (and with it libgomp) is loaded, so that ged's choice
// applies unless the environment already names a policy or a spin count.
//
// ged chooses by the host's load at start-up (base/host_load.h, a 50 ms
// sample). On a host whose other processes leave the run's team its cores,
// a short spin: an idle worker spins for 10,000 iterations (tens of
// microseconds) and then sleeps, so the next parallel region of a run,
// usually microseconds away, finds its team awake, while a run that has
// ended stops spinning at once. When other processes keep busy cores the
// team needs, passive (sleep at once): a spinning thread then takes the core
// from the very thread it waits for, and every parallel region waits out a
// scheduler time slice. docs/perf.md, "OpenMP wait policy": quiet, the short
// spin gives the zoo's median at 2 threads 0.83 against 0.95 passive; under
// load 7-14 the spin made small models 3-40x slower than passive (and 2-4x
// slower than ONNX Runtime). A long-running daemon keeps the choice it made
// at start: libgomp cannot change it afterwards; a shared host should set
// OMP_WAIT_POLICY=passive itself.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "base/host_load.h"

namespace ge {

// ged's default: idle OpenMP threads spin this many iterations, then sleep.
inline constexpr char kDefaultGompSpinCount[] = "10000";

struct OpenMpWaiting {
  // True when ged set OMP_WAIT_POLICY or GOMP_SPINCOUNT (neither variable
  // was set before).
  bool set_by_ged = false;
  // The load ged measured to choose (absent when it did not measure: the
  // environment chose, one thread needs no choice, or /proc was unreadable).
  std::optional<HostLoad> host_load;
  // True when libgomp was already loaded: the setting came too late (a
  // program linking OpenMP directly) and only the environment of child
  // processes sees it.
  bool runtime_already_loaded = false;
  std::string wait_policy;  // OMP_WAIT_POLICY as it is now ("" when unset)
  std::string spin_count;   // GOMP_SPINCOUNT as it is now ("" when unset)
};

// Whether a team of `threads` (0: every CPU) should wait passively: when
// other processes keep busy more than half a CPU of the cores it needs.
bool PreferPassiveWaiting(const HostLoad& load, int threads);

// Measures the host's load; MeasureHostLoad over 50 ms by default.
using HostLoadProbe = std::function<absl::StatusOr<HostLoad>()>;
HostLoadProbe DefaultHostLoadProbe();

// Unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set: measures the host's load
// with `probe` (not for a single thread) and sets OMP_WAIT_POLICY=passive
// when PreferPassiveWaiting, else GOMP_SPINCOUNT=kDefaultGompSpinCount.
// Says what holds now. `threads` is the team size the program will run
// (0: every CPU).
OpenMpWaiting ConfigureOpenMpWaiting(int threads = 0, const HostLoadProbe& probe = DefaultHostLoadProbe());

// Logs (info) the policy in force and, when ged chose it, the load it saw.
void LogOpenMpWaiting(const OpenMpWaiting& waiting);

// Whether the OpenMP runtime (libgomp) is loaded into this process.
bool OpenMpRuntimeLoaded();

}  // namespace ge
