#include "runtime/engines/cpu_dense/window2d.h"

#include "base/ops/shape_utils.h"
#include "base/shape.h"

namespace ge::engine::cpu_dense {
namespace {

int64_t OutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                   bool ceil_mode) {
  auto dim = ops::ComputeWindowDim(in, kernel, stride, dilation, pad_begin, pad_end, ops::AutoPad::kNotSet, ceil_mode);
  return dim.ok() && dim->output > 0 ? dim->output : 0;
}

}  // namespace

Window2d Window2dOf(const Shape& x, const ops::WindowGeometry& g) {
  Window2d w;
  w.batch = x.dim(0);
  w.in_channels = x.dim(1);
  w.in_h = x.dim(2);
  w.in_w = x.dim(3);
  w.out_channels = g.output.dim(1);
  w.out_h = g.output.dim(2);
  w.out_w = g.output.dim(3);
  w.kernel_h = g.kernel[0];
  w.kernel_w = g.kernel[1];
  w.stride_h = g.strides[0];
  w.stride_w = g.strides[1];
  w.dilation_h = g.dilations[0];
  w.dilation_w = g.dilations[1];
  w.pad_top = g.pads_begin[0];
  w.pad_left = g.pads_begin[1];
  w.pad_bottom = g.pads_end[0];
  w.pad_right = g.pads_end[1];
  return w;
}

Window2d WithOutputSize(Window2d w, bool ceil_mode) {
  w.out_h = OutputSize(w.in_h, w.kernel_h, w.stride_h, w.dilation_h, w.pad_top, w.pad_bottom, ceil_mode);
  w.out_w = OutputSize(w.in_w, w.kernel_w, w.stride_w, w.dilation_w, w.pad_left, w.pad_right, ceil_mode);
  return w;
}

}  // namespace ge::engine::cpu_dense
