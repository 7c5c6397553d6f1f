// Reductions: the ReduceX family at opset 13 (axes as an attribute, except
// ReduceSum-13 whose axes are an optional input, with
// noop_with_empty_axes), and ArgMax / ArgMin. With unknown axes the rank is
// still known when keepdims is set (reduced dims become 1, so only dims
// that are already 1 stay known).
#include "base/ops/op_families.h"

#include <algorithm>

#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using DT = DataType;

// Reducing all axes with keepdims gives all 1s, whatever the input dims.
Shape AllOnes(const Shape& x) {
  Shape out = x;
  for (size_t i = 0; i < out.dims().size(); ++i) out.set_dim(i, 1);
  return out;
}

// The output shape of reducing `x` over `axes` (empty: every axis).
absl::StatusOr<Shape> ReducedShape(const Shape& x, const std::vector<int64_t>& axes, bool keepdims) {
  if (axes.empty()) return keepdims ? AllOnes(x) : Shape{};
  if (x.unknown_rank()) return x;
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(axes, x.rank()));
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    const bool reduced = std::find(normalized.begin(), normalized.end(), i) != normalized.end();
    if (!reduced) {
      out.push_back(x.dim(i));
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

// Reduction over axes whose values are unknown (only their count may be).
Shape ReducedShapeUnknownAxes(const Shape& x, int64_t num_axes, bool keepdims) {
  if (x.unknown_rank()) return x;
  if (!keepdims) return UnknownShape(num_axes < 0 ? -1 : x.rank() - num_axes);
  Shape out = x;
  for (size_t i = 0; i < out.dims().size(); ++i) {
    if (out.dim(i) != 1) out.set_dim(i, kUnknownDim);
  }
  return out;
}

absl::Status InferReduceAttrAxes(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const bool keepdims = ctx.AttrOr<int64_t>("keepdims", 1) != 0;
  const auto axes = ctx.AttrOr<std::vector<int64_t>>("axes", {});
  GE_ASSIGN_OR_RETURN(Shape out, ReducedShape(x, axes, keepdims));
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferReduceInputAxes(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const DataType dtype = ctx.input_tensor(0).dtype;
  const bool keepdims = ctx.AttrOr<int64_t>("keepdims", 1) != 0;
  const bool noop = ctx.AttrOr<int64_t>("noop_with_empty_axes", 0) != 0;
  std::optional<std::vector<int64_t>> axes(std::vector<int64_t>{});
  if (ctx.has_input(1)) {
    axes = IntsValue(ctx, 1);
    if (!axes && Length1D(ctx, 1) == 0) axes.emplace();
  }
  if (!axes) {
    SetOutput(ctx, 0, dtype, ReducedShapeUnknownAxes(x, Length1D(ctx, 1), keepdims));
    return absl::OkStatus();
  }
  if (axes->empty() && noop) {
    SetOutput(ctx, 0, dtype, x);
    return absl::OkStatus();
  }
  GE_ASSIGN_OR_RETURN(Shape out, ReducedShape(x, *axes, keepdims));
  SetOutput(ctx, 0, dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferArgReduce(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const bool keepdims = ctx.AttrOr<int64_t>("keepdims", 1) != 0;
  Shape out = x;
  if (!x.unknown_rank()) {
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrOr<int64_t>("axis", 0), x.rank()));
    GE_ASSIGN_OR_RETURN(out, ReducedShape(x, {axis}, keepdims));
  }
  SetOutput(ctx, 0, DT::kInt64, std::move(out));
  return absl::OkStatus();
}

void ReduceWithAttrAxes(OpRegistry& r, std::string type, std::vector<DataType> types) {
  MustRegister(r, OpSchemaBuilder(std::move(type), 13)
                      .Input("data", "T")
                      .Output("reduced", "T")
                      .TypeConstraint("T", std::move(types))
                      .OptionalAttr("axes", Kind::kInts)
                      .Attr("keepdims", Kind::kInt, int64_t{1})
                      .Infer(InferReduceAttrAxes));
}

void ArgReduce(OpRegistry& r, std::string type) {
  MustRegister(r, OpSchemaBuilder(std::move(type), 13)
                      .Input("data", "T")
                      .Output("reduced", "i64")
                      .TypeConstraint("T", NumericTypes())
                      .Attr("axis", Kind::kInt, int64_t{0})
                      .Attr("keepdims", Kind::kInt, int64_t{1})
                      .Attr("select_last_index", Kind::kInt, int64_t{0})
                      .Infer(InferArgReduce));
}

}  // namespace

void RegisterReductionOps(OpRegistry& r) {
  const auto common = Union(FloatTypes(), Types({DT::kInt32, DT::kInt64, DT::kUint32, DT::kUint64}));
  const auto with_bytes = Union(common, Types({DT::kInt8, DT::kUint8}));
  ReduceWithAttrAxes(r, "ReduceMean", common);
  ReduceWithAttrAxes(r, "ReduceMax", with_bytes);
  ReduceWithAttrAxes(r, "ReduceMin", with_bytes);
  ReduceWithAttrAxes(r, "ReduceProd", common);
  ReduceWithAttrAxes(r, "ReduceL1", common);
  ReduceWithAttrAxes(r, "ReduceL2", common);
  ReduceWithAttrAxes(r, "ReduceLogSum", common);
  ReduceWithAttrAxes(r, "ReduceLogSumExp", common);
  ReduceWithAttrAxes(r, "ReduceSumSquare", common);
  MustRegister(r, OpSchemaBuilder("ReduceSum", 13)
                      .Input("data", "T")
                      .OptionalInput("axes", "i64")
                      .Output("reduced", "T")
                      .TypeConstraint("T", common)
                      .Attr("keepdims", Kind::kInt, int64_t{1})
                      .Attr("noop_with_empty_axes", Kind::kInt, int64_t{0})
                      .ValueInputs({1})
                      .Infer(InferReduceInputAxes));
  ArgReduce(r, "ArgMax");
  ArgReduce(r, "ArgMin");
}

}  // namespace ge::ops
