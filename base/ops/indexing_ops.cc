// Schemas and shape inference of the indexing and tensor-building ops:
// GatherElements, GatherND, ScatterElements, Trilu, CumSum, Range, EyeLike,
// CastLike, Tile, OneHot, DepthToSpace, SpaceToDepth, NonZero (each at its newest ONNX version up to opset 17; older
// versions the backend tests use are subsets of these forms).
#include <algorithm>
#include <cmath>

#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using DT = DataType;
using Kind = ir::AttrValue::Kind;

DataType Dtype0(const InferenceContext& ctx) { return ctx.input_tensor(0).dtype; }

absl::Status InferGatherElements(InferenceContext& ctx) {
  const Shape& data = ctx.input_tensor(0).shape;
  const Shape& indices = ctx.input_tensor(1).shape;
  if (!data.unknown_rank() && !indices.unknown_rank() && data.rank() != indices.rank()) {
    return InvalidArgument("data ", data.ToString(), " and indices ", indices.ToString(),
                           " must have the same rank");
  }
  SetOutput(ctx, 0, Dtype0(ctx), indices);
  return absl::OkStatus();
}

// A scalar input's value as a double, when known.
std::optional<double> ScalarValue(const InferenceContext& ctx, int i) {
  const Tensor* t = ctx.input_value(i);
  if (t == nullptr || t->NumElements() != 1) return std::nullopt;
  return t->GetAsDouble(0);
}

absl::Status InferRange(InferenceContext& ctx) {
  auto start = ScalarValue(ctx, 0), limit = ScalarValue(ctx, 1), delta = ScalarValue(ctx, 2);
  int64_t n = -1;
  if (start && limit && delta) {
    if (*delta == 0) return InvalidArgument("delta is 0");
    n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((*limit - *start) / *delta)));
  }
  SetOutput(ctx, 0, Dtype0(ctx), Shape{n});
  return absl::OkStatus();
}

absl::Status InferEyeLike(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (!x.unknown_rank() && x.rank() != 2) return InvalidArgument("input must be 2-D, got ", x.ToString());
  DataType dtype = Dtype0(ctx);
  if (auto to = ctx.Attr<int64_t>("dtype")) {
    if (!IsValidDataType(static_cast<int32_t>(*to)) || *to == 0) {
      return InvalidArgument("attribute 'dtype' is ", *to, ", not a data type");
    }
    dtype = static_cast<DataType>(*to);
  }
  SetOutput(ctx, 0, dtype, x.unknown_rank() ? UnknownShape(2) : x);
  return absl::OkStatus();
}

// TopK: values and int64 indices of x's shape with `axis` cut to K (when K
// is known).
absl::Status InferTopK(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), x);
    SetOutput(ctx, 1, DT::kInt64, x);
    return absl::OkStatus();
  }
  const int64_t rank = x.rank();
  int64_t axis = ctx.Attr<int64_t>("axis").value_or(-1);
  if (axis < -rank || axis >= rank) return InvalidArgument("axis ", axis, " is out of range for ", x.ToString());
  if (axis < 0) axis += rank;
  Shape out = x;
  out.set_dim(axis, -1);
  if (auto k = IntsValue(ctx, 1)) {
    if (k->size() != 1) return InvalidArgument("K must hold one value, got ", k->size());
    if ((*k)[0] < 0) return InvalidArgument("K is negative: ", (*k)[0]);
    if (x.dim(axis) >= 0 && (*k)[0] > x.dim(axis)) {
      return InvalidArgument("K = ", (*k)[0], " exceeds dim ", axis, " of ", x.ToString());
    }
    out.set_dim(axis, (*k)[0]);
  }
  SetOutput(ctx, 0, Dtype0(ctx), out);
  SetOutput(ctx, 1, DT::kInt64, std::move(out));
  return absl::OkStatus();
}

