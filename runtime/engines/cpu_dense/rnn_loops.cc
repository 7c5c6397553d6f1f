// cpu_dense's recurrent inner loops, compiled once per ISA (rnn_loops.h).
//
// The product is "rows times packed panels" with a register tile of R rows
// x C panels of accumulators walking the reduction (R * C * kRnnPanel
// floats in registers: 12 AVX2 vectors at most). One to three rows (a
// recurrent step at a small batch) take several panels at once so that
// enough independent FMAs are in flight, and pass over the weights once.
// Four rows or more (the input projection of every step, a step of a larger
// batch) go tile by tile of four to six rows across a stride of eight
// panels, blocked so that the stride's block of the weights stays in L2
// while every tile of a block of rows uses it. In a recurrent step of 4 to
// 32 rows, weights past 256 KB (a large hidden size's R, 1-4 MB at hidden
// 256-512, streamed from L3 at every step) are prefetched 4 KB ahead along
// each panel by the tiles that read them from L3 first. The loops are written in
// GCC's vector extension (eight floats); exp is a polynomial on an exactly
// representable range reduction, so sigmoid and tanh run eight lanes at a
// time (relative error a few ulps), and the cells with ONNX's default
// activations (LSTM, GRU with linear_before_reset, RNN) run fused, eight
// hidden units at a time.
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

// Steps of the reduction between a panel's load and its prefetch (64 rows
// of 16 floats: 4 KB ahead, as the packed GEMM of gemm_loops.cc).
constexpr int64_t kPrefetch = 64;

// Initial value of the accumulators of one call: c itself, the bias row or
// zero (the first k block of a product); later k blocks always add to c.
enum class Init { kC, kBias, kZero };

// c[row + r, panel + c] for r < R, c < C over the reduction [k0, k1);
// with kFar, prefetching the panels ahead.
template <int R, int C, bool kFar>
void Tile(const RnnGemmArgs& g, int64_t row, int64_t panel, int64_t k0, int64_t k1, Init init) {
  V8 acc[R][C][kHalves];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const int64_t col = (panel + c) * P;
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) {
        acc[r][c][h] = init == Init::kC      ? Load(g.c + (row + r) * g.ldc + col + h * 8)
                       : init == Init::kBias ? Load(g.bias + col + h * 8)
                                             : V8{};
      }
    }
  }
  const float* a = g.a + row * g.lda;
  const float* b = g.packed + panel * g.k * P;
  for (int64_t p = k0; p < k1; ++p) {
    // A panel's next cache lines, kPrefetch steps ahead: a recurrent step
    // streams R from L3 (1-4 MB at hidden 256-512), faster than the
    // hardware prefetcher ramps up over a panel of one tile.
    if constexpr (kFar) {
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) __builtin_prefetch(b + (c * g.k + p + kPrefetch) * P);
    }
#pragma GCC unroll 6
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
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) Store(g.c + (row + r) * g.ldc + (panel + c) * P + h * 8, acc[r][c][h]);
    }
  }
}

Init FirstInit(const RnnGemmArgs& g) { return g.accumulate ? Init::kC : g.bias != nullptr ? Init::kBias : Init::kZero; }

// Every panel for rows [row, row + R), C panels at a time, then the rest:
// one pass over the weights for the R rows (a recurrent step of 1 to 3 rows).
template <int R, int C>
void RowBlock(const RnnGemmArgs& g, int64_t row) {
  const Init init = FirstInit(g);
  int64_t panel = 0;
  for (; panel + C <= g.panels; panel += C) Tile<R, C, false>(g, row, panel, 0, g.k, init);
  for (; panel < g.panels; ++panel) Tile<R, 1, false>(g, row, panel, 0, g.k, init);
}

