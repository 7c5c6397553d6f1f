// Data-movement and shape ops: Reshape, Transpose, Concat, Split, Slice,
// Gather, Unsqueeze, Squeeze, Shape, Cast, ConstantOfShape, Expand, Size.
// Several read the values of shape-like inputs (their value_inputs); when a
// value is unknown at compile time they produce what is still knowable,
// usually the rank from the length of the shape input.
#include "base/ops/op_families.h"

#include <algorithm>

#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using DT = DataType;

DataType Dtype0(const InferenceContext& ctx) { return ctx.input_tensor(0).dtype; }

absl::Status Check1D(const InferenceContext& ctx, int i, std::string_view name) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const Shape& s = ctx.input_tensor(i).shape;
  if (!s.unknown_rank() && s.rank() != 1) {
    return InvalidArgument("input ", i, " (", name, ") must be 1-D, got ", s.ToString());
  }
  return absl::OkStatus();
}

absl::Status InferReshape(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(Check1D(ctx, 1, "shape"));
  Shape out = UnknownShape(Length1D(ctx, 1));
  if (auto target = IntsValue(ctx, 1)) {
    GE_ASSIGN_OR_RETURN(out, ResolveReshape(ctx.input_tensor(0).shape, *target,
                                            ctx.AttrOr<int64_t>("allowzero", 0) != 0));
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferTranspose(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  auto perm = ctx.Attr<std::vector<int64_t>>("perm");
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), perm ? UnknownShape(static_cast<int64_t>(perm->size())) : x);
    return absl::OkStatus();
  }
  const int64_t rank = x.rank();
  std::vector<int64_t> p(rank);
  for (int64_t i = 0; i < rank; ++i) p[i] = perm ? 0 : rank - 1 - i;
  if (perm) {
    if (static_cast<int64_t>(perm->size()) != rank) {
      return InvalidArgument("perm has ", perm->size(), " entries for input of rank ", rank);
    }
    std::vector<bool> seen(rank, false);
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t v = (*perm)[i];
      if (v < 0 || v >= rank || seen[v]) {
        return InvalidArgument("perm is not a permutation of 0..", rank - 1, " (entry ", i, " is ", v, ")");
      }
      seen[v] = true;
      p[i] = v;
    }
  }
  Shape out;
  for (int64_t v : p) out.push_back(x.dim(v));
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferConcat(InferenceContext& ctx) {
  int64_t rank = -1;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input_tensor(i).shape;
    if (s.unknown_rank()) continue;
    if (rank >= 0 && s.rank() != rank) {
      return InvalidArgument("input ", i, " has shape ", s.ToString(), " but input rank is ", rank);
    }
    rank = s.rank();
  }
  if (rank < 0) {
    SetOutput(ctx, 0, Dtype0(ctx), Shape::UnknownRank());
    return absl::OkStatus();
  }
  GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrOr<int64_t>("axis", 0), rank));
  Shape out = UnknownShape(rank);
  int64_t total = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input_tensor(i).shape;
    if (s.unknown_rank()) {
      total = kUnknownDim;
      continue;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) continue;
      if (out.dim(d) >= 0 && s.dim(d) >= 0 && out.dim(d) != s.dim(d)) {
        return InvalidArgument("input ", i, " has shape ", s.ToString(), ": dim ", d, " is ", s.dim(d),
                               " but earlier inputs have ", out.dim(d));
      }
      if (out.dim(d) < 0) out.set_dim(d, s.dim(d));
    }
    if (total < 0 || s.dim(axis) < 0 || __builtin_add_overflow(total, s.dim(axis), &total)) total = kUnknownDim;
  }
  out.set_dim(axis, total);
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

// The sizes Split cuts `dim` into: the `split` input's value, or equal parts.
absl::StatusOr<std::vector<int64_t>> SplitSizes(const InferenceContext& ctx, int64_t dim) {
  const int n = ctx.num_outputs();
  if (ctx.has_input(1)) {
    auto split = IntsValue(ctx, 1);
    if (!split) return std::vector<int64_t>(n, kUnknownDim);
    if (static_cast<int>(split->size()) != n) {
      return InvalidArgument("input 1 (split) has ", split->size(), " sizes for ", n, " outputs");
    }
    int64_t sum = 0;
    for (int64_t s : *split) {
      if (s < 0) return InvalidArgument("input 1 (split) has a negative size ", s);
      if (__builtin_add_overflow(sum, s, &sum)) return InvalidArgument("input 1 (split) overflows int64");
    }
    if (dim >= 0 && sum != dim) {
      return InvalidArgument("input 1 (split) sums to ", sum, " but the split dim is ", dim);
    }
    return *split;
  }
  if (dim < 0) return std::vector<int64_t>(n, kUnknownDim);
  if (dim % n != 0) return InvalidArgument("dim ", dim, " does not split evenly into ", n, " outputs");
  return std::vector<int64_t>(n, dim / n);
}

