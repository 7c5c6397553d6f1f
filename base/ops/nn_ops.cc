// Neural-network ops: convolution and pooling (window geometry from
// shape_utils, shared with the kernels), normalization, softmax, dropout in
// its inference form, matrix products and Flatten.
#include "base/ops/op_families.h"

#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using DT = DataType;

// The dim that several 1-D inputs and a dim of X must agree on (BatchNorm's
// C): known wins, known values must match.
absl::StatusOr<int64_t> AgreeOnChannels(const InferenceContext& ctx, int64_t channels,
                                        const std::vector<int>& inputs) {
  for (int i : inputs) {
    if (!ctx.has_input(i)) continue;
    const Shape& s = ctx.input_tensor(i).shape;
    if (s.unknown_rank()) continue;
    if (s.rank() != 1) return InvalidArgument("input ", i, " must be 1-D, got ", s.ToString());
    if (channels >= 0 && s.dim(0) >= 0 && channels != s.dim(0)) {
      return InvalidArgument("input ", i, " has shape ", s.ToString(), " but the channel count is ",
                             channels);
    }
    if (channels < 0) channels = s.dim(0);
  }
  return channels;
}

absl::Status InferConv(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrsFromOp(ctx.op()));
  GE_ASSIGN_OR_RETURN(WindowGeometry g,
                      ConvOutputShape(ctx.input_tensor(0).shape, ctx.input_tensor(1).shape, attrs));
  if (!g.output.unknown_rank()) {
    GE_ASSIGN_OR_RETURN(int64_t m, AgreeOnChannels(ctx, g.output.dim(1), {2}));
    g.output.set_dim(1, m);
  }
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(g.output));
  return absl::OkStatus();
}

absl::Status InferConvTranspose(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrsFromOp(ctx.op()));
  GE_ASSIGN_OR_RETURN(WindowGeometry g, ConvTransposeOutputShape(ctx.input_tensor(0).shape,
                                                                 ctx.input_tensor(1).shape, attrs));
  if (!g.output.unknown_rank()) {
    GE_ASSIGN_OR_RETURN(int64_t m, AgreeOnChannels(ctx, g.output.dim(1), {2}));
    g.output.set_dim(1, m);
  }
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(g.output));
  return absl::OkStatus();
}

absl::Status InferPool(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrsFromOp(ctx.op()));
  GE_ASSIGN_OR_RETURN(WindowGeometry g, PoolOutputShape(ctx.input_tensor(0).shape, attrs));
  SetOutput(ctx, 1, DT::kInt64, g.output);
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(g.output));
  return absl::OkStatus();
}

// MaxUnpool: output_shape's value when given, else per spatial dim
// (in - 1) * stride + kernel - pads.
absl::Status InferMaxUnpool(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  GE_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrsFromOp(ctx.op()));
  const size_t n = attrs.kernel_shape.size();
  if (n == 0) return InvalidArgument("kernel_shape is required and must not be empty");
  if (!x.unknown_rank() && x.rank() != static_cast<int64_t>(n) + 2) {
    return InvalidArgument("X ", x.ToString(), " needs rank ", n + 2, " for kernel_shape of ", n, " dims");
  }
  if (ctx.has_input(2)) {
    if (auto shape = IntsValue(ctx, 2)) {
      if (shape->size() != n + 2) {
        return InvalidArgument("output_shape has ", shape->size(), " values, expected ", n + 2);
      }
      SetOutput(ctx, 0, ctx.input_tensor(0).dtype, Shape(*shape));
    } else {
      SetOutput(ctx, 0, ctx.input_tensor(0).dtype, UnknownShape(static_cast<int64_t>(n) + 2));
    }
    return absl::OkStatus();
  }
  const std::vector<int64_t> strides = attrs.strides.empty() ? std::vector<int64_t>(n, 1) : attrs.strides;
  const std::vector<int64_t> pads = attrs.pads.empty() ? std::vector<int64_t>(2 * n, 0) : attrs.pads;
  if (strides.size() != n || pads.size() != 2 * n) {
    return InvalidArgument("strides and pads must have ", n, " and ", 2 * n, " values");
  }
  Shape out = UnknownShape(static_cast<int64_t>(n) + 2);
  if (!x.unknown_rank()) {
    out.set_dim(0, x.dim(0));
    out.set_dim(1, x.dim(1));
    for (size_t i = 0; i < n; ++i) {
      if (x.dim(i + 2) < 0) continue;
      const int64_t d = (x.dim(i + 2) - 1) * strides[i] + attrs.kernel_shape[i] - pads[i] - pads[i + n];
      if (d < 0) return InvalidArgument("spatial dim ", i, " of the output would be negative");
      out.set_dim(i + 2, d);
    }
  }
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(out));
  return absl::OkStatus();
}

