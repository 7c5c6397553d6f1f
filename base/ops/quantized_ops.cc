// Schemas and shape inference of the integer and quantized linear-algebra
// ops: DynamicQuantizeLinear-11, MatMulInteger-10, ConvInteger-10,
// QLinearMatMul-10 and QLinearConv-10 (u8 and s8 operands; scales and zero
// points per tensor, per row / column of a matrix product, or per output
// channel of a convolution, all as run-time tensors), and ged's own
// `_QLinearAdd` (the int8 Add the QDQ fusion pass makes: residual Adds of
// one shape, bias Adds whose B broadcasts into A).
//
// Output shapes are MatMul's (MatMulShape) and Conv's (ConvOutputShape);
// the scale and zero-point shapes are checked where their ranks are known.
#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;
using DT = DataType;

const std::vector<DataType>& QuantTypes() {
  static const auto* types = new std::vector<DataType>{DT::kInt8, DT::kUint8};
  return *types;
}

absl::Status InferDynamicQuantizeLinear(InferenceContext& ctx) {
  SetOutput(ctx, 0, DT::kUint8, ctx.input_tensor(0).shape);
  SetOutput(ctx, 1, DT::kFloat, Shape{});
  SetOutput(ctx, 2, DT::kUint8, Shape{});
  return absl::OkStatus();
}

// A scale or zero point input: a scalar or 1-element tensor (per tensor),
// or with `per_channel` also a 1-D tensor (one value per output channel).
absl::Status CheckQuantParam(const InferenceContext& ctx, int i, std::string_view name, bool per_channel) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const Shape& s = ctx.input_tensor(i).shape;
  if (s.unknown_rank() || s.rank() == 0) return absl::OkStatus();
  if (s.rank() == 1 && (per_channel || s.dim(0) <= 1)) return absl::OkStatus();
  return InvalidArgument(name, " must be a scalar", per_channel ? " or 1-D" : "", ", got ", s.ToString());
}

absl::Status InferMatMulInteger(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(Shape y, MatMulShape(ctx.input_tensor(0).shape, ctx.input_tensor(1).shape));
  SetOutput(ctx, 0, DT::kInt32, std::move(y));
  return absl::OkStatus();
}

absl::Status InferQLinearMatMul(InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(Shape y, MatMulShape(ctx.input_tensor(0).shape, ctx.input_tensor(3).shape));
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 6, "y_scale", false));
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 7, "y_zero_point", false));
  SetOutput(ctx, 0, ctx.input_tensor(7).dtype, std::move(y));
  return absl::OkStatus();
}

absl::Status InferConvLike(InferenceContext& ctx, int w_index, DataType dtype) {
  GE_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrsFromOp(ctx.op()));
  GE_ASSIGN_OR_RETURN(WindowGeometry g,
                      ConvOutputShape(ctx.input_tensor(0).shape, ctx.input_tensor(w_index).shape, attrs));
  SetOutput(ctx, 0, dtype, std::move(g.output));
  return absl::OkStatus();
}

absl::Status InferConvInteger(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 2, "x_zero_point", false));
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 3, "w_zero_point", true));
  return InferConvLike(ctx, 1, DT::kInt32);
}

absl::Status InferQLinearConv(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 1, "x_scale", false));
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 2, "x_zero_point", false));
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 4, "w_scale", true));
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 5, "w_zero_point", true));
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 6, "y_scale", false));
  GE_RETURN_IF_ERROR(CheckQuantParam(ctx, 7, "y_zero_point", false));
  if (ctx.has_input(8)) {
    const Shape& b = ctx.input_tensor(8).shape;
    if (!b.unknown_rank() && b.rank() != 1) return InvalidArgument("B must be 1-D, got ", b.ToString());
  }
  return InferConvLike(ctx, 3, ctx.input_tensor(7).dtype);
}

absl::Status InferQLinearAdd(InferenceContext& ctx) {
  for (int i : {1, 2, 4, 5, 6, 7}) {
    static constexpr std::string_view kNames[] = {"",        "A_scale",      "A_zero_point", "",
                                                  "B_scale", "B_zero_point", "C_scale",      "C_zero_point"};
    GE_RETURN_IF_ERROR(CheckQuantParam(ctx, i, kNames[i], false));
  }
  const Shape& a = ctx.input_tensor(0).shape;
  const Shape& b = ctx.input_tensor(3).shape;
  absl::StatusOr<Shape> y = MergeShapes(a, b);
  if (!y.ok()) {
    // B broadcasts into A (a bias over the last axes, a scalar): C has A's shape.
    if (!CheckUnidirectionalBroadcast(b, a).ok()) {
      return InvalidArgument("B ", b.ToString(), " must have A's shape ", a.ToString(), " or broadcast to it");
    }
    y = a;
  }
  SetOutput(ctx, 0, ctx.input_tensor(7).dtype, *std::move(y));
  return absl::OkStatus();
}

