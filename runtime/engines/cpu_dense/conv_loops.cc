// cpu_dense's small-output convolution loops, AVX2 + FMA (conv_loops.h).
//
// A register tile is R output pixels (1..6) x C panels of 16 output
// channels (C = 1 here: 2 R accumulators); pixels go in tiles of 6, a
// remainder of 7 to 11 in two near halves, so that a 7x7 output is 7 tiles
// of 6, one of 4 and one of 3, all over the same panel while its weights
// are in cache (a 1-pixel tail over every panel afterwards read the whole
// pass's weights from L3 again). Each depth step loads the panel's
// 16 weights (two vectors) and broadcasts one source value per pixel;
// a pixel's source pointer is the tap's offset plus the pixel's own, so a
// tap costs one add per pixel and the 8 lanes of a channel block run with
// constant displacements.
//
// The depth runs in passes of about kConvDepth (whole channel blocks):
// inside a pass a panel's slice of weights (at most 64 KiB) is read by
// every pixel tile of every image from L1/L2 instead of streaming the whole
// panel from L2 per tile; between passes the sums wait in the caller's
// `partial` buffer (output-sized, small by construction). While a panel's
// tiles run, the next panel's slice is prefetched into L2, spread evenly
// over the tiles, so that the weights, which a batch-1 network reads once
// per run from memory, arrive before they are needed.
//
// The last pass adds the bias, runs the post-op steps and stores the tile
// into the channel-blocked destination (an add step reads its operand at
// the same place, which may be the destination itself).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/engines/cpu_dense/conv_loops.h"

namespace ge::engine::cpu_dense::avx2 {
namespace {

constexpr int kMaxRows = 6;

inline __m256 Splat(float v) { return _mm256_set1_ps(v); }

inline __m256 Step(const GemmStep& s, __m256 y, const float* add) {
  switch (s.kind) {
    case 0: return _mm256_add_ps(y, _mm256_loadu_ps(add));
    case 1: {  // max(y, 0) + alpha min(y, 0)
      const __m256 zero = _mm256_setzero_ps();
      return _mm256_fmadd_ps(Splat(s.alpha), _mm256_min_ps(y, zero), _mm256_max_ps(y, zero));
    }
    case 2: return _mm256_min_ps(_mm256_max_ps(y, Splat(s.alpha)), Splat(s.beta));
    case 9: return _mm256_fmadd_ps(Splat(s.alpha), y, Splat(s.beta));
    default: return y;
  }
}

// Where one pass of a tile reads and writes.
struct Pass {
  int64_t block_begin, block_end;
  bool first, last;
};

template <int R, int C>
__attribute__((noinline)) void Tile(const SmallConvArgs& g, const Pass& pass, int64_t image, int64_t pix0,
                                    int64_t panel, const char* prefetch, int64_t prefetch_step) {
  const int64_t plane = g.num_pixels * kConvLanes;  // floats per output channel block
  const int64_t out = image * (g.oc / kConvLanes) * plane + pix0 * kConvLanes;
  __m256 acc[R][C][2];
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j) {
    const float* part = g.partial + out + (panel + j) * 2 * plane;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      if (pass.first) {
        acc[r][j][0] = acc[r][j][1] = _mm256_setzero_ps();
      } else {
        acc[r][j][0] = _mm256_loadu_ps(part + r * kConvLanes);
        acc[r][j][1] = _mm256_loadu_ps(part + plane + r * kConvLanes);
      }
    }
  }
  int64_t origin[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) origin[r] = g.pixels[pix0 + r];
  const int64_t depth = g.in_blocks * g.num_taps * kConvLanes;
  const int64_t panel_floats = depth * kConvPanel;
  const float* w = g.packed + panel * panel_floats + pass.block_begin * g.num_taps * kConvLanes * kConvPanel;
  const float* image_src = g.src + image * g.src_image;
  for (int64_t cb = pass.block_begin; cb < pass.block_end; ++cb) {
    const float* block = image_src + cb * g.src_block;
    for (int32_t t = 0; t < g.num_taps; ++t) {
      const float* tap = block + g.taps[t];
      const float* a[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) a[r] = tap + origin[r];
#pragma GCC unroll 8
      for (int i = 0; i < kConvLanes; ++i) {
        __m256 b0[C], b1[C];
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j) {
          b0[j] = _mm256_loadu_ps(w + j * panel_floats + i * kConvPanel);
          b1[j] = _mm256_loadu_ps(w + j * panel_floats + i * kConvPanel + 8);
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m256 av = _mm256_broadcast_ss(a[r] + i);
#pragma GCC unroll 4
          for (int j = 0; j < C; ++j) {
            acc[r][j][0] = _mm256_fmadd_ps(av, b0[j], acc[r][j][0]);
            acc[r][j][1] = _mm256_fmadd_ps(av, b1[j], acc[r][j][1]);
          }
        }
      }
      w += kConvLanes * kConvPanel;
    }
    if (prefetch != nullptr) {
      const int64_t bytes = prefetch_step * g.num_taps;
      for (int64_t q = 0; q < bytes; q += 64) _mm_prefetch(prefetch + q, _MM_HINT_T1);
      prefetch += bytes;
    }
  }
  if (!pass.last) {
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) {
      float* part = g.partial + out + (panel + j) * 2 * plane;
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(part + r * kConvLanes, acc[r][j][0]);
        _mm256_storeu_ps(part + plane + r * kConvLanes, acc[r][j][1]);
      }
    }
    return;
  }
  // The sums leave the registers through a buffer (indexing the
  // accumulators with the epilogue's run-time loops would keep them in
  // memory through the depth loop).
  alignas(32) float sums[C][R][2][kConvLanes];
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      _mm256_store_ps(sums[j][r][0], acc[r][j][0]);
      _mm256_store_ps(sums[j][r][1], acc[r][j][1]);
    }
  }
  for (int j = 0; j < C; ++j) {
    const int64_t offset = out + (panel + j) * 2 * plane;
    const int64_t oc0 = (panel + j) * kConvPanel;
    const __m256 bias0 = g.bias != nullptr ? _mm256_loadu_ps(g.bias + oc0) : _mm256_setzero_ps();
    const __m256 bias1 = g.bias != nullptr ? _mm256_loadu_ps(g.bias + oc0 + 8) : _mm256_setzero_ps();
    for (int r = 0; r < R; ++r) {
      const int64_t at0 = offset + r * kConvLanes, at1 = at0 + plane;
      __m256 v0 = _mm256_add_ps(_mm256_load_ps(sums[j][r][0]), bias0);
      __m256 v1 = _mm256_add_ps(_mm256_load_ps(sums[j][r][1]), bias1);
      for (int32_t s = 0; s < g.num_steps; ++s) {
        v0 = Step(g.steps[s], v0, g.add == nullptr ? nullptr : g.add + at0);
        v1 = Step(g.steps[s], v1, g.add == nullptr ? nullptr : g.add + at1);
      }
      _mm256_storeu_ps(g.dst + at0, v0);
      _mm256_storeu_ps(g.dst + at1, v1);
    }
  }
}

