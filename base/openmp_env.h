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
// policy or a spin count (docs/perf.md, "One intra-op threading runtime",
// has the measurements behind the choice: passive was the fastest or tied
// under load, and the long default spin 5 to 300 times slower).
#pragma once

#include <string>

namespace ge {

// ged's default: idle OpenMP threads sleep at once (no spinning).
inline constexpr char kDefaultOmpWaitPolicy[] = "passive";

struct OpenMpWaiting {
  // True when ged set OMP_WAIT_POLICY (neither variable was set before).
  bool set_by_ged = false;
  // True when libgomp was already loaded: the setting came too late (a
  // program linking OpenMP directly) and only the environment of child
  // processes sees it.
  bool runtime_already_loaded = false;
  std::string wait_policy;  // OMP_WAIT_POLICY as it is now ("" when unset)
  std::string spin_count;   // GOMP_SPINCOUNT as it is now ("" when unset)
};

// Sets OMP_WAIT_POLICY to kDefaultOmpWaitPolicy unless OMP_WAIT_POLICY or
// GOMP_SPINCOUNT is set, and says what holds now.
OpenMpWaiting ConfigureOpenMpWaiting();

// Whether the OpenMP runtime (libgomp) is loaded into this process.
bool OpenMpRuntimeLoaded();

}  // namespace ge
