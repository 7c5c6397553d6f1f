// Parallel loops of cpu_fused's kernels on OpenMP, the runtime cpu_dense's
// oneDNN primitives run on. cpu_fused's kernels sit between those
// primitives (attention between the projections, the norms between the
// FFN's GEMMs): after each primitive OpenMP's workers spin a while waiting
// for the next parallel region, and work handed to ged's own thread pool
// meanwhile competes with them for the cores. On OpenMP the spinning workers
// take it instead (BERT-base, batch 1, 2 threads, on an idle machine:
// 144 ms with the pool, 136 ms without cpu_fused, docs/perf.md).
#pragma once

#include <algorithm>
#include <cstdint>

namespace ge::engine::cpu_fused {

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

}  // namespace ge::engine::cpu_fused