absl::Status InferSplit(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(Check1D(ctx, 1, "split"));
  const Shape& x = ctx.input_tensor(0).shape;
  if (x.unknown_rank()) {
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, Dtype0(ctx), x);
    return absl::OkStatus();
  }
  GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrOr<int64_t>("axis", 0), x.rank()));
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, SplitSizes(ctx, x.dim(axis)));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    Shape out = x;
    out.set_dim(axis, sizes[i]);
    ctx.set_output(i, Dtype0(ctx), std::move(out));
  }
  return absl::OkStatus();
}

// Slice when some bounds are unknown: the sliced axes become -1.
absl::StatusOr<Shape> SliceWithUnknownBounds(const InferenceContext& ctx, const Shape& x) {
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(3)) {
    axes = IntsValue(ctx, 3);
  } else if (int64_t n = Length1D(ctx, 1); n >= 0) {
    axes.emplace();
    for (int64_t i = 0; i < n; ++i) axes->push_back(i);
  }
  if (!axes) return UnknownShape(x.rank());
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(*axes, x.rank()));
  Shape out = x;
  for (int64_t a : normalized) out.set_dim(a, kUnknownDim);
  return out;
}

absl::Status InferSlice(InferenceContext& ctx) {
  for (int i = 1; i <= 4; ++i) GE_RETURN_IF_ERROR(Check1D(ctx, i, "starts/ends/axes/steps"));
  const Shape& x = ctx.input_tensor(0).shape;
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), x);
    return absl::OkStatus();
  }
  auto starts = IntsValue(ctx, 1);
  auto ends = IntsValue(ctx, 2);
  std::optional<std::vector<int64_t>> axes(std::vector<int64_t>{}), steps(std::vector<int64_t>{});
  if (ctx.has_input(3)) axes = IntsValue(ctx, 3);
  if (ctx.has_input(4)) steps = IntsValue(ctx, 4);
  Shape out;
  if (starts && ends && axes && steps) {
    GE_ASSIGN_OR_RETURN(SliceBounds bounds, ResolveSlice(x, *starts, *ends, *axes, *steps));
    out = std::move(bounds.output);
  } else {
    GE_ASSIGN_OR_RETURN(out, SliceWithUnknownBounds(ctx, x));
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferGather(InferenceContext& ctx) {
  const Shape& data = ctx.input_tensor(0).shape;
  const Shape& indices = ctx.input_tensor(1).shape;
  if (data.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), data);
    return absl::OkStatus();
  }
  GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrOr<int64_t>("axis", 0), data.rank()));
  if (indices.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), indices);
    return absl::OkStatus();
  }
  Shape out(data.span().subspan(0, axis));
  for (int64_t d : indices.dims()) out.push_back(d);
  for (int64_t d : data.span().subspan(axis + 1)) out.push_back(d);
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferUnsqueeze(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const int64_t n = Length1D(ctx, 1);
  const int64_t rank = x.unknown_rank() || n < 0 ? -1 : x.rank() + n;
  auto axes = IntsValue(ctx, 1);
  if (!axes || rank < 0) {
    SetOutput(ctx, 0, Dtype0(ctx), UnknownShape(rank));
    return absl::OkStatus();
  }
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(*axes, rank));
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    const bool inserted = std::find(normalized.begin(), normalized.end(), i) != normalized.end();
    out.push_back(inserted ? 1 : x.dim(next++));
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferSqueeze(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  Shape out;
  if (x.unknown_rank()) {
    out = x;
  } else if (!ctx.has_input(1)) {
    // Without axes every 1 goes; an unknown dim might be a 1.
    for (int64_t d : x.dims()) {
      if (d < 0) {
        out = Shape::UnknownRank();
        break;
      }
      if (d != 1) out.push_back(d);
    }
  } else if (auto axes = IntsValue(ctx, 1)) {
    GE_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(*axes, x.rank()));
    for (int64_t i = 0; i < x.rank(); ++i) {
      const bool squeezed = std::find(normalized.begin(), normalized.end(), i) != normalized.end();
      if (squeezed && x.dim(i) >= 0 && x.dim(i) != 1) {
        return InvalidArgument("cannot squeeze axis ", i, " of shape ", x.ToString(), ": its dim is not 1");
      }
      if (!squeezed) out.push_back(x.dim(i));
    }
  } else {
    const int64_t n = Length1D(ctx, 1);
    out = UnknownShape(n < 0 ? -1 : x.rank() - n);
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferShape(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, DT::kInt64, Shape{kUnknownDim});
    return absl::OkStatus();
  }
  const int64_t rank = x.rank();
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(ctx.AttrOr<int64_t>("start", 0));
  const int64_t end = clamp(ctx.AttrOr<int64_t>("end", rank));
  SetOutput(ctx, 0, DT::kInt64, Shape{std::max<int64_t>(0, end - start)});
  return absl::OkStatus();
}

