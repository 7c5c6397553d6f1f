// cpu_dense's packed-weights f32 GEMM, AVX2 + FMA (gemm_loops.h).
//
// A register tile of R (1..6) rows x one 16-column panel holds 2R
// accumulators; each step of the reduction loads the panel's 16 weights
// once (two vectors) and broadcasts one A value per row. A tile walks the
// whole depth at once up to kGemmDepthBlock (the panel streams from L2
// while its rows stay in L1), so each tile of C is written once: with
// 256-deep blocks the partial sums' round trips through C, which for a
// wide product does not fit in L2, cost 15-25 % on BERT-base's shapes.
// Deeper products run in equal blocks of at most kGemmDepthBlock, every
// row block of the caller's panels walking one block before the next.
// Up to 3 rows take 2 or 4 panels at a time, so that at least 8
// accumulators are in flight (a row block's 4-row tail takes one 4-row
// tile, not two of 2). Inside a tile the depth runs in pieces of 256
// steps, each summed from zero and added to the running total in an L1
// buffer, so rounding grows with 256 and the number of pieces, not with
// the depth (as when the blocks' partial sums went through C). The
// last block adds the bias and runs the post-op steps on the tile in
// registers, then stores it (masked past n). exp is a polynomial on an
// exactly representable range reduction (a few ulps); erf is Abramowitz
// and Stegun's 7.1.26 (absolute error below 1.5e-7), used by GELU only
// (the tanh form runs through Tanh).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/engines/cpu_dense/gemm_loops.h"

