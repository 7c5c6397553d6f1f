// QdqFusionPass: rewrites ONNX's QDQ form of quantized models into int8
// operators (ai.onnx's QLinearConv and QLinearMatMul), which the int8
// kernels of the engines (cpu_dense on oneDNN, host_cpu's reference) run.
//
// Chains it rewrites (the DequantizeLinear nodes may feed other consumers
// too; they stay for those):
//   DQ(x) , DQ(W const) [, bias] -> Conv [-> Relu] -> Q   => QLinearConv
//   DQ(a) , DQ(B const)          -> MatMul [-> Relu] -> Q  => QLinearMatMul
//   DQ(a) , DQ(B const)          -> Gemm [-> Relu] -> Q    => QLinearMatMul
//       (alpha 1, transA 0, no C; transB transposes the constant weights)
//   DQ(x) -> MaxPool -> Q, the same scale and zero point  => MaxPool on the
//       int8 tensor (max commutes with a monotonic map; Q(DQ(q)) = q)
//   DQ(x) -> Q (a requantization, one int8 type)  => x itself with equal
//       parameters, else _QLinearAdd(x, 0) into Q's parameters
//   DQ(a) , DQ(b) -> Add [-> Relu] -> Q                   => _QLinearAdd
//       (per-tensor parameters, one int8 type, a, b and the sum of one
//       shape: the residual Adds of a quantized ResNet; or one operand a
//       bias over the other's last axes, or a scalar: a quantized
//       transformer's bias Adds; ged's own op, computed as ONNX Runtime's
//       QLinearAdd is, see sdk/qlinear_add.h)
//   DQ(a) , DQ(B const s8) -> MatMul / Gemm [+ C], result left in float
//       (a classifier's logits)  => MatMulInteger -> Cast -> Mul(a_scale *
//       b_scale[n]) [-> Add(C)]: the product on integers, exact, then scaled
//   DQ(x) , DQ(W const s8) [, bias] -> Conv, result left in float (the last
//       1x1 convolution before a float GlobalAveragePool)  => ConvInteger ->
//       Cast -> Mul(x_scale * w_scale[m]) [-> Add(bias)], the same way
// Conditions: the activations' scale and zero point are constant scalars,
// the weights' per tensor or per output channel (DQ's axis 0 for Conv
// weights, the column axis for MatMul / Gemm weights), the weights s8 or
// u8 constants; the Conv / MatMul / Relu results feed only the next node
// of the chain. A Relu is absorbed only when Q's zero point is the
// integer type's minimum (Q's saturation then clamps exactly as the Relu
// did). A float constant bias becomes int32 round(b / (x_scale *
// w_scale[c])); a DequantizeLinear'd int32 bias is re-expressed in that
// scale the same way (exact when its scale is x_scale * w_scale, as
// quantizers write it).
//
// The fused result equals the QDQ graph's up to the float rounding of the
// requantization (one integer step), as in every int8 runtime. A Gemm with
// a C before a Q takes the float-result form and keeps its Q. Anything
// else — a product whose int32 sum could overflow, an Add that broadcasts
// other than by a suffix, dynamic scales — stays in float between its DQ and Q nodes, which is what
// the QDQ graph means. Runs in the optimize pipeline after shape inference
// (it reads types) and before constant folding (which would fold the
// weights' DQ into float constants).
#pragma once

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class QdqFusionPass final : public GraphPass {
 public:
  std::string_view name() const override { return "QdqFusionPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;
};

}  // namespace ge::compiler