// Resize: `sizes` when given (non-empty), else floor(dim * scale).
absl::Status InferResize(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const auto known = [&](int i) -> const Tensor* {
    const Tensor* t = ctx.has_input(i) ? ctx.input_value(i) : nullptr;
    return t != nullptr && t->NumElements() > 0 ? t : nullptr;
  };
  const Tensor* scales = known(2);
  const Tensor* sizes = known(3);
  const bool sizes_given = ctx.has_input(3) && !(ctx.input_value(3) && ctx.input_value(3)->NumElements() == 0);
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), x);
    return absl::OkStatus();
  }
  Shape out = UnknownShape(x.rank());
  if (sizes != nullptr) {
    if (sizes->NumElements() != x.rank()) {
      return InvalidArgument("sizes has ", sizes->NumElements(), " values for input ", x.ToString());
    }
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (sizes->GetAsInt64(i) < 0) return InvalidArgument("sizes[", i, "] is negative: ", sizes->GetAsInt64(i));
      out.set_dim(i, sizes->GetAsInt64(i));
    }
  } else if (scales != nullptr && !sizes_given) {
    if (scales->NumElements() != x.rank()) {
      return InvalidArgument("scales has ", scales->NumElements(), " values for input ", x.ToString());
    }
    for (int64_t i = 0; i < x.rank(); ++i) {
      const double s = scales->GetAsDouble(i);
      if (!(s > 0)) return InvalidArgument("scales[", i, "] must be positive, got ", s);
      if (x.dim(i) >= 0) out.set_dim(i, static_cast<int64_t>(std::floor(static_cast<double>(x.dim(i)) * s)));
    }
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

// NonMaxSuppression: boxes [B, N, 4] and scores [B, C, N] -> int64
// [selected, 3] (batch, class, box); the count depends on the data.
absl::Status InferNonMaxSuppression(InferenceContext& ctx) {
  const Shape& boxes = ctx.input_tensor(0).shape;
  const Shape& scores = ctx.input_tensor(1).shape;
  if (!boxes.unknown_rank() && (boxes.rank() != 3 || (boxes.dim(2) >= 0 && boxes.dim(2) != 4))) {
    return InvalidArgument("boxes must be [batches, boxes, 4], got ", boxes.ToString());
  }
  if (!scores.unknown_rank() && scores.rank() != 3) {
    return InvalidArgument("scores must be [batches, classes, boxes], got ", scores.ToString());
  }
  if (!boxes.unknown_rank() && !scores.unknown_rank()) {
    const auto differ = [](int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; };
    if (differ(boxes.dim(0), scores.dim(0)) || differ(boxes.dim(1), scores.dim(2))) {
      return InvalidArgument("boxes ", boxes.ToString(), " and scores ", scores.ToString(),
                             " disagree on the batch or box count");
    }
  }
  for (int i = 2; i < 5; ++i) {
    if (!ctx.has_input(i)) continue;
    const Shape& s = ctx.input_tensor(i).shape;
    if (!s.unknown_rank() && s.rank() > 1) return InvalidArgument("input ", i, " must be a scalar, got ", s.ToString());
  }
  SetOutput(ctx, 0, DT::kInt64, Shape{kUnknownDim, 3});
  return absl::OkStatus();
}

// GridSample: X [N, C, H, W] sampled at Grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo].
absl::Status InferGridSample(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const Shape& grid = ctx.input_tensor(1).shape;
  const std::string mode = ctx.Attr<std::string>("mode").value_or("bilinear");
  const std::string padding = ctx.Attr<std::string>("padding_mode").value_or("zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    return InvalidArgument("mode '", mode, "' is not bilinear, nearest or bicubic");
  }
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    return InvalidArgument("padding_mode '", padding, "' is not zeros, border or reflection");
  }
  if (!x.unknown_rank() && x.rank() != 4) return InvalidArgument("X must be [N, C, H, W], got ", x.ToString());
  if (!grid.unknown_rank() && (grid.rank() != 4 || (grid.dim(3) >= 0 && grid.dim(3) != 2))) {
    return InvalidArgument("Grid must be [N, H_out, W_out, 2], got ", grid.ToString());
  }
  Shape out = UnknownShape(4);
  if (!x.unknown_rank()) {
    out.set_dim(0, x.dim(0));
    out.set_dim(1, x.dim(1));
  }
  if (!grid.unknown_rank()) {
    if (x.unknown_rank() || x.dim(0) < 0) out.set_dim(0, grid.dim(0));
    if (x.dim(0) >= 0 && grid.dim(0) >= 0 && x.dim(0) != grid.dim(0)) {
      return InvalidArgument("X ", x.ToString(), " and Grid ", grid.ToString(), " differ in batch");
    }
    out.set_dim(2, grid.dim(1));
    out.set_dim(3, grid.dim(2));
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

// Compress and Unique: input 0's shape with the selected dim unknown (1-D
// without an axis).
absl::Status InferSelectAlongAxis(InferenceContext& ctx, int outputs) {
  const Shape& x = ctx.input_tensor(0).shape;
  Shape out{kUnknownDim};
  if (auto axis = ctx.Attr<int64_t>("axis")) {
    out = x;
    if (!x.unknown_rank()) {
      GE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(*axis, x.rank()));
      out.set_dim(a, kUnknownDim);
    }
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  for (int i = 1; i < outputs; ++i) SetOutput(ctx, i, DT::kInt64, Shape{kUnknownDim});
  return absl::OkStatus();
}

absl::Status InferCompress(InferenceContext& ctx) {
  const Shape& condition = ctx.input_tensor(1).shape;
  if (!condition.unknown_rank() && condition.rank() != 1) {
    return InvalidArgument("condition must be 1-D, got ", condition.ToString());
  }
  return InferSelectAlongAxis(ctx, 1);
}

absl::Status InferUnique(InferenceContext& ctx) { return InferSelectAlongAxis(ctx, 4); }

// NonZero: int64 [rank, count] (a scalar counts as rank 1); the count of
// non-zero elements depends on the data, unless the input has no elements.
absl::Status InferNonZero(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, DT::kInt64, Shape{kUnknownDim, kUnknownDim});
    return absl::OkStatus();
  }
  const int64_t rank = std::max<int64_t>(x.rank(), 1);
  const bool empty = x.IsFullyKnown() && x.NumElementsUnchecked() == 0;
  SetOutput(ctx, 0, DT::kInt64, Shape{rank, empty ? 0 : kUnknownDim});
  return absl::OkStatus();
}