namespace ge::engine::cpu_dense::avx2 {
namespace {

constexpr int kMaxRows = 6;
// Reduction steps summed from zero before they join the tile's total.
constexpr int64_t kSumRun = 256;

inline __m256 Splat(float v) { return _mm256_set1_ps(v); }

inline __m256 Exp(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, Splat(-87.0f)), Splat(88.0f));
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, Splat(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 f = _mm256_fnmadd_ps(n, Splat(0.693359375f), x);
  f = _mm256_fnmadd_ps(n, Splat(-2.12194440e-4f), f);
  __m256 p = Splat(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, f, Splat(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, f, Splat(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, f, Splat(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, f, Splat(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, f, Splat(0.5f));
  p = _mm256_fmadd_ps(p, f, Splat(1.0f));
  p = _mm256_fmadd_ps(p, f, Splat(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

inline __m256 Sigmoid(__m256 x) {
  const __m256 e = Exp(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(Splat(1.0f), _mm256_add_ps(Splat(1.0f), e));
}

inline __m256 Abs(__m256 x) { return _mm256_andnot_ps(Splat(-0.0f), x); }

// sign(x) (1 - e) / (1 + e), e = exp(-2 |x|).
inline __m256 Tanh(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, Splat(-0.0f));
  const __m256 e = Exp(_mm256_mul_ps(Splat(-2.0f), Abs(x)));
  const __m256 t = _mm256_div_ps(_mm256_sub_ps(Splat(1.0f), e), _mm256_add_ps(Splat(1.0f), e));
  return _mm256_or_ps(t, sign);
}

inline __m256 Erf(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, Splat(-0.0f));
  const __m256 ax = Abs(x);
  const __m256 t = _mm256_div_ps(Splat(1.0f), _mm256_fmadd_ps(ax, Splat(0.3275911f), Splat(1.0f)));
  __m256 p = Splat(1.061405429f);
  p = _mm256_fmadd_ps(p, t, Splat(-1.453152027f));
  p = _mm256_fmadd_ps(p, t, Splat(1.421413741f));
  p = _mm256_fmadd_ps(p, t, Splat(-0.284496736f));
  p = _mm256_fmadd_ps(p, t, Splat(0.254829592f));
  p = _mm256_mul_ps(p, t);
  const __m256 e = Exp(_mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), ax), ax));
  const __m256 y = _mm256_fnmadd_ps(p, e, Splat(1.0f));
  return _mm256_or_ps(y, sign);
}

inline __m256 Step(const GemmStep& s, __m256 y, const float* add, __m256i mask) {
  switch (s.kind) {
    case 0: return _mm256_add_ps(y, _mm256_maskload_ps(add, mask));
    case 1: {  // max(y, 0) + alpha min(y, 0)
      const __m256 zero = _mm256_setzero_ps();
      return _mm256_fmadd_ps(Splat(s.alpha), _mm256_min_ps(y, zero), _mm256_max_ps(y, zero));
    }
    case 2: return _mm256_min_ps(_mm256_max_ps(y, Splat(s.alpha)), Splat(s.beta));
    case 3: return Sigmoid(y);
    case 4: return Tanh(y);
    case 5: {  // y > 0 ? y : alpha (exp(y) - 1)
      const __m256 neg = _mm256_mul_ps(Splat(s.alpha), _mm256_sub_ps(Exp(y), Splat(1.0f)));
      return _mm256_blendv_ps(neg, y, _mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_GT_OQ));
    }
    case 6: {  // 0.5 y (1 + erf(y / sqrt 2))
      const __m256 e = Erf(_mm256_mul_ps(y, Splat(0.70710678118654752f)));
      return _mm256_mul_ps(_mm256_mul_ps(Splat(0.5f), y), _mm256_add_ps(Splat(1.0f), e));
    }
    case 7: {  // y relu6(y + 3) / 6
      const __m256 r = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(y, Splat(3.0f)), _mm256_setzero_ps()), Splat(6.0f));
      return _mm256_mul_ps(y, _mm256_mul_ps(r, Splat(1.0f / 6.0f)));
    }
    case 8: return _mm256_mul_ps(y, Sigmoid(_mm256_mul_ps(Splat(s.alpha), y)));
    case 9: return _mm256_fmadd_ps(Splat(s.alpha), y, Splat(s.beta));
    case 10: {  // 0.5 y (1 + tanh(sqrt(2 / pi) (y + 0.044715 y^3)))
      const __m256 y3 = _mm256_mul_ps(_mm256_mul_ps(y, y), y);
      const __m256 inner = _mm256_mul_ps(Splat(0.79788456080286536f), _mm256_fmadd_ps(Splat(0.044715f), y3, y));
      return _mm256_mul_ps(_mm256_mul_ps(Splat(0.5f), y), _mm256_add_ps(Splat(1.0f), Tanh(inner)));
    }
    default: return y;
  }
}

// Lane masks for the first `cols` (0..16) columns of a panel, per half.
inline __m256i HalfMask(int64_t cols, int half) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols - 8 * half)), lanes);
}

inline void StoreRow(float* c, bool full, __m256i m0, __m256i m1, __m256 v0, __m256 v1) {
  if (full) {
    _mm256_storeu_ps(c, v0);
    _mm256_storeu_ps(c + 8, v1);
  } else {
    _mm256_maskstore_ps(c, m0, v0);
    _mm256_maskstore_ps(c + 8, m1, v1);
  }
}

// The last depth block's end: bias and steps on `rows` rows of the tile
// (kept in memory by the caller), then into C.
void Epilogue(const GemmArgs& g, const float (*tile)[kGemmPanel], int rows, int64_t row, int64_t col) {
  const int64_t cols = std::min<int64_t>(kGemmPanel, g.n - col);
  const __m256i m0 = HalfMask(cols, 0), m1 = HalfMask(cols, 1);
  __m256 bias0 = _mm256_setzero_ps(), bias1 = _mm256_setzero_ps();
  if (g.bias != nullptr) {
    bias0 = _mm256_maskload_ps(g.bias + col, m0);
    bias1 = _mm256_maskload_ps(g.bias + col + 8, m1);
  }
  for (int r = 0; r < rows; ++r) {
    __m256 v0 = _mm256_add_ps(_mm256_loadu_ps(tile[r]), bias0);
    __m256 v1 = _mm256_add_ps(_mm256_loadu_ps(tile[r] + 8), bias1);
    const float* add = g.add == nullptr ? nullptr : g.add + (row + r) * g.add_ld + col;
    for (int s = 0; s < g.num_steps; ++s) {
      v0 = Step(g.steps[s], v0, add, m0);
      v1 = Step(g.steps[s], v1, add == nullptr ? nullptr : add + 8, m1);
    }
    StoreRow(g.c + (row + r) * g.ldc + col, cols == kGemmPanel, m0, m1, v0, v1);
  }
}

