// Lowerings of ONNX Runtime's transformer-optimizer and fused contrib ops
// (the Gelu family, BiasAdd, the layer norms, FusedConv / Gemm / MatMul,
// Attention, QAttention, EmbedLayerNormalization) into the ops torch's
// exports use for the same layers.
#include <string>
#include <string_view>
#include <vector>

#include "compiler/frontend/onnx_contrib_lowering.h"

namespace ge::frontend::contrib {
namespace {

absl::Status LowerGelu(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(1));
  l.Gelu(l.In(0), l.Out(0));
  return absl::OkStatus();
}

absl::Status LowerBiasGelu(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  l.Gelu(l.Op("Add", {l.In(0), l.In(1)}), l.Out(0));
  return absl::OkStatus();
}

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), x = X [+ bias].
absl::Status LowerFastGelu(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(1));
  const std::string x = l.In(1).empty() ? l.In(0) : l.Op("Add", {l.In(0), l.In(1)});
  const std::string cube = l.Op("Mul", {l.Op("Mul", {x, x}), x});
  const std::string inner = l.Op("Add", {x, l.Op("Mul", {cube, l.F32("c", 0.044715f)})});
  const std::string t = l.Op("Tanh", {l.Op("Mul", {inner, l.F32("sqrt_2_over_pi", 0.7978845608028654f)})});
  l.Op("Mul", {l.Op("Mul", {x, l.F32("half", 0.5f)}), l.Op("Add", {t, l.F32("one", 1.0f)})}, l.Out(0));
  return absl::OkStatus();
}

// x * sigmoid(alpha * x).
absl::Status LowerQuickGelu(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(1));
  const float alpha = FloatAttr(l.node(), "alpha", 1.702f);
  const std::string scaled = alpha == 1.0f ? l.In(0) : l.Op("Mul", {l.In(0), l.F32("alpha", alpha)});
  l.Op("Mul", {l.In(0), l.Op("Sigmoid", {scaled})}, l.Out(0));
  return absl::OkStatus();
}

absl::Status LowerBiasAdd(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(3));
  l.Op("Add", {l.Op("Add", {l.In(0), l.In(1)}), l.In(2)}, l.Out(0));
  return absl::OkStatus();
}

// input, skip, gamma, beta, bias -> output, mean, inv_std_var,
// input_skip_bias_sum (simplified: input, skip, gamma, bias; no beta).
absl::Status LowerSkipNorm(Lowering& l, bool rms) {
  GE_RETURN_IF_ERROR(l.NeedInputs(3));
  if (!l.Out(1).empty() || !l.Out(2).empty()) {
    return l.Error("outputs the mean / inverse standard deviation, which ged does not lower");
  }
  const std::string beta = rms ? "" : l.In(3);
  const std::string bias = rms ? l.In(3) : l.In(4);
  std::string sum = l.Op("Add", {l.In(0), l.In(1)});
  if (!bias.empty()) sum = l.Op("Add", {sum, bias});
  if (!l.Out(3).empty()) sum = l.Op("Identity", {sum}, l.Out(3));
  return l.Norm(sum, l.In(2), beta, FloatAttr(l.node(), "epsilon", 1e-12f), -1, rms, l.Out(0));
}

// Default-domain LayerNormalization before opset 17 (ORT's own schema) and
// SimplifiedLayerNormalization.
absl::Status LowerLayerNorm(Lowering& l, bool rms) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  if (!l.Out(1).empty() || !l.Out(2).empty()) {
    return l.Error("outputs the mean / inverse standard deviation, which ged does not lower");
  }
  return l.Norm(l.In(0), l.In(1), rms ? "" : l.In(2), FloatAttr(l.node(), "epsilon", 1e-5f),
                IntAttr(l.node(), "axis", -1), rms, l.Out(0));
}

