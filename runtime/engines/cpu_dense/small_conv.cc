// The small-output convolution path: the switch, the fit, packing, the
// padded source and the team split (small_conv.h).
#include "runtime/engines/cpu_dense/small_conv.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

#include "runtime/engines/cpu_dense/dnnl_util.h"

namespace ge::engine::cpu_dense {
namespace {

std::atomic<bool>& Enabled() {
  static std::atomic<bool> on{OwnPathOnByDefault("GED_CPU_DENSE_CONV")};
  return on;
}

// Below this many multiply-adds a convolution stays on the calling thread.
constexpr int64_t kSingleThreadWork = int64_t{1} << 18;

}  // namespace

bool SmallConvEnabled() { return Enabled().load(std::memory_order_relaxed); }

std::atomic<int64_t>& SmallConvRuns() {
  static std::atomic<int64_t> runs{0};
  return runs;
}

void SetSmallConvEnabled(bool on) { Enabled().store(on && OwnLoopsSupported(), std::memory_order_relaxed); }

bool SmallConvFits(const Window2d& g) {
  if (!SmallConvEnabled()) return false;
  if (g.batch < 1 || g.in_channels < kConvLanes || g.in_channels % kConvLanes != 0) return false;
  if (g.out_channels < kConvPanel || g.out_channels % kConvPanel != 0) return false;
  if (g.out_h < 1 || g.out_w < 1 || g.out_h * g.out_w > kSmallConvMaxPixels) return false;
  const int64_t taps = g.kernel_h * g.kernel_w;
  if (taps < 2 || g.in_channels * taps < kSmallConvMinDepth) return false;
  if (g.stride_h < 1 || g.stride_w < 1 || g.dilation_h < 1 || g.dilation_w < 1) return false;
  if (g.pad_top < 0 || g.pad_left < 0 || g.pad_bottom < 0 || g.pad_right < 0) return false;
  // Offsets inside a padded channel block are 32-bit.
  const int64_t block = (g.in_h + g.pad_top + g.pad_bottom) * (g.in_w + g.pad_left + g.pad_right) * kConvLanes;
  return block < std::numeric_limits<int32_t>::max();
}

SmallConvWeights::Panels SmallConvWeights::Get(const Tensor& w, bool* packed) {
  auto pack = [](const Tensor& t) {
    const Shape& ws = t.shape();
    const int64_t oc = ws.dim(0), ic = ws.dim(1), taps = ws.dim(2) * ws.dim(3);
    const int64_t depth = ic * taps;  // (block, tap, lane) order below
    std::vector<float> out(static_cast<size_t>(oc * depth), 0.0f);
    const float* src = t.data<float>();
    for (int64_t o = 0; o < oc; ++o) {
      float* panel = out.data() + (o / kConvPanel) * depth * kConvPanel + o % kConvPanel;
      for (int64_t c = 0; c < ic; ++c) {
        for (int64_t t2 = 0; t2 < taps; ++t2) {
          const int64_t k = ((c / kConvLanes) * taps + t2) * kConvLanes + c % kConvLanes;
          panel[k * kConvPanel] = src[(o * ic + c) * taps + t2];
        }
      }
    }
    return out;
  };
  return packing_.Get(w, {}, pack, packed);
}

SmallConvPlan::SmallConvPlan(const Window2d& g) : g_(g) {
  padded_h_ = g.in_h + g.pad_top + g.pad_bottom;
  padded_w_ = g.in_w + g.pad_left + g.pad_right;
  padded_floats_ = static_cast<size_t>(g.batch * g.in_channels * padded_h_ * padded_w_);
  const int64_t depth = g.in_channels * g.kernel_h * g.kernel_w;
  partial_floats_ = depth > kConvDepth ? static_cast<size_t>(g.batch * g.out_channels * g.out_h * g.out_w) : 0;
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      taps_.push_back(static_cast<int32_t>((i * g.dilation_h * padded_w_ + j * g.dilation_w) * kConvLanes));
    }
  }
  for (int64_t y = 0; y < g.out_h; ++y) {
    for (int64_t x = 0; x < g.out_w; ++x) {
      pixels_.push_back(static_cast<int32_t>((y * g.stride_h * padded_w_ + x * g.stride_w) * kConvLanes));
    }
  }
}

