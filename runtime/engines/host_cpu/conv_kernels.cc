// Conv (ONNX Conv-11): 1-D, 2-D and 3-D, with groups, strides, dilations,
// explicit pads and every auto_pad mode, as im2col + GEMM.
//
// For each image and group the input patches are unrolled into a
// [C/group * kernel elements] x [output positions] matrix (skipped for a
// 1x1 kernel with unit stride and no pads, where the input already is that
// matrix) and multiplied by the group's [M/group] x [C/group * kernel]
// weights with the blocked GEMM, which writes straight into the output.
// 16-bit floats are computed in float.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/host_cpu/conv_like_kernel.h"
#include "runtime/engines/host_cpu/gemm.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"
#include "runtime/engines/host_cpu/window.h"

namespace ge::engine::host_cpu {
namespace {

// Unrolls the patches of one image's channel group [channels x in] into
// col [channels * kernel_size x out_size].
template <typename T>
void Im2Col(const Window3& w, const T* src, int64_t channels, T* col, int threads) {
  const int64_t ks = w.kernel_size();
  const int64_t out_size = w.out_size();
  ParallelFor(threads, channels * ks, out_size, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t c = row / ks;
      int64_t k = row % ks;
      const int64_t kw = k % w.kernel[2];
      k /= w.kernel[2];
      const int64_t kh = k % w.kernel[1];
      const int64_t kd = k / w.kernel[1];
      const T* plane = src + c * w.in_size();
      T* dst = col + row * out_size;
      // Output columns whose tap lands inside the input along W.
      const int64_t off_w = kw * w.dilation[2] - w.pad_begin[2];
      const int64_t lo_w = std::clamp<int64_t>(CeilDivSigned(-off_w, w.stride[2]), 0, w.out[2]);
      const int64_t hi_w =
          std::clamp<int64_t>(CeilDivSigned(w.in[2] - off_w, w.stride[2]), lo_w, w.out[2]);
      for (int64_t od = 0; od < w.out[0]; ++od) {
        const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
        for (int64_t oh = 0; oh < w.out[1]; ++oh, dst += w.out[2]) {
          const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
          if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
            std::fill(dst, dst + w.out[2], T(0));
            continue;
          }
          const T* line = plane + (id * w.in[1] + ih) * w.in[2];
          std::fill(dst, dst + lo_w, T(0));
          if (w.stride[2] == 1) {
            std::copy(line + off_w + lo_w, line + off_w + hi_w, dst + lo_w);
          } else {
            for (int64_t ow = lo_w; ow < hi_w; ++ow) dst[ow] = line[off_w + ow * w.stride[2]];
          }
          std::fill(dst + hi_w, dst + w.out[2], T(0));
        }
      }
    }
  });
}

bool IsPointwise(const Window3& w) {
  for (int d = 0; d < 3; ++d) {
    if (w.kernel[d] != 1 || w.stride[d] != 1 || w.pad_begin[d] != 0 || w.pad_end[d] != 0) {
      return false;
    }
  }
  return true;
}

// y [N, M, out] = conv(x [N, C, in], w [M, C/g, k]) + bias [M] (may be null).
template <typename T>
void ConvCompute(const Window3& win, int64_t m, int64_t group, const T* x, const T* w, const T* bias, T* y,
                 int threads) {
  const int64_t cg = win.channels / group;
  const int64_t mg = m / group;
  const int64_t k = cg * win.kernel_size();
  const int64_t p = win.out_size();
  const bool pointwise = IsPointwise(win);
  std::vector<T> col(pointwise ? 0 : static_cast<size_t>(k * p));
  for (int64_t n = 0; n < win.batch; ++n) {
    for (int64_t g = 0; g < group; ++g) {
      const T* src = x + (n * win.channels + g * cg) * win.in_size();
      T* dst = y + (n * m + g * mg) * p;
      const T* rhs = src;
      if (!pointwise) {
        Im2Col(win, src, cg, col.data(), threads);
        rhs = col.data();
      }
      T beta = T(0);
      if (bias != nullptr) {
        for (int64_t i = 0; i < mg; ++i) std::fill(dst + i * p, dst + (i + 1) * p, bias[g * mg + i]);
        beta = T(1);
      }
      Gemm<T>(/*trans_a=*/false, /*trans_b=*/false, mg, p, k, T(1), w + g * mg * k, k, rhs, p, beta, dst, p, threads);
    }
  }
}

struct ConvOp {
  static absl::StatusOr<ops::WindowGeometry> Geometry(const Shape& x, const Shape& w, const ops::WindowAttrs& attrs) {
    return ops::ConvOutputShape(x, w, attrs);
  }
  static int64_t OutputChannels(const Shape& w, const ops::WindowGeometry&) { return w.dim(0); }
  template <typename T>
  static void Compute(const Window3& win, int64_t m, int64_t group, const T* x, const T* w, const T* bias, T* y,
                      int threads) {
    ConvCompute<T>(win, m, group, x, w, bias, y, threads);
  }
};

}  // namespace

void RegisterConvKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(ConvTypes{});
  table.Add({"Conv", [](const ir::OpDesc& op) { return ConvLikeKernel<ConvOp>::Create(op); }, {floats},
             {floats}});
}

}  // namespace ge::engine::host_cpu
