// cpu_dense's small-output convolution loops, AVX2 + FMA (conv_loops.h).
//
// A register tile is R output pixels (1..6) x C panels of 16 output
// channels: 2 R C accumulators, at least 8 of them in flight (up to 3
// pixels take 2 or 4 panels at once). Each depth step loads the panels'
// 16 weights (two vectors each) and broadcasts one source value per pixel;
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
void Tile(const SmallConvArgs& g, const Pass& pass, int64_t image, int64_t pix0, int64_t panel, const char* prefetch,
          int64_t prefetch_step) {
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
      if (prefetch != nullptr) {
        for (int64_t q = 0; q < prefetch_step; q += 64) _mm_prefetch(prefetch + q, _MM_HINT_T1);
        prefetch += prefetch_step;
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j) {
    const int64_t offset = out + (panel + j) * 2 * plane;
    if (!pass.last) {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(g.partial + offset + r * kConvLanes, acc[r][j][0]);
        _mm256_storeu_ps(g.partial + offset + plane + r * kConvLanes, acc[r][j][1]);
      }
      continue;
    }
    const int64_t oc0 = (panel + j) * kConvPanel;
    const __m256 bias0 = g.bias != nullptr ? _mm256_loadu_ps(g.bias + oc0) : _mm256_setzero_ps();
    const __m256 bias1 = g.bias != nullptr ? _mm256_loadu_ps(g.bias + oc0 + 8) : _mm256_setzero_ps();
    for (int r = 0; r < R; ++r) {
      const int64_t at0 = offset + r * kConvLanes, at1 = at0 + plane;
      __m256 v0 = _mm256_add_ps(acc[r][j][0], bias0);
      __m256 v1 = _mm256_add_ps(acc[r][j][1], bias1);
      for (int32_t s = 0; s < g.num_steps; ++s) {
        v0 = Step(g.steps[s], v0, g.add == nullptr ? nullptr : g.add + at0);
        v1 = Step(g.steps[s], v1, g.add == nullptr ? nullptr : g.add + at1);
      }
      _mm256_storeu_ps(g.dst + at0, v0);
      _mm256_storeu_ps(g.dst + at1, v1);
    }
  }
}

// Pixels [pix0, pix0 + rows) over panels [begin, end).
template <int R, int C>
void Panels(const SmallConvArgs& g, const Pass& pass, int64_t image, int64_t pix0, int64_t begin, int64_t end,
            const char* prefetch, int64_t prefetch_step) {
  int64_t panel = begin;
  for (; panel + C <= end; panel += C) Tile<R, C>(g, pass, image, pix0, panel, prefetch, prefetch_step);
  for (; panel < end; ++panel) Tile<R, 1>(g, pass, image, pix0, panel, prefetch, prefetch_step);
}

void RowTile(const SmallConvArgs& g, const Pass& pass, int64_t image, int64_t pix0, int64_t rows, int64_t panel,
             const char* prefetch, int64_t prefetch_step) {
  const int64_t end = panel + 1;
  switch (rows) {
    case 6: return Panels<6, 1>(g, pass, image, pix0, panel, end, prefetch, prefetch_step);
    case 5: return Panels<5, 1>(g, pass, image, pix0, panel, end, prefetch, prefetch_step);
    case 4: return Panels<4, 1>(g, pass, image, pix0, panel, end, prefetch, prefetch_step);
    case 3: return Panels<3, 1>(g, pass, image, pix0, panel, end, prefetch, prefetch_step);
    case 2: return Panels<2, 1>(g, pass, image, pix0, panel, end, prefetch, prefetch_step);
    default: return Panels<1, 1>(g, pass, image, pix0, panel, end, prefetch, prefetch_step);
  }
}

// A tail of up to 3 pixels over several panels at once (enough
// accumulators in flight).
void TailTile(const SmallConvArgs& g, const Pass& pass, int64_t image, int64_t pix0, int64_t rows, int64_t begin,
              int64_t end) {
  switch (rows) {
    case 3: return Panels<3, 2>(g, pass, image, pix0, begin, end, nullptr, 0);
    case 2: return Panels<2, 2>(g, pass, image, pix0, begin, end, nullptr, 0);
    default: return Panels<1, 4>(g, pass, image, pix0, begin, end, nullptr, 0);
  }
}

}  // namespace

void SmallConv(const SmallConvArgs& g) {
  const int64_t depth = g.in_blocks * g.num_taps * kConvLanes;
  const int64_t passes = std::max<int64_t>(1, (depth + kConvDepth - 1) / kConvDepth);
  const int64_t blocks_per_pass = (g.in_blocks + passes - 1) / passes;
  // Pixel tiles of 6; a remainder of 4 or 5 is one tile, of up to 3 it is
  // run over all the call's panels at once after them (TailTile).
  const int64_t tail = g.num_pixels % kMaxRows <= 3 ? g.num_pixels % kMaxRows : 0;
  const int64_t tiled = g.num_pixels - tail;
  const int64_t tiles_per_image = (tiled + kMaxRows - 1) / kMaxRows;
  const int64_t images = g.image_end - g.image_begin;
  for (int64_t b0 = 0; b0 < g.in_blocks; b0 += blocks_per_pass) {
    Pass pass{b0, std::min(g.in_blocks, b0 + blocks_per_pass), b0 == 0, b0 + blocks_per_pass >= g.in_blocks};
    const int64_t steps = (pass.block_end - pass.block_begin) * g.num_taps;  // prefetch points per tile
    const int64_t slice_bytes = steps * kConvLanes * kConvPanel * static_cast<int64_t>(sizeof(float));
    const int64_t tiles = tiles_per_image * images;
    const int64_t step_bytes = tiles > 0 ? (slice_bytes / tiles / steps + 63) / 64 * 64 : 0;
    for (int64_t panel = g.panel_begin; panel < g.panel_end; ++panel) {
      const char* next = nullptr;
      if (panel + 1 < g.panel_end && step_bytes > 0) {
        next = reinterpret_cast<const char*>(g.packed + (panel + 1) * depth * kConvPanel +
                                             pass.block_begin * g.num_taps * kConvLanes * kConvPanel);
      }
      const char* end = next == nullptr ? nullptr : next + slice_bytes;
      for (int64_t image = g.image_begin; image < g.image_end; ++image) {
        for (int64_t pix = 0; pix < tiled; pix += kMaxRows) {
          const int64_t rows = std::min<int64_t>(kMaxRows, tiled - pix);
          const char* prefetch = next != nullptr && next < end ? next : nullptr;
          RowTile(g, pass, image, pix, rows, panel, prefetch, step_bytes);
          if (next != nullptr) next += steps * step_bytes;
        }
      }
    }
    if (tail > 0) {
      for (int64_t image = g.image_begin; image < g.image_end; ++image) {
        TailTile(g, pass, image, tiled, tail, g.panel_begin, g.panel_end);
      }
    }
  }
}

}  // namespace ge::engine::cpu_dense::avx2
