// cpu_dense's own element-wise loops over f32 buffers (eltwise_tail.h's
// path): eltwise_loops.cc is compiled twice, with AVX2+FMA into namespace
// avx2 and with AVX-512 (F, DQ) into namespace avx512; callers pick one by
// the host's vector ISA. This header (declarations over gemm_loops.h's
// POD step) is the whole interface, so no inline function is emitted
// with either ISA's code.
#pragma once

#include <cstdint>

#include "runtime/engines/cpu_dense/gemm_loops.h"

namespace ge::engine::cpu_dense {

// y[i] = steps(y[i]) for i < n, in place, in the order given. The
// element-wise kinds only (GemmStep's codes 1-10; an `add`, 0, is
// skipped). exp is a degree-6 polynomial on an exact range reduction
// (relative error about 2e-7), erf Abramowitz and Stegun's
// 7.1.26 (absolute error below 1.5e-7); NaN stays NaN.
namespace avx2 {
void EltwiseSteps(float* y, int64_t n, const GemmStep* steps, int32_t num_steps);
}
namespace avx512 {
void EltwiseSteps(float* y, int64_t n, const GemmStep* steps, int32_t num_steps);
}

}  // namespace ge::engine::cpu_dense