void SmallConvPlan::Run(const float* src, const float* packed, const float* bias, const float* add, float* dst,
                        const std::vector<GemmStep>& steps, float* padded, float* partial, int threads) const {
  SmallConvRuns().fetch_add(1, std::memory_order_relaxed);
  const int64_t blocks = g_.batch * (g_.in_channels / kConvLanes);
  const int64_t plane = padded_h_ * padded_w_ * kConvLanes;
  const int64_t row = padded_w_ * kConvLanes, in_row = g_.in_w * kConvLanes;
  // One channel block of one image into the interior of its zeroed plane.
  auto pad_block = [&](int64_t b) {
    float* to = padded + b * plane;
    const float* from = src + b * g_.in_h * in_row;
    std::memset(to, 0, sizeof(float) * static_cast<size_t>(g_.pad_top * row));
    for (int64_t y = 0; y < g_.in_h; ++y) {
      float* line = to + (g_.pad_top + y) * row;
      std::memset(line, 0, sizeof(float) * static_cast<size_t>(g_.pad_left * kConvLanes));
      std::memcpy(line + g_.pad_left * kConvLanes, from + y * in_row, sizeof(float) * static_cast<size_t>(in_row));
      std::memset(line + g_.pad_left * kConvLanes + in_row, 0,
                  sizeof(float) * static_cast<size_t>(g_.pad_right * kConvLanes));
    }
    std::memset(to + (g_.pad_top + g_.in_h) * row, 0, sizeof(float) * static_cast<size_t>(g_.pad_bottom * row));
  };
  SmallConvArgs args{};
  args.src = padded;
  args.src_image = (g_.in_channels / kConvLanes) * plane;
  args.src_block = plane;
  args.in_blocks = g_.in_channels / kConvLanes;
  args.taps = taps_.data();
  args.num_taps = static_cast<int32_t>(taps_.size());
  args.pixels = pixels_.data();
  args.num_pixels = static_cast<int64_t>(pixels_.size());
  args.packed = packed;
  args.oc = g_.out_channels;
  args.dst = dst;
  args.bias = bias;
  args.add = add;
  args.partial = partial;
  args.steps = steps.data();
  args.num_steps = static_cast<int32_t>(steps.size());
  const int64_t panels = g_.out_channels / kConvPanel;
  const int64_t work = g_.batch * args.num_pixels * g_.out_channels * g_.in_channels * args.num_taps;
  const int team = work < kSingleThreadWork || omp_in_parallel() != 0 ? 1 : std::max(1, threads);
  // The padded copy is a small part of the work (one pass over the
  // source): on the calling thread, so that the team meets no barrier
  // before its convolution (a descheduled thread at a barrier costs a time
  // slice on a busy host).
  for (int64_t b = 0; b < blocks; ++b) pad_block(b);
  if (team == 1) {
    args.panel_begin = 0;
    args.panel_end = panels;
    args.image_begin = 0;
    args.image_end = g_.batch;
    avx2::SmallConv(args);
    return;
  }
  // Output channels when there are enough panels for everyone (each thread
  // reads only its panels' weights), else images.
  const bool by_panels = panels >= 2 * team || g_.batch < team;
#pragma omp parallel num_threads(team)
  {
    const int64_t i = omp_get_thread_num(), nt = omp_get_num_threads();
    SmallConvArgs mine = args;
    if (by_panels) {
      mine.panel_begin = panels * i / nt;
      mine.panel_end = panels * (i + 1) / nt;
      mine.image_begin = 0;
      mine.image_end = g_.batch;
    } else {
      mine.panel_begin = 0;
      mine.panel_end = panels;
      mine.image_begin = g_.batch * i / nt;
      mine.image_end = g_.batch * (i + 1) / nt;
    }
    if (mine.panel_end > mine.panel_begin && mine.image_end > mine.image_begin) avx2::SmallConv(mine);
  }
}

}  // namespace ge::engine::cpu_dense
