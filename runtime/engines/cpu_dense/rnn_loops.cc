// cpu_dense's recurrent inner loops, compiled once per ISA (rnn_loops.h).
//
// The product is "a few rows times packed panels": a register tile of
// R rows x C panels of accumulators walks the reduction dimension, loading
// each packed weight once per block of rows (R * C * kRnnPanel floats stay
// in registers: 12 AVX2 vectors at most). One row (batch 1, a recurrent
// step) takes four panels at once so that enough independent FMAs are in
// flight. The loops are written in GCC's vector extension (eight floats);
// exp is a polynomial on an exactly representable range reduction, so
// sigmoid and tanh run eight lanes at a time (relative error a few ulps).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "runtime/engines/cpu_dense/rnn_loops.h"

#ifndef GE_RNN_NS
#error "rnn_loops.cc is compiled with GE_RNN_NS set to the ISA namespace"
#endif

namespace ge::engine::cpu_dense::GE_RNN_NS {
namespace {

constexpr int64_t P = kRnnPanel;

// Eight floats in GCC's vector extension (two SSE registers in the base
// build, one AVX register in the AVX2 build), loaded and stored unaligned.
typedef float V8 __attribute__((vector_size(32)));
constexpr int kHalves = P / 8;

inline V8 Load(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store(float* p, V8 v) { std::memcpy(p, &v, sizeof(v)); }

template <int R, int C>
void Tile(const RnnGemmArgs& g, int64_t row, int64_t panel) {
  V8 acc[R][C][kHalves];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const int64_t col = (panel + c) * P;
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) {
        acc[r][c][h] = g.accumulate        ? Load(g.c + (row + r) * g.ldc + col + h * 8)
                       : g.bias != nullptr ? Load(g.bias + col + h * 8)
                                           : V8{};
      }
    }
  }
  const float* a = g.a + row * g.lda;
  const float* b = g.packed + panel * g.k * P;
  for (int64_t p = 0; p < g.k; ++p) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const float ar = a[r * g.lda + p];
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) {
        const float* bp = b + (c * g.k + p) * P;
#pragma GCC unroll 2
        for (int h = 0; h < kHalves; ++h) acc[r][c][h] += ar * Load(bp + h * 8);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) Store(g.c + (row + r) * g.ldc + (panel + c) * P + h * 8, acc[r][c][h]);
    }
  }
}

// Every panel for rows [row, row + R), C panels at a time, then the rest.
template <int R, int C>
void RowBlock(const RnnGemmArgs& g, int64_t row) {
  int64_t panel = 0;
  for (; panel + C <= g.panels; panel += C) Tile<R, C>(g, row, panel);
  for (; panel < g.panels; ++panel) Tile<R, 1>(g, row, panel);
}

void Gemm(const RnnGemmArgs& g) {
  int64_t row = 0;
  while (g.rows - row >= 3) {
    if (g.rows - row == 4) {  // one pass over the weights for four rows (batch 4)
      RowBlock<4, 1>(g, row);
      return;
    }
    RowBlock<3, 2>(g, row);
    row += 3;
  }
  if (g.rows - row == 2) RowBlock<2, 3>(g, row);
  if (g.rows - row == 1) RowBlock<1, 4>(g, row);
}

typedef int32_t V8i __attribute__((vector_size(32)));

inline V8 Splat(float v) { return V8{} + v; }
// Bit casts (GCC's vector casts between same-sized vectors keep the bits).
inline V8 AsFloats(V8i v) { return (V8)v; }
inline V8i AsInts(V8 v) { return (V8i)v; }

// exp(x) for x clamped to [-87, 88], eight lanes at a time: x = n ln2 + f
// with |f| <= ln2 / 2 (n rounded by the 1.5 * 2^23 shift, ln2 split so
// that n * kLn2Hi is exact), a degree-7 Taylor polynomial for exp(f), and
// 2^n built in the exponent bits.
inline V8 Exp(V8 x) {
  constexpr float kLog2e = 1.44269504088896341f, kShift = 12582912.0f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  x = x < Splat(-87.0f) ? Splat(-87.0f) : x;
  x = x > Splat(88.0f) ? Splat(88.0f) : x;
  const V8 n = (x * kLog2e + kShift) - kShift;
  const V8 f = (x - n * kLn2Hi) - n * kLn2Lo;
  V8 p = Splat(1.0f / 5040.0f);
  p = p * f + 1.0f / 720.0f;
  p = p * f + 1.0f / 120.0f;
  p = p * f + 1.0f / 24.0f;
  p = p * f + 1.0f / 6.0f;
  p = p * f + 0.5f;
  p = p * f + 1.0f;
  p = p * f + 1.0f;
  const V8i bits = (__builtin_convertvector(n, V8i) + 127) << 23;
  return p * AsFloats(bits);
}

inline V8 SigmoidV(V8 x) { return 1.0f / (1.0f + Exp(-x)); }

// tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2 |x|).
inline V8 TanhV(V8 x) {
  const V8i sign = AsInts(x) & INT32_MIN;
  const V8i magnitude_bits = AsInts(x) & INT32_MAX;
  const V8 e = Exp(-2.0f * AsFloats(magnitude_bits));
  const V8 t = (1.0f - e) / (1.0f + e);
  const V8i out = AsInts(t) | sign;
  return AsFloats(out);
}

// x[0..n) = fn(x) eight at a time; the tail goes through a padded copy.
template <V8 (*Fn)(V8)>
void Map(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) Store(x + i, Fn(Load(x + i)));
  if (i == n) return;
  float tail[8] = {};
  std::memcpy(tail, x + i, (n - i) * sizeof(float));
  Store(tail, Fn(Load(tail)));
  std::memcpy(x + i, tail, (n - i) * sizeof(float));
}

void Sigmoid(float* x, int64_t n) { Map<SigmoidV>(x, n); }
void Tanh(float* x, int64_t n) { Map<TanhV>(x, n); }

}  // namespace

const RnnLoops& Loops() {
  static const RnnLoops loops{GE_RNN_NAME, Gemm, Sigmoid, Tanh};
  return loops;
}

}  // namespace ge::engine::cpu_dense::GE_RNN_NS
