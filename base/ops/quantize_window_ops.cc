// Schemas and shape inference of QuantizeLinear-13 / DequantizeLinear-13
// (per-tensor or per-axis scale and zero point) and the window generators
// HannWindow, HammingWindow, BlackmanWindow (opset 17).
#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using DT = DataType;
using Kind = ir::AttrValue::Kind;

absl::Status InferQuantize(InferenceContext& ctx) {
  const DataType dtype = ctx.has_input(2) ? ctx.input_tensor(2).dtype : DT::kUint8;
  SetOutput(ctx, 0, dtype, ctx.input_tensor(0).shape);
  return absl::OkStatus();
}

absl::Status InferDequantize(InferenceContext& ctx) {
  if (ctx.has_input(2) && ctx.input_tensor(2).dtype != ctx.input_tensor(0).dtype) {
    return InvalidArgument("zero point dtype ", DataTypeName(ctx.input_tensor(2).dtype), " differs from input's ",
                           DataTypeName(ctx.input_tensor(0).dtype));
  }
  SetOutput(ctx, 0, DT::kFloat, ctx.input_tensor(0).shape);
  return absl::OkStatus();
}

absl::Status InferWindow(InferenceContext& ctx) {
  const int64_t to = ctx.AttrOr<int64_t>("output_datatype", 1);
  if (!IsValidDataType(static_cast<int32_t>(to)) || to == 0) {
    return InvalidArgument("output_datatype ", to, " is not a data type");
  }
  int64_t n = -1;
  if (const Tensor* size = ctx.input_value(0)) {
    if (size->NumElements() != 1) return InvalidArgument("size must be a scalar, got ", size->shape().ToString());
    n = size->GetAsInt64(0);
    if (n < 0) return InvalidArgument("size ", n, " is negative");
  }
  SetOutput(ctx, 0, static_cast<DataType>(to), Shape{n});
  return absl::OkStatus();
}

}  // namespace

void RegisterQuantizeWindowOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("QuantizeLinear", 13)
                      .Input("x", "T1")
                      .Input("y_scale", "f32")
                      .OptionalInput("y_zero_point", "T2")
                      .Output("y", "T2")
                      .TypeConstraint("T1", Types({DT::kFloat, DT::kInt32}))
                      .TypeConstraint("T2", Types({DT::kInt8, DT::kUint8}))
                      .Attr("axis", Kind::kInt, int64_t{1})
                      .Infer(InferQuantize));
  MustRegister(r, OpSchemaBuilder("DequantizeLinear", 13)
                      .Input("x", "T")
                      .Input("x_scale", "f32")
                      .OptionalInput("x_zero_point", "T")
                      .Output("y", "f32")
                      .TypeConstraint("T", Types({DT::kInt8, DT::kUint8, DT::kInt32}))
                      .Attr("axis", Kind::kInt, int64_t{1})
                      .Infer(InferDequantize));
  for (const char* window : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    MustRegister(r, OpSchemaBuilder(window, 17)
                        .Input("size", "T1")
                        .Output("output", "T2")
                        .TypeConstraint("T1", IndexTypes())
                        .TypeConstraint("T2", NumericTypes())
                        .Attr("output_datatype", Kind::kInt, int64_t{1})
                        .Attr("periodic", Kind::kInt, int64_t{1})
                        .ValueInputs({0})
                        .Infer(InferWindow));
  }
}

}  // namespace ge::ops
