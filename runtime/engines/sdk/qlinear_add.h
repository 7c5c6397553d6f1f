// The element formula of `_QLinearAdd` (ged's int8 Add, made by the QDQ
// fusion pass), shared by the engines that run it so that they agree to the
// bit: host_cpu's reference loop and cpu_dense's vector loop compute
//   c = saturate(round_half_even(fma(a, ra, fma(b, rb, k))))
// with ra = A_scale / C_scale, rb = B_scale / C_scale and
// k = C_zero_point - (ra * A_zero_point + rb * B_zero_point), all in f32 —
// the order in which ONNX Runtime's x64 QLinearAdd kernel (MLAS, FMA)
// evaluates it, so that ged's int8 residual Adds match ONNX Runtime's
// exactly rather than within one step (bench/int8/layers.py compares).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ge::engine::sdk {

struct QLinearAddParams {
  float ra = 1, rb = 1, k = 0;
  int32_t lo = 0, hi = 255;  // the output type's range
};

// `k` is computed in separate f32 operations (no contraction) on purpose.
template <typename T>
QLinearAddParams MakeQLinearAddParams(float a_scale, int32_t a_zero, float b_scale, int32_t b_zero, float c_scale,
                                      int32_t c_zero) {
  QLinearAddParams p;
  p.ra = a_scale / c_scale;
  p.rb = b_scale / c_scale;
  const volatile float pa = p.ra * static_cast<float>(a_zero);
  const volatile float pb = p.rb * static_cast<float>(b_zero);
  p.k = static_cast<float>(c_zero) - (pa + pb);
  p.lo = std::numeric_limits<T>::min();
  p.hi = std::numeric_limits<T>::max();
  return p;
}

// One element (std::fma rounds once, as the FMA instruction does). The
// sum is clamped to the output range before rounding, with the operand
// order of the vector max / min instructions (a NaN gives the minimum), so
// that a vector loop doing the same agrees on every input.
template <typename T>
T QLinearAddOne(T a, T b, const QLinearAddParams& p) {
  const float t = std::fma(static_cast<float>(b), p.rb, p.k);
  float v = std::fma(static_cast<float>(a), p.ra, t);
  const float lo = static_cast<float>(p.lo), hi = static_cast<float>(p.hi);
  v = v > lo ? v : lo;
  v = v < hi ? v : hi;
  return static_cast<T>(std::nearbyint(v));
}

}  // namespace ge::engine::sdk
