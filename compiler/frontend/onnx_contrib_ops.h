// ONNX Runtime's contrib ops: the com.microsoft operators its quantization
// tool (QOperator format) and its graph / transformer optimizers write into
// the models people bring, lowered into default-domain ONNX nodes before
// anything else reads the model (the checker, shape inference, the op
// support check and the graph builder then see a plain ONNX model).
//
// Each supported op has an exact meaning in ONNX ops (ORT's ContribOperators
// document defines the quantized ones that way: dequantize, compute in
// float, quantize), so a lowering is a rewrite like an opset adapter's, not
// an approximation:
//   QLinearAdd / QLinearMul / QLinearSigmoid / QLinearLeakyRelu /
//   QLinearSoftmax / QLinearGlobalAveragePool / QLinearAveragePool /
//   QLinearReduceMean / QLinearConcat / QLinearWhere / QGemm
//       -> DequantizeLinear -> the float op -> QuantizeLinear (QGemm without
//       y_scale ends in float); the QDQ fusion pass then keeps int8 where ged
//       has an int8 kernel (QLinearAdd of one shape -> _QLinearAdd, QGemm ->
//       MatMulInteger), and a QLinearConcat / QLinearWhere whose inputs share
//       the output's scale and zero point becomes the plain op on the integers;
//   QuantizeLinear / DequantizeLinear / QLinearConv of com.microsoft -> the
//       ai.onnx op (channels_last: Transposes to NCHW and back around it, as
//       for the pools and NhwcMaxPool);
//   MatMulIntegerToFloat, DynamicQuantizeMatMul -> [DynamicQuantizeLinear]
//       MatMulInteger -> Cast -> Mul by the scales [-> Add bias];
//   Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd, SkipLayerNormalization,
//       SkipSimplifiedLayerNormalization, FusedConv, FusedGemm, FusedMatMul
//       (no batch transposes), Attention and QAttention (no past / present;
//       a 2-D 0/1 mask or 1-D sequence lengths; unidirectional),
//       EmbedLayerNormalization -> the ops
//       torch's exports use for the same layers (so ged's own fusions
//       recognise them);
//   and in the default domain, ORT's LayerNormalization before opset 17 and
//       SimplifiedLayerNormalization -> ReduceMean / Sub / Pow / Sqrt / Div.
// Any other com.microsoft op is refused with an error naming the op, the
// domain and the ops ged lowers.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/frontend/onnx_model_check.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

inline constexpr char kMicrosoftDomain[] = "com.microsoft";

// Rewrites every com.microsoft node of the model (and ORT's default-domain
// LayerNormalization / SimplifiedLayerNormalization where ONNX has none) in
// place. `opsets` is the model's checked opset map.
absl::Status LowerContribOps(onnx::ModelProto& model, const OpsetMap& opsets);

// The com.microsoft op types LowerContribOps rewrites, sorted.
std::vector<std::string> LoweredContribOps();

}  // namespace ge::frontend
