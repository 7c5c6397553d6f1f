// cpu_fused's inner loops, compiled once per ISA (fused_loops.h).
//
// Both products of attention are "a few rows times a dense matrix":
// scores = Q_rows Kt and Y_rows = P_rows V. RowsTimesMatrix computes R <= 4
// rows at a time in register tiles of R x kCols accumulators, walking the
// reduction dimension, so each element of the matrix is loaded once per
// block of rows and the accumulators never leave registers. The softmax of
// a block runs on the scores while they are in L1, between the products,
// and leaves them unnormalized: 1 / sum scales the row of P V instead.
// Sums keep kLanes partial results so that they vectorize without
// reassociation flags, the max runs in GCC vector registers, and exp is a
// polynomial the compiler vectorizes (-fopt-info-vec shows which loops did).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/engines/cpu_fused/fused_loops.h"

#ifndef GE_FUSED_NS
#error "fused_loops.cc is compiled with GE_FUSED_NS set to the ISA namespace"
#endif

namespace ge::engine::cpu_fused::GE_FUSED_NS {
namespace {

// Columns of one register tile: two vectors of the ISA.
constexpr int64_t kCols = GE_FUSED_VECTOR_FLOATS * 2;
constexpr int kLanes = GE_FUSED_VECTOR_FLOATS;

// One vector register of floats (GCC's vector extension).
typedef float FloatVector __attribute__((vector_size(kLanes * sizeof(float))));

inline FloatVector LoadVector(const float* p) {
  FloatVector v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// c[r, 0..n) = sum_p a[r, p] * b[p, 0..n) for r < R. The accumulators are
// vectors indexed only by constants (the loops over rows and halves are
// unrolled), so they stay in registers; left to itself GCC vectorized an
// array of floats across the rows, with shuffles and spills in the
// innermost loop, at a fraction of the FMA rate.
template <int R>
void RowsTimesMatrix(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, int64_t n,
                     float* c, int64_t ldc) {
  constexpr int kHalves = kCols / kLanes;
  int64_t j = 0;
  for (; j + kCols <= n; j += kCols) {
    FloatVector acc[R][kHalves];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) acc[r][h] = FloatVector{};
    }
    for (int64_t p = 0; p < k; ++p) {
      const float* bp = b + p * ldb + j;
      FloatVector bv[kHalves];
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) bv[h] = LoadVector(bp + h * kLanes);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const float ar = a[r * lda + p];
#pragma GCC unroll 2
        for (int h = 0; h < kHalves; ++h) acc[r][h] += ar * bv[h];
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) std::memcpy(c + r * ldc + j, acc[r], sizeof(acc[r]));
  }
  for (; j + kLanes <= n; j += kLanes) {
    FloatVector acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = FloatVector{};
    for (int64_t p = 0; p < k; ++p) {
      const FloatVector bv = LoadVector(b + p * ldb + j);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r] += a[r * lda + p] * bv;
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) std::memcpy(c + r * ldc + j, &acc[r], sizeof(acc[r]));
  }
  const int64_t rest = n - j;
  if (rest == 0) return;
  if (ldb >= kLanes && k > 0) {
    // One vector more: rows but the last read past the tail into the next
    // row (real memory, ignored lanes); the last row's tail is copied.
    FloatVector acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = FloatVector{};
    for (int64_t p = 0; p + 1 < k; ++p) {
      const FloatVector bv = LoadVector(b + p * ldb + j);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r] += a[r * lda + p] * bv;
    }
    float last[kLanes] = {};
    std::memcpy(last, b + (k - 1) * ldb + j, sizeof(float) * rest);
    const FloatVector bv = LoadVector(last);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      acc[r] += a[r * lda + k - 1] * bv;
      std::memcpy(c + r * ldc + j, &acc[r], sizeof(float) * rest);
    }
    return;
  }
  float acc[R][kLanes] = {};
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb + j;
    for (int r = 0; r < R; ++r) {
      const float ar = a[r * lda + p];
      for (int64_t x = 0; x < rest; ++x) acc[r][x] += ar * bp[x];
    }
  }
  for (int r = 0; r < R; ++r) std::memcpy(c + r * ldc + j, acc[r], sizeof(float) * rest);
}

void RowsTimesMatrix(int rows, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, int64_t n,
                     float* c, int64_t ldc) {
  switch (rows) {
    case 4: return RowsTimesMatrix<4>(a, lda, b, ldb, k, n, c, ldc);
    case 3: return RowsTimesMatrix<3>(a, lda, b, ldb, k, n, c, ldc);
    case 2: return RowsTimesMatrix<2>(a, lda, b, ldb, k, n, c, ldc);
    default: return RowsTimesMatrix<1>(a, lda, b, ldb, k, n, c, ldc);
  }
}

static_assert(kAttentionRowBlock == 4, "RowsTimesMatrix dispatches up to four rows");

// e^v for v <= 0 (v - the row's max), to about 2e-7 relative: 2^k * p(r)
// with v = k ln2 + r, |r| <= ln2 / 2; k = round(v / ln2) by adding and
// subtracting 1.5 * 2^23, which rounds to an integer in the float's own
// unit (|v / ln2| < 2^22 here); e^-87 is near FLT_MIN, below it 2^k
// underflows. One function for the vector and the scalar tail.
template <typename F, typename I>
inline F ExpOfNonPositive(F v) {
  v = v < -87.0f ? F{} - 87.0f : v;
  const F k = (v * 1.44269504f + 12582912.0f) - 12582912.0f;
  const F r = (v - k * 0.693145752f) - k * 1.42860677e-6f;
  F p = F{} + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const I bits = (__builtin_convertvector(k, I) + 127) << 23;
  return p * (F)bits;  // a vector cast keeps the bits
}

