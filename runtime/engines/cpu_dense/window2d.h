// The geometry of a 2-D window slid over [N, C, H, W] activations, a
// convolution's or a pooling's: what the engine's own loops run on
// (small_conv.h, narrow_conv.h, pool_loops.h). Kernels fill it from the
// geometry ops computed (Window2dOf), tests from sizes (WithOutputSize).
//
// Only the struct is inline: the AVX2 objects include this header, and an
// inline function compiled there could be the copy the linker keeps for
// baseline code.
#pragma once

#include <cstdint>

namespace ge {
class Shape;
namespace ops {
struct WindowGeometry;
}  // namespace ops
}  // namespace ge

namespace ge::engine::cpu_dense {

struct Window2d {
  int64_t batch = 0, in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, out_h = 0, out_w = 0;  // a pooling's out_channels = in_channels
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;  // ONNX's (1 = dense)
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

// The window over `x` ([N, C, H, W]) of an op whose geometry ops computed
// (ops::ConvOutputShape, ops::PoolOutputShape): output channels and size
// from g.output ([N, M, OH, OW]), kernel, strides, dilations and pads from
// g's two spatial entries.
Window2d Window2dOf(const Shape& x, const ops::WindowGeometry& g);

// `w` with out_h and out_w computed from the rest as ONNX does with explicit
// pads (floor, or ceil with ceil_mode, a last window starting past the input
// and the begin pad dropped: ops::ComputeWindowDim); 0 when no window fits.
Window2d WithOutputSize(Window2d w, bool ceil_mode = false);

}  // namespace ge::engine::cpu_dense
