// Lowerings of the quantized contrib ops: ONNX Runtime's QOperator format
// (QLinear*, QGemm, com.microsoft Q / DQ and QLinearConv, the NHWC forms)
// and its dynamic quantization (MatMulIntegerToFloat, DynamicQuantizeMatMul).
#include <string>
#include <string_view>
#include <vector>

#include "compiler/frontend/onnx_contrib_lowering.h"

namespace ge::frontend::contrib {
namespace {

// Ops of the form Q(op(DQ(x), ...)): inputs x, x_scale, x_zero_point
// (optional), y_scale, y_zero_point (optional); attributes copied.
LowerFn UnaryQLinear(std::string op, std::initializer_list<std::string_view> attrs) {
  std::vector<std::string_view> names(attrs);
  return [op, names](Lowering& l) -> absl::Status {
    GE_RETURN_IF_ERROR(l.NeedInputs(2));
    if (l.In(3).empty()) return l.Error("needs input 3 (y_scale)");
    const std::string f = l.Dq(l.In(0), l.In(1), l.In(2));
    onnx::NodeProto& n = l.Emit(op, {f});
    for (std::string_view name : names) {
      if (const onnx::AttributeProto* a = Attr(l.node(), name)) *n.add_attribute() = *a;
    }
    return l.Q(n.output(0), l.In(3), l.In(4), l.In(2), l.Out(0));
  };
}

LowerFn BinaryQLinear(std::string op) {
  return [op](Lowering& l) -> absl::Status {
    GE_RETURN_IF_ERROR(l.NeedInputs(2));
    if (l.In(3).empty() || l.In(4).empty() || l.In(6).empty()) {
      return l.Error("needs A, A_scale, B, B_scale and C_scale");
    }
    const std::string a = l.Dq(l.In(0), l.In(1), l.In(2));
    const std::string b = l.Dq(l.In(3), l.In(4), l.In(5));
    const std::string like = !l.In(2).empty() ? l.In(2) : l.In(5);
    return l.Q(l.Op(op, {a, b}), l.In(6), l.In(7), like, l.Out(0));
  };
}

absl::Status LowerQLinearSoftmax(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  if (l.In(3).empty()) return l.Error("needs input 3 (y_scale)");
  const int64_t axis = IntAttr(l.node(), "axis", -1);
  const int64_t semantics = IntAttr(l.node(), "opset", l.opset());
  const std::string f = l.Dq(l.In(0), l.In(1), l.In(2));
  std::string y;
  if (axis == -1) {  // both forms mean the last axis
    onnx::NodeProto& n = l.Emit("Softmax", {f});
    SetInt(n, "axis", -1);
    y = n.output(0);
  } else if (semantics < 13) {  // Softmax-1/11: over the flattened dims from axis
    onnx::NodeProto& flat = l.Emit("Flatten", {f});
    SetInt(flat, "axis", axis);
    onnx::NodeProto& sm = l.Emit("Softmax", {flat.output(0)});
    SetInt(sm, "axis", 1);
    y = l.Op("Reshape", {sm.output(0), l.Op("Shape", {f})});
  } else if (l.opset() >= 13) {
    onnx::NodeProto& n = l.Emit("Softmax", {f});
    SetInt(n, "axis", axis);
    y = n.output(0);
  } else {
    return l.Error("uses Softmax-13's axis ", axis, " in a model of opset ", l.opset(),
                   "; ged lowers that for axis -1 only");
  }
  return l.Q(y, l.In(3), l.In(4), l.In(2), l.Out(0));
}

// channels_last 1 (ONNX Runtime's NHWC form): the integers transposed to
// NCHW and back around the lowered pool; the rank from kernel_shape
// (AveragePool) or the input's declared rank (GlobalAveragePool).
absl::Status LowerPoolQLinear(Lowering& l, std::string_view op) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  if (l.In(3).empty()) return l.Error("needs input 3 (y_scale)");
  if (op == "AveragePool" && l.opset() < 19 && Attr(l.node(), "dilations") != nullptr) {
    return l.Error("has dilations, which AveragePool before opset 19 does not take");
  }
  const bool nhwc = IntAttr(l.node(), "channels_last", 0) != 0;
  std::optional<int64_t> rank;
  if (nhwc) {
    if (op == "AveragePool") {
      rank = l.RankFromKernel();
    } else if (const std::optional<int> r = l.facts().Rank(l.In(0))) {
      rank = *r;
    }
    if (!rank) return l.Error("channels_last 1 needs the input's rank (kernel_shape, or a declared shape)");
  }
  const std::string x = nhwc ? l.ToChannelsFirst(l.In(0), *rank) : l.In(0);
  const std::string f = l.Dq(x, l.In(1), l.In(2));
  onnx::NodeProto& n = l.Emit(op, {f});
  CopyAttrs(l.node(), n, {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  if (!nhwc) return l.Q(n.output(0), l.In(3), l.In(4), l.In(2), l.Out(0));
  const std::string q = l.Fresh("nchw");
  GE_RETURN_IF_ERROR(l.Q(n.output(0), l.In(3), l.In(4), l.In(2), q));
  l.ToChannelsLast(q, *rank, l.Out(0));
  return absl::OkStatus();
}

// NhwcMaxPool: MaxPool of u8 / s8 data in NHWC.
absl::Status LowerNhwcMaxPool(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(1));
  const std::optional<int64_t> rank = l.RankFromKernel();
  if (!rank) return l.Error("needs kernel_shape");
  onnx::NodeProto& n = l.Emit("MaxPool", {l.ToChannelsFirst(l.In(0), *rank)});
  CopyAttrs(l.node(), n, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"});
  l.ToChannelsLast(n.output(0), *rank, l.Out(0));
  return absl::OkStatus();
}

absl::Status LowerQLinearReduceMean(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  if (l.In(3).empty()) return l.Error("needs input 3 (reduced_scale)");
  const std::string f = l.Dq(l.In(0), l.In(1), l.In(2));
  onnx::NodeProto& n = l.Emit("ReduceMean", {f});
  CopyAttrs(l.node(), n, {"axes", "keepdims"});
  return l.Q(n.output(0), l.In(3), l.In(4), l.In(2), l.Out(0));
}

// Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input.
absl::Status LowerQLinearConcat(Lowering& l) {
  const onnx::NodeProto& node = l.node();
  if (node.input_size() < 5 || (node.input_size() - 2) % 3 != 0 || l.In(0).empty()) {
    return l.Error("takes Y_scale, Y_zero_point and triples (X, X_scale, X_zero_point); got ", node.input_size(),
                   " inputs");
  }
  if (Attr(node, "axis") == nullptr) return l.Error("needs attribute axis");
  const int k = (node.input_size() - 2) / 3;
  // Q(concat(DQ(x_i))) = concat(Q(DQ(x_i))): each input of other parameters
  // is requantized into the output's (the QDQ fusion pass runs that on the
  // integers), then the integers are joined.
  std::vector<std::string> parts;
  for (int i = 0; i < k; ++i) {
    const std::string x = l.In(2 + 3 * i), s = l.In(2 + 3 * i + 1), z = l.In(2 + 3 * i + 2);
    if (l.SameQuant(s, z, l.In(0), l.In(1))) {
      parts.push_back(x);
      continue;
    }
    const std::string q = l.Fresh("requantized");
    GE_RETURN_IF_ERROR(l.Q(l.Dq(x, s, z), l.In(0), l.In(1), z, q));
    parts.push_back(q);
  }
  SetInt(l.Emit("Concat", parts, l.Out(0)), "axis", IntAttr(node, "axis", 0));
  return absl::OkStatus();
}

// condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point.
absl::Status LowerQLinearWhere(Lowering& l) {
  if (l.node().input_size() < 9 || l.In(0).empty() || l.In(1).empty() || l.In(4).empty()) {
    return l.Error("takes 9 inputs");
  }
  if (l.SameQuant(l.In(2), l.In(3), l.In(7), l.In(8)) && l.SameQuant(l.In(5), l.In(6), l.In(7), l.In(8))) {
    l.Op("Where", {l.In(0), l.In(1), l.In(4)}, l.Out(0));
    return absl::OkStatus();
  }
  const std::string x = l.Dq(l.In(1), l.In(2), l.In(3));
  const std::string y = l.Dq(l.In(4), l.In(5), l.In(6));
  return l.Q(l.Op("Where", {l.In(0), x, y}), l.In(7), l.In(8), l.In(3), l.Out(0));
}

// A, a_scale, a_zero_point, B, b_scale, b_zero_point, C (int32, at scale
// a_scale * b_scale), y_scale, y_zero_point: Y = alpha * A'B' + C, quantized
// when y_scale is given, float otherwise.
absl::Status LowerQGemm(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  if (l.In(3).empty() || l.In(4).empty()) return l.Error("needs A, a_scale, B and b_scale");
  const int64_t trans_b = IntAttr(l.node(), "transB", 0);
  const std::string a = l.Dq(l.In(0), l.In(1), l.In(2));
  // Per-column B: the column axis of B as stored.
  const std::string b = l.Dq(l.In(3), l.In(4), l.In(5), trans_b != 0 ? 0 : 1);
  if (l.IsPerChannel(l.In(4)) && l.opset() < 13) {
    return l.Error("has per-column b_scale, which DequantizeLinear takes from opset 13 (the model has ", l.opset(),
                   ")");
  }
  std::string c;
  if (!l.In(6).empty()) {
    std::optional<Tensor> ct = l.facts().Constant(l.In(6)), as = l.facts().Constant(l.In(1)),
                          bs = l.facts().Constant(l.In(4));
    if (ct && as && bs && as->NumElements() == 1 && (bs->NumElements() == 1 || ct->shape().rank() >= 1)) {
      // Folded now: float(C) * a_scale * b_scale[n] with n the last axis of C.
      const int64_t n = ct->shape().rank() == 0 ? 1 : ct->shape().dim(ct->shape().rank() - 1);
      if (bs->NumElements() != 1 && bs->NumElements() != n) return l.Error("C and b_scale disagree on N");
      std::vector<float> values(static_cast<size_t>(ct->NumElements()));
      for (int64_t i = 0; i < ct->NumElements(); ++i) {
        const float s = static_cast<float>(as->GetAsDouble(0)) *
                        static_cast<float>(bs->GetAsDouble(bs->NumElements() == 1 ? 0 : i % n));
        values[static_cast<size_t>(i)] = static_cast<float>(ct->GetAsDouble(i)) * s;
      }
      c = l.Const("bias", Tensor::FromVector<float>(values, ct->shape()));
    } else {
      onnx::NodeProto& cast = l.Emit("Cast", {l.In(6)});
      SetInt(cast, "to", onnx::TensorProto::FLOAT);
      c = l.Op("Mul", {cast.output(0), l.Op("Mul", {l.In(1), l.In(4)})});
    }
  }
  const bool quantized = !l.In(7).empty();
  onnx::NodeProto& g = l.Emit("Gemm", {a, b, c}, quantized ? "" : l.Out(0));
  CopyAttrs(l.node(), g, {"alpha", "transA", "transB"});
  if (!quantized) return absl::OkStatus();
  return l.Q(g.output(0), l.In(7), l.In(8), l.In(2), l.Out(0));
}

// com.microsoft's QuantizeLinear / DequantizeLinear: ai.onnx's for 8-bit types.
LowerFn QdqToOnnx(std::string op) {
  return [op](Lowering& l) -> absl::Status {
    GE_RETURN_IF_ERROR(l.NeedInputs(2));
    if (std::optional<Tensor> z = l.facts().Constant(l.In(2))) {
      if (z->dtype() != DataType::kUint8 && z->dtype() != DataType::kInt8) {
        return l.Error("has a ", DataTypeName(z->dtype()), " zero point; ged runs 8-bit quantization only");
      }
    }
    if (l.IsPerChannel(l.In(1)) && l.opset() < 13) {
      return l.Error("is per axis, which ", op, " takes from opset 13 (the model has ", l.opset(), ")");
    }
    onnx::NodeProto& n = l.Emit(op, {l.In(0), l.In(1), l.In(2)}, l.Out(0));
    if (l.opset() >= 13) CopyAttrs(l.node(), n, {"axis"});
    return absl::OkStatus();
  };
}

// channels_last 1: x and y NHWC (the weights keep ONNX's layout), the rank
// from the weights or kernel_shape.
absl::Status LowerQLinearConv(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(1));
  if (l.In(3).empty()) return l.Error("needs input 3 (w)");
  const bool nhwc = IntAttr(l.node(), "channels_last", 0) != 0;
  std::optional<int64_t> rank = l.RankFromKernel();
  if (const std::optional<int> r = l.facts().Rank(l.In(3))) rank = *r;
  if (nhwc && !rank) return l.Error("channels_last 1 needs the weights' rank (constant weights or kernel_shape)");
  std::vector<std::string> inputs(l.node().input().begin(), l.node().input().end());
  if (nhwc) inputs[0] = l.ToChannelsFirst(inputs[0], *rank);
  onnx::NodeProto& n = l.Emit("QLinearConv", inputs, nhwc ? "" : l.Out(0));
  CopyAttrs(l.node(), n, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  if (nhwc) l.ToChannelsLast(n.output(0), *rank, l.Out(0));
  return absl::OkStatus();
}

// Float(MatMulInteger) * scale [+ bias] into output 0.
absl::Status IntegerProductToFloat(Lowering& l, const std::string& a, const std::string& b, const std::string& a_zero,
                                   const std::string& b_zero, const std::string& scale, const std::string& bias) {
  const std::string acc = l.Op("MatMulInteger", {a, b, a_zero, b_zero});
  onnx::NodeProto& cast = l.Emit("Cast", {acc});
  SetInt(cast, "to", onnx::TensorProto::FLOAT);
  if (bias.empty()) {
    l.Op("Mul", {cast.output(0), scale}, l.Out(0));
  } else {
    l.Op("Add", {l.Op("Mul", {cast.output(0), scale}), bias}, l.Out(0));
  }
  return absl::OkStatus();
}

// A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias.
absl::Status LowerMatMulIntegerToFloat(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(4));
  const std::string scale = l.Op("Mul", {l.In(2), l.In(3)});
  return IntegerProductToFloat(l, l.In(0), l.In(1), l.In(4), l.In(5), scale, l.In(6));
}

// A (float), B, b_scale, b_zero_point, bias.
absl::Status LowerDynamicQuantizeMatMul(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(3));
  onnx::NodeProto& dq = l.Emit("DynamicQuantizeLinear", {l.In(0)});
  dq.add_output(l.Fresh("a_scale"));
  dq.add_output(l.Fresh("a_zero_point"));
  const std::string scale = l.Op("Mul", {dq.output(1), l.In(2)});
  return IntegerProductToFloat(l, dq.output(0), l.In(1), dq.output(2), l.In(3), scale, l.In(4));
}

}  // namespace

