// Which convolutions take cpu_dense's own small-output path (conv_loops.h)
// and everything around its loops: the weights packed into panels, the
// zero-padded source, the offsets of taps and pixels, the team split.
//
// ConvKernel (conv_kernel.cc) takes the path for a 2-D f32 convolution
// without groups whose source and destination are channel-blocked by 8 (as
// the layout pass hands them between AVX2 convolutions), whose output has
// at most kSmallConvMaxPixels pixels per image and whose depth (input
// channels x taps) is at least kSmallConvMinDepth, with input channels a
// multiple of 8, output channels a multiple of 16, and post-op steps of the
// kinds the loop applies (add of the output's shape, relu, clip, linear):
// ResNet's and VGG's 7x7 stages and their stride-2 entries. oneDNN 2.6
// keeps 1x1 convolutions (its 1x1 kernel is as fast), larger outputs (its
// width blocking fills), groups and every other case.
//
// GED_CPU_DENSE_CONV=onednn in the environment (read once) turns the path
// off, for comparisons; SetSmallConvEnabled does the same for tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/tensor.h"
#include "runtime/engines/cpu_dense/conv_loops.h"
#include "runtime/engines/cpu_dense/packed_weights.h"
#include "runtime/engines/cpu_dense/window2d.h"

namespace ge::engine::cpu_dense {

// 8x8: at 14x14 oneDNN's width blocking fills and the path only tied it at
// 1 thread and lost 15-25 % at 2 (docs/perf.md, "Small outputs with wide
// channels").
inline constexpr int64_t kSmallConvMaxPixels = 64;
inline constexpr int64_t kSmallConvMinDepth = 512;

// Whether the path is on: AVX2 and FMA, and not turned off.
bool SmallConvEnabled();
// Turns the path on or off (on only with AVX2 and FMA). Not for kernels
// running at the same time.
void SetSmallConvEnabled(bool on);
// Convolutions run on the path in this process (for tests: that a case
// really took it).
std::atomic<int64_t>& SmallConvRuns();
// Whether the path runs this geometry (the enable switch included; layouts,
// groups, dtype and post-ops are the caller's to check).
bool SmallConvFits(const Window2d& g);

// W ([oc, ic, kh, kw], plain) packed into conv_loops.h's panels, shared by
// the plans of one kernel.
class SmallConvWeights {
 public:
  using Panels = StoragePackedWeights::Data;
  // The panels of `w` (its dims from `w`'s shape): the last packing when it
  // was of the same storage, else packed now (`*packed` set to whether it
  // was); thread-safe as StoragePackedWeights::Get.
  Panels Get(const Tensor& w, bool* packed = nullptr);
  // Whether the last packing was of `w`'s storage.
  bool PackedFrom(const Tensor& w) const { return packing_.PackedFrom(w, {}); }

 private:
  StoragePackedWeights packing_{"small_conv"};
};

// One geometry's offsets and buffers; Run computes the convolution.
class SmallConvPlan {
 public:
  explicit SmallConvPlan(const Window2d& g);
  // Scratch bytes Run needs: the padded source and, for deep convolutions,
  // the running sums.
  size_t padded_bytes() const { return padded_floats_ * sizeof(float); }
  size_t partial_bytes() const { return partial_floats_ * sizeof(float); }
  // dst = steps(bias + conv(src)); src and dst channel-blocked by 8, `add`
  // (may be dst) in dst's layout or null, `padded` and `partial` scratch of
  // the sizes above. Splits output channels (or images) over up to
  // `threads` threads of an OpenMP team.
  void Run(const float* src, const float* packed, const float* bias, const float* add, float* dst,
           const std::vector<GemmStep>& steps, float* padded, float* partial, int threads) const;

 private:
  Window2d g_;
  int64_t padded_h_ = 0, padded_w_ = 0;
  size_t padded_floats_ = 0, partial_floats_ = 0;
  std::vector<int32_t> taps_, pixels_;
};

}  // namespace ge::engine::cpu_dense