// One panel (sixteen columns) of `rows` rows (1 to 6; four or more but
// where a block of rows ends).
template <bool kFar>
void PanelTile(const RnnGemmArgs& g, int64_t row, int64_t rows, int64_t panel, int64_t k0, int64_t k1, Init init) {
  switch (rows) {
    case 1: return Tile<1, 1, kFar>(g, row, panel, k0, k1, init);
    case 2: return Tile<2, 1, kFar>(g, row, panel, k0, k1, init);
    case 3: return Tile<3, 1, kFar>(g, row, panel, k0, k1, init);
    case 4: return Tile<4, 1, kFar>(g, row, panel, k0, k1, init);
    case 5: return Tile<5, 1, kFar>(g, row, panel, k0, k1, init);
    default: return Tile<6, 1, kFar>(g, row, panel, k0, k1, init);
  }
}

// Four rows or more: blocks of kRows rows (A's block stays in L2), of kDepth
// along the reduction, and of kStride panels (a stride's block of the
// weights, up to kDepth x 128 floats, stays in L2); within those, tile by
// tile of four to six rows (its rows' slice of A stays in L1) across the
// stride's panels. The weights pass through L2 once per block of rows, as
// when a panel went by every tile in turn, but L1 holds only one tile's
// rows and the panel streaming past them, not every tile's rows beside one
// 16 KB panel block (32 KB at batch 16, hidden 256). Same sums in the same
// order; 0-10 % faster, within the noise of a loaded host (docs/perf.md,
// "The larger batch").
template <bool kFar>
void BlockedGemm(const RnnGemmArgs& g) {
  constexpr int64_t kRows = 96, kDepth = 256, kStride = 8;
  for (int64_t r0 = 0; r0 < g.rows; r0 += kRows) {
    const int64_t r1 = std::min(g.rows, r0 + kRows);
    const int64_t tiles = (r1 - r0 + 5) / 6;  // near-equal tiles of four to six rows
    // One tile (a step of four to six rows) uses each panel once: no blocks.
    const int64_t depth = tiles > 1 ? kDepth : std::max<int64_t>(g.k, 1);
    for (int64_t s0 = 0; s0 < g.panels; s0 += kStride) {
      const int64_t s1 = std::min(g.panels, s0 + kStride);
      for (int64_t k0 = 0; k0 == 0 || k0 < g.k; k0 += depth) {  // k = 0 still writes the initial values
        const int64_t k1 = std::min(g.k, k0 + depth);
        const Init init = k0 == 0 ? FirstInit(g) : Init::kC;
        for (int64_t t = 0; t < tiles; ++t) {
          const int64_t a = r0 + (r1 - r0) * t / tiles, b = r0 + (r1 - r0) * (t + 1) / tiles;
          // The first tile brings the stride's weights into L2 (prefetching
          // when they come from L3); the others find them there.
          for (int64_t panel = s0; panel < s1; ++panel) {
            if (t == 0) {
              PanelTile<kFar>(g, a, b - a, panel, k0, k1, init);
            } else {
              PanelTile<false>(g, a, b - a, panel, k0, k1, init);
            }
          }
        }
      }
    }
  }
}