absl::StatusOr<DataType> ToAttr(const InferenceContext& ctx) {
  const int64_t to = ctx.AttrOr<int64_t>("to", 0);
  if (to < 1 || to > kMaxDataTypeValue) {
    return InvalidArgument("attribute 'to' is ", to, ", not a data type");
  }
  return static_cast<DataType>(to);
}

absl::Status InferCast(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(DataType to, ToAttr(ctx));
  SetOutput(ctx, 0, to, ctx.input_tensor(0).shape);
  return absl::OkStatus();
}

absl::Status InferConstantOfShape(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(Check1D(ctx, 0, "input"));
  DataType dtype = DT::kFloat;
  if (auto value = ctx.Attr<Tensor>("value")) {
    if (value->NumElements() != 1) {
      return InvalidArgument("attribute 'value' must hold one element, got ", value->shape().ToString());
    }
    dtype = value->dtype();
  }
  Shape out = UnknownShape(Length1D(ctx, 0));
  if (auto dims = IntsValue(ctx, 0)) {
    for (int64_t d : *dims) {
      if (d < 0) return InvalidArgument("input 0 asks for a negative dim ", d);
    }
    out = Shape(absl::MakeConstSpan(*dims));
  }
  SetOutput(ctx, 0, dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferExpand(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(Check1D(ctx, 1, "shape"));
  Shape target = UnknownShape(Length1D(ctx, 1));
  if (auto dims = IntsValue(ctx, 1)) {
    for (int64_t d : *dims) {
      if (d < 0) return InvalidArgument("input 1 (shape) has a negative dim ", d);
    }
    target = Shape(absl::MakeConstSpan(*dims));
  }
  GE_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(ctx.input_tensor(0).shape, target));
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

absl::Status InferSize(InferenceContext& ctx) {
  SetOutput(ctx, 0, DT::kInt64, Shape{});
  return absl::OkStatus();
}

void RegisterShapeOps(OpRegistry& r) {
  const auto& all = AllTensorTypes();
  MustRegister(r, OpSchemaBuilder("Reshape", 14)
                      .Input("data", "T")
                      .Input("shape", "i64")
                      .Output("reshaped", "T")
                      .TypeConstraint("T", all)
                      .Attr("allowzero", Kind::kInt, int64_t{0})
                      .ValueInputs({1})
                      .View(0, 0)
                      .Infer(InferReshape));
  MustRegister(r, OpSchemaBuilder("Unsqueeze", 13)
                      .Input("data", "T")
                      .Input("axes", "i64")
                      .Output("expanded", "T")
                      .TypeConstraint("T", all)
                      .ValueInputs({1})
                      .View(0, 0)
                      .Infer(InferUnsqueeze));
  MustRegister(r, OpSchemaBuilder("Squeeze", 13)
                      .Input("data", "T")
                      .OptionalInput("axes", "i64")
                      .Output("squeezed", "T")
                      .TypeConstraint("T", all)
                      .ValueInputs({1})
                      .View(0, 0)
                      .Infer(InferSqueeze));
  MustRegister(r, OpSchemaBuilder("Transpose", 13)
                      .Input("data", "T")
                      .Output("transposed", "T")
                      .TypeConstraint("T", all)
                      .OptionalAttr("perm", Kind::kInts)
                      .Infer(InferTranspose));
  MustRegister(r, OpSchemaBuilder("Expand", 13)
                      .Input("input", "T")
                      .Input("shape", "i64")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .ValueInputs({1})
                      .Infer(InferExpand));
}

// Ops whose outputs describe or build shapes rather than move data.
void RegisterShapeValueOps(OpRegistry& r) {
  const auto& all = AllTensorTypes();
  MustRegister(r, OpSchemaBuilder("Shape", 15)
                      .Input("data", "T")
                      .Output("shape", "i64")
                      .TypeConstraint("T", all)
                      .Attr("start", Kind::kInt, int64_t{0})
                      .OptionalAttr("end", Kind::kInt)
                      .Infer(InferShape));
  MustRegister(r, OpSchemaBuilder("Size", 13)
                      .Input("data", "T")
                      .Output("size", "i64")
                      .TypeConstraint("T", all)
                      .Infer(InferSize));
  MustRegister(r, OpSchemaBuilder("ConstantOfShape", 9)
                      .Input("input", "i64")
                      .Output("output", "T2")
                      .TypeConstraint("T2", Union(NumericTypes(), Types({DT::kBool})))
                      .OptionalAttr("value", Kind::kTensor)
                      .ValueInputs({0})
                      .Infer(InferConstantOfShape));
  MustRegister(r, OpSchemaBuilder("Cast", 13)
                      .Input("input", "T1")
                      .Output("output", "T2")
                      .TypeConstraint("T1", all)
                      .TypeConstraint("T2", all)
                      .RequiredAttr("to", Kind::kInt)
                      .Infer(InferCast));
}

// Pad: each dim grows by its begin and end pads (negative pads crop) when
// the pads are known; otherwise only the rank is known.
absl::Status InferPad(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const std::string mode = ctx.Attr<std::string>("mode").value_or("constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    return InvalidArgument("mode '", mode, "' is not constant, reflect, edge or wrap");
  }
  GE_RETURN_IF_ERROR(Check1D(ctx, 1, "pads"));
  if (ctx.has_input(2)) {
    const Shape& v = ctx.input_tensor(2).shape;
    if (!v.unknown_rank() && v.rank() > 1) {
      return InvalidArgument("constant_value must be a scalar, got ", v.ToString());
    }
  }
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, Dtype0(ctx), x);
    return absl::OkStatus();
  }
  const int64_t rank = x.rank();
  const int64_t length = Length1D(ctx, 1);
  if (length >= 0 && length != 2 * rank) {
    return InvalidArgument("pads has ", length, " values, expected ", 2 * rank, " for input ", x.ToString());
  }
  Shape out = UnknownShape(rank);
  if (auto pads = IntsValue(ctx, 1)) {
    for (int64_t d = 0; d < rank; ++d) {
      if (x.dim(d) < 0) continue;
      const int64_t dim = x.dim(d) + (*pads)[d] + (*pads)[rank + d];
      if (dim < 0) return InvalidArgument("pads crop dim ", d, " of ", x.ToString(), " below 0");
      out.set_dim(d, dim);
    }
  }
  SetOutput(ctx, 0, Dtype0(ctx), std::move(out));
  return absl::OkStatus();
}

