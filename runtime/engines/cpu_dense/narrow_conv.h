// Which convolutions take cpu_dense's own few-output-channel path
// (narrow_conv_loops.h) and everything around its loop: the weights packed
// by input channel block, a plain source converted to blocks, the team split.
//
// ConvKernel (conv_kernel.cc) takes the path for a 2-D f32 convolution
// without groups and with constant weights whose output channels do not
// fill blocks of 8 (1 to 7, or 9 to kNarrowConvMaxOut = 11:
// oneDNN 2.6 computes them padded to 8 or 16, its output then is plain in
// ged anyway) over at least kNarrowConvMinPixels output pixels per image,
// whose source arrives channel-blocked by 8, channels-last or plain, whose
// destination is plain, and whose post-op steps are of the kinds the loop applies (add of
// the output's shape in its layout, relu, clip, sigmoid, tanh, linear):
// the last convolution of a super-resolution, segmentation, style-transfer
// or depth head. Everything else stays on oneDNN.
//
// GED_CPU_DENSE_CONV=onednn (small_conv.h's switch) turns this path off as
// well; SetNarrowConvEnabled does it for tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/tensor.h"
#include "runtime/engines/cpu_dense/narrow_conv_loops.h"
#include "runtime/engines/cpu_dense/packed_weights.h"
#include "runtime/engines/cpu_dense/small_conv.h"
#include "runtime/engines/cpu_dense/window2d.h"

namespace ge::engine::cpu_dense {

inline constexpr int64_t kNarrowConvMaxOut = 11;
inline constexpr int64_t kNarrowConvMinPixels = 256;

// Whether the path is on: AVX2 and FMA, and not turned off.
bool NarrowConvEnabled();
// Turns the path on or off (on only with AVX2 and FMA). Not for kernels
// running at the same time.
void SetNarrowConvEnabled(bool on);
// Convolutions run on the path in this process (tests).
std::atomic<int64_t>& NarrowConvRuns();
// Whether the path runs this geometry (the switch included; layouts, dtype,
// groups and post-ops are the caller's to check).
bool NarrowConvFits(const Window2d& g);
// Whether the loop applies this post-op step kind (GemmStep codes).
bool NarrowConvStep(int32_t kind);

// W ([oc, ic, kh, kw], plain) packed as [oc][ic / 8][kh][kw][8], input
// channels past ic zero.
class NarrowConvWeights {
 public:
  using Packed = StoragePackedWeights::Data;
  // `w` packed (output channel, 8-channel block, tap, lane): the last
  // packing when it was of the same storage, else packed now (`*packed` set
  // to whether it was); thread-safe as StoragePackedWeights::Get.
  Packed Get(const Tensor& w, bool* packed = nullptr);
  bool PackedFrom(const Tensor& w) const { return packing_.PackedFrom(w, {}); }

 private:
  StoragePackedWeights packing_{"narrow_conv"};
};

// The layouts the path reads its source in.
enum class NarrowSource {
  kPlain,         // NCHW: Run converts it into channel blocks in scratch first
  kBlocked,       // nChw8c, read in place
  kChannelsLast,  // NHWC: read in place when the channels fill blocks of 8, else converted
};

class NarrowConvPlan {
 public:
  NarrowConvPlan(const Window2d& g, NarrowSource source);
  // Scratch bytes Run needs (the blocked copy of a source not read in place).
  size_t scratch_bytes() const { return scratch_floats_ * sizeof(float); }
  // dst (plain) = steps(bias + conv(src)); `add` plain like dst (may be
  // dst) or null. Splits output rows over up to `threads` threads.
  void Run(const float* src, const float* packed, const float* bias, const float* add, float* dst,
           const std::vector<GemmStep>& steps, float* scratch, int threads) const;

 private:
  Window2d g_;
  NarrowSource source_;
  bool in_place_;  // the source read where it is (else its blocked copy in scratch)
  size_t scratch_floats_ = 0;
};

}  // namespace ge::engine::cpu_dense
