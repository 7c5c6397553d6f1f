// cpu_dense's few-output-channel convolution loops, AVX2 + FMA
// (narrow_conv_loops.h).
//
// Per output row: the kernel rows that land inside the source, then the
// row's pixels in three runs: the left edge (pixels whose window starts in
// the left padding), the interior (every kernel column inside), the right
// edge. The interior goes in tiles of P pixels (P by the channel count of
// the output group, below) and a remainder tile; each edge pixel is a tile
// of one pixel over its own kernel columns. Output channels go in groups of
// 3 (4 as one group of 4, 9 = 3 + 3 + 3, 5 = 3 + 2, 7 = 3 + 3 + 1), each group over the whole row,
// so that the row's source stays in L1 while the groups reread it.
//
// The epilogue reduces each accumulator's 8 lanes, adds the bias and runs
// the post-op steps in scalar code (one value per dot product of at least
// 8 x taps multiply-adds).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "runtime/engines/cpu_dense/narrow_conv_loops.h"

namespace ge::engine::cpu_dense::avx2 {
namespace {

inline float Step(const GemmStep& s, float y, const float* add) {
  switch (s.kind) {
    case 0: return y + *add;
    case 1: return std::max(y, 0.0f) + s.alpha * std::min(y, 0.0f);
    case 2: return std::min(std::max(y, s.alpha), s.beta);
    case 3: return 1.0f / (1.0f + std::exp(-y));
    case 4: return std::tanh(y);
    case 9: return s.alpha * y + s.beta;
    default: return y;
  }
}

// Where a tile reads: the source of its first pixel at kernel tap (i0, j0)
// of block 0, and the weights of its first channel at the same tap.
struct TileAt {
  int64_t image, oy, ox, o;
  int64_t i0, i1, j0, j1;  // the kernel rows and columns inside the source
};

// How far ahead of a tile its source lines are prefetched (floats).
constexpr int64_t kAhead = 256;

// KW: the kernel width when every column is inside (the loop over them
// unrolled), 0 for any range.
template <int P, int O, int KW = 0>
__attribute__((noinline)) void Tile(const NarrowConvArgs& g, const TileAt& t) {
  __m256 acc[P][O];
#pragma GCC unroll 8
  for (int r = 0; r < P; ++r) {
#pragma GCC unroll 4
    for (int o = 0; o < O; ++o) acc[r][o] = _mm256_setzero_ps();
  }
  const int64_t pixel_step = g.stride_w * g.pixel_stride, tap_step = g.dilation_w * g.pixel_stride;
  const int64_t taps = g.kernel_h * g.kernel_w;
  const int64_t w_channel = g.in_blocks * taps * kNarrowLanes;  // floats per output channel
  const int64_t y0 = t.oy * g.stride_h - g.pad_top, x0 = t.ox * g.stride_w - g.pad_left;
  const int64_t rows = t.i1 - t.i0, cols = KW > 0 ? KW : t.j1 - t.j0;
  const int64_t a_row = g.dilation_h * g.in_w * g.pixel_stride, w_row = g.kernel_w * kNarrowLanes;
  const int64_t w_block = taps * kNarrowLanes;
  // Block 0 at the first tap inside.
  const float* a_block = g.src + t.image * g.image_stride +
                         ((y0 + t.i0 * g.dilation_h) * g.in_w + x0 + t.j0 * g.dilation_w) * g.pixel_stride;
  // Blocked, each channel block has lines of its own; channels-last, block
  // 0's lines (all of a pixel's channels) hold every block.
  const bool lines_per_block = g.block_stride != kNarrowLanes;
  const float* w_block0 = g.packed + t.o * w_channel + (t.i0 * g.kernel_w + t.j0) * kNarrowLanes;
  for (int64_t cb = 0; cb < g.in_blocks; ++cb) {
    const float* a_line = a_block + cb * g.block_stride;
    const float* w_line = w_block0 + cb * w_block;
    for (int64_t i = 0; i < rows; ++i) {
      const float* a = a_line;
      const float* w = w_line;
      // The source this line's next tiles read: 3 * kb rows of blocks are
      // more streams than the hardware prefetchers follow. kAhead is 32
      // pixels of a blocked source; channels-last, the same pixels ahead.
      if (lines_per_block || cb == 0) {
        const int64_t ahead = kAhead / kNarrowLanes * g.pixel_stride;
        for (int64_t q = 0; q < P * pixel_step; q += 16)
          _mm_prefetch(reinterpret_cast<const char*>(a + ahead + q), _MM_HINT_T0);
      }
#pragma GCC unroll 5
      for (int64_t j = 0; j < cols; ++j) {
        __m256 wv[O];
#pragma GCC unroll 4
        for (int o = 0; o < O; ++o) wv[o] = _mm256_loadu_ps(w + o * w_channel);
#pragma GCC unroll 8
        for (int r = 0; r < P; ++r) {
          const __m256 av = _mm256_loadu_ps(a + r * pixel_step);
#pragma GCC unroll 4
          for (int o = 0; o < O; ++o) acc[r][o] = _mm256_fmadd_ps(av, wv[o], acc[r][o]);
        }
        a += tap_step;
        w += kNarrowLanes;
      }
      a_line += a_row;
      w_line += w_row;
    }
  }
  // Each channel's P accumulators reduced together (horizontal adds of
  // pairs, then the two 128-bit halves), then bias and steps per value.
  alignas(32) float sums[O][8];
#pragma GCC unroll 4
  for (int o = 0; o < O; ++o) {
    __m256 v[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) v[r] = r < P ? acc[r < P ? r : 0][o] : _mm256_setzero_ps();
    const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
    if constexpr (P > 4) {
      const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
      _mm256_store_ps(sums[o],
                      _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31)));
    } else {
      _mm_store_ps(sums[o], _mm_add_ps(_mm256_castps256_ps128(u0), _mm256_extractf128_ps(u0, 1)));
    }
  }
  const int64_t plane_out = g.out_h * g.out_w;
  for (int o = 0; o < O; ++o) {
    const int64_t channel = t.o + o;
    const int64_t at = (t.image * g.oc + channel) * plane_out + t.oy * g.out_w + t.ox;
    const float bias = g.bias != nullptr ? g.bias[channel] : 0.0f;
    if (g.num_steps == 0) {
#pragma GCC unroll 8
      for (int r = 0; r < P; ++r) g.dst[at + r] = sums[o][r] + bias;
      continue;
    }
    for (int r = 0; r < P; ++r) {
      float y = sums[o][r] + bias;
      for (int32_t s = 0; s < g.num_steps; ++s) y = Step(g.steps[s], y, g.add == nullptr ? nullptr : g.add + at + r);
      g.dst[at + r] = y;
    }
  }
}

