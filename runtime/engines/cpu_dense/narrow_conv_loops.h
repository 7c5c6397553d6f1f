// cpu_dense's own f32 convolution for few output channels at high
// resolution (narrow_conv.h says which ones), AVX2 + FMA: the inner loops.
//
// oneDNN 2.6's `jit:avx2` convolution vectorizes over output channels in
// blocks of 8: an image head with 1 or 3 output channels (a segmentation
// mask, an RGB image, a depth map) computes 8 lanes for every 1 or 3 it
// keeps, and a 9-channel one (ESPCN's PixelShuffle input) 16 for 9. Here
// the 8 lanes are 8 input channels instead: the source is channel-blocked
// by 8 (nChw8c, what the convolution before hands over on AVX2) or
// channels-last with whole blocks of 8 (NHWC, what AVX-512 convolutions
// hand over), so a tap of a pixel is one 32-byte load, and each output (pixel, channel) is a dot
// product over (input channel block, tap) summed in one vector and reduced
// at the end. A register tile is P pixels of one output row times O output
// channels (8x1, 6x2, 4x3 or 3x4): per depth step P source loads, O weight
// loads and P x O multiply-adds. Taps that fall into the padding are
// skipped, not read from a padded copy: the kernel rows are clipped per
// output row, the kernel columns per pixel at the row's ends, so the
// interior runs whole tiles over the unpadded source.
//
// narrow_conv_loops.cc is compiled with AVX2+FMA only; this header (a POD
// and one function) is the whole interface.
#pragma once

#include <cstdint>

#include "runtime/engines/cpu_dense/gemm_loops.h"

namespace ge::engine::cpu_dense {

inline constexpr int64_t kNarrowLanes = 8;  // the source's channel block

// One convolution; the call computes output rows [row_begin, row_end) of
// the batch * out_h rows. Weights are packed [oc][in_blocks][kh][kw][8]
// (input channels past the real ones are zero).
struct NarrowConvArgs {
  // Channel block b of pixel (y, x) of image n: the 8 floats at
  // src + n * image_stride + b * block_stride + (y * in_w + x) * pixel_stride.
  // [batch][in_blocks][in_h][in_w][8] (blocked): pixel_stride 8, block_stride
  // in_h * in_w * 8; channels-last [batch][in_h][in_w][C] with C a multiple
  // of 8: pixel_stride C, block_stride 8.
  const float* src;
  int64_t in_blocks, in_h, in_w;
  int64_t image_stride, block_stride, pixel_stride;
  int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  int64_t out_h, out_w, oc;
  const float* packed;
  const float* bias;      // oc floats, or null
  const float* add;       // plain [batch][oc][out_h][out_w], read by an add step (may be dst)
  float* dst;             // plain [batch][oc][out_h][out_w]
  const GemmStep* steps;  // kinds 0 (add), 1 (relu), 2 (clip), 3 (sigmoid), 4 (tanh), 9 (linear)
  int32_t num_steps;
  int64_t row_begin, row_end;
};

namespace avx2 {
// dst = steps(bias + conv(src)) for the call's rows.
void NarrowConv(const NarrowConvArgs& args);
}  // namespace avx2

}  // namespace ge::engine::cpu_dense
