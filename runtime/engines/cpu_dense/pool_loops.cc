// The separable 2-D pooling loop of pool_loops.h, compiled with AVX2: per
// output row a column pass reduces the window's valid input rows into a
// stack buffer (each column loaded once per row, accumulated in a
// register), then a row pass reduces the window's columns of that buffer
// per output (no bounds checks for windows inside the input). The lanes of
// a channel block are one GCC vector: one AVX register for 8, two for 16.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "runtime/engines/cpu_dense/pool_loops.h"

namespace ge::engine::cpu_dense::avx2 {
namespace {

// Input rows combined in one column pass (taller windows take more passes).
constexpr int kRowsPerPass = 16;
// Below this many output floats the pool stays on the calling thread.
constexpr int64_t kParallelFloats = int64_t{16} << 10;

template <int B>
struct Lanes {
  typedef float Vec __attribute__((vector_size(B * sizeof(float))));
  static Vec Load(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  static void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof(v)); }
};

template <int B, BlockedPoolKind K>
inline typename Lanes<B>::Vec Combine(typename Lanes<B>::Vec a, typename Lanes<B>::Vec b) {
  if constexpr (K == BlockedPoolKind::kMax) {
    return a > b ? a : b;
  } else {
    return a + b;
  }
}

// buf[c] (= or op=) the reduction of rows[0..n) at column c, c < width.
template <int B, BlockedPoolKind K>
void ColumnPass(const float* const* rows, int n, int64_t width, bool accumulate, float* buf) {
  using L = Lanes<B>;
  for (int64_t c = 0; c < width; ++c) {
    const int64_t at = c * B;
    typename L::Vec acc = accumulate ? L::Load(buf + at) : L::Load(rows[0] + at);
    for (int i = accumulate ? 0 : 1; i < n; ++i) acc = Combine<B, K>(acc, L::Load(rows[i] + at));
    L::Store(buf + at, acc);
  }
}

// One output row `oh` of one (batch, channel block) plane: `x` is the
// plane's first input element, `y` the row's first output element.
template <int B, BlockedPoolKind K>
void PoolRow(const Window2d& g, const float* x, float* y, int64_t oh) {
  using L = Lanes<B>;
  using Vec = typename L::Vec;
  alignas(64) float buf[kBlockedPoolMaxSpan * B];
  const int64_t h0 = oh * g.stride_h - g.pad_top;
  const int64_t span = (g.kernel_w - 1) * g.dilation_w + 1;
  const int64_t per_chunk = (kBlockedPoolMaxSpan - span) / g.stride_w + 1;
  int64_t valid_rows = 0;
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    const int64_t h = h0 + i * g.dilation_h;
    valid_rows += (h >= 0 && h < g.in_h) ? 1 : 0;
  }
  const float include_scale = 1.0f / static_cast<float>(g.kernel_h * g.kernel_w);
  for (int64_t ow0 = 0; ow0 < g.out_w; ow0 += per_chunk) {
    const int64_t ow1 = std::min(g.out_w, ow0 + per_chunk);
    const int64_t c0 = std::max<int64_t>(0, ow0 * g.stride_w - g.pad_left);
    const int64_t c1 = std::min(g.in_w, (ow1 - 1) * g.stride_w - g.pad_left + span);
    const float* rows[kRowsPerPass];
    int n = 0;
    bool accumulate = false;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const int64_t h = h0 + i * g.dilation_h;
      if (h < 0 || h >= g.in_h) continue;
      rows[n++] = x + (h * g.in_w + c0) * B;
      if (n == kRowsPerPass) {
        ColumnPass<B, K>(rows, n, c1 - c0, accumulate, buf);
        accumulate = true;
        n = 0;
      }
    }
    if (n > 0) ColumnPass<B, K>(rows, n, c1 - c0, accumulate, buf);
    for (int64_t o = ow0; o < ow1; ++o) {
      const int64_t start = o * g.stride_w - g.pad_left;
      Vec acc;
      int64_t cols;
      if (start >= 0 && start + span <= g.in_w) {
        const float* b = buf + (start - c0) * B;
        acc = L::Load(b);
        for (int64_t j = 1; j < g.kernel_w; ++j) acc = Combine<B, K>(acc, L::Load(b + j * g.dilation_w * B));
        cols = g.kernel_w;
      } else {
        cols = 0;
        for (int64_t j = 0; j < g.kernel_w; ++j) {
          const int64_t c = start + j * g.dilation_w;
          if (c < 0 || c >= g.in_w) continue;
          const Vec v = L::Load(buf + (c - c0) * B);
          acc = cols == 0 ? v : Combine<B, K>(acc, v);
          ++cols;
        }
      }
      if constexpr (K == BlockedPoolKind::kAverageExcludePad) {
        acc *= 1.0f / static_cast<float>(cols * valid_rows);
      } else if constexpr (K == BlockedPoolKind::kAverageIncludePad) {
        acc *= include_scale;
      }
      L::Store(y + o * B, acc);
    }
  }
}

template <int B, BlockedPoolKind K>
void Pool(const Window2d& g, const float* x, float* y) {
  const int64_t planes = g.batch * (g.in_channels / B);
  const int64_t rows = planes * g.out_h;
  const int64_t in_plane = g.in_h * g.in_w * B;
  const int64_t out_plane = g.out_h * g.out_w * B;
  auto row = [&](int64_t r) {
    const int64_t p = r / g.out_h, oh = r % g.out_h;
    PoolRow<B, K>(g, x + p * in_plane, y + p * out_plane + oh * g.out_w * B, oh);
  };
  const int team = omp_in_parallel() != 0 ? 1 : omp_get_max_threads();
  if (team <= 1 || rows < 2 || planes * out_plane < kParallelFloats) {
    for (int64_t r = 0; r < rows; ++r) row(r);
    return;
  }
#pragma omp parallel for num_threads(static_cast <int>(std::min <int64_t>(team, rows))) schedule(static)
  for (int64_t r = 0; r < rows; ++r) row(r);
}

template <int B>
void PoolOf(const Window2d& g, BlockedPoolKind kind, const float* x, float* y) {
  switch (kind) {
    case BlockedPoolKind::kMax: return Pool<B, BlockedPoolKind::kMax>(g, x, y);
    case BlockedPoolKind::kAverageExcludePad: return Pool<B, BlockedPoolKind::kAverageExcludePad>(g, x, y);
    case BlockedPoolKind::kAverageIncludePad: return Pool<B, BlockedPoolKind::kAverageIncludePad>(g, x, y);
  }
}

}  // namespace

void BlockedPool(const Window2d& g, int64_t block, BlockedPoolKind kind, const float* x, float* y) {
  if (block == 16) {
    PoolOf<16>(g, kind, x, y);
  } else {
    PoolOf<8>(g, kind, x, y);
  }
}

}  // namespace ge::engine::cpu_dense::avx2
