// The engines' threading contract (engine SDK; docs/design/engines.md,
// "Threads"), and OmpParallelRange, the parallel loop that keeps it.
//
// 1. One intra-op threading runtime: OpenMP. Debian's oneDNN is built on
//    OpenMP, so cpu_dense's primitives run on OpenMP's team; every engine's
//    parallel loops run on OpenMP too (OmpParallelRange below), never on a
//    second pool of their own: two runtimes fight over the cores (after a
//    primitive OpenMP's workers spin waiting for the next parallel region,
//    and work handed to another pool meanwhile competes with them).
// 2. A kernel uses at most ExecuteContext::num_threads() threads (the
//    device's `threads`, PrepareContext::num_threads at Prepare), and sets
//    the team size per call (num_threads clause, or omp_set_num_threads
//    before a oneDNN primitive) rather than relying on OMP_NUM_THREADS.
// 3. With several workers per device (a device's `workers` in ged.yaml), at
//    most the device's `threads` compute threads are busy at once: workers
//    share the device's budget of compute threads rather than each bringing
//    a team of its own (the mechanism is issue 20 item 4's).
// 4. Small work stays on the calling thread: a loop goes parallel only when
//    each thread gets enough work to pay for waking it.
// Where ged stands (issue 20 item 4 implements the rest): cpu_dense and
// cpu_fused follow 1, 2 and 4; host_cpu and cpu_vector still split large
// loops over the device's intra-op ThreadPool (ExecuteContext::thread_pool,
// kernel_util.h ParallelFor); rule 3 is not enforced yet. New engine code
// uses OmpParallelRange.
//
// cpu_fused's kernels sit between cpu_dense's primitives (attention between
// the projections, the norms between the FFN's GEMMs), where moving to
// OpenMP paid at once (BERT-base, batch 1, 2 threads, on an idle machine:
// 144 ms with the pool, 136 ms without cpu_fused, docs/perf.md).
#pragma once

#include <algorithm>
#include <cstdint>

namespace ge::engine::sdk {

// Calls fn(begin, end) over [0, n) in blocks of `block` (the last may be
// shorter) on at most `threads` OpenMP threads; inline below two blocks or
// two threads.
template <typename Fn>
void OmpParallelRange(int threads, int64_t n, int64_t block, const Fn& fn) {
  block = std::max<int64_t>(1, block);
  const int64_t chunks = (n + block - 1) / block;
  const int team = static_cast<int>(std::min<int64_t>(threads, chunks));
  if (team <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(team) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) fn(c * block, std::min(n, (c + 1) * block));
}

}  // namespace ge::engine::sdk