// RoiAlign: [num_rois, C, output_height, output_width].
absl::Status InferRoiAlign(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const Shape& rois = ctx.input_tensor(1).shape;
  const Shape& indices = ctx.input_tensor(2).shape;
  if (!x.unknown_rank() && x.rank() != 4) return InvalidArgument("X must be [N, C, H, W], got ", x.ToString());
  if (!rois.unknown_rank() && (rois.rank() != 2 || (rois.dim(1) >= 0 && rois.dim(1) != 4))) {
    return InvalidArgument("rois must be [num_rois, 4], got ", rois.ToString());
  }
  if (!indices.unknown_rank() && indices.rank() != 1) {
    return InvalidArgument("batch_indices must be 1-D, got ", indices.ToString());
  }
  const std::string mode = ctx.Attr<std::string>("mode").value_or("avg");
  if (mode != "avg" && mode != "max") return InvalidArgument("mode '", mode, "' is not avg or max");
  int64_t r = rois.unknown_rank() ? kUnknownDim : rois.dim(0);
  if (r < 0 && !indices.unknown_rank()) r = indices.dim(0);
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype,
            Shape{r, x.unknown_rank() ? kUnknownDim : x.dim(1), ctx.Attr<int64_t>("output_height").value_or(1),
                  ctx.Attr<int64_t>("output_width").value_or(1)});
  return absl::OkStatus();
}

absl::Status InferGlobalPool(InferenceContext& ctx) {
  Shape shape = ctx.input_tensor(0).shape;
  if (!shape.unknown_rank()) {
    if (shape.rank() < 2) return InvalidArgument("input 0 needs rank >= 2, got ", shape.ToString());
    for (size_t i = 2; i < shape.dims().size(); ++i) shape.set_dim(i, 1);
  }
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(shape));
  return absl::OkStatus();
}

absl::Status InferBatchNorm(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (!x.unknown_rank() && x.rank() < 2) return InvalidArgument("input 0 (X) needs rank >= 2, got ", x.ToString());
  int64_t channels = x.unknown_rank() ? kUnknownDim : x.dim(1);
  GE_ASSIGN_OR_RETURN(channels, AgreeOnChannels(ctx, channels, {1, 2, 3, 4}));
  Shape y = x;
  if (!y.unknown_rank()) y.set_dim(1, channels);
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(y));
  SetOutput(ctx, 1, ctx.input_tensor(3).dtype, Shape{channels});
  SetOutput(ctx, 2, ctx.input_tensor(4).dtype, Shape{channels});
  return absl::OkStatus();
}

// Softmax, LogSoftmax, Hardmax: the output is the input; the axis must fit.
absl::Status InferAxisSameShape(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (!x.unknown_rank()) {
    GE_RETURN_IF_ERROR(NormalizeAxis(ctx.AttrOr<int64_t>("axis", -1), x.rank()).status());
  }
  return SameAsInput0(ctx);
}

absl::Status InferLayerNorm(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  const int64_t stash = ctx.AttrOr<int64_t>("stash_type", 1);
  if (stash != static_cast<int64_t>(DT::kFloat) && stash != static_cast<int64_t>(DT::kBFloat16)) {
    return InvalidArgument("stash_type ", stash, " must be 1 (f32) or 16 (bf16)");
  }
  Shape stats = Shape::UnknownRank();
  if (!x.unknown_rank()) {
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrOr<int64_t>("axis", -1), x.rank()));
    stats = x;
    for (int64_t i = axis; i < x.rank(); ++i) stats.set_dim(i, 1);
    for (int i = 1; i <= 2; ++i) {
      if (!ctx.has_input(i)) continue;
      absl::Status s = CheckUnidirectionalBroadcast(ctx.input_tensor(i).shape,
                                                    Shape(x.span().subspan(axis)));
      if (!s.ok()) return Annotate(s, StrCat("input ", i, i == 1 ? " (Scale)" : " (B)"));
    }
  }
  SetOutput(ctx, 0, ctx.input_type(0));
  SetOutput(ctx, 1, static_cast<DataType>(stash), stats);
  SetOutput(ctx, 2, static_cast<DataType>(stash), stats);
  return absl::OkStatus();
}

