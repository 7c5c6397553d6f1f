// cpu_dense's own f32 convolution for small outputs with wide channels
// (small_conv.h says which ones), AVX2 + FMA: the inner loops.
//
// oneDNN 2.6's `jit:avx2` convolution blocks its registers over the output
// width, which a 7x7 output fills poorly, and at 2 threads it
// splits a stride-2 14x14 -> 7x7 layer unevenly (ResNet's 256 -> 512 ran
// at one thread's speed). Here the convolution is a GEMM whose rows are
// output pixels, whose columns are output channels in 16-wide panels of
// packed weights (as in gemm_loops.h), and whose depth is (input channel
// block, tap, lane): no im2col buffer is built, a tile of up to 6 pixels
// reads its A values straight from the zero-padded source through one
// offset per pixel and one per tap. Source and destination are
// channel-blocked by 8 (nChw8c, what oneDNN hands between AVX2
// convolutions), so a tap's 8 input channels are one 32-byte run and a
// panel's 16 outputs of a pixel are two 8-lane stores into two channel
// blocks.
//
// conv_loops.cc is compiled with AVX2+FMA only; this header (PODs and one
// function) is the whole interface.
#pragma once

#include <cstdint>

#include "runtime/engines/cpu_dense/gemm_loops.h"

namespace ge::engine::cpu_dense {

inline constexpr int64_t kConvLanes = 8;     // the channel block of source and destination
inline constexpr int64_t kConvPanel = 16;    // output channels per packed panel
inline constexpr int64_t kConvDepth = 1024;  // depth (input channels x taps) summed per pass

// One convolution of `batch` images. The packed weights hold
// oc / kConvPanel panels, each [in_blocks * num_taps * kConvLanes][kConvPanel]
// with depth index (block * num_taps + tap) * kConvLanes + lane.
struct SmallConvArgs {
  const float* src;     // padded source: [batch][in_blocks][padded h][padded w][8]
  int64_t src_image;    // floats per padded image
  int64_t src_block;    // floats per padded channel block
  int64_t in_blocks;    // input channels / 8
  const int32_t* taps;  // per tap: its offset (floats) inside a padded channel block
  int32_t num_taps;
  const int32_t* pixels;  // per output pixel: its window's origin (floats) inside a padded block
  int64_t num_pixels;     // output pixels per image
  const float* packed;
  int64_t oc;             // a multiple of kConvPanel
  float* dst;             // [batch][oc / 8][num_pixels][8]
  const float* bias;      // oc floats, or null
  const float* add;       // dst's layout, read by an add step (may be dst itself)
  float* partial;         // dst's layout: running sums between depth passes (needed when the
                          // depth, in_blocks * num_taps * 8, exceeds kConvDepth)
  const GemmStep* steps;  // kinds 0 (add), 1 (relu), 2 (clip) and 9 (linear) only
  int32_t num_steps;
  int64_t panel_begin, panel_end;  // the panels this call computes
  int64_t image_begin, image_end;  // the images this call computes
};

namespace avx2 {
// dst = steps(bias + conv(src)) for the call's panels and images.
void SmallConv(const SmallConvArgs& args);
}  // namespace avx2

}  // namespace ge::engine::cpu_dense