// Conv(X, W, B) [+ Z] -> activation.
absl::Status LowerFusedConv(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  onnx::NodeProto& conv = l.Emit("Conv", {l.In(0), l.In(1), l.In(2)});
  CopyAttrs(l.node(), conv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  std::string y = conv.output(0);
  if (!l.In(3).empty()) y = l.Op("Add", {y, l.In(3)});
  std::vector<float> params;
  if (const onnx::AttributeProto* p = Attr(l.node(), "activation_params")) {
    params.assign(p->floats().begin(), p->floats().end());
  }
  return l.Activation(StringAttr(l.node(), "activation", ""), params, y, l.Out(0));
}

absl::Status LowerFusedGemm(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  onnx::NodeProto& gemm = l.Emit("Gemm", {l.In(0), l.In(1), l.In(2)});
  CopyAttrs(l.node(), gemm, {"alpha", "beta", "transA", "transB"});
  const std::string act = StringAttr(l.node(), "activation", "");
  std::vector<float> params;
  if (act == "LeakyRelu") params = {FloatAttr(l.node(), "activation_alpha", 0.01f)};
  if (act == "HardSigmoid") {
    params = {FloatAttr(l.node(), "activation_alpha", 0.2f), FloatAttr(l.node(), "activation_beta", 0.5f)};
  }
  if (act == "Clip") {
    return l.Error("activation Clip of FusedGemm is not lowered");
  }
  return l.Activation(act, params, gemm.output(0), l.Out(0));
}

// A' B' * alpha, A' / B' swapping the last two axes of a constant operand.
absl::Status LowerFusedMatMul(Lowering& l) {
  GE_RETURN_IF_ERROR(l.NeedInputs(2));
  if (IntAttr(l.node(), "transBatchA", 0) != 0 || IntAttr(l.node(), "transBatchB", 0) != 0) {
    return l.Error("transposes batch axes (transBatchA / transBatchB), which ged does not lower");
  }
  std::string ab[2] = {l.In(0), l.In(1)};
  const char* flags[2] = {"transA", "transB"};
  for (int k = 0; k < 2; ++k) {
    if (IntAttr(l.node(), flags[k], 0) == 0) continue;
    const onnx::TensorProto* c = l.facts().ConstantProto(ab[k]);
    if (c == nullptr || c->dims_size() < 2) {
      return l.Error(flags[k], " of an operand whose rank is not known from a constant is not lowered");
    }
    std::vector<int64_t> perm(static_cast<size_t>(c->dims_size()));
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    onnx::NodeProto& t = l.Emit("Transpose", {ab[k]});
    SetInts(t, "perm", perm);
    ab[k] = t.output(0);
  }
  const float alpha = FloatAttr(l.node(), "alpha", 1.0f);
  if (alpha == 1.0f) {
    l.Op("MatMul", {ab[0], ab[1]}, l.Out(0));
  } else {
    l.Op("Mul", {l.Op("MatMul", {ab[0], ab[1]}), l.F32("alpha", alpha)}, l.Out(0));
  }
  return absl::OkStatus();
}

// Attention(input, weights, bias, mask_index): BERT's self-attention with the
// Q, K and V projections in one weight; the mask a 0/1 (batch, total
// sequence) tensor. Lowered to the ops a Hugging Face export has.
// QAttention (quantized: ONNX Runtime's dynamic quantization of an
// optimized BERT) takes input (u8 / s8), weight, bias, input_scale,
// weight_scale, mask_index, input_zero_point, weight_zero_point, past: its
// projection is MatMulInteger scaled by input_scale * weight_scale.
absl::Status LowerAttention(Lowering& l, bool quantized) {
  GE_RETURN_IF_ERROR(l.NeedInputs(quantized ? 5 : 2));
  const int mask_input = quantized ? 5 : 3;
  for (int i = quantized ? 8 : 4; i < l.node().input_size(); ++i) {
    if (!l.In(i).empty()) return l.Error("input ", i, " (past / attention_bias / past_sequence_length) is not lowered");
  }
  if (!l.Out(1).empty()) return l.Error("output present is not lowered");
  if (IntAttr(l.node(), "do_rotary", 0) != 0 || IntAttr(l.node(), "past_present_share_buffer", 0) != 0) {
    return l.Error("rotary / shared-buffer attention is not lowered");
  }
  const int64_t heads = IntAttr(l.node(), "num_heads", 0);
  if (heads <= 0) return l.Error("needs num_heads > 0");
  // The projection's width: the weights' columns, else the bias's length.
  int64_t columns = -1;
  if (const onnx::TensorProto* w = l.facts().ConstantProto(l.In(1)); w != nullptr && w->dims_size() == 2) {
    columns = w->dims(1);
  } else if (const onnx::TensorProto* b = l.facts().ConstantProto(l.In(2)); b != nullptr && b->dims_size() == 1) {
    columns = b->dims(0);
  }
  std::vector<int64_t> sizes;
  if (const onnx::AttributeProto* q = Attr(l.node(), "qkv_hidden_sizes"); q != nullptr && q->ints_size() > 0) {
    sizes.assign(q->ints().begin(), q->ints().end());
    if (columns < 0 && sizes.size() == 3) columns = sizes[0] + sizes[1] + sizes[2];
  } else if (columns >= 0) {
    sizes.assign(3, columns / 3);
  }
  if (columns < 0) return l.Error("needs constant 2-D weights, a constant bias or qkv_hidden_sizes");
  if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] + sizes[1] + sizes[2] != columns || sizes[0] % heads != 0 ||
      sizes[2] % heads != 0) {
    return l.Error("has Q/K/V sizes that do not split the weights' ", columns, " columns into ", heads, " heads");
  }
  const int64_t head = sizes[0] / heads;
  const float scale = FloatAttr(l.node(), "scale", 1.0f / std::sqrt(static_cast<float>(head)));
  std::string proj;
  if (quantized) {
    onnx::NodeProto& cast = l.Emit("Cast", {l.Op("MatMulInteger", {l.In(0), l.In(1), l.In(6), l.In(7)})});
    SetInt(cast, "to", onnx::TensorProto::FLOAT);
    proj = l.Op("Mul", {cast.output(0), l.Op("Mul", {l.In(3), l.In(4)})});
  } else {
    proj = l.Op("MatMul", {l.In(0), l.In(1)});
  }
  if (!l.In(2).empty()) proj = l.Op("Add", {proj, l.In(2)});
  std::string qkv[3];
  const std::string split_sizes = l.opset() >= 13 ? l.I64s("split", sizes) : "";
  onnx::NodeProto& split = l.Emit("Split", {proj, split_sizes});
  if (l.opset() < 13) SetInts(split, "split", sizes);
  SetInt(split, "axis", -1);
  split.add_output(l.Fresh("k"));
  split.add_output(l.Fresh("v"));
  for (int k = 0; k < 3; ++k) {
    const int64_t hd = k == 2 ? sizes[2] / heads : head;
    const std::string shape = l.I64s("heads_shape", {0, 0, heads, hd});
    const std::string r = l.Op("Reshape", {split.output(k), shape});
    onnx::NodeProto& t = l.Emit("Transpose", {r});
    SetInts(t, "perm", k == 1 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
    qkv[k] = t.output(0);
  }
  std::string scores = l.Op("Mul", {l.Op("MatMul", {qkv[0], qkv[1]}), l.F32("scale", scale)});
  auto unsqueeze = [&](const std::string& x, int64_t axis) {
    const std::string axes = l.opset() >= 13 ? l.I64s("axes", {axis}) : "";
    onnx::NodeProto& u = l.Emit("Unsqueeze", {x, axes});
    if (l.opset() < 13) SetInts(u, "axes", {axis});
    return u.output(0);
  };
  const float filter = FloatAttr(l.node(), "mask_filter_value", -10000.0f);
  if (IntAttr(l.node(), "unidirectional", 0) != 0) {
    // Causal (no past: keys are the queries' positions): key j of query i
    // gets the lowest float when j > i, an (S, S) bias over every batch and
    // head. The lowest, not mask_filter_value: a query whose own and
    // earlier keys are all padding then attends to them, not to later
    // keys, as ONNX Runtime 1.30 computes it (key j <= i always stays
    // finite, so no row is all -inf).
    const std::string seq = l.Op("Gather", {l.Op("Shape", {l.In(0)}), l.Const("axis1", Tensor::Scalar<int64_t>(1))});
    const std::string positions =
        l.Op("Range", {l.Const("zero", Tensor::Scalar<int64_t>(0)), seq, l.Const("step", Tensor::Scalar<int64_t>(1))});
    const std::string future = l.Op("Less", {unsqueeze(positions, 1), unsqueeze(positions, 0)});
    onnx::NodeProto& cast = l.Emit("Cast", {future});
    SetInt(cast, "to", onnx::TensorProto::FLOAT);
    const float lowest = std::numeric_limits<float>::lowest();
    scores = l.Op("Add", {scores, l.Op("Mul", {cast.output(0), l.F32("causal_value", lowest)})});
  }
  if (!l.In(mask_input).empty()) {
    // A 1-D mask_index holds each sequence's length (right padding): key j
    // of batch b is kept when j < length[b].
    std::string keep = l.In(mask_input);
    if (l.facts().Rank(keep) == 1) {
      const std::string total =
          l.Op("Gather", {l.Op("Shape", {l.In(0)}), l.Const("axis1", Tensor::Scalar<int64_t>(1))});
      onnx::NodeProto& total32 = l.Emit("Cast", {total});
      SetInt(total32, "to", onnx::TensorProto::INT32);
      const std::string positions = l.Op("Range", {l.Const("zero", Tensor::Scalar<int32_t>(0)), total32.output(0),
                                                   l.Const("step", Tensor::Scalar<int32_t>(1))});
      keep = l.Op("Less", {unsqueeze(positions, 0), unsqueeze(l.In(mask_input), 1)});
    }
    // (1 - mask) * mask_filter_value, as (batch, 1, 1, total).
    onnx::NodeProto& cast = l.Emit("Cast", {keep});
    SetInt(cast, "to", onnx::TensorProto::FLOAT);
    const std::string inv = l.Op("Sub", {l.F32("one", 1.0f), cast.output(0)});
    const std::string bias = l.Op("Mul", {inv, l.F32("mask_filter_value", filter)});
    const std::string axes = l.opset() >= 13 ? l.I64s("axes", {1, 2}) : "";
    onnx::NodeProto& unsq = l.Emit("Unsqueeze", {bias, axes});
    if (l.opset() < 13) SetInts(unsq, "axes", {1, 2});
    scores = l.Op("Add", {scores, unsq.output(0)});
  }
  onnx::NodeProto& sm = l.Emit("Softmax", {scores});
  SetInt(sm, "axis", -1);
  const std::string ctx = l.Op("MatMul", {sm.output(0), qkv[2]});
  onnx::NodeProto& back = l.Emit("Transpose", {ctx});
  SetInts(back, "perm", {0, 2, 1, 3});
  const std::string merge = l.I64s("merge_shape", {0, 0, sizes[2]});
  l.Op("Reshape", {back.output(0), merge}, l.Out(0));
  return absl::OkStatus();
}

