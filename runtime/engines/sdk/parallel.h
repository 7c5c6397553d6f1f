// The engines' threading contract (engine SDK; docs/design/engines.md,
// "Threads"), and the parallel loops that keep it.
//
// 1. One intra-op threading runtime: OpenMP. Debian's oneDNN is built on
//    OpenMP, so cpu_dense's primitives run on OpenMP's team; every engine's
//    parallel loops run on OpenMP too (OmpParallelRange, OmpParallelFor, and
//    kernel_util.h's ParallelFor over them), never on a second pool of their
//    own: two runtimes fight over the cores (after a primitive OpenMP's
//    workers spin waiting for the next parallel region, and work handed to
//    another pool meanwhile competes with them). ExecuteContext::thread_pool
//    stays in the interface for old plugins only: it has no workers.
// 2. A kernel uses at most ExecuteContext::num_threads() threads (the
//    device's `threads`, PrepareContext::num_threads at Prepare), and sets
//    the team size per call (num_threads clause, or omp_set_num_threads
//    before a oneDNN primitive) rather than relying on OMP_NUM_THREADS.
// 3. With several workers per device (a device's `workers` in ged.yaml, or
//    several runs at once in one process), at most the device's `threads`
//    compute threads are busy at once: the executors run kernels inside a
//    ComputeScope of the device's ComputeBudget (base/compute_budget.h), and
//    every parallel region takes its other members from that budget with a
//    ComputeTeam first: OpenMP loops take what is free (kFlexible: a team
//    sized by the free threads, down to the caller alone), oneDNN primitives,
//    whose team size is fixed when they are created, wait for the whole team
//    (kWhole).
// 4. Small work stays on the calling thread: a loop goes parallel only when
//    each thread gets enough work to pay for waking it. Inside an active
//    OpenMP region (a kernel called from another's parallel loop) loops run
//    on the calling thread: OpenMP does not nest teams here.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "base/compute_budget.h"

namespace ge::engine::sdk {

// Calls fn(begin, end) over [0, n) in blocks of `block` (the last may be
// shorter) on at most `threads` OpenMP threads, as many as the device's
// budget has free; inline below two blocks or two threads.
template <typename Fn>
void OmpParallelRange(int threads, int64_t n, int64_t block, const Fn& fn) {
  block = std::max<int64_t>(1, block);
  const int64_t chunks = (n + block - 1) / block;
  const int want = static_cast<int>(std::min<int64_t>(threads, chunks));
  if (want <= 1 || omp_in_parallel()) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  const ComputeTeam team(want, ComputeTeam::Mode::kFlexible);
  if (team.size() <= 1) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(team.size()) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) fn(c * block, std::min(n, (c + 1) * block));
}

// Calls fn(begin, end) over [0, n) split into at most `threads` blocks of
// at least `min_block` items (one block per thread, as equal as they come).
template <typename Fn>
void OmpParallelFor(int threads, int64_t n, int64_t min_block, const Fn& fn) {
  if (n <= 0) return;
  min_block = std::max<int64_t>(1, min_block);
  const int64_t blocks = std::min<int64_t>(std::max(1, threads), (n + min_block - 1) / min_block);
  if (blocks <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  OmpParallelRange(static_cast<int>(blocks), n, (n + blocks - 1) / blocks, fn);
}

}  // namespace ge::engine::sdk