void AddQuantizedRules(StringMap<LowerFn>& rules) {
  rules.emplace("QLinearAdd", BinaryQLinear("Add"));
  rules.emplace("QLinearMul", BinaryQLinear("Mul"));
  rules.emplace("QLinearSigmoid", UnaryQLinear("Sigmoid", {}));
  rules.emplace("QLinearLeakyRelu", UnaryQLinear("LeakyRelu", {"alpha"}));
  rules.emplace("QLinearSoftmax", LowerQLinearSoftmax);
  rules.emplace("QLinearGlobalAveragePool", [](Lowering& l) { return LowerPoolQLinear(l, "GlobalAveragePool"); });
  rules.emplace("QLinearAveragePool", [](Lowering& l) { return LowerPoolQLinear(l, "AveragePool"); });
  rules.emplace("QLinearReduceMean", LowerQLinearReduceMean);
  rules.emplace("QLinearConcat", LowerQLinearConcat);
  rules.emplace("QLinearWhere", LowerQLinearWhere);
  rules.emplace("QLinearConv", LowerQLinearConv);
  rules.emplace("NhwcMaxPool", LowerNhwcMaxPool);
  rules.emplace("QGemm", LowerQGemm);
  rules.emplace("QuantizeLinear", QdqToOnnx("QuantizeLinear"));
  rules.emplace("DequantizeLinear", QdqToOnnx("DequantizeLinear"));
  rules.emplace("MatMulIntegerToFloat", LowerMatMulIntegerToFloat);
  rules.emplace("DynamicQuantizeMatMul", LowerDynamicQuantizeMatMul);
}

}  // namespace ge::frontend::contrib
