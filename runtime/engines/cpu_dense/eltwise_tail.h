// The exp-based end of a fused post-op chain, run by the engine's own loop
// after a oneDNN primitive instead of as oneDNN post-ops.
//
// oneDNN 2.6's exp-based element-wise code (swish, logistic, tanh, elu,
// gelu) costs about 0.55-0.6 ns an element on the AVX-512 host, as a
// convolution's post-op or as an eltwise primitive alike, where the
// convolution itself may take less: EfficientNet-B0's 16 -> 96 1x1
// convolution at 112x112 takes 0.39 ms without its SiLU and 1.05 ms with
// it (docs/perf.md, "SiLU after oneDNN"). The engine's own AVX-512 loop
// (eltwise_loops.h) takes about 0.15 ns an element, and running it over
// the primitive's destination in L1-sized pieces costs little beyond
// that. A chain is split at its first exp-based step: the
// steps before it stay oneDNN post-ops, the rest (element-wise only) runs
// in place on the destination, before any layout conversion of it.
//
// Split only when the rest holds no `add`, the result is f32, the rest
// maps 0 to 0 (so the zero padding of a channel-blocked destination stays
// zero: a chain ending in a bare Sigmoid stays with oneDNN) and the path
// below is on.
#pragma once

#include <cstdint>
#include <vector>

#include "base/dtype.h"
#include "runtime/engines/cpu_dense/eltwise_loops.h"
#include "runtime/engines/cpu_dense/post_ops.h"

namespace ge::engine::cpu_dense {

struct EltwiseTail {
  PostOpChain head;             // oneDNN's post-ops
  std::vector<GemmStep> steps;  // run after the primitive; empty: none
};

// `chain` split as above (steps empty and head = chain when not split).
EltwiseTail SplitEltwiseTail(const PostOpChain& chain, DataType dtype);

// steps over y[0, n) in place, on up to `threads` threads (one for small
// tensors or inside a parallel region).
void RunEltwiseTail(const std::vector<GemmStep>& steps, float* y, int64_t n, int threads);

// Which loops run tails: the host's widest (AVX-512, else AVX2+FMA; off
// without AVX2), capped by GED_CPU_DENSE_ELTWISE in the environment (read
// once): `onednn` turns the split off, `avx2` keeps the AVX2 loops on an
// AVX-512 host. SetEltwiseTailPath moves it (capped by the host), for
// tests and comparisons; kernels split when they build a plan.
enum class EltwiseTailPath { kOff, kAvx2, kAvx512 };
EltwiseTailPath CurrentEltwiseTailPath();
void SetEltwiseTailPath(EltwiseTailPath path);

}  // namespace ge::engine::cpu_dense
