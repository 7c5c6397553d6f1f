// cpu_dense's own blocked 2-D pooling loop (pool_loops.h) against a direct
// reference (every window tap, clipped to the input): max, exclude-pad and
// include-pad averages, blocks of 8 and 16, strides, dilations, begin pads
// and ceil_mode's extra end window, rows wider than the loop's row buffer
// (several column chunks), windows taller than one column pass, 1x1 inputs,
// and one thread against a team. Skipped on CPUs without AVX2 (the loop is
// AVX2 code; BlockedPoolSupported says no there).
#include "runtime/engines/cpu_dense/pool_loops.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace ge::engine::cpu_dense {
namespace {

std::vector<float> Reference(const Window2d& g, int64_t b, BlockedPoolKind kind, const std::vector<float>& x) {
  std::vector<float> y(static_cast<size_t>(g.batch * g.in_channels * g.out_h * g.out_w));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t c = 0; c < g.in_channels; ++c) {
      const int64_t plane = n * (g.in_channels / b) + c / b;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          double acc = kind == BlockedPoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
          int64_t count = 0;
          for (int64_t i = 0; i < g.kernel_h; ++i) {
            for (int64_t j = 0; j < g.kernel_w; ++j) {
              const int64_t h = oh * g.stride_h - g.pad_top + i * g.dilation_h;
              const int64_t w = ow * g.stride_w - g.pad_left + j * g.dilation_w;
              if (h < 0 || h >= g.in_h || w < 0 || w >= g.in_w) continue;
              const double v = x[static_cast<size_t>(((plane * g.in_h + h) * g.in_w + w) * b + c % b)];
              acc = kind == BlockedPoolKind::kMax ? std::max(acc, v) : acc + v;
              ++count;
            }
          }
          if (kind == BlockedPoolKind::kAverageExcludePad) acc /= static_cast<double>(count);
          if (kind == BlockedPoolKind::kAverageIncludePad) acc /= static_cast<double>(g.kernel_h * g.kernel_w);
          y[static_cast<size_t>(((plane * g.out_h + oh) * g.out_w + ow) * b + c % b)] = static_cast<float>(acc);
        }
      }
    }
  }
  return y;
}

struct Spec {
  int64_t n, c, block, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pe_h, pe_w;
  bool ceil;
};

void Check(const Spec& s, std::mt19937& gen) {
  const Window2d g = WithOutputSize(Window2d{.batch = s.n,
                                             .in_channels = s.c,
                                             .in_h = s.h,
                                             .in_w = s.w,
                                             .out_channels = s.c,
                                             .kernel_h = s.kh,
                                             .kernel_w = s.kw,
                                             .stride_h = s.sh,
                                             .stride_w = s.sw,
                                             .dilation_h = s.dh,
                                             .dilation_w = s.dw,
                                             .pad_top = s.pt,
                                             .pad_left = s.pl,
                                             .pad_bottom = s.pe_h,
                                             .pad_right = s.pe_w},
                                    s.ceil);
  ASSERT_TRUE(BlockedPoolSupported(g, s.block));
  std::uniform_real_distribution<float> dist(-50.0f, 50.0f);
  std::vector<float> x(static_cast<size_t>(s.n * s.c * s.h * s.w));
  for (float& v : x) v = dist(gen);
  for (BlockedPoolKind kind :
       {BlockedPoolKind::kMax, BlockedPoolKind::kAverageExcludePad, BlockedPoolKind::kAverageIncludePad}) {
    const std::vector<float> want = Reference(g, s.block, kind, x);
    for (int threads : {1, 2}) {
      std::vector<float> got(want.size(), std::numeric_limits<float>::quiet_NaN());
      const int saved = omp_get_max_threads();
      omp_set_num_threads(threads);
      avx2::BlockedPool(g, s.block, kind, x.data(), got.data());
      omp_set_num_threads(saved);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i])))
            << "element " << i << " kind " << static_cast<int>(kind) << " threads " << threads << " input " << s.h
            << "x" << s.w << " kernel " << s.kh << "x" << s.kw << " block " << s.block;
      }
    }
  }
}