// The lowering reads a raw 2-D 0/1 mask or a 1-D mask_index of sequence
// lengths (EmbedLayerNormalization's); a 3-D mask or ORT's other 1-D form
// (2 * batch: ends and starts of left padding) is not read, and a mask
// whose rank is not known is refused rather than broadcast wrongly.
absl::Status LowerAttentionChecked(Lowering& l, bool quantized) {
  const std::string mask = l.In(quantized ? 5 : 3);
  if (!mask.empty()) {
    const std::optional<int> rank = l.facts().Rank(mask);
    if (!rank || (*rank != 2 && *rank != 1)) {
      return l.Error("mask_index of rank ", rank ? StrCat(*rank) : std::string("unknown"),
                     " is not lowered (only a 2-D 0/1 mask or 1-D sequence lengths of a declared rank)");
    }
  }
  return LowerAttention(l, quantized);
}

// input_ids, segment_ids, word_embedding, position_embedding,
// segment_embedding, gamma, beta, mask, position_ids -> output, mask_index
// (the number of ones of each mask row; zeros without a mask),
// embedding_sum. Gathers of the embeddings added, then LayerNormalization.
absl::Status LowerEmbedLayerNorm(Lowering& l) {
  if (l.In(0).empty() || l.In(2).empty() || l.In(3).empty() || l.In(5).empty() || l.In(6).empty() || l.Out(0).empty()) {
    return l.Error("needs input_ids, word_embedding, position_embedding, gamma, beta and an output");
  }
  if (!l.Out(2).empty() && !l.In(1).empty()) {
    return l.Error("outputs embedding_sum with segment embeddings, which ged does not lower");
  }
  std::string sum = l.Op("Gather", {l.In(2), l.In(0)});
  std::string positions = l.In(8);
  if (positions.empty()) {
    const std::string seq = l.Op("Gather", {l.Op("Shape", {l.In(0)}), l.Const("axis1", Tensor::Scalar<int64_t>(1))});
    positions =
        l.Op("Range", {l.Const("zero", Tensor::Scalar<int64_t>(0)), seq, l.Const("step", Tensor::Scalar<int64_t>(1))});
  }
  sum = l.Op("Add", {sum, l.Op("Gather", {l.In(3), positions})});
  if (!l.In(1).empty() && !l.In(4).empty()) sum = l.Op("Add", {sum, l.Op("Gather", {l.In(4), l.In(1)})});
  if (!l.Out(2).empty()) sum = l.Op("Identity", {sum}, l.Out(2));
  if (!l.Out(1).empty()) {
    std::string ones;
    if (!l.In(7).empty()) {
      onnx::NodeProto& cast = l.Emit("Cast", {l.Op("Equal", {l.In(7), l.Const("one", Tensor::Scalar<int32_t>(1))})});
      SetInt(cast, "to", onnx::TensorProto::INT32);
      ones = cast.output(0);
    } else {
      ones = l.Op("Mul", {l.In(0), l.Const("zero", Tensor::Scalar<int32_t>(0))});
    }
    const std::string axes = l.opset() >= 13 ? l.I64s("axes", {1}) : "";
    onnx::NodeProto& count = l.Emit("ReduceSum", {ones, axes}, l.Out(1));
    if (l.opset() < 13) SetInts(count, "axes", {1});
    SetInt(count, "keepdims", 0);
  }
  return l.Norm(sum, l.In(5), l.In(6), FloatAttr(l.node(), "epsilon", 1e-12f), -1, false, l.Out(0));
}

}  // namespace

