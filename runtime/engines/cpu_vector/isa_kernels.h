// The vectorized inner loops of cpu_vector, compiled once per ISA.
//
// isa_kernels.cc is compiled twice (CMakeLists.txt): with -mavx2 -mfma
// -mf16c into namespace `avx2`, and with the AVX-512 F/BW/VL/DQ flags into
// namespace `avx512`. Each build fills one IsaKernels table of plain
// function pointers; SelectIsa (isa.cc) picks the table once per process
// from __builtin_cpu_supports (or GED_CPU_VECTOR_ISA). Nothing outside
// those two translation units is compiled with the wider flags, so the
// binary runs on any AVX2 CPU. This header is the whole interface between
// them: enums and POD only, so no inline function of a shared header is
// ever emitted with AVX-512 code.
//
// Loops see contiguous runs; callers (the kernels) walk shapes, broadcast
// plans and threads. float16 runs convert blocks to float, compute and
// convert back, so it costs no extra instantiations.
#pragma once

#include <cstdint>

namespace ge::engine::cpu_vector {

// Element types the loops handle.
enum class VDt : uint8_t { kF32, kF64, kF16, kI32, kI64, kI8, kU8, kBool, kCount };
inline constexpr int kNumVDt = static_cast<int>(VDt::kCount);

enum class UnaryOp : uint8_t {
  kRelu, kNeg, kAbs, kSign, kSigmoid, kTanh, kExp, kLog, kSqrt, kErf, kCeil, kFloor, kRound,
  kReciprocal, kSin, kCos, kSoftplus, kSoftsign, kHardSwish, kLeakyRelu, kHardSigmoid, kElu,
  kClip, kNot, kIsNaN, kCount
};
inline constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::kCount);

enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kMod, kFmod, kPRelu,
  kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor, kCount
};
inline constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::kCount);

enum class ReduceOp : uint8_t {
  kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare, kCount
};
inline constexpr int kNumReduceOps = static_cast<int>(ReduceOp::kCount);

// Attributes of parameterized unary ops (LeakyRelu, HardSigmoid, Elu: alpha,
// beta; Clip: the bounds, as float for float types and integers otherwise).
struct UnaryParams {
  float alpha = 0.0f;
  float beta = 0.0f;
  double lo = 0.0, hi = 0.0;
  int64_t ilo = 0, ihi = 0;
};

// y[i] = op(x[i]) for i < n.
using UnaryFn = void (*)(const void* x, void* y, int64_t n, const UnaryParams& p);
// out[i] = op(a[i * sa], b[i * sb]) for i < n (strides in elements; 0
// broadcasts). Comparisons and logic write bool.
using BinaryFn = void (*)(const void* a, int64_t sa, const void* b, int64_t sb, void* out, int64_t n);
// out[i] = c[i * sc] ? x[i * sx] : y[i * sy], by element size.
using WhereFn = void (*)(const bool* c, int64_t sc, const void* x, int64_t sx, const void* y, int64_t sy,
                         void* out, int64_t n);
// y[i] = convert(x[i]), with host_cpu's Cast conversions.
using CastFn = void (*)(const void* x, void* y, int64_t n);

// Reductions accumulate into an 8-byte-per-element buffer: double for
// floating sums (f32 and f16 included, as host_cpu does), 64-bit integers
// for integer sums and products, the compute type for Max and Min.
// LogSumExp runs twice: a Max pass whose result (`aux`, doubles) shifts the
// exponentials of the second.
struct ReduceFns {
  void (*init)(void* acc, int64_t n);
  // acc[0] = combine(acc[0], x[0..n)); aux[0] for LogSumExp.
  void (*horizontal)(const void* x, int64_t n, void* acc, const double* aux);
  // acc[j] = combine(acc[j], x[j]) for j < n; aux[j] for LogSumExp.
  void (*vertical)(const void* x, int64_t n, void* acc, const double* aux);
  // out[j] = final(acc[j], count) for j < n; aux[j] for LogSumExp.
  void (*finish)(const void* acc, void* out, int64_t n, int64_t count, const double* aux);
};

struct IsaKernels {
  const char* name;
  UnaryFn unary[kNumUnaryOps][kNumVDt];
  BinaryFn binary[kNumBinaryOps][kNumVDt];
  WhereFn where[4];  // element sizes 1, 2, 4, 8
  CastFn cast[kNumVDt][kNumVDt];
  ReduceFns reduce[kNumReduceOps][kNumVDt];
  // Max of doubles: the LogSumExp pre-pass reads element type, writes double.
  ReduceFns max_to_double[kNumVDt];
  // 4-byte elements, an 8 x 8 block: dst[i * dst_stride + j] =
  // src[j * src_stride + i] for i, j < 8 (strides in elements).
  void (*transpose32_8x8)(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride);
};

namespace avx2 {
const IsaKernels& Kernels();
}
namespace avx512 {
const IsaKernels& Kernels();
}

}  // namespace ge::engine::cpu_vector