// Pixels per tile for a group of O output channels (P x O accumulators).
template <int O>
constexpr int kPixels = O == 1   ? 8
                        : O == 2 ? 6
                        : O == 3 ? 4
                                 : 3;

template <int O>
void Pixels(const NarrowConvArgs& g, TileAt t, int64_t count) {
  switch (count) {
    case 8: return Tile<(kPixels<O> >= 8 ? 8 : 1), O>(g, t);
    case 7: return Tile<(kPixels<O> >= 7 ? 7 : 1), O>(g, t);
    case 6: return Tile<(kPixels<O> >= 6 ? 6 : 1), O>(g, t);
    case 5: return Tile<(kPixels<O> >= 5 ? 5 : 1), O>(g, t);
    case 4: return Tile<(kPixels<O> >= 4 ? 4 : 1), O>(g, t);
    case 3: return Tile<3, O>(g, t);
    case 2: return Tile<2, O>(g, t);
    default: return Tile<1, O>(g, t);
  }
}

// One output row of the group of O channels starting at t.o.
template <int O>
void Row(const NarrowConvArgs& g, TileAt t, int64_t left, int64_t right) {
  // Kernel columns inside the source for pixel x.
  auto columns = [&](int64_t x, TileAt& at) {
    const int64_t x0 = x * g.stride_w - g.pad_left;
    at.j0 = 0;
    while (at.j0 < g.kernel_w && x0 + at.j0 * g.dilation_w < 0) ++at.j0;
    at.j1 = g.kernel_w;
    while (at.j1 > at.j0 && x0 + (at.j1 - 1) * g.dilation_w >= g.in_w) --at.j1;
  };
  for (int64_t x = 0; x < left; ++x) {
    TileAt at = t;
    at.ox = x;
    columns(x, at);
    Tile<1, O>(g, at);  // no column inside: no tap runs, bias and steps only
  }
  t.j0 = 0;
  t.j1 = g.kernel_w;
  for (int64_t x = left; x < right;) {
    const int64_t count = std::min<int64_t>(kPixels<O>, right - x);
    t.ox = x;
    if (count < kPixels<O>) {
      Pixels<O>(g, t, count);
    } else if (g.kernel_w == 3) {
      Tile<kPixels<O>, O, 3>(g, t);
    } else if (g.kernel_w == 1) {
      Tile<kPixels<O>, O, 1>(g, t);
    } else if (g.kernel_w == 5) {
      Tile<kPixels<O>, O, 5>(g, t);
    } else {
      Tile<kPixels<O>, O>(g, t);
    }
    x += count;
  }
  for (int64_t x = std::max(left, right); x < g.out_w; ++x) {
    TileAt at = t;
    at.ox = x;
    columns(x, at);
    Tile<1, O>(g, at);
  }
}

}  // namespace

void NarrowConv(const NarrowConvArgs& g) {
  // Interior pixels: every kernel column inside the source.
  const int64_t span = (g.kernel_w - 1) * g.dilation_w;
  int64_t left = (g.pad_left + g.stride_w - 1) / g.stride_w;
  int64_t right = g.in_w - 1 - span + g.pad_left >= 0 ? (g.in_w - 1 - span + g.pad_left) / g.stride_w + 1 : 0;
  left = std::min(left, g.out_w);
  right = std::max(left, std::min(right, g.out_w));
  for (int64_t row = g.row_begin; row < g.row_end; ++row) {
    TileAt t{};
    t.image = row / g.out_h;
    t.oy = row % g.out_h;
    const int64_t y0 = t.oy * g.stride_h - g.pad_top;
    t.i0 = 0;
    while (t.i0 < g.kernel_h && y0 + t.i0 * g.dilation_h < 0) ++t.i0;
    t.i1 = g.kernel_h;
    while (t.i1 > t.i0 && y0 + (t.i1 - 1) * g.dilation_h >= g.in_h) --t.i1;
    for (t.o = 0; t.o < g.oc;) {
      const int64_t rest = g.oc - t.o;
      // 3s (9 = 3 + 3 + 3), 4 as one group, 5 as 3 + 2.
      const int64_t group = rest == 4 ? 4 : rest >= 3 ? 3 : rest;
      switch (group) {
        case 4: Row<4>(g, t, left, right); break;
        case 3: Row<3>(g, t, left, right); break;
        case 2: Row<2>(g, t, left, right); break;
        default: Row<1>(g, t, left, right); break;
      }
      t.o += group;
    }
  }
}

}  // namespace ge::engine::cpu_dense::avx2