absl::Status InferCastLike(InferenceContext& ctx) {
  SetOutput(ctx, 0, ctx.input_tensor(1).dtype, ctx.input_tensor(0).shape);
  return absl::OkStatus();
}

absl::Status InferTile(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  auto repeats = IntsValue(ctx, 1);
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), UnknownShape(Length1D(ctx, 1)));
    return absl::OkStatus();
  }
  if (!repeats) {
    SetOutput(ctx, 0, Dtype0(ctx), UnknownShape(x.rank()));
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(repeats->size()) != x.rank()) {
    return InvalidArgument("repeats has ", repeats->size(), " values for input ", x.ToString());
  }
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if ((*repeats)[i] < 0) return InvalidArgument("repeats[", i, "] is negative: ", (*repeats)[i]);
    out.push_back(x.dim(i) < 0 ? -1 : x.dim(i) * (*repeats)[i]);
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferOneHot(InferenceContext& ctx) {
  const Shape& indices = ctx.input_tensor(0).shape;
  const DataType dtype = ctx.input_tensor(2).dtype;
  if (indices.unknown_rank()) {
    SetOutput(ctx, 0, dtype, indices);
    return absl::OkStatus();
  }
  const int64_t rank = indices.rank() + 1;
  GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrOr<int64_t>("axis", -1), rank));
  auto depth = ScalarValue(ctx, 1);
  Shape out;
  for (int64_t i = 0, j = 0; i < rank; ++i) {
    out.push_back(i == axis ? (depth ? static_cast<int64_t>(*depth) : -1) : indices.dim(j++));
  }
  SetOutput(ctx, 0, dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferDepthToSpace(InferenceContext& ctx, bool to_space) {
  const Shape& x = ctx.input_tensor(0).shape;
  const int64_t b = ctx.AttrOr<int64_t>("blocksize", 0);
  if (b < 1) return InvalidArgument("blocksize ", b, " must be positive");
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), UnknownShape(4));
    return absl::OkStatus();
  }
  if (x.rank() != 4) return InvalidArgument("input must be 4-D [N, C, H, W], got ", x.ToString());
  auto scale = [](int64_t d, int64_t f) { return d < 0 ? d : d * f; };
  auto divide = [&](int64_t d, int64_t f, const char* what) -> absl::StatusOr<int64_t> {
    if (d >= 0 && d % f != 0) return InvalidArgument(what, " ", d, " is not a multiple of ", f);
    return d < 0 ? d : d / f;
  };
  Shape out{x.dim(0)};
  if (to_space) {
    GE_ASSIGN_OR_RETURN(int64_t c, divide(x.dim(1), b * b, "channels"));
    out.push_back(c);
    out.push_back(scale(x.dim(2), b));
    out.push_back(scale(x.dim(3), b));
  } else {
    out.push_back(scale(x.dim(1), b * b));
    GE_ASSIGN_OR_RETURN(int64_t h, divide(x.dim(2), b, "height"));
    GE_ASSIGN_OR_RETURN(int64_t w, divide(x.dim(3), b, "width"));
    out.push_back(h);
    out.push_back(w);
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferGatherND(InferenceContext& ctx) {
  const Shape& data = ctx.input_tensor(0).shape;
  const Shape& indices = ctx.input_tensor(1).shape;
  const int64_t batch = ctx.AttrOr<int64_t>("batch_dims", 0);
  if (data.unknown_rank() || indices.unknown_rank() || indices.rank() == 0 || indices.dim(indices.rank() - 1) < 0) {
    SetOutput(ctx, 0, Dtype0(ctx), UnknownShape(-1));
    return absl::OkStatus();
  }
  const int64_t k = indices.dim(indices.rank() - 1);
  if (batch < 0 || batch + k > data.rank() || batch >= indices.rank()) {
    return InvalidArgument("indices ", indices.ToString(), " with batch_dims ", batch, " do not fit data ",
                           data.ToString());
  }
  Shape out(indices.span().subspan(0, indices.rank() - 1));
  for (int64_t d : data.span().subspan(batch + k)) out.push_back(d);
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterIndexingOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("DepthToSpace", 13)
                      .Input("input", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", AllTensorTypes())
                      .RequiredAttr("blocksize", Kind::kInt)
                      .Attr("mode", Kind::kString, "DCR")
                      .Infer([](InferenceContext& ctx) { return InferDepthToSpace(ctx, /*to_space=*/true); }));
  MustRegister(r, OpSchemaBuilder("SpaceToDepth", 13)
                      .Input("input", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", AllTensorTypes())
                      .RequiredAttr("blocksize", Kind::kInt)
                      .Infer([](InferenceContext& ctx) { return InferDepthToSpace(ctx, /*to_space=*/false); }));
  MustRegister(r, OpSchemaBuilder("GatherND", 13)
                      .Input("data", "T")
                      .Input("indices", "i64")
                      .Output("output", "T")
                      .TypeConstraint("T", AllTensorTypes())
                      .Attr("batch_dims", Kind::kInt, int64_t{0})
                      .Infer(InferGatherND));
  const auto& all = AllTensorTypes();
  MustRegister(r, OpSchemaBuilder("GatherElements", 13)
                      .Input("data", "T")
                      .Input("indices", "Tind")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .TypeConstraint("Tind", IndexTypes())
                      .Attr("axis", Kind::kInt, int64_t{0})
                      .Infer(InferGatherElements));
  MustRegister(r, OpSchemaBuilder("ScatterElements", 16)
                      .Input("data", "T")
                      .Input("indices", "Tind")
                      .Input("updates", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .TypeConstraint("Tind", IndexTypes())
                      .Attr("axis", Kind::kInt, int64_t{0})
                      .Attr("reduction", Kind::kString, "none")
                      .Infer(SameAsInput0));
  MustRegister(r, OpSchemaBuilder("Trilu", 14)
                      .Input("input", "T")
                      .OptionalInput("k", "i64")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .Attr("upper", Kind::kInt, int64_t{1})
                      .Infer(SameAsInput0));
  MustRegister(r, OpSchemaBuilder("CumSum", 14)
                      .Input("x", "T")
                      .Input("axis", "T2")
                      .Output("y", "T")
                      .TypeConstraint("T", NumericTypes())
                      .TypeConstraint("T2", IndexTypes())
                      .Attr("exclusive", Kind::kInt, int64_t{0})
                      .Attr("reverse", Kind::kInt, int64_t{0})
                      .Infer(SameAsInput0));
  MustRegister(r, OpSchemaBuilder("Range", 11)
                      .Input("start", "T")
                      .Input("limit", "T")
                      .Input("delta", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", Types({DT::kFloat, DT::kDouble, DT::kInt16, DT::kInt32, DT::kInt64}))
                      .ValueInputs({0, 1, 2})
                      .Infer(InferRange));
  MustRegister(r, OpSchemaBuilder("EyeLike", 9)
                      .Input("input", "T1")
                      .Output("output", "T2")
                      .TypeConstraint("T1", Union(NumericTypes(), Types({DT::kBool})))
                      .TypeConstraint("T2", Union(NumericTypes(), Types({DT::kBool})))
                      .OptionalAttr("dtype", Kind::kInt)
                      .Attr("k", Kind::kInt, int64_t{0})
                      .Infer(InferEyeLike));
  MustRegister(r, OpSchemaBuilder("TopK", 11)
                      .Doc("The K largest (or smallest) elements along an axis and their indices.")
                      .Input("X", "T")
                      .Input("K", "i64")
                      .Output("Values", "T")
                      .Output("Indices", "i64")
                      .TypeConstraint("T", NumericTypes())
                      .Attr("axis", Kind::kInt, int64_t{-1})
                      .Attr("largest", Kind::kInt, int64_t{1})
                      .Attr("sorted", Kind::kInt, int64_t{1})
                      .ValueInputs({1})
                      .Infer(InferTopK));
  MustRegister(r, OpSchemaBuilder("NonMaxSuppression", 11)
                      .Doc("Greedy per-class selection of boxes by score, dropping boxes that overlap a "
                           "selected one by more than iou_threshold.")
                      .Input("boxes", "f32")
                      .Input("scores", "f32")
                      .OptionalInput("max_output_boxes_per_class", "i64")
                      .OptionalInput("iou_threshold", "f32")
                      .OptionalInput("score_threshold", "f32")
                      .Output("selected_indices", "i64")
                      .Attr("center_point_box", Kind::kInt, int64_t{0})
                      .ValueDependentOutputShape()  // the count of selected boxes
                      .Infer(InferNonMaxSuppression));
  MustRegister(r, OpSchemaBuilder("GridSample", 16)
                      .Doc("Samples X at the normalized locations of Grid (bilinear, nearest or bicubic).")
                      .Input("X", "T1")
                      .Input("grid", "T2")
                      .Output("Y", "T1")
                      .TypeConstraint("T1", FloatTypes())
                      .TypeConstraint("T2", FloatTypes())
                      .Attr("align_corners", Kind::kInt, int64_t{0})
                      .Attr("mode", Kind::kString, "bilinear")
                      .Attr("padding_mode", Kind::kString, "zeros")
                      .Infer(InferGridSample));
  MustRegister(r, OpSchemaBuilder("Compress", 11)
                      .Doc("The slices along axis (elements of the flattened input without one) whose "
                           "condition is true.")
                      .Input("input", "T")
                      .Input("condition", "bool")
                      .Output("output", "T")
                      .TypeConstraint("T", AllTensorTypes())
                      .OptionalAttr("axis", Kind::kInt)
                      .ValueDependentOutputShape()  // the count of true conditions
                      .Infer(InferCompress));
  MustRegister(r, OpSchemaBuilder("NonZero", 13)
                      .Doc("The indices of the non-zero elements, one row per dim (column-major list of "
                           "coordinates, in row-major element order).")
                      .Input("X", "T")
                      .Output("Y", "i64")
                      .TypeConstraint("T", Union(NumericTypes(), Types({DT::kBool})))
                      .ValueDependentOutputShape()  // the count of non-zero elements
                      .Infer(InferNonZero));
  MustRegister(r, OpSchemaBuilder("Unique", 11)
                      .Doc("The distinct slices along axis (elements without one), their first indices, "
                           "the inverse mapping and the counts.")
                      .Input("X", "T")
                      .Output("Y", "T")
                      .OptionalOutput("indices", "i64")
                      .OptionalOutput("inverse_indices", "i64")
                      .OptionalOutput("counts", "i64")
                      .TypeConstraint("T", AllTensorTypes())
                      .OptionalAttr("axis", Kind::kInt)
                      .Attr("sorted", Kind::kInt, int64_t{1})
                      .ValueDependentOutputShape()  // the count of distinct values
                      .Infer(InferUnique));
  MustRegister(r, OpSchemaBuilder("ScatterND", 16)
                      .Doc("Copies data, then writes (or reduces) slices of updates at index tuples.")
                      .Input("data", "T")
                      .Input("indices", "i64")
                      .Input("updates", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .Attr("reduction", Kind::kString, "none")
                      .Infer(SameAsInput0));
  MustRegister(r, OpSchemaBuilder("ReverseSequence", 10)
                      .Doc("Reverses the first sequence_lens[b] elements along time_axis of every batch b.")
                      .Input("input", "T")
                      .Input("sequence_lens", "i64")
                      .Output("Y", "T")
                      .TypeConstraint("T", all)
                      .Attr("batch_axis", Kind::kInt, int64_t{1})
                      .Attr("time_axis", Kind::kInt, int64_t{0})
                      .Infer(SameAsInput0));
  MustRegister(r, OpSchemaBuilder("Resize", 13)
                      .Doc("Resizes every dim by nearest, linear or cubic interpolation (Upsample and "
                           "Resize-10/11 import into this form).")
                      .Input("X", "T1")
                      .OptionalInput("roi", "T2")
                      .OptionalInput("scales", "f32")
                      .OptionalInput("sizes", "i64")
                      .Output("Y", "T1")
                      .TypeConstraint("T1", NumericTypes())
                      .TypeConstraint("T2", FloatTypes())
                      .Attr("coordinate_transformation_mode", Kind::kString, "half_pixel")
                      .Attr("cubic_coeff_a", Kind::kFloat, -0.75f)
                      .Attr("exclude_outside", Kind::kInt, int64_t{0})
                      .Attr("extrapolation_value", Kind::kFloat, 0.0f)
                      .Attr("mode", Kind::kString, "nearest")
                      .Attr("nearest_mode", Kind::kString, "round_prefer_floor")
                      .ValueInputs({1, 2, 3})
                      .Infer(InferResize));
  MustRegister(r, OpSchemaBuilder("CastLike", 15)
                      .Input("input", "T1")
                      .Input("target_type", "T2")
                      .Output("output", "T2")
                      .TypeConstraint("T1", all)
                      .TypeConstraint("T2", all)
                      .Infer(InferCastLike));
  MustRegister(r, OpSchemaBuilder("Tile", 13)
                      .Input("input", "T")
                      .Input("repeats", "i64")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .ValueInputs({1})
                      .Infer(InferTile));
  MustRegister(r, OpSchemaBuilder("OneHot", 11)
                      .Input("indices", "T1")
                      .Input("depth", "T2")
                      .Input("values", "T3")
                      .Output("output", "T3")
                      .TypeConstraint("T1", NumericTypes())
                      .TypeConstraint("T2", NumericTypes())
                      .TypeConstraint("T3", all)
                      .Attr("axis", Kind::kInt, int64_t{-1})
                      .ValueInputs({1})
                      .Infer(InferOneHot));
}

}  // namespace ge::ops