bool Avx2() {
  return BlockedPoolSupported(
      Window2d{.batch = 1, .in_channels = 8, .in_h = 1, .in_w = 1, .out_channels = 8, .out_h = 1, .out_w = 1}, 8);
}

TEST(BlockedPool, FixedShapesOfTheZooAndTheEdges) {
  if (!Avx2()) GTEST_SKIP() << "no AVX2";
  std::mt19937 gen(5);
  const std::vector<Spec> specs = {
      {1, 64, 8, 111, 111, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},    // SqueezeNet's first MaxPool
      {2, 32, 16, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false},  // ResNet's stem, batch 2
      {1, 16, 8, 54, 54, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},      // ceil_mode's extra end window
      {3, 24, 8, 35, 35, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false},     // Inception's 3x3 average
      {1, 16, 16, 56, 56, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false},    // DenseNet's transition
      {1, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false},        // 1x1
      {1, 8, 8, 3, 5, 3, 5, 1, 1, 1, 1, 1, 2, 1, 2, false},        // every window clipped
      {1, 8, 8, 7, 500, 3, 7, 1, 1, 1, 3, 1, 9, 1, 9, true},       // many column chunks, dilated
      {1, 16, 16, 40, 9, 20, 2, 3, 1, 2, 1, 5, 0, 5, 1, true},     // 20 rows: two column passes
      {2, 8, 8, 9, 200, 4, 192, 1, 1, 1, 1, 0, 0, 0, 0, false},    // the widest row the loop takes
  };
  for (const Spec& s : specs) Check(s, gen);
}

TEST(BlockedPool, RandomGeometries) {
  if (!Avx2()) GTEST_SKIP() << "no AVX2";
  std::mt19937 gen(17);
  auto pick = [&gen](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen); };
  for (int trial = 0; trial < 60; ++trial) {
    Spec s{};
    s.n = pick(1, 3);
    s.block = pick(0, 1) == 0 ? 8 : 16;
    s.c = s.block * pick(1, 3);
    s.h = pick(1, 30);
    s.w = pick(1, 30);
    s.kh = pick(1, std::min<int64_t>(s.h, 5));
    s.kw = pick(1, std::min<int64_t>(s.w, 5));
    s.dh = s.kh > 1 && s.h >= 2 * s.kh ? pick(1, 2) : 1;
    s.dw = s.kw > 1 && s.w >= 2 * s.kw ? pick(1, 2) : 1;
    s.sh = pick(1, 3);
    s.sw = pick(1, 3);
    // Pads below the window keep every window on at least one input element.
    s.pt = pick(0, s.kh - 1);
    s.pl = pick(0, s.kw - 1);
    s.pe_h = pick(0, s.kh - 1);
    s.pe_w = pick(0, s.kw - 1);
    s.ceil = pick(0, 1) == 1;
    Check(s, gen);
  }
}

TEST(BlockedPool, RefusesWhatItDoesNotRun) {
  Window2d g{.batch = 1, .in_channels = 12, .in_h = 1, .in_w = 1, .out_channels = 12, .out_h = 1, .out_w = 1};
  EXPECT_FALSE(BlockedPoolSupported(g, 4));  // block 4
  EXPECT_FALSE(BlockedPoolSupported(g, 8));  // 12 channels in blocks of 8
  g.in_channels = g.out_channels = 16;
  g.in_w = 400;
  g.kernel_w = 100;
  g.dilation_w = 2;
  EXPECT_FALSE(BlockedPoolSupported(g, 8));  // a window row of 199 columns
  g.dilation_w = 1;
  EXPECT_EQ(BlockedPoolSupported(g, 8), Avx2());
}

}  // namespace
}  // namespace ge::engine::cpu_dense