typedef int32_t IntVector __attribute__((vector_size(kLanes * sizeof(int32_t))));
typedef float OneFloat __attribute__((vector_size(sizeof(float))));
typedef int32_t OneInt __attribute__((vector_size(sizeof(int32_t))));

// x[j] = e^(x[j] - shift) for j < n, with shift >= every x[j] (the row's
// max), a vector at a time (GCC left the scalar form of this loop scalar).
void ExpInPlace(float* x, int64_t n, float shift) {
  int64_t j = 0;
#pragma GCC unroll 2
  for (; j + kLanes <= n; j += kLanes) {
    const FloatVector e = ExpOfNonPositive<FloatVector, IntVector>(LoadVector(x + j) - shift);
    std::memcpy(x + j, &e, sizeof(e));
  }
  for (; j < n; ++j) x[j] = ExpOfNonPositive<OneFloat, OneInt>(OneFloat{x[j] - shift})[0];
}

float Sum(const float* x, int64_t n);

// The max pass uses FloatVector because GCC does not vectorize a float max
// reduction without -ffinite-math-only.

// s[j] = s[j] * scale + mask[j * mask_stride] for j < n (mask_stride 0 or
// 1; no mask when null), in place; returns the largest.
float ScaleMaskMax(float* s, int64_t n, float scale, const float* mask, int64_t mask_stride) {
  if (mask == nullptr) {
    for (int64_t j = 0; j < n; ++j) s[j] *= scale;
  } else if (mask_stride == 1) {
    for (int64_t j = 0; j < n; ++j) s[j] = s[j] * scale + mask[j];
  } else {
    const float m = mask[0];
    for (int64_t j = 0; j < n; ++j) s[j] = s[j] * scale + m;
  }
  FloatVector lanes = FloatVector{} - std::numeric_limits<float>::infinity();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const FloatVector v = LoadVector(s + j);
    lanes = v > lanes ? v : lanes;
  }
  float max = lanes[0];
  for (int l = 1; l < kLanes; ++l) max = lanes[l] > max ? lanes[l] : max;
  for (; j < n; ++j) max = s[j] > max ? s[j] : max;
  return max;
}

// s = exp(s * scale + mask - max) over `n` elements, unnormalized; returns
// 1 / sum, which the caller applies to the row of P V (dv elements, not sk).
float SoftmaxRow(float* s, int64_t n, float scale, const float* mask, int64_t mask_stride) {
  const float max = ScaleMaskMax(s, n, scale, mask, mask_stride);
  ExpInPlace(s, n, max);
  return 1.0f / Sum(s, n);
}

void AttentionHead(const AttentionHeadArgs& a) {
  float inv[kAttentionRowBlock];
  for (int64_t i = 0; i < a.sq; i += kAttentionRowBlock) {
    const int rows = static_cast<int>(std::min(kAttentionRowBlock, a.sq - i));
    RowsTimesMatrix(rows, a.q + i * a.q_stride, a.q_stride, a.kt, a.sk, a.d, a.sk, a.scratch, a.sk);
    for (int r = 0; r < rows; ++r) {
      const float* mask = a.mask == nullptr ? nullptr : a.mask + (i + r) * a.mask_row_stride;
      inv[r] = SoftmaxRow(a.scratch + r * a.sk, a.sk, a.scale, mask, a.mask_col_stride);
    }
    float* y = a.y + i * a.dv;
    RowsTimesMatrix(rows, a.scratch, a.sk, a.v, a.dv, a.sk, a.dv, y, a.dv);
    for (int r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < a.dv; ++c) y[r * a.dv + c] *= inv[r];
    }
  }
}

// Sum of `n` floats in kLanes partial sums.
float Sum(const float* x, int64_t n) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[j + l];
  }
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += lanes[l];
  for (; j < n; ++j) s += x[j];
  return s;
}

float SumSquaredDeviation(const float* x, int64_t n, float mean) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float d = x[j + l] - mean;
      lanes[l] += d * d;
    }
  }
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += lanes[l];
  for (; j < n; ++j) s += (x[j] - mean) * (x[j] - mean);
  return s;
}

void AddLayerNorm(const AddLayerNormArgs& a, int64_t begin, int64_t end) {
  const int64_t n = a.n;
  for (int64_t row = begin; row < end; ++row) {
    const float* x = a.x + row * n;
    float* y = a.y + row * n;
    if (a.r != nullptr) {
      const float* r = a.r + row * n;
      for (int64_t j = 0; j < n; ++j) y[j] = x[j] + r[j];
      x = y;
    }
    const float mean = Sum(x, n) / static_cast<float>(n);
    const float var = SumSquaredDeviation(x, n, mean) / static_cast<float>(n);
    const float rstd = 1.0f / std::sqrt(var + a.epsilon);
    if (a.beta != nullptr) {
      for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * rstd * a.gamma[j] + a.beta[j];
    } else {
      for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * rstd * a.gamma[j];
    }
    if (a.p != nullptr) {
      const float* p = a.p + row * n;
      for (int64_t j = 0; j < n; ++j) y[j] += p[j];
    }
  }
}

void Transpose(const float* x, int64_t rows, int64_t cols, float* y) {
  constexpr int64_t kBlock = 16;
  for (int64_t i0 = 0; i0 < rows; i0 += kBlock) {
    const int64_t i1 = std::min(rows, i0 + kBlock);
    for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
      const int64_t j1 = std::min(cols, j0 + kBlock);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) y[j * rows + i] = x[i * cols + j];
      }
    }
  }
}

}  // namespace

const FusedLoops& Loops() {
  static const FusedLoops loops = {GE_FUSED_NAME, AttentionHead, AddLayerNorm, Transpose};
  return loops;
}

}  // namespace ge::engine::cpu_fused::GE_FUSED_NS
