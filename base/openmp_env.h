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
// token). ged's programs (ged, gectl) call ConfigureOpenMpWaiting first
// thing in main, before any engine plugin (and with it libgomp) is loaded,
// so that the default below applies unless the environment already names a
// policy or a spin count. The default is a short spin: an idle worker spins
// for 10,000 iterations (tens of microseconds) and then sleeps, so the
// next parallel region of a run, usually microseconds away, finds its team
// awake, while a run that has ended stops spinning at once (docs/perf.md:
// the long default spin was 5 to 300 times slower under load; sleeping at
// once (passive) cost small models 3x and the zoo's median at 2 threads
// 1.6-1.7x ORT against 1.3x with the short spin).
#pragma once

#include <string>

namespace ge {

// ged's default: idle OpenMP threads spin this many iterations, then sleep.
inline constexpr char kDefaultGompSpinCount[] = "10000";

struct OpenMpWaiting {
  // True when ged set GOMP_SPINCOUNT (neither variable was set before).
  bool set_by_ged = false;
  // True when libgomp was already loaded: the setting came too late (a
  // program linking OpenMP directly) and only the environment of child
  // processes sees it.
  bool runtime_already_loaded = false;
  std::string wait_policy;  // OMP_WAIT_POLICY as it is now ("" when unset)
  std::string spin_count;   // GOMP_SPINCOUNT as it is now ("" when unset)
};

// Sets GOMP_SPINCOUNT to kDefaultGompSpinCount unless OMP_WAIT_POLICY or
// GOMP_SPINCOUNT is set, and says what holds now.
OpenMpWaiting ConfigureOpenMpWaiting();

// Whether the OpenMP runtime (libgomp) is loaded into this process.
bool OpenMpRuntimeLoaded();

}  // namespace ge
