// Schemas and shape inference of the normalization and pooling ops ged
// added after the common ones of nn_ops.cc: MeanVarianceNormalization-13,
// LpNormalization-1, LpPool-11, GlobalLpPool-2 and MaxRoiPool-1.
//
// LpPool's output geometry is AveragePool's (ops::PoolOutputShape, shared
// with the kernels); MaxRoiPool's output is [num_rois, C, pooled_h,
// pooled_w], bounded by CheckGeneratedSize since pooled_shape is an
// attribute a model may set to anything.
#include <cmath>

#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/ops/shape_utils.h"
#include "base/ops/size_limits.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using DT = DataType;

absl::Status InferMeanVarianceNormalization(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (!x.unknown_rank()) {
    const auto axes = ctx.AttrOr<std::vector<int64_t>>("axes", {0, 2, 3});
    GE_RETURN_IF_ERROR(NormalizeAxes(axes, x.rank()).status());
  }
  return SameAsInput0(ctx);
}

absl::Status InferLpNormalization(InferenceContext& ctx) {
  const int64_t p = ctx.AttrOr<int64_t>("p", 2);
  if (p != 1 && p != 2) return InvalidArgument("p must be 1 or 2, got ", p);
  const Shape& x = ctx.input_tensor(0).shape;
  if (!x.unknown_rank()) GE_RETURN_IF_ERROR(NormalizeAxis(ctx.AttrOr<int64_t>("axis", -1), x.rank()).status());
  return SameAsInput0(ctx);
}

absl::Status CheckP(const InferenceContext& ctx) {
  const int64_t p = ctx.AttrOr<int64_t>("p", 2);
  if (p < 1) return InvalidArgument("p must be a positive integer, got ", p);
  return absl::OkStatus();
}

absl::Status InferLpPool(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(CheckP(ctx));
  GE_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrsFromOp(ctx.op()));
  if (attrs.kernel_shape.empty()) return InvalidArgument("kernel_shape is required and must not be empty");
  GE_ASSIGN_OR_RETURN(WindowGeometry g, PoolOutputShape(ctx.input_tensor(0).shape, attrs));
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(g.output));
  return absl::OkStatus();
}

absl::Status InferGlobalLpPool(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(CheckP(ctx));
  Shape shape = ctx.input_tensor(0).shape;
  if (!shape.unknown_rank()) {
    if (shape.rank() < 2) return InvalidArgument("input 0 needs rank >= 2, got ", shape.ToString());
    for (size_t i = 2; i < shape.dims().size(); ++i) shape.set_dim(i, 1);
  }
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(shape));
  return absl::OkStatus();
}

// MaxRoiPool: X [N, C, H, W], rois [R, 5] (batch, x1, y1, x2, y2) ->
// [R, C, pooled_h, pooled_w].
absl::Status InferMaxRoiPool(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const Shape& rois = ctx.input_tensor(1).shape;
  if (!x.unknown_rank() && x.rank() != 4) return InvalidArgument("X must be [N, C, H, W], got ", x.ToString());
  if (!rois.unknown_rank() && (rois.rank() != 2 || (rois.dim(1) >= 0 && rois.dim(1) != 5))) {
    return InvalidArgument("rois must be [num_rois, 5], got ", rois.ToString());
  }
  const auto pooled = ctx.Attr<std::vector<int64_t>>("pooled_shape");
  if (!pooled || pooled->size() != 2 || (*pooled)[0] < 1 || (*pooled)[1] < 1) {
    return InvalidArgument("pooled_shape must be two positive integers");
  }
  const float scale = ctx.AttrOr<float>("spatial_scale", 1.0f);
  if (!(scale > 0) || !std::isfinite(scale)) return InvalidArgument("spatial_scale must be positive, got ", scale);
  Shape out{rois.unknown_rank() ? kUnknownDim : rois.dim(0), x.unknown_rank() ? kUnknownDim : x.dim(1), (*pooled)[0],
            (*pooled)[1]};
  GE_RETURN_IF_ERROR(CheckGeneratedSize("MaxRoiPool output", out.span(), /*allow_unknown=*/true));
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterNormPoolOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("MeanVarianceNormalization", 13)
                      .Doc("(X - mean) / (sqrt(mean(X^2) - mean^2) + 1e-9) over axes.")
                      .Input("X", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", FloatTypes())
                      .Attr("axes", Kind::kInts, std::vector<int64_t>{0, 2, 3})
                      .Infer(InferMeanVarianceNormalization));
  MustRegister(r, OpSchemaBuilder("LpNormalization", 1)
                      .Doc("X divided by its L1 or L2 norm along axis (0 where the norm is 0).")
                      .Input("input", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", FloatTypes())
                      .Attr("axis", Kind::kInt, int64_t{-1})
                      .Attr("p", Kind::kInt, int64_t{2})
                      .Infer(InferLpNormalization));
  MustRegister(r, OpSchemaBuilder("LpPool", 11)
                      .Doc("The p-norm of each window (padding contributes nothing).")
                      .Input("X", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", FloatTypes())
                      .RequiredAttr("kernel_shape", Kind::kInts)
                      .Attr("auto_pad", Kind::kString, "NOTSET")
                      .OptionalAttr("pads", Kind::kInts)
                      .OptionalAttr("strides", Kind::kInts)
                      .Attr("p", Kind::kInt, int64_t{2})
                      .Infer(InferLpPool));
  MustRegister(r, OpSchemaBuilder("GlobalLpPool", 2)
                      .Doc("The p-norm of each N*C plane.")
                      .Input("X", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", FloatTypes())
                      .Attr("p", Kind::kInt, int64_t{2})
                      .Infer(InferGlobalLpPool));
  MustRegister(r, OpSchemaBuilder("MaxRoiPool", 1)
                      .Doc("Max pooling of each region of interest into a pooled_shape grid (Fast R-CNN).")
                      .Input("X", "T")
                      .Input("rois", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", FloatTypes())
                      .RequiredAttr("pooled_shape", Kind::kInts)
                      .Attr("spatial_scale", Kind::kFloat, 1.0f)
                      .Infer(InferMaxRoiPool));
}

}  // namespace ge::ops