// R rows x C panels: 2 R C accumulators, at least 8 of them in flight so
// that FMA latency does not bound a step.
template <int R, int C>
void Tile(const GemmArgs& g, int64_t row, int64_t panel, int64_t k0, int64_t kn, bool first, bool last) {
  __m256 acc[R][C][2];
  float* c = g.c + row * g.ldc + panel * kGemmPanel;
  bool full[C];
  __m256i m0[C], m1[C];
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j) {
    const int64_t cols = std::min<int64_t>(kGemmPanel, g.n - (panel + j) * kGemmPanel);
    full[j] = cols == kGemmPanel;
    m0[j] = HalfMask(cols, 0);
    m1[j] = HalfMask(cols, 1);
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) {
      float* cj = c + r * g.ldc + j * kGemmPanel;
      if (first) {
        acc[r][j][0] = _mm256_setzero_ps();
        acc[r][j][1] = _mm256_setzero_ps();
      } else if (full[j]) {
        acc[r][j][0] = _mm256_loadu_ps(cj);
        acc[r][j][1] = _mm256_loadu_ps(cj + 8);
      } else {
        acc[r][j][0] = _mm256_maskload_ps(cj, m0[j]);
        acc[r][j][1] = _mm256_maskload_ps(cj + 8, m1[j]);
      }
    }
  }
  const float* a = g.a + row * g.lda + k0;
  const float* b = g.packed + (panel * g.k + k0) * kGemmPanel;
  const int64_t lda = g.lda, panel_stride = g.k * kGemmPanel;
  // The depth in runs of kSumRun steps, each from zero, their sums added
  // in order in an L1 buffer: rounding grows with the run, not the depth.
  alignas(32) float part[R][C][kGemmPanel];
  for (int64_t p0 = 0; p0 < kn; p0 += kSumRun) {
    const int64_t p1 = std::min(kn, p0 + kSumRun);
    if (p0 > 0) {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j) acc[r][j][0] = acc[r][j][1] = _mm256_setzero_ps();
      }
    }
#pragma GCC unroll 2
    for (int64_t p = p0; p < p1; ++p) {
      __m256 b0[C], b1[C];
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) {
        _mm_prefetch(reinterpret_cast<const char*>(b + j * panel_stride + (p + 64) * kGemmPanel), _MM_HINT_T0);
        b0[j] = _mm256_loadu_ps(b + j * panel_stride + p * kGemmPanel);
        b1[j] = _mm256_loadu_ps(b + j * panel_stride + p * kGemmPanel + 8);
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j) {
          acc[r][j][0] = _mm256_fmadd_ps(av, b0[j], acc[r][j][0]);
          acc[r][j][1] = _mm256_fmadd_ps(av, b1[j], acc[r][j][1]);
        }
      }
    }
    if (p0 == 0 && p1 == kn) break;  // one run: the sum is in acc
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) {
        if (p0 > 0) {
          acc[r][j][0] = _mm256_add_ps(_mm256_load_ps(part[r][j]), acc[r][j][0]);
          acc[r][j][1] = _mm256_add_ps(_mm256_load_ps(part[r][j] + 8), acc[r][j][1]);
        }
        if (p1 < kn) {
          _mm256_store_ps(part[r][j], acc[r][j][0]);
          _mm256_store_ps(part[r][j] + 8, acc[r][j][1]);
        }
      }
    }
  }
  if (!last) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) {
        StoreRow(c + r * g.ldc + j * kGemmPanel, full[j], m0[j], m1[j], acc[r][j][0], acc[r][j][1]);
      }
    }
    return;
  }
  alignas(32) float tile[C][R][kGemmPanel];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) {
      _mm256_store_ps(tile[j][r], acc[r][j][0]);
      _mm256_store_ps(tile[j][r] + 8, acc[r][j][1]);
    }
  }
  for (int j = 0; j < C; ++j) Epilogue(g, tile[j], R, row, (panel + j) * kGemmPanel);
}

