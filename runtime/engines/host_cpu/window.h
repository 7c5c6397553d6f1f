// Window geometry of Conv and pooling normalized to three spatial dims.
//
// ops::ConvOutputShape / PoolOutputShape (the functions shape inference
// uses) resolve the output size and the pads actually applied for every
// auto_pad mode; Window3 pads their per-dim vectors to three dims with
// leading unit dims (kernel 1, stride 1, no pads), so one loop nest serves
// 1-D, 2-D and 3-D windows.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "base/ops/shape_utils.h"
#include "base/shape.h"
#include "runtime/engines/host_cpu/kernel_registry.h"

namespace ge::engine::host_cpu {

struct Window3 {
  int64_t batch = 0, channels = 0;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// `x` is [N, C, D1..Dn] with n in 1..3 and `g` its resolved geometry.
inline absl::StatusOr<Window3> MakeWindow3(const ir::OpDesc& op, const Shape& x,
                                           const ops::WindowGeometry& g) {
  const int64_t n = x.rank() - 2;
  if (n < 1 || n > 3) {
    return NodeUnimplemented(op, "host_cpu supports 1 to 3 spatial dims, got input ",
                             x.ToString());
  }
  Window3 w;
  w.batch = x.dim(0);
  w.channels = x.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    const size_t d = static_cast<size_t>(3 - n + i);
    w.in[d] = x.dim(static_cast<size_t>(i + 2));
    w.out[d] = g.output.dim(static_cast<size_t>(i + 2));
    w.kernel[d] = g.kernel[i];
    w.stride[d] = g.strides[i];
    w.dilation[d] = g.dilations[i];
    w.pad_begin[d] = g.pads_begin[i];
    w.pad_end[d] = g.pads_end[i];
  }
  return w;
}

// ceil(a / b) for b > 0 and any sign of a.
inline int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t CeilDivSigned(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The taps k in [0, kernel) of one window along one dim whose input index
// start + k * dilation lies in [0, limit).
struct TapRange {
  int64_t start;  // input index of tap 0 (may be negative)
  int64_t lo, hi;
};
inline TapRange Taps(int64_t o, int64_t stride, int64_t pad_begin, int64_t kernel,
                     int64_t dilation, int64_t limit) {
  TapRange r;
  r.start = o * stride - pad_begin;
  r.lo = r.start >= 0 ? 0 : CeilDivSigned(-r.start, dilation);
  r.hi = std::min(kernel, CeilDivSigned(limit - r.start, dilation));
  if (r.hi < r.lo) r.hi = r.lo;
  return r;
}

// Runs a float loop nest for half-precision X, W, B and Y: converts the
// inputs to float, calls `compute(x, w, bias, y)` on float pointers (bias
// null when absent) and converts the result into `y`.
template <typename Compute>
absl::Status ComputeInFloat(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
                            Compute compute) {
  GE_ASSIGN_OR_RETURN(Tensor xf, ConvertTensor(x, DataType::kFloat));
  GE_ASSIGN_OR_RETURN(Tensor wf, ConvertTensor(w, DataType::kFloat));
  Tensor bf;
  if (bias != nullptr) {
    GE_ASSIGN_OR_RETURN(bf, ConvertTensor(*bias, DataType::kFloat));
  }
  GE_ASSIGN_OR_RETURN(Tensor yf, Tensor::Allocate(DataType::kFloat, y.shape()));
  compute(xf.data<float>(), wf.data<float>(), bias != nullptr ? bf.data<float>() : nullptr, yf.data<float>());
  return ConvertInto(yf, y);
}

}  // namespace ge::engine::host_cpu
