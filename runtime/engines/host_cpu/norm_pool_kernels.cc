// MeanVarianceNormalization-13, LpNormalization-1 and MaxRoiPool-1.
//
// The normalizations compute in double on a double copy of X (converted
// back into Y), so f16/bf16/f32 share one loop: MVN follows ONNX's function
// body, (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes`, grouping
// the elements by their coordinates outside the axes; LpNormalization
// divides by the L1 or L2 norm along `axis` and gives 0 where the norm is 0
// (as ONNX Runtime does).
//
// MaxRoiPool (Fast R-CNN's RoI pooling, as Caffe and ONNX Runtime compute
// it): each roi (batch, x1, y1, x2, y2) is scaled by spatial_scale and
// rounded half away from zero, its height and width (at least 1) split
// into pooled_h x pooled_w bins with floor / ceil edges clamped to the
// image, and each bin takes its maximum (0 for an empty bin).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "base/ops/size_limits.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

class MeanVarianceNormalizationKernel final : public Kernel {
 public:
  explicit MeanVarianceNormalizationKernel(const ir::OpDesc& op) : op_(op) {
    axes_ = op.GetAttrOr<std::vector<int64_t>>("axes", {0, 2, 3});
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    const int64_t rank = xs.rank();
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) {
      GE_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxisFor(op_, a, rank));
      reduced[axis] = true;
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckSameSize(op_, x, y));
    const int64_t n = x.NumElements();
    if (n == 0) return absl::OkStatus();
    // Each element's group: its index with the reduced coordinates dropped.
    std::vector<int64_t> group(static_cast<size_t>(n));
    int64_t groups = 1;
    {
      std::vector<int64_t> kept_stride(static_cast<size_t>(rank), 0);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (reduced[d]) continue;
        kept_stride[d] = groups;
        groups *= xs.dim(d);
      }
      std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t g = 0;
        for (int64_t d = 0; d < rank; ++d) g += coord[d] * kept_stride[d];
        group[i] = g;
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++coord[d] < xs.dim(d)) break;
          coord[d] = 0;
        }
      }
    }
    const double count = static_cast<double>(n / groups);
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(x, DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor yd, Tensor::Allocate(DataType::kDouble, xs));
    const double* px = xd.data<double>();
    double* py = yd.data<double>();
    std::vector<double> sum(static_cast<size_t>(groups), 0.0), sum_sq(static_cast<size_t>(groups), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      sum[group[i]] += px[i];
      sum_sq[group[i]] += px[i] * px[i];
    }
    for (int64_t g = 0; g < groups; ++g) {
      const double mean = sum[g] / count;
      const double variance = sum_sq[g] / count - mean * mean;
      sum[g] = mean;
      sum_sq[g] = std::sqrt(std::max(variance, 0.0)) + 1e-9;
    }
    for (int64_t i = 0; i < n; ++i) py[i] = (px[i] - sum[group[i]]) / sum_sq[group[i]];
    return ConvertInto(yd, y);
  }

 private:
  ir::OpDesc op_;
  std::vector<int64_t> axes_;
};

class LpNormalizationKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const int64_t p = IntAttr(op, "p", 2);
    if (p != 1 && p != 2) return NodeError(op, "p must be 1 or 2, got ", p);
    return std::unique_ptr<Kernel>(new LpNormalizationKernel(op, p, IntAttr(op, "axis", -1)));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    GE_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxisFor(op_, axis_, xs.rank()));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckSameSize(op_, x, y));
    const int64_t outer = DimProduct(xs.span(), 0, static_cast<size_t>(axis));
    const int64_t dim = xs.dim(axis);
    const int64_t inner = DimProduct(xs.span(), static_cast<size_t>(axis) + 1, xs.dims().size());
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(x, DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor yd, Tensor::Allocate(DataType::kDouble, xs));
    const double* px = xd.data<double>();
    double* py = yd.data<double>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const double* src = px + o * dim * inner + i;
        double* dst = py + o * dim * inner + i;
        double norm = 0;
        for (int64_t k = 0; k < dim; ++k) norm += p_ == 1 ? std::abs(src[k * inner]) : src[k * inner] * src[k * inner];
        if (p_ == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < dim; ++k) dst[k * inner] = norm != 0 ? src[k * inner] / norm : 0.0;
      }
    }
    return ConvertInto(yd, y);
  }

 private:
  LpNormalizationKernel(const ir::OpDesc& op, int64_t p, int64_t axis) : op_(op), p_(p), axis_(axis) {}

  ir::OpDesc op_;
  int64_t p_, axis_;
};

class MaxRoiPoolKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const std::vector<int64_t> pooled = IntsAttr(op, "pooled_shape");
    if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1) {
      return NodeError(op, "pooled_shape must be two positive integers");
    }
    GE_RETURN_IF_ERROR(ops::CheckGeneratedSize(StrCat("node '", op.name(), "' (MaxRoiPool): pooled_shape"), pooled));
    const float scale = FloatAttr(op, "spatial_scale", 1.0f);
    if (!(scale > 0) || !std::isfinite(scale)) return NodeError(op, "spatial_scale must be positive, got ", scale);
    return std::unique_ptr<Kernel>(new MaxRoiPoolKernel(op, pooled[0], pooled[1], scale));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Shape& xs = ctx.input(0).shape();
    const Shape& rs = ctx.input(1).shape();
    if (xs.rank() != 4 || rs.rank() != 2 || rs.dim(1) != 5) {
      return NodeError(op_, "X ", xs.ToString(), " must be [N, C, H, W] and rois ", rs.ToString(), " [R, 5]");
    }
    const int64_t c = xs.dim(1), h = xs.dim(2), w = xs.dim(3), rois = rs.dim(0);
    const Shape out{rois, c, ph_, pw_};
    GE_RETURN_IF_ERROR(ops::CheckGeneratedSize(StrCat("node '", op_.name(), "' (MaxRoiPool): output"), out.span()));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(ctx.input(0), DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor rd, ConvertTensor(ctx.input(1), DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor yd, Tensor::Allocate(DataType::kDouble, out));
    const double* px = xd.data<double>();
    const double* pr = rd.data<double>();
    double* py = yd.data<double>();
    const double scale = scale_;
    for (int64_t r = 0; r < rois; ++r) {
      const double* roi = pr + r * 5;
      if (!(roi[0] >= 0 && roi[0] < static_cast<double>(xs.dim(0)))) {
        return NodeError(op_, "roi ", r, " names batch ", roi[0], ", outside X ", xs.ToString());
      }
      for (int k = 1; k < 5; ++k) {
        if (!std::isfinite(roi[k] * scale) || std::abs(roi[k] * scale) > 1e15) {
          return NodeError(op_, "roi ", r, " has a coordinate that is not a finite number: ", roi[k]);
        }
      }
      const int64_t b = static_cast<int64_t>(roi[0]);
      const int64_t x1 = static_cast<int64_t>(std::round(roi[1] * scale));
      const int64_t y1 = static_cast<int64_t>(std::round(roi[2] * scale));
      const int64_t x2 = static_cast<int64_t>(std::round(roi[3] * scale));
      const int64_t y2 = static_cast<int64_t>(std::round(roi[4] * scale));
      const double bin_h = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(ph_);
      const double bin_w = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pw_);
      for (int64_t ch = 0; ch < c; ++ch) {
        const double* plane = px + (b * c + ch) * h * w;
        double* dst = py + (r * c + ch) * ph_ * pw_;
        for (int64_t i = 0; i < ph_; ++i) {
          const int64_t hs = Clamp(static_cast<int64_t>(std::floor(static_cast<double>(i) * bin_h)) + y1, h);
          const int64_t he = Clamp(static_cast<int64_t>(std::ceil(static_cast<double>(i + 1) * bin_h)) + y1, h);
          for (int64_t j = 0; j < pw_; ++j) {
            const int64_t ws = Clamp(static_cast<int64_t>(std::floor(static_cast<double>(j) * bin_w)) + x1, w);
            const int64_t we = Clamp(static_cast<int64_t>(std::ceil(static_cast<double>(j + 1) * bin_w)) + x1, w);
            double best = 0;
            if (he > hs && we > ws) {
              best = -std::numeric_limits<double>::max();
              for (int64_t yy = hs; yy < he; ++yy) {
                for (int64_t xx = ws; xx < we; ++xx) best = std::max(best, plane[yy * w + xx]);
              }
            }
            dst[i * pw_ + j] = best;
          }
        }
      }
    }
    return ConvertInto(yd, y);
  }

 private:
  MaxRoiPoolKernel(const ir::OpDesc& op, int64_t ph, int64_t pw, float scale)
      : op_(op), ph_(ph), pw_(pw), scale_(scale) {}

  static int64_t Clamp(int64_t v, int64_t limit) { return std::min(std::max<int64_t>(v, 0), limit); }

  ir::OpDesc op_;
  int64_t ph_, pw_;
  float scale_;
};

}  // namespace

void RegisterNormPoolKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(FloatTypes{});
  table.Add({"MeanVarianceNormalization",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new MeanVarianceNormalizationKernel(op));
             },
             {floats},
             {floats}});
  table.Add({"LpNormalization", &LpNormalizationKernel::Create, {floats}, {floats}});
  table.Add({"MaxRoiPool", &MaxRoiPoolKernel::Create, {floats, floats}, {floats}});
}

}  // namespace ge::engine::host_cpu
