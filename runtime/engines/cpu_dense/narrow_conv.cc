// The few-output-channel convolution path: the switch, the fit, packing,
// the blocked copy of a source not read in place and the team split (narrow_conv.h).
#include "runtime/engines/cpu_dense/narrow_conv.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "runtime/engines/cpu_dense/dnnl_util.h"

namespace ge::engine::cpu_dense {
namespace {

std::atomic<bool>& Enabled() {
  static std::atomic<bool> on{OwnPathOnByDefault("GED_CPU_DENSE_CONV")};
  return on;
}

// Below this many multiply-adds a convolution stays on the calling thread.
constexpr int64_t kSingleThreadWork = int64_t{1} << 18;

int64_t Blocks(int64_t channels) { return (channels + kNarrowLanes - 1) / kNarrowLanes; }

}  // namespace

bool NarrowConvEnabled() { return Enabled().load(std::memory_order_relaxed); }

void SetNarrowConvEnabled(bool on) { Enabled().store(on && OwnLoopsSupported(), std::memory_order_relaxed); }

std::atomic<int64_t>& NarrowConvRuns() {
  static std::atomic<int64_t> runs{0};
  return runs;
}

bool NarrowConvStep(int32_t kind) { return kind == 0 || kind == 1 || kind == 2 || kind == 3 || kind == 4 || kind == 9; }

bool NarrowConvFits(const Window2d& g) {
  if (!NarrowConvEnabled()) return false;
  if (g.batch < 1 || g.in_channels < 1 || g.out_channels < 1 || g.out_channels > kNarrowConvMaxOut ||
      g.out_channels % kNarrowLanes == 0) {
    return false;
  }
  if (g.out_h < 1 || g.out_w < 1 || g.out_h * g.out_w < kNarrowConvMinPixels) return false;
  if (g.kernel_h < 1 || g.kernel_w < 1 || g.stride_h < 1 || g.stride_w < 1 || g.dilation_h < 1 || g.dilation_w < 1) {
    return false;
  }
  return g.pad_top >= 0 && g.pad_left >= 0 && g.pad_bottom >= 0 && g.pad_right >= 0;
}

NarrowConvWeights::Packed NarrowConvWeights::Get(const Tensor& w, bool* packed) {
  auto pack = [](const Tensor& t) {
    const Shape& s = t.shape();
    const int64_t oc = s.dim(0), ic = s.dim(1), taps = s.dim(2) * s.dim(3), blocks = Blocks(ic);
    std::vector<float> out(static_cast<size_t>(oc * blocks * taps * kNarrowLanes), 0.0f);
    const float* src = t.data<float>();
    for (int64_t o = 0; o < oc; ++o) {
      for (int64_t c = 0; c < ic; ++c) {
        for (int64_t k = 0; k < taps; ++k) {
          const int64_t at = ((o * blocks + c / kNarrowLanes) * taps + k) * kNarrowLanes + c % kNarrowLanes;
          out[static_cast<size_t>(at)] = src[(o * ic + c) * taps + k];
        }
      }
    }
    return out;
  };
  return packing_.Get(w, {}, pack, packed);
}

NarrowConvPlan::NarrowConvPlan(const Window2d& g, NarrowSource source)
    : g_(g),
      source_(source),
      in_place_(source == NarrowSource::kBlocked ||
                (source == NarrowSource::kChannelsLast && g.in_channels % kNarrowLanes == 0)) {
  if (!in_place_) {
    scratch_floats_ = static_cast<size_t>(g.batch * Blocks(g.in_channels) * g.in_h * g.in_w * kNarrowLanes);
  }
}

void NarrowConvPlan::Run(const float* src, const float* packed, const float* bias, const float* add, float* dst,
                         const std::vector<GemmStep>& steps, float* scratch, int threads) const {
  NarrowConvRuns().fetch_add(1, std::memory_order_relaxed);
  const int64_t blocks = Blocks(g_.in_channels), plane = g_.in_h * g_.in_w;
  const int64_t work = g_.batch * g_.out_h * g_.out_w * g_.out_channels * g_.in_channels * g_.kernel_h * g_.kernel_w;
  const int team = work < kSingleThreadWork || omp_in_parallel() != 0 ? 1 : std::max(1, threads);
  // A source not read in place: into channel blocks of 8 (lanes past the
  // channels zero).
  auto to_blocks = [&](int64_t begin, int64_t end) {
    for (int64_t nb = begin; nb < end; ++nb) {
      const int64_t n = nb / blocks, b = nb % blocks;
      float* to = scratch + nb * plane * kNarrowLanes;
      const int64_t lanes = std::min(kNarrowLanes, g_.in_channels - b * kNarrowLanes);
      if (lanes < kNarrowLanes) std::memset(to, 0, sizeof(float) * static_cast<size_t>(plane * kNarrowLanes));
      if (source_ == NarrowSource::kChannelsLast) {
        const float* from = src + n * plane * g_.in_channels + b * kNarrowLanes;
        for (int64_t p = 0; p < plane; ++p) {
          for (int64_t l = 0; l < lanes; ++l) to[p * kNarrowLanes + l] = from[p * g_.in_channels + l];
        }
        continue;
      }
      for (int64_t l = 0; l < lanes; ++l) {
        const float* from = src + (n * g_.in_channels + b * kNarrowLanes + l) * plane;
        for (int64_t p = 0; p < plane; ++p) to[p * kNarrowLanes + l] = from[p];
      }
    }
  };
  NarrowConvArgs args{};
  args.src = in_place_ ? src : scratch;
  args.in_blocks = blocks;
  args.in_h = g_.in_h;
  args.in_w = g_.in_w;
  const bool channels_last = in_place_ && source_ == NarrowSource::kChannelsLast;
  args.image_stride = blocks * plane * kNarrowLanes;  // the same floats channels-last (whole blocks)
  args.block_stride = channels_last ? kNarrowLanes : plane * kNarrowLanes;
  args.pixel_stride = channels_last ? g_.in_channels : kNarrowLanes;
  args.kernel_h = g_.kernel_h;
  args.kernel_w = g_.kernel_w;
  args.stride_h = g_.stride_h;
  args.stride_w = g_.stride_w;
  args.dilation_h = g_.dilation_h;
  args.dilation_w = g_.dilation_w;
  args.pad_top = g_.pad_top;
  args.pad_left = g_.pad_left;
  args.out_h = g_.out_h;
  args.out_w = g_.out_w;
  args.oc = g_.out_channels;
  args.packed = packed;
  args.bias = bias;
  args.add = add;
  args.dst = dst;
  args.steps = steps.data();
  args.num_steps = static_cast<int32_t>(steps.size());
  const int64_t rows = g_.batch * g_.out_h;
  if (team == 1) {
    if (!in_place_) to_blocks(0, g_.batch * blocks);
    args.row_begin = 0;
    args.row_end = rows;
    avx2::NarrowConv(args);
    return;
  }
#pragma omp parallel num_threads(team)
  {
    const int64_t i = omp_get_thread_num(), nt = omp_get_num_threads();
    if (!in_place_) {
      to_blocks(g_.batch * blocks * i / nt, g_.batch * blocks * (i + 1) / nt);
#pragma omp barrier
    }
    NarrowConvArgs mine = args;
    mine.row_begin = rows * i / nt;
    mine.row_end = rows * (i + 1) / nt;
    if (mine.row_end > mine.row_begin) avx2::NarrowConv(mine);
  }
}

}  // namespace ge::engine::cpu_dense