void AddTransformerRules(StringMap<LowerFn>& rules) {
  rules.emplace("Gelu", LowerGelu);
  rules.emplace("BiasGelu", LowerBiasGelu);
  rules.emplace("FastGelu", LowerFastGelu);
  rules.emplace("QuickGelu", LowerQuickGelu);
  rules.emplace("BiasAdd", LowerBiasAdd);
  rules.emplace("SkipLayerNormalization", [](Lowering& l) { return LowerSkipNorm(l, false); });
  rules.emplace("SkipSimplifiedLayerNormalization", [](Lowering& l) { return LowerSkipNorm(l, true); });
  rules.emplace("LayerNormalization", [](Lowering& l) { return LowerLayerNorm(l, false); });
  rules.emplace("SimplifiedLayerNormalization", [](Lowering& l) { return LowerLayerNorm(l, true); });
  rules.emplace("FusedConv", LowerFusedConv);
  rules.emplace("FusedGemm", LowerFusedGemm);
  rules.emplace("FusedMatMul", LowerFusedMatMul);
  rules.emplace("Attention", [](Lowering& l) { return LowerAttentionChecked(l, false); });
  rules.emplace("QAttention", [](Lowering& l) { return LowerAttentionChecked(l, true); });
  rules.emplace("EmbedLayerNormalization", LowerEmbedLayerNorm);
}

}  // namespace ge::frontend::contrib