OpSchemaBuilder& AddConvAttrs(OpSchemaBuilder& b) {
  return b.Attr("auto_pad", Kind::kString, "NOTSET")
      .OptionalAttr("dilations", Kind::kInts)
      .Attr("group", Kind::kInt, int64_t{1})
      .OptionalAttr("kernel_shape", Kind::kInts)
      .OptionalAttr("pads", Kind::kInts)
      .OptionalAttr("strides", Kind::kInts);
}

}  // namespace

void RegisterQuantizedOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("DynamicQuantizeLinear", 11)
                      .Doc("u8 quantization of x with a scale and zero point from x's range (with 0).")
                      .Input("x", "f32")
                      .Output("y", "u8")
                      .Output("y_scale", "f32")
                      .Output("y_zero_point", "u8")
                      .Infer(InferDynamicQuantizeLinear));
  MustRegister(r, OpSchemaBuilder("MatMulInteger", 10)
                      .Doc("(A - a_zero_point) x (B - b_zero_point) in int32; zero points per tensor, per row "
                           "of A, per column of B.")
                      .Input("A", "T1")
                      .Input("B", "T2")
                      .OptionalInput("a_zero_point", "T1")
                      .OptionalInput("b_zero_point", "T2")
                      .Output("Y", "i32")
                      .TypeConstraint("T1", QuantTypes())
                      .TypeConstraint("T2", QuantTypes())
                      .Infer(InferMatMulInteger));
  MustRegister(r, OpSchemaBuilder("QLinearMatMul", 10)
                      .Doc("MatMulInteger requantized: round(acc * a_scale * b_scale / y_scale) + y_zero_point, "
                           "saturated.")
                      .Input("a", "T1")
                      .Input("a_scale", "f32")
                      .Input("a_zero_point", "T1")
                      .Input("b", "T2")
                      .Input("b_scale", "f32")
                      .Input("b_zero_point", "T2")
                      .Input("y_scale", "f32")
                      .Input("y_zero_point", "T3")
                      .Output("y", "T3")
                      .TypeConstraint("T1", QuantTypes())
                      .TypeConstraint("T2", QuantTypes())
                      .TypeConstraint("T3", QuantTypes())
                      .Infer(InferQLinearMatMul));
  OpSchemaBuilder conv_integer("ConvInteger", 10);
  conv_integer.Doc("Conv of (x - x_zero_point) and (w - w_zero_point) in int32; padding adds nothing.")
      .Input("x", "T1")
      .Input("w", "T2")
      .OptionalInput("x_zero_point", "T1")
      .OptionalInput("w_zero_point", "T2")
      .Output("y", "i32")
      .TypeConstraint("T1", QuantTypes())
      .TypeConstraint("T2", QuantTypes())
      .Infer(InferConvInteger);
  MustRegister(r, AddConvAttrs(conv_integer));
  OpSchemaBuilder qlinear_conv("QLinearConv", 10);
  qlinear_conv.Doc("ConvInteger plus B, requantized per output channel into y's scale and zero point.")
      .Input("x", "T1")
      .Input("x_scale", "f32")
      .Input("x_zero_point", "T1")
      .Input("w", "T2")
      .Input("w_scale", "f32")
      .Input("w_zero_point", "T2")
      .Input("y_scale", "f32")
      .Input("y_zero_point", "T3")
      .OptionalInput("B", "i32")
      .Output("y", "T3")
      .TypeConstraint("T1", QuantTypes())
      .TypeConstraint("T2", QuantTypes())
      .TypeConstraint("T3", QuantTypes())
      .Infer(InferQLinearConv);
  MustRegister(r, AddConvAttrs(qlinear_conv));
  MustRegister(r, OpSchemaBuilder("_QLinearAdd", 1)
                      .Doc("ged's int8 Add of A and a B of A's shape or broadcasting to it, per-tensor parameters "
                           "(what the QDQ fusion pass makes of DQ(A), DQ(B) -> Add [-> Relu] -> Q): with rA = "
                           "A_scale / C_scale, rB = "
                           "B_scale / C_scale and k = C_zero_point - (rA * A_zero_point + rB * B_zero_point) in "
                           "f32, C = saturate(round_half_even(fma(A, rA, fma(B, rB, k)))), as ONNX Runtime's "
                           "QLinearAdd computes it on x64.")
                      .Input("A", "T")
                      .Input("A_scale", "f32")
                      .Input("A_zero_point", "T")
                      .Input("B", "T")
                      .Input("B_scale", "f32")
                      .Input("B_zero_point", "T")
                      .Input("C_scale", "f32")
                      .Input("C_zero_point", "T")
                      .Output("C", "T")
                      .TypeConstraint("T", QuantTypes())
                      .Infer(InferQLinearAdd));
}

}  // namespace ge::ops
