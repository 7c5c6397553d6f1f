// The `_DenseFused` op schema and the view of its base op.
#include "runtime/engines/cpu_dense/dense_fused_op.h"

#include <string>
#include <vector>

#include "base/ir/inplace_attr.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/post_ops.h"

namespace ge::engine::cpu_dense {
namespace {

using Kind = ir::AttrValue::Kind;

bool IsFusedAttr(std::string_view name) {
  return name == kAttrFusedBase || name == kAttrPostOps || name == kAttrPostAlpha || name == kAttrPostBeta ||
         name == ir::kAttrInplaceInputs;
}

absl::Status InferDenseFused(ops::InferenceContext& ctx) {
  GE_ASSIGN_OR_RETURN(ir::OpDesc base, BaseOpDesc(ctx.op()));
  std::vector<const ir::ValueType*> types(base.num_inputs(), nullptr);
  for (int i = 0; i < base.num_inputs(); ++i) {
    if (ctx.has_input(i)) types[i] = &ctx.input_type(i);
  }
  GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> outputs,
                      ops::InferOutputTypes(base, types, /*input_values=*/{}));
  const Shape& y = outputs[0].shape();
  if (base.type() == "MatMul" && ctx.has_input(kFusedBiasInput)) {
    const Shape& bias = ctx.input_tensor(kFusedBiasInput).shape;
    const int64_t n = y.rank() > 0 ? y.dim(y.rank() - 1) : 1;
    if (bias.rank() != 1 || (bias.dim(0) != n && bias.dim(0) != -1 && n != -1)) {
      return ctx.Error("the MatMul bias ", bias.ToString(), " must be [N] for the output ",
                       y.ToString());
    }
  }
  if (ctx.has_input(kFusedAddInput)) {
    const Shape& r = ctx.input_tensor(kFusedAddInput).shape;
    if (!ops::CheckUnidirectionalBroadcast(r, y).ok()) {
      return ctx.Error("the add operand ", r.ToString(), " does not broadcast to the output ",
                       y.ToString());
    }
  }
  ctx.set_output(0, outputs[0]);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ir::OpDesc> BaseOpDesc(const ir::OpDesc& fused) {
  const std::string type = fused.GetAttrOr<std::string>(kAttrFusedBase, "");
  if (type != "Conv" && type != "MatMul" && type != "Gemm") {
    return InvalidArgument("node '", fused.name(), "' (", fused.type(), "): base '", type,
                           "' is not Conv, MatMul or Gemm");
  }
  ir::OpDesc base(fused.name(), type);
  const int inputs = std::min(fused.num_inputs(), type == "MatMul" ? 2 : 3);
  for (int i = 0; i < inputs; ++i) base.AddInput(fused.input(i));
  for (const ir::IoDesc& out : fused.outputs()) base.AddOutput(out);
  for (const auto& [name, value] : fused.attrs()) {
    if (!IsFusedAttr(name)) base.SetAttr(name, value);
  }
  return base;
}

absl::Status RegisterDenseFusedOp(ops::OpRegistry& registry) {
  if (registry.Find(kDenseFusedOp) != nullptr) return absl::OkStatus();
  ops::OpSchemaBuilder b{std::string(kDenseFusedOp), 1};
  b.Doc("cpu_dense: Conv, MatMul or Gemm with fused post-ops (bias, residual add, activations).")
      .Input("X", "T")
      .Input("W", "T")
      .OptionalInput("B", "T")
      .OptionalInput("R", "T")
      .Output("Y", "T")
      .TypeConstraint("T", {DataType::kFloat, DataType::kBFloat16, DataType::kFloat16,
                            DataType::kDouble})
      .RequiredAttr(std::string(kAttrFusedBase), Kind::kString)
      .OptionalAttr(std::string(kAttrPostOps), Kind::kStrings)
      .OptionalAttr(std::string(kAttrPostAlpha), Kind::kFloats)
      .OptionalAttr(std::string(kAttrPostBeta), Kind::kFloats)
      // Conv's attributes.
      .OptionalAttr("auto_pad", Kind::kString)
      .OptionalAttr("dilations", Kind::kInts)
      .OptionalAttr("group", Kind::kInt)
      .OptionalAttr("kernel_shape", Kind::kInts)
      .OptionalAttr("pads", Kind::kInts)
      .OptionalAttr("strides", Kind::kInts)
      // Gemm's attributes.
      .OptionalAttr("alpha", Kind::kFloat)
      .OptionalAttr("beta", Kind::kFloat)
      .OptionalAttr("transA", Kind::kInt)
      .OptionalAttr("transB", Kind::kInt)
      .Infer(InferDenseFused);
  return registry.Register(std::move(b).Build());
}

}  // namespace ge::engine::cpu_dense