// Pixels [pix0, pix0 + rows) of one panel.
void RowTile(const SmallConvArgs& g, const Pass& pass, int64_t image, int64_t pix0, int64_t rows, int64_t panel,
             const char* prefetch, int64_t prefetch_step) {
  switch (rows) {
    case 6: return Tile<6, 1>(g, pass, image, pix0, panel, prefetch, prefetch_step);
    case 5: return Tile<5, 1>(g, pass, image, pix0, panel, prefetch, prefetch_step);
    case 4: return Tile<4, 1>(g, pass, image, pix0, panel, prefetch, prefetch_step);
    case 3: return Tile<3, 1>(g, pass, image, pix0, panel, prefetch, prefetch_step);
    case 2: return Tile<2, 1>(g, pass, image, pix0, panel, prefetch, prefetch_step);
    default: return Tile<1, 1>(g, pass, image, pix0, panel, prefetch, prefetch_step);
  }
}

// Rows of the next tile when `left` pixels remain: 6, but a remainder of
// 7 to 11 in two near halves (49 = 7 x 6 + 4 + 3, not 8 x 6 + 1).
int64_t TileRows(int64_t left) { return left <= kMaxRows ? left : left < 2 * kMaxRows ? (left + 1) / 2 : kMaxRows; }

}  // namespace

void SmallConv(const SmallConvArgs& g) {
  const int64_t depth = g.in_blocks * g.num_taps * kConvLanes;
  const int64_t passes = std::max<int64_t>(1, (depth + kConvDepth - 1) / kConvDepth);
  const int64_t blocks_per_pass = (g.in_blocks + passes - 1) / passes;
  int64_t tiles_per_image = 0;
  for (int64_t pix = 0; pix < g.num_pixels; pix += TileRows(g.num_pixels - pix)) ++tiles_per_image;
  const int64_t tiles = tiles_per_image * (g.image_end - g.image_begin);
  for (int64_t b0 = 0; b0 < g.in_blocks; b0 += blocks_per_pass) {
    const Pass pass{b0, std::min(g.in_blocks, b0 + blocks_per_pass), b0 == 0, b0 + blocks_per_pass >= g.in_blocks};
    const int64_t steps = (pass.block_end - pass.block_begin) * g.num_taps;  // prefetch points per tile
    const int64_t slice_bytes = steps * kConvLanes * kConvPanel * static_cast<int64_t>(sizeof(float));
    const int64_t step_bytes = (slice_bytes / tiles / steps + 63) / 64 * 64;
    for (int64_t panel = g.panel_begin; panel < g.panel_end; ++panel) {
      // The next panel's slice of this pass, a part per tile.
      const char* next = nullptr;
      if (panel + 1 < g.panel_end) {
        next = reinterpret_cast<const char*>(g.packed + (panel + 1) * depth * kConvPanel +
                                             pass.block_begin * g.num_taps * kConvLanes * kConvPanel);
      }
      const char* end = next == nullptr ? nullptr : next + slice_bytes;
      for (int64_t image = g.image_begin; image < g.image_end; ++image) {
        for (int64_t pix = 0; pix < g.num_pixels;) {
          const int64_t rows = TileRows(g.num_pixels - pix);
          RowTile(g, pass, image, pix, rows, panel, next != nullptr && next < end ? next : nullptr, step_bytes);
          if (next != nullptr) next += steps * step_bytes;
          pix += rows;
        }
      }
    }
  }
}

}  // namespace ge::engine::cpu_dense::avx2