absl::Status InferDropout(InferenceContext& ctx) {
  if (ctx.has_input(1)) {
    const Shape& ratio = ctx.input_tensor(1).shape;
    if (ratio.IsFullyKnown() && ratio.NumElementsUnchecked() != 1) {
      return InvalidArgument("input 1 (ratio) must be a scalar, got ", ratio.ToString());
    }
  }
  SetOutput(ctx, 1, DT::kBool, ctx.input_tensor(0).shape);
  return SameAsInput0(ctx);
}

absl::Status InferGemm(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(Shape y, GemmShape(ctx.input_tensor(0).shape, ctx.input_tensor(1).shape,
                                         ctx.AttrOr<int64_t>("transA", 0) != 0,
                                         ctx.AttrOr<int64_t>("transB", 0) != 0));
  if (ctx.has_input(2)) {
    absl::Status s = CheckUnidirectionalBroadcast(ctx.input_tensor(2).shape, y);
    if (!s.ok()) return Annotate(s, "input 2 (C)");
  }
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(y));
  return absl::OkStatus();
}

absl::Status InferMatMul(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(Shape y, MatMulShape(ctx.input_tensor(0).shape, ctx.input_tensor(1).shape));
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(y));
  return absl::OkStatus();
}

// Det: [*, M, M] -> [*].
absl::Status InferDet(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  if (x.unknown_rank()) {
    SetOutput(ctx, 0, ctx.input_tensor(0).dtype, x);
    return absl::OkStatus();
  }
  const int64_t rank = x.rank();
  if (rank < 2) return InvalidArgument("input must be [*, M, M], got ", x.ToString());
  const int64_t a = x.dim(rank - 2), b = x.dim(rank - 1);
  if (a >= 0 && b >= 0 && a != b) return InvalidArgument("input ", x.ToString(), " is not square");
  Shape out;
  for (int64_t d = 0; d < rank - 2; ++d) out.push_back(x.dim(d));
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(out));
  return absl::OkStatus();
}

// Einsum: the output labels' sizes; unknown rank while an input's is.
absl::Status InferEinsum(InferenceContext& ctx) {
  const std::string equation = ctx.Attr<std::string>("equation").value_or("");
  std::vector<int64_t> ranks;
  std::vector<Shape> shapes;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    shapes.push_back(ctx.input_tensor(i).shape);
    ranks.push_back(shapes.back().rank());
    if (shapes.back().unknown_rank()) {
      SetOutput(ctx, 0, ctx.input_tensor(0).dtype, Shape::UnknownRank());
      return absl::OkStatus();
    }
  }
  GE_ASSIGN_OR_RETURN(EinsumSpec spec, ParseEinsum(equation, ranks));
  GE_ASSIGN_OR_RETURN(auto sizes, EinsumLabelSizes(spec, shapes));
  Shape out;
  for (int label : spec.output) out.push_back(sizes.at(label));
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferFlatten(InferenceContext& ctx) {
  const Shape& x = ctx.input_tensor(0).shape;
  Shape y{kUnknownDim, kUnknownDim};
  if (!x.unknown_rank()) {
    int64_t axis = ctx.AttrOr<int64_t>("axis", 1);
    // Flatten's axis ranges over [-r, r]: r puts everything in the first dim.
    if (axis < -x.rank() || axis > x.rank()) {
      return InvalidArgument("axis ", axis, " is out of range for rank ", x.rank(), " (allowed ",
                             -x.rank(), "..", x.rank(), ")");
    }
    if (axis < 0) axis += x.rank();
    y = Shape{DimProduct(x.span().subspan(0, axis)), DimProduct(x.span().subspan(axis))};
  }
  SetOutput(ctx, 0, ctx.input_tensor(0).dtype, std::move(y));
  return absl::OkStatus();
}

// The attributes every window op has; pooling requires kernel_shape.
OpSchemaBuilder& AddWindowAttrs(OpSchemaBuilder& b, bool kernel_required) {
  if (kernel_required) {
    b.RequiredAttr("kernel_shape", Kind::kInts);
  } else {
    b.OptionalAttr("kernel_shape", Kind::kInts);
  }
  return b.Attr("auto_pad", Kind::kString, "NOTSET")
      .OptionalAttr("pads", Kind::kInts)
      .OptionalAttr("strides", Kind::kInts);
}