// A recurrent step of 4 to kStepRows rows whose weights exceed kNearBytes
// (half of a 512 KB L2) streams them from L3 at every call, and the first
// tile over each stride prefetches their panels. Nothing else does: one to
// three rows load two to four panels per step of the reduction for 8 to 12
// FMAs, and a prefetch per panel made them 20-60 % slower (1 x 256 x
// 1024, 1 x 512 x 2048); an input projection's stride of the weights
// serves 16 tiles from L2, and its prefetching first tile measured 3-12 %
// slower (1024 x 128 x 1024).
void Gemm(const RnnGemmArgs& g) {
  constexpr int64_t kNearBytes = 256 << 10, kStepRows = 32;
  switch (g.rows) {
    case 0: return;
    case 1: return RowBlock<1, 4>(g, 0);
    case 2: return RowBlock<2, 3>(g, 0);
    case 3: return RowBlock<3, 2>(g, 0);
    default: break;
  }
  const int64_t bytes = g.panels * g.k * P * static_cast<int64_t>(sizeof(float));
  if (bytes > kNearBytes && g.rows <= kStepRows) return BlockedGemm<true>(g);
  BlockedGemm<false>(g);
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

// The cells of RnnLoops, eight hidden units a time; the last (fewer than
// eight) through padded copies of the rows they read and write.
inline V8 Clamp(V8 x, float clip) {
  if (clip <= 0) return x;
  x = x < Splat(-clip) ? Splat(-clip) : x;
  return x > Splat(clip) ? Splat(clip) : x;
}

// Eight units of the cells at offset j of their rows (FullLanes), or the
// rows' last n < 8 (TailLanes, through padded copies).
struct FullLanes {
  static V8 In(const float* p) { return Load(p); }
  static void Out(float* p, V8 v) { Store(p, v); }
};
struct TailLanes {
  int64_t n;
  V8 In(const float* p) const {
    float t[8] = {};
    std::memcpy(t, p, n * sizeof(float));
    return Load(t);
  }
  void Out(float* p, V8 v) const {
    float t[8];
    Store(t, v);
    std::memcpy(p, t, n * sizeof(float));
  }
};

// fn(j, k, p, lanes) over the units of a row, eight at a time (a group): j
// the unit (in h and c), k the group's place in g and xw, p in the
// peephole; a generic lambda, instantiated for both kinds of lanes so that
// the full ones inline to plain vector code.
static_assert(kRnnGroup == 8, "a group of units is one vector");
template <typename Fn>
void ForUnits(const RnnCellArgs& a, Fn fn) {
  int64_t j = 0, k = 0, p = 0;
  for (; j + 8 <= a.hidden; j += 8, k += a.group, p += 3 * kRnnGroup) fn(j, k, p, FullLanes{});
  if (j < a.hidden) fn(j, k, p, TailLanes{a.hidden - j});
}

void LstmRow(const RnnCellArgs& a) {
  constexpr int64_t H = kRnnGroup;
  ForUnits(a, [&](int64_t j, int64_t k, int64_t p, auto l) {
    V8 c = l.In(a.c + j);
    V8 gi = l.In(a.g + k) + l.In(a.xw + k);
    V8 go = l.In(a.g + H + k) + l.In(a.xw + H + k);
    V8 gf = l.In(a.g + 2 * H + k) + l.In(a.xw + 2 * H + k);
    V8 gc = l.In(a.g + 3 * H + k) + l.In(a.xw + 3 * H + k);
    if (a.peephole != nullptr) {
      gi += l.In(a.peephole + p) * c;
      gf += l.In(a.peephole + 2 * H + p) * c;
    }
    gi = SigmoidV(Clamp(gi, a.clip));
    gf = SigmoidV(Clamp(gf, a.clip));
    gc = TanhV(Clamp(gc, a.clip));
    c = gf * c + gi * gc;
    if (a.peephole != nullptr) go += l.In(a.peephole + H + p) * c;
    go = SigmoidV(Clamp(go, a.clip));
    l.Out(a.c + j, c);
    l.Out(a.h + j, go * TanhV(c));
  });
}

// GRU with linear_before_reset: g holds h R^T + Rb_h on the candidate.
void GruRow(const RnnCellArgs& a) {
  constexpr int64_t H = kRnnGroup;
  ForUnits(a, [&](int64_t j, int64_t k, int64_t, auto l) {
    const V8 z = SigmoidV(Clamp(l.In(a.g + k) + l.In(a.xw + k), a.clip));
    const V8 r = SigmoidV(Clamp(l.In(a.g + H + k) + l.In(a.xw + H + k), a.clip));
    const V8 n = TanhV(Clamp(l.In(a.xw + 2 * H + k) + r * l.In(a.g + 2 * H + k), a.clip));
    l.Out(a.h + j, (1.0f - z) * n + z * l.In(a.h_prev + j));
  });
}

void RnnRow(const RnnCellArgs& a) {
  ForUnits(a, [&](int64_t j, int64_t k, int64_t, auto l) {
    l.Out(a.h + j, TanhV(Clamp(l.In(a.g + k) + l.In(a.xw + k), a.clip)));
  });
}

}  // namespace

const RnnLoops& Loops() {
  static const RnnLoops loops{GE_RNN_NAME, Gemm, Sigmoid, Tanh, LstmRow, GruRow, RnnRow};
  return loops;
}

}  // namespace ge::engine::cpu_dense::GE_RNN_NS