// Rows [row, row + R) over panels [begin, end): C panels at a time, then
// one at a time.
template <int R, int C>
void Panels(const GemmArgs& g, int64_t row, int64_t begin, int64_t end, int64_t k0, int64_t kn, bool first, bool last) {
  int64_t panel = begin;
  for (; panel + C <= end; panel += C) Tile<R, C>(g, row, panel, k0, kn, first, last);
  for (; panel < end; ++panel) Tile<R, 1>(g, row, panel, k0, kn, first, last);
}

void RowTile(const GemmArgs& g, int64_t row, int64_t rows, int64_t begin, int64_t end, int64_t k0, int64_t kn,
             bool first, bool last) {
  switch (rows) {
    case 6: return Panels<6, 1>(g, row, begin, end, k0, kn, first, last);
    case 5: return Panels<5, 1>(g, row, begin, end, k0, kn, first, last);
    case 4:
      if (end - begin == 1) return Panels<4, 1>(g, row, begin, end, k0, kn, first, last);
      Panels<2, 2>(g, row, begin, end, k0, kn, first, last);
      return Panels<2, 2>(g, row + 2, begin, end, k0, kn, first, last);
    case 3: return Panels<3, 2>(g, row, begin, end, k0, kn, first, last);
    case 2: return Panels<2, 2>(g, row, begin, end, k0, kn, first, last);
    default: return Panels<1, 4>(g, row, begin, end, k0, kn, first, last);
  }
}

}  // namespace

void PackedGemm(const GemmArgs& g) {
  // Rows in blocks of 6 (the remainder spread so that no tile is tiny:
  // 7 rows run as 4 + 3, not 6 + 1). Rows go in groups that keep their
  // slice of A in L2 while the panels go by.
  // The depth in equal blocks of at most kGemmDepthBlock; at most two row
  // blocks reuse a depth slice: the whole depth at once then, so that each
  // panel streams from memory in one piece.
  constexpr int64_t kRowGroup = 144;
  const int64_t blocks = (g.k + kGemmDepthBlock - 1) / kGemmDepthBlock;
  const int64_t depth = g.rows <= 2 * kMaxRows || blocks <= 1 ? std::max<int64_t>(g.k, 1) : (g.k + blocks - 1) / blocks;
  for (int64_t k0 = 0; k0 < g.k || k0 == 0; k0 += depth) {
    const int64_t kn = std::min(depth, g.k - k0);
    const bool first = k0 == 0, last = k0 + depth >= g.k;
    for (int64_t g0 = 0; g0 < g.rows; g0 += kRowGroup) {
      const int64_t g1 = std::min(g.rows, g0 + kRowGroup);
      // Row blocks inside each panel, so that the panel's depth slice
      // (16 KiB) stays in L1 while the rows go by; up to 3 rows take 2 or 4
      // panels at once instead (one row block: nothing to keep).
      const int64_t block = g1 - g0 <= 3 ? 4 : g1 - g0 == 4 ? 2 : 1;
      for (int64_t p0 = g.panel_begin; p0 < g.panel_end; p0 += block) {
        const int64_t p1 = std::min(g.panel_end, p0 + block);
        int64_t row = g0;
        while (row < g1) {
          const int64_t left = g1 - row;
          const int64_t take = left <= kMaxRows ? left : left < 2 * kMaxRows ? (left + 1) / 2 : kMaxRows;
          RowTile(g, row, take, p0, p1, k0, kn, first, last);
          row += take;
        }
      }
    }
    if (g.k == 0) break;
  }
}

}  // namespace ge::engine::cpu_dense::avx2
