// ConvTranspose (ONNX ConvTranspose-11): 1-D, 2-D and 3-D, with groups,
// strides, dilations, output_padding, output_shape and every auto_pad mode,
// as GEMM + col2im.
//
// For each image and group the kernel multiplies the group's weights,
// transposed ([M/group * kernel elements] x [C/group]), by the input
// ([C/group] x [input positions]) with the blocked GEMM, then scatters each
// row of that product into the output: the element of input position i and
// tap k lands at output position i * stride + k * dilation - pad_begin when
// that lies inside the output (negative end pads, from output_shape, leave
// the extra outputs at the bias). 16-bit floats are computed in float.
#include <algorithm>
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

// Adds col [mg * kernel_size x in_size] into y [mg x out_size] (one group
// of one image). Rows of one output channel touch only its plane, so the
// channels run in parallel.
template <typename T>
void Col2Im(const Window3& w, const T* col, int64_t mg, T* y, int threads) {
  const int64_t ks = w.kernel_size();
  const int64_t in_size = w.in_size();
  ParallelFor(threads, mg, ks * in_size, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      T* plane = y + m * w.out_size();
      for (int64_t k = 0; k < ks; ++k) {
        const int64_t kw = k % w.kernel[2];
        const int64_t kh = (k / w.kernel[2]) % w.kernel[1];
        const int64_t kd = k / (w.kernel[2] * w.kernel[1]);
        const T* src = col + (m * ks + k) * in_size;
        for (int64_t id = 0; id < w.in[0]; ++id) {
          const int64_t od = id * w.stride[0] + kd * w.dilation[0] - w.pad_begin[0];
          if (od < 0 || od >= w.out[0]) continue;
          for (int64_t ih = 0; ih < w.in[1]; ++ih) {
            const int64_t oh = ih * w.stride[1] + kh * w.dilation[1] - w.pad_begin[1];
            if (oh < 0 || oh >= w.out[1]) continue;
            const T* line = src + (id * w.in[1] + ih) * w.in[2];
            T* dst = plane + (od * w.out[1] + oh) * w.out[2];
            const int64_t off = kw * w.dilation[2] - w.pad_begin[2];
            // Input columns whose output lands inside the row.
            const int64_t lo = std::clamp<int64_t>(CeilDivSigned(-off, w.stride[2]), 0, w.in[2]);
            const int64_t hi = std::clamp<int64_t>(CeilDivSigned(w.out[2] - off, w.stride[2]), lo, w.in[2]);
            for (int64_t iw = lo; iw < hi; ++iw) dst[iw * w.stride[2] + off] += line[iw];
          }
        }
      }
    }
  });
}

// y [N, M, out] = conv_transpose(x [N, C, in], w [C, M/g, k]) + bias [M]
// (may be null). `win` has x's spatial dims as `in` and y's as `out`.
template <typename T>
void ConvTransposeCompute(const Window3& win, int64_t m, int64_t group, const T* x, const T* w, const T* bias, T* y,
                          int threads) {
  const int64_t cg = win.channels / group;
  const int64_t mg = m / group;
  const int64_t rows = mg * win.kernel_size();
  const int64_t in_size = win.in_size();
  const int64_t out_size = win.out_size();
  std::vector<T> col(static_cast<size_t>(rows * in_size));
  for (int64_t n = 0; n < win.batch; ++n) {
    for (int64_t g = 0; g < group; ++g) {
      T* dst = y + (n * m + g * mg) * out_size;
      for (int64_t i = 0; i < mg; ++i) {
        std::fill(dst + i * out_size, dst + (i + 1) * out_size, bias ? bias[g * mg + i] : T(0));
      }
      if (cg == 0 || in_size == 0) continue;
      const T* src = x + (n * win.channels + g * cg) * in_size;
      Gemm<T>(/*trans_a=*/true, /*trans_b=*/false, rows, in_size, cg, T(1), w + g * cg * rows, rows, src, in_size, T(0),
              col.data(), in_size, threads);
      Col2Im(win, col.data(), mg, dst, threads);
    }
  }
}

struct ConvTransposeOp {
  static absl::StatusOr<ops::WindowGeometry> Geometry(const Shape& x, const Shape& w, const ops::WindowAttrs& attrs) {
    return ops::ConvTransposeOutputShape(x, w, attrs);
  }
  static int64_t OutputChannels(const Shape&, const ops::WindowGeometry& g) { return g.output.dim(1); }
  template <typename T>
  static void Compute(const Window3& win, int64_t m, int64_t group, const T* x, const T* w, const T* bias, T* y,
                      int threads) {
    ConvTransposeCompute<T>(win, m, group, x, w, bias, y, threads);
  }
};

}  // namespace

void RegisterConvTransposeKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(ConvTypes{});
  table.Add({"ConvTranspose", [](const ir::OpDesc& op) { return ConvLikeKernel<ConvTransposeOp>::Create(op); }, {floats},
             {floats}});
}

}  // namespace ge::engine::host_cpu