void RegisterWindowOps(OpRegistry& r) {
  OpSchemaBuilder conv("Conv", 11);
  AddWindowAttrs(conv.Input("X", "T").Input("W", "T").OptionalInput("B", "T").Output("Y", "T"),
                 /*kernel_required=*/false)
      .TypeConstraint("T", FloatTypes())
      .OptionalAttr("dilations", Kind::kInts)
      .Attr("group", Kind::kInt, int64_t{1})
      .Infer(InferConv);
  MustRegister(r, conv);
  OpSchemaBuilder conv_transpose("ConvTranspose", 11);
  AddWindowAttrs(conv_transpose.Input("X", "T").Input("W", "T").OptionalInput("B", "T").Output("Y", "T"),
                 /*kernel_required=*/false)
      .Doc("Transposed convolution (the gradient of Conv with respect to its input).")
      .TypeConstraint("T", FloatTypes())
      .OptionalAttr("dilations", Kind::kInts)
      .Attr("group", Kind::kInt, int64_t{1})
      .OptionalAttr("output_padding", Kind::kInts)
      .OptionalAttr("output_shape", Kind::kInts)
      .Infer(InferConvTranspose);
  MustRegister(r, conv_transpose);
  OpSchemaBuilder max_pool("MaxPool", 12);
  AddWindowAttrs(max_pool.Input("X", "T").Output("Y", "T").OptionalOutput("Indices", "i64"),
                 /*kernel_required=*/true)
      .TypeConstraint("T", Union(FloatTypes(), Types({DT::kInt8, DT::kUint8})))
      .Attr("ceil_mode", Kind::kInt, int64_t{0})
      .OptionalAttr("dilations", Kind::kInts)
      .Attr("storage_order", Kind::kInt, int64_t{0})
      .Infer(InferPool);
  MustRegister(r, max_pool);
  OpSchemaBuilder avg_pool("AveragePool", 11);
  AddWindowAttrs(avg_pool.Input("X", "T").Output("Y", "T"), /*kernel_required=*/true)
      .TypeConstraint("T", FloatTypes())
      .Attr("ceil_mode", Kind::kInt, int64_t{0})
      .Attr("count_include_pad", Kind::kInt, int64_t{0})
      .Infer(InferPool);
  MustRegister(r, avg_pool);
  OpSchemaBuilder max_unpool("MaxUnpool", 11);
  max_unpool.Input("X", "T1").Input("I", "i64").OptionalInput("output_shape", "i64").Output("output", "T1");
  AddWindowAttrs(max_unpool, /*kernel_required=*/true)
      .Doc("Places X's values at the flat output positions MaxPool's indices name; zeros elsewhere.")
      .TypeConstraint("T1", FloatTypes())
      .ValueInputs({2})
      .Infer(InferMaxUnpool);
  MustRegister(r, max_unpool);
  MustRegister(r, OpSchemaBuilder("RoiAlign", 16)
                      .Doc("Average (or max) of bilinear samples of X over each region's output bins.")
                      .Input("X", "T1")
                      .Input("rois", "T1")
                      .Input("batch_indices", "i64")
                      .Output("Y", "T1")
                      .TypeConstraint("T1", FloatTypes())
                      .Attr("coordinate_transformation_mode", Kind::kString, "half_pixel")
                      .Attr("mode", Kind::kString, "avg")
                      .Attr("output_height", Kind::kInt, int64_t{1})
                      .Attr("output_width", Kind::kInt, int64_t{1})
                      .Attr("sampling_ratio", Kind::kInt, int64_t{0})
                      .Attr("spatial_scale", Kind::kFloat, 1.0f)
                      .Infer(InferRoiAlign));
  for (const char* type : {"GlobalAveragePool", "GlobalMaxPool"}) {
    MustRegister(r, OpSchemaBuilder(type, 1)
                        .Input("X", "T")
                        .Output("Y", "T")
                        .TypeConstraint("T", FloatTypes())
                        .Infer(InferGlobalPool));
  }
}

void RegisterNormalizationOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("BatchNormalization", 15)
                      .Input("X", "T")
                      .Input("scale", "T1")
                      .Input("B", "T1")
                      .Input("input_mean", "T2")
                      .Input("input_var", "T2")
                      .Output("Y", "T")
                      .OptionalOutput("running_mean", "T2")
                      .OptionalOutput("running_var", "T2")
                      .TypeConstraint("T", FloatTypes())
                      .TypeConstraint("T1", FloatTypes())
                      .TypeConstraint("T2", FloatTypes())
                      .Attr("epsilon", Kind::kFloat, 1e-5f)
                      .Attr("momentum", Kind::kFloat, 0.9f)
                      .Attr("training_mode", Kind::kInt, int64_t{0})
                      .Inplace(0, 0)
                      .Infer(InferBatchNorm));
  MustRegister(r, OpSchemaBuilder("InstanceNormalization", 6)
                      .Doc("Normalizes every (batch, channel) plane of X, then scales and shifts per channel.")
                      .Input("input", "T")
                      .Input("scale", "T")
                      .Input("B", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", FloatTypes())
                      .Attr("epsilon", Kind::kFloat, 1e-5f)
                      .Infer(SameAsInput0));
  MustRegister(r, OpSchemaBuilder("LRN", 13)
                      .Doc("Local response normalization across channels (NCHW...).")
                      .Input("X", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", FloatTypes())
                      .Attr("alpha", Kind::kFloat, 1e-4f)
                      .Attr("beta", Kind::kFloat, 0.75f)
                      .Attr("bias", Kind::kFloat, 1.0f)
                      .RequiredAttr("size", Kind::kInt)
                      .Infer(SameAsInput0));
  MustRegister(r, OpSchemaBuilder("LayerNormalization", 17)
                      .Input("X", "T")
                      .Input("Scale", "T")
                      .OptionalInput("B", "T")
                      .Output("Y", "T")
                      .OptionalOutput("Mean", "U")
                      .OptionalOutput("InvStdDev", "U")
                      .TypeConstraint("T", FloatTypes())
                      .TypeConstraint("U", Types({DT::kFloat, DT::kBFloat16}))
                      .Attr("axis", Kind::kInt, int64_t{-1})
                      .Attr("epsilon", Kind::kFloat, 1e-5f)
                      .Attr("stash_type", Kind::kInt, int64_t{1})
                      .Infer(InferLayerNorm));
  for (const char* type : {"Softmax", "LogSoftmax", "Hardmax"}) {
    MustRegister(r, OpSchemaBuilder(type, 13)
                        .Input("input", "T")
                        .Output("output", "T")
                        .TypeConstraint("T", FloatTypes())
                        .Attr("axis", Kind::kInt, int64_t{-1})
                        .Inplace(0, 0)
                        .Infer(InferAxisSameShape));
  }
  MustRegister(r, OpSchemaBuilder("Dropout", 13)
                      .Doc("Inference form: output = data; the mask, when asked for, is all true.")
                      .Input("data", "T")
                      .OptionalInput("ratio", "T1")
                      .OptionalInput("training_mode", "bool")
                      .Output("output", "T")
                      .OptionalOutput("mask", "bool")
                      .TypeConstraint("T", FloatTypes())
                      .TypeConstraint("T1", FloatTypes())
                      .OptionalAttr("seed", Kind::kInt)
                      .View(0, 0)
                      .Infer(InferDropout));
}

void RegisterMatrixOps(OpRegistry& r) {
  const auto gemm_types = Union(FloatTypes(), Types({DT::kInt32, DT::kInt64, DT::kUint32, DT::kUint64}));
  MustRegister(r, OpSchemaBuilder("Gemm", 13)
                      .Input("A", "T")
                      .Input("B", "T")
                      .OptionalInput("C", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", gemm_types)
                      .Attr("alpha", Kind::kFloat, 1.0f)
                      .Attr("beta", Kind::kFloat, 1.0f)
                      .Attr("transA", Kind::kInt, int64_t{0})
                      .Attr("transB", Kind::kInt, int64_t{0})
                      .Infer(InferGemm));
  MustRegister(r, OpSchemaBuilder("MatMul", 13)
                      .Input("A", "T")
                      .Input("B", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", gemm_types)
                      .Infer(InferMatMul));
  MustRegister(r, OpSchemaBuilder("Det", 11)
                      .Doc("The determinant of each square matrix in the last two dims.")
                      .Input("X", "T")
                      .Output("Y", "T")
                      .TypeConstraint("T", FloatTypes())
                      .Infer(InferDet));
  MustRegister(r, OpSchemaBuilder("Einsum", 12)
                      .Doc("Sums products of the inputs' elements over the labels the equation leaves out.")
                      .VariadicInput("Inputs", "T", 1)
                      .Output("Output", "T")
                      .TypeConstraint("T", NumericTypes())
                      .RequiredAttr("equation", Kind::kString)
                      .Infer(InferEinsum));
  MustRegister(r, OpSchemaBuilder("Flatten", 13)
                      .Input("input", "T")
                      .Output("output", "T")
                      .TypeConstraint("T", AllTensorTypes())
                      .Attr("axis", Kind::kInt, int64_t{1})
                      .View(0, 0)
                      .Infer(InferFlatten));
}

}  // namespace

void RegisterNnOps(OpRegistry& registry) {
  RegisterWindowOps(registry);
  RegisterNormalizationOps(registry);
  RegisterMatrixOps(registry);
}

}  // namespace ge::ops