void RegisterDataMovementOps(OpRegistry& r) {
  const auto& all = AllTensorTypes();
  MustRegister(r, OpSchemaBuilder("Concat", 13)
                      .VariadicInput("inputs", "T", 1)
                      .Output("concat_result", "T")
                      .TypeConstraint("T", all)
                      .RequiredAttr("axis", Kind::kInt)
                      .Infer(InferConcat));
  MustRegister(r, OpSchemaBuilder("Split", 13)
                      .Input("input", "T")
                      .OptionalInput("split", "i64")
                      .VariadicOutput("outputs", "T", 1)
                      .TypeConstraint("T", all)
                      .Attr("axis", Kind::kInt, int64_t{0})
                      .ValueInputs({1})
                      .Infer(InferSplit));
  MustRegister(r, OpSchemaBuilder("Slice", 13)
                      .Input("data", "T")
                      .Input("starts", "Tind")
                      .Input("ends", "Tind")
                      .OptionalInput("axes", "Tind")
                      .OptionalInput("steps", "Tind")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .TypeConstraint("Tind", IndexTypes())
                      .ValueInputs({1, 2, 3, 4})
                      .Infer(InferSlice));
  MustRegister(r, OpSchemaBuilder("Pad", 13)
                      .Doc("Pads (or, with negative pads, crops) every dim with a constant, the edge "
                           "values, a reflection or a wrap-around.")
                      .Input("data", "T")
                      .Input("pads", "i64")
                      .OptionalInput("constant_value", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .Attr("mode", Kind::kString, "constant")
                      .ValueInputs({1})
                      .Infer(InferPad));
  MustRegister(r, OpSchemaBuilder("Gather", 13)
                      .Input("data", "T")
                      .Input("indices", "Tind")
                      .Output("output", "T")
                      .TypeConstraint("T", all)
                      .TypeConstraint("Tind", IndexTypes())
                      .Attr("axis", Kind::kInt, int64_t{0})
                      .Infer(InferGather));
}

}  // namespace

void RegisterTensorOps(OpRegistry& registry) {
  RegisterShapeOps(registry);
  RegisterShapeValueOps(registry);
  RegisterDataMovementOps(registry);
}

}  // namespace ge::ops
