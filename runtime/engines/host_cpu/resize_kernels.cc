// Resize-13 on host_cpu: nearest, linear and cubic interpolation over every
// dim, with ONNX's coordinate transformation modes.
//
// Interpolation is separable: for each dim and each output index the
// kernel computes the source coordinate, the taps (source indices, clamped
// to the edge as ONNX's reference pads with edge values) and their weights;
// an output element is the sum over the product of its dims' taps. A
// coordinate outside the input under tf_crop_and_resize gives
// extrapolation_value for the whole element, as in the reference.
#include <cmath>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"
#include "runtime/engines/sdk/resize_coordinates.h"

namespace ge::engine::host_cpu {
namespace {

struct Tap {
  int64_t index;
  double weight;
};

// The taps of one output index along one dim; empty when the coordinate
// falls outside the input (tf_crop_and_resize extrapolation).
using Taps = std::vector<Tap>;

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(const ir::OpDesc& op)
      : op_(op),
        transform_(StringAttr(op, "coordinate_transformation_mode", "half_pixel")),
        mode_(StringAttr(op, "mode", "nearest")),
        nearest_mode_(StringAttr(op, "nearest_mode", "round_prefer_floor")),
        cubic_a_(FloatAttr(op, "cubic_coeff_a", -0.75f)),
        exclude_outside_(IntAttr(op, "exclude_outside", 0) != 0),
        extrapolation_(FloatAttr(op, "extrapolation_value", 0.0f)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    GE_RETURN_IF_ERROR(CheckAttrs());
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    const int64_t rank = xs.rank();
    const Tensor* scales_in = ctx.has_input(2) && ctx.input(2).NumElements() > 0 ? &ctx.input(2) : nullptr;
    const Tensor* sizes_in = ctx.has_input(3) && ctx.input(3).NumElements() > 0 ? &ctx.input(3) : nullptr;
    if ((scales_in == nullptr) == (sizes_in == nullptr)) {
      return NodeError(op_, "exactly one of scales and sizes must be given (non-empty)");
    }
    std::vector<double> scales(static_cast<size_t>(rank));
    Shape out = xs;
    for (int64_t d = 0; d < rank; ++d) {
      if (sizes_in != nullptr) {
        if (sizes_in->NumElements() != rank) return NodeError(op_, "sizes needs ", rank, " values");
        out.set_dim(d, sizes_in->GetAsInt64(d));
        if (out.dim(d) < 0) return NodeError(op_, "sizes[", d, "] is negative");
        scales[d] = xs.dim(d) == 0 ? 1.0 : static_cast<double>(out.dim(d)) / static_cast<double>(xs.dim(d));
      } else {
        if (scales_in->NumElements() != rank) return NodeError(op_, "scales needs ", rank, " values");
        scales[d] = scales_in->GetAsDouble(d);
        if (!(scales[d] > 0)) return NodeError(op_, "scales[", d, "] must be positive, got ", scales[d]);
        out.set_dim(d, static_cast<int64_t>(std::floor(static_cast<double>(xs.dim(d)) * scales[d])));
      }
    }
    std::vector<double> roi(static_cast<size_t>(2 * rank));
    for (int64_t d = 0; d < rank; ++d) {
      roi[d] = 0;
      roi[rank + d] = 1;
    }
    if (transform_ == "tf_crop_and_resize") {
      if (!ctx.has_input(1) || ctx.input(1).NumElements() != 2 * rank) {
        return NodeError(op_, "tf_crop_and_resize needs roi with ", 2 * rank, " values");
      }
      for (int64_t i = 0; i < 2 * rank; ++i) roi[i] = ctx.input(1).GetAsDouble(i);
    }
    std::vector<std::vector<Taps>> taps(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      taps[d].resize(static_cast<size_t>(out.dim(d)));
      for (int64_t o = 0; o < out.dim(d); ++o) {
        taps[d][o] = TapsOf(o, xs.dim(d), scales[d], roi[d], roi[rank + d]);
      }
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    const auto strides = ContiguousStrides(xs.span());
    const std::vector<int64_t> in_strides(strides.begin(), strides.end());
    return DispatchType<NumericTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      const int64_t total = y.NumElements();
      std::vector<int64_t> index(static_cast<size_t>(rank), 0);
      for (int64_t e = 0; e < total; ++e) {
        bool outside = false;
        for (int64_t d = 0; d < rank; ++d) outside = outside || taps[d][index[d]].empty();
        double value = extrapolation_;
        if (!outside) value = Accumulate(px, in_strides, taps, index, 0, 0, 1.0);
        py[e] = StoreAs<T>(value);
        for (int64_t d = rank - 1; d >= 0; --d) {  // next output index, row-major
          if (++index[d] < out.dim(d)) break;
          index[d] = 0;
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  absl::Status CheckAttrs() const {
    if (mode_ != "nearest" && mode_ != "linear" && mode_ != "cubic") {
      return NodeError(op_, "mode '", mode_, "' is not nearest, linear or cubic");
    }
    for (const char* m : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                          "tf_crop_and_resize"}) {
      if (transform_ == m) return absl::OkStatus();
    }
    return NodeError(op_, "coordinate_transformation_mode '", transform_, "' is not supported");
  }

  // Sum over the taps of dims d.. of weight * x, for output `index`.
  template <typename T>
  static double Accumulate(const T* px, const std::vector<int64_t>& strides, const std::vector<std::vector<Taps>>& taps,
                           const std::vector<int64_t>& index, size_t d, int64_t offset, double weight) {
    if (d == taps.size()) return weight * static_cast<double>(Widen(px[offset]));
    double sum = 0;
    for (const Tap& t : taps[d][index[d]]) {
      if (t.weight == 0) continue;
      sum += Accumulate(px, strides, taps, index, d + 1, offset + t.index * strides[d], weight * t.weight);
    }
    return sum;
  }

  double SourceCoordinate(int64_t o, int64_t in, double scale, double roi_start, double roi_end) const {
    return sdk::ResizeSourceCoordinate(transform_, o, in, scale, roi_start, roi_end);
  }

  Taps TapsOf(int64_t o, int64_t in, double scale, double roi_start, double roi_end) const {
    const double src = SourceCoordinate(o, in, scale, roi_start, roi_end);
    if (transform_ == "tf_crop_and_resize" && (src < 0 || src > static_cast<double>(in - 1))) return {};
    // The neighbours: right = ceil(src), so that the ratio to the left
    // neighbour lies in (0, 1] (the reference prefers the left pixel).
    const int64_t right = static_cast<int64_t>(std::ceil(src));
    const double ratio = src - static_cast<double>(right - 1);
    std::vector<double> coeffs;
    int64_t first = 0;
    if (mode_ == "cubic") {
      const double a = cubic_a_;
      const auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };   // 1 < t < 2
      const auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // t <= 1
      coeffs = {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
      first = right - 2;
    } else {
      first = right - 1;
      if (mode_ == "linear") {
        coeffs = {1 - ratio, ratio};
      } else {
        bool take_right;
        if (ratio == 1.0) {
          take_right = true;  // src is an integer: that pixel
        } else if (nearest_mode_ == "round_prefer_ceil") {
          take_right = ratio >= 0.5;
        } else if (nearest_mode_ == "floor") {
          take_right = false;
        } else if (nearest_mode_ == "ceil") {
          take_right = true;
        } else {  // round_prefer_floor
          take_right = ratio > 0.5;
        }
        coeffs = {take_right ? 0.0 : 1.0, take_right ? 1.0 : 0.0};
      }
    }
    Taps out;
    double total = 0;
    for (size_t i = 0; i < coeffs.size(); ++i) {
      const int64_t at = first + static_cast<int64_t>(i);
      double w = coeffs[i];
      if (exclude_outside_ && (at < 0 || at >= in)) w = 0;
      total += w;
      out.push_back({std::clamp<int64_t>(at, 0, in - 1), w});
    }
    if (exclude_outside_ && total != 0) {
      for (Tap& t : out) t.weight /= total;
    }
    return out;
  }

  ir::OpDesc op_;
  std::string transform_, mode_, nearest_mode_;
  double cubic_a_;
  bool exclude_outside_;
  double extrapolation_;
};

}  // namespace

void RegisterResizeKernels(KernelTable& table) {
  const DataTypeSet numeric = SetOf(NumericTypes{});
  const DataTypeSet floats = SetOf(FloatTypes{});
  table.Add({"Resize",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ResizeKernel(op));
             },
             {numeric, floats, DataTypeSet{DataType::kFloat}, DataTypeSet{DataType::kInt64}},
             {numeric}});
}

}  // namespace ge::engine::host_cpu
