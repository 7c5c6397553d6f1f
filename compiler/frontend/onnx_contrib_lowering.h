// The shared machinery of the contrib-op lowerings (onnx_contrib_ops.h):
// attribute helpers, the model-wide facts a lowering reads (constants,
// ranks, fresh names) and Lowering, the node being rewritten with the
// emitters of the ONNX nodes that replace it. Internal to
// compiler/frontend: onnx_contrib_quantized.cc and
// onnx_contrib_transformer.cc hold the rules, onnx_contrib_ops.cc the
// walk over the graphs.
#pragma once

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/status.h"
#include "base/strings.h"
#include "base/tensor.h"
#include "compiler/frontend/onnx_contrib_ops.h"
#include "compiler/frontend/onnx_tensor.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend::contrib {

using NodeList = std::deque<onnx::NodeProto>;

inline const onnx::AttributeProto* Attr(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
inline int64_t IntAttr(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a != nullptr ? a->i() : fallback;
}
inline float FloatAttr(const onnx::NodeProto& node, std::string_view name, float fallback) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a != nullptr ? a->f() : fallback;
}
inline std::string StringAttr(const onnx::NodeProto& node, std::string_view name, std::string_view fallback) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a != nullptr ? a->s() : std::string(fallback);
}

inline void SetInt(onnx::NodeProto& n, std::string_view name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(std::string(name));
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void SetFloat(onnx::NodeProto& n, std::string_view name, float v) {
  auto* a = n.add_attribute();
  a->set_name(std::string(name));
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void SetInts(onnx::NodeProto& n, std::string_view name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(std::string(name));
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
// Copies the named attributes of `from` that are present.
inline void CopyAttrs(const onnx::NodeProto& from, onnx::NodeProto& to, std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    if (const onnx::AttributeProto* a = Attr(from, name)) *to.add_attribute() = *a;
  }
}

// The model-wide facts a lowering reads: constant values (initializers and
// Constant nodes of every graph) and every tensor name, for fresh names.
class ModelFacts {
 public:
  explicit ModelFacts(const onnx::ModelProto& model) { Scan(model.graph()); }

  const onnx::TensorProto* ConstantProto(const std::string& name) const {
    auto it = constants_.find(name);
    return it == constants_.end() ? nullptr : it->second;
  }
  std::optional<Tensor> Constant(const std::string& name) const {
    if (name.empty()) return std::nullopt;
    const onnx::TensorProto* p = ConstantProto(name);
    if (p == nullptr || p->data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
    absl::StatusOr<Tensor> t = TensorFromProto(*p, "constant");
    if (!t.ok()) return std::nullopt;
    return *std::move(t);
  }
  // The rank of a constant or a value whose rank is declared (graph inputs,
  // value_info), or passed through a Cast / Identity of one.
  std::optional<int> Rank(const std::string& name) const {
    if (const onnx::TensorProto* p = ConstantProto(name)) return p->dims_size();
    auto it = ranks_.find(name);
    return it == ranks_.end() ? std::nullopt : std::optional<int>(it->second);
  }
  std::string Fresh(std::string_view hint) {
    for (;;) {
      std::string name = StrCat(hint, "/ged", counter_++);
      if (names_.insert(name).second) return name;
    }
  }

 private:
  void Scan(const onnx::GraphProto& g) {
    for (const auto& i : g.input()) {
      names_.insert(i.name());
      if (i.type().has_tensor_type() && i.type().tensor_type().has_shape()) {
        ranks_[i.name()] = i.type().tensor_type().shape().dim_size();
      }
    }
    for (const auto& i : g.initializer()) {
      names_.insert(i.name());
      constants_[i.name()] = &i;
    }
    for (const auto& v : g.value_info()) {
      if (v.type().has_tensor_type() && v.type().tensor_type().has_shape()) {
        ranks_[v.name()] = v.type().tensor_type().shape().dim_size();
      }
    }
    for (const auto& n : g.node()) {
      for (const auto& o : n.output()) names_.insert(o);
      // EmbedLayerNormalization's mask_index is 1-D.
      if (n.op_type() == "EmbedLayerNormalization" && n.output_size() > 1 && !n.output(1).empty()) {
        ranks_[n.output(1)] = 1;
      }
      // A mask is often cast to int32 first: its rank passes through.
      if ((n.op_type() == "Cast" || n.op_type() == "Identity") && n.input_size() == 1 && n.output_size() == 1) {
        if (auto it = ranks_.find(n.input(0)); it != ranks_.end()) {
          const int rank = it->second;  // copied: the insertion may rehash
          ranks_.try_emplace(n.output(0), rank);
        }
      }
      if (n.op_type() == "Constant" && n.domain().empty() && n.output_size() == 1) {
        // A copy: the lowering rewrites node lists (Constants are small).
        if (const onnx::AttributeProto* v = Attr(n, "value"); v != nullptr && v->has_t()) {
          constants_[n.output(0)] = &owned_.emplace_back(v->t());
        }
      }
      for (const auto& a : n.attribute()) {
        if (a.has_g()) Scan(a.g());
        for (const auto& sub : a.graphs()) Scan(sub);
      }
    }
  }

  StringMap<const onnx::TensorProto*> constants_;
  std::deque<onnx::TensorProto> owned_;
  StringMap<int> ranks_;
  StringSet names_;
  int64_t counter_ = 0;
};

// One node's rewrite: emits default-domain nodes into `out`.
class Lowering {
 public:
  Lowering(const onnx::NodeProto& node, int64_t opset, ModelFacts& facts, NodeList& out)
      : node_(node), opset_(opset), facts_(facts), out_(out) {}

  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  ModelFacts& facts() { return facts_; }

  // Input i's name, "" when absent.
  std::string In(int i) const { return i < node_.input_size() ? node_.input(i) : std::string(); }
  std::string Out(int i) const { return i < node_.output_size() ? node_.output(i) : std::string(); }

  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return InvalidArgument("node '", node_.name(), "' (", kMicrosoftDomain, "::", node_.op_type(), "): ", args...);
  }
  absl::Status NeedInputs(int n) const {
    for (int i = 0; i < n; ++i) {
      if (In(i).empty()) return Error("needs input ", i, " (has ", node_.input_size(), ")");
    }
    if (node_.output_size() < 1 || node_.output(0).empty()) return Error("needs an output");
    return absl::OkStatus();
  }

  std::string Fresh(std::string_view role) {
    return facts_.Fresh(StrCat(node_.output_size() > 0 ? node_.output(0) : node_.op_type(), "/", role));
  }

  // Emits `op` with `inputs` (trailing empty ones dropped) writing `output`
  // (a fresh name when empty); returns the node.
  onnx::NodeProto& Emit(std::string_view op, std::vector<std::string> inputs, std::string output = "",
                        std::string_view role = "") {
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
    onnx::NodeProto& n = out_.emplace_back();
    n.set_op_type(std::string(op));
    if (!node_.name().empty()) n.set_name(StrCat(node_.name(), "/", role.empty() ? op : role, out_.size()));
    for (auto& i : inputs) n.add_input(std::move(i));
    n.add_output(output.empty() ? Fresh(role.empty() ? op : role) : std::move(output));
    return n;
  }
  // The output name of an emitted one-output node.
  std::string Op(std::string_view op, std::vector<std::string> inputs, std::string output = "") {
    return Emit(op, std::move(inputs), std::move(output)).output(0);
  }
  std::string Const(std::string_view role, const Tensor& value) {
    const std::string name = Fresh(role);
    onnx::NodeProto& c = out_.emplace_back();
    c.set_op_type("Constant");
    if (!node_.name().empty()) c.set_name(StrCat(node_.name(), "/", role, out_.size()));
    c.add_output(name);
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = TensorToProto(value, name);
    return name;
  }
  std::string F32(std::string_view role, float v) { return Const(role, Tensor::Scalar<float>(v)); }
  std::string I64s(std::string_view role, const std::vector<int64_t>& v) {
    return Const(role, Tensor::FromVector<int64_t>(v, Shape{static_cast<int64_t>(v.size())}));
  }

  // Transposes between channels-last (N, spatial..., C) and channels-first
  // (N, C, spatial...) of rank `rank`; the second writes `output`.
  std::string ToChannelsFirst(const std::string& x, int64_t rank) {
    std::vector<int64_t> perm = {0, rank - 1};
    for (int64_t d = 1; d < rank - 1; ++d) perm.push_back(d);
    onnx::NodeProto& t = Emit("Transpose", {x});
    SetInts(t, "perm", perm);
    return t.output(0);
  }
  void ToChannelsLast(const std::string& x, int64_t rank, const std::string& output) {
    std::vector<int64_t> perm = {0};
    for (int64_t d = 2; d < rank; ++d) perm.push_back(d);
    perm.push_back(1);
    SetInts(Emit("Transpose", {x}, output), "perm", perm);
  }
  // The rank of a pool's or convolution's data from its kernel_shape.
  std::optional<int64_t> RankFromKernel() const {
    const onnx::AttributeProto* k = Attr(node_, "kernel_shape");
    if (k == nullptr || k->ints_size() == 0) return std::nullopt;
    return k->ints_size() + 2;
  }

  // DequantizeLinear of x with scale s and zero point z ("" = none); a
  // per-channel scale (a constant of more than one element) gets `axis`.
  std::string Dq(const std::string& x, const std::string& s, const std::string& z, int64_t axis = 1) {
    onnx::NodeProto& n = Emit("DequantizeLinear", {x, s, z});
    if (IsPerChannel(s)) SetInt(n, "axis", axis);
    return n.output(0);
  }
  bool IsPerChannel(const std::string& s) const {
    const onnx::TensorProto* p = facts_.ConstantProto(s);
    if (p == nullptr) return false;
    int64_t n = 1;
    for (int64_t d : p->dims()) n *= d;
    return n > 1;
  }
  // QuantizeLinear of f into `output` with scale s and zero point z; with z
  // absent, the zero point of the type `like` (another zero point of the
  // node, constant) has, else ONNX's default (u8).
  absl::Status Q(const std::string& f, const std::string& s, const std::string& z, const std::string& like,
                 const std::string& output) {
    std::string zp = z;
    if (zp.empty() && !like.empty()) {
      std::optional<Tensor> l = facts_.Constant(like);
      if (!l) return Error("has no output zero point and its input's (", like, ") is not a constant");
      GE_ASSIGN_OR_RETURN(Tensor zero, Tensor::Allocate(l->dtype(), Shape{}));
      zp = Const("zero_point", zero);
    }
    Emit("QuantizeLinear", {f, s, zp}, output);
    return absl::OkStatus();
  }

  // Whether two (scale, zero point) pairs are the same constants' values.
  bool SameQuant(const std::string& s1, const std::string& z1, const std::string& s2, const std::string& z2) const {
    auto same = [&](const std::string& a, const std::string& b, bool zero_point) {
      if (a == b) return true;
      std::optional<Tensor> ta = facts_.Constant(a), tb = facts_.Constant(b);
      if (zero_point) {  // an absent zero point is 0 (of the other's type)
        if (a.empty() && tb) return tb->NumElements() == 1 && tb->GetAsDouble(0) == 0;
        if (b.empty() && ta) return ta->NumElements() == 1 && ta->GetAsDouble(0) == 0;
      }
      if (!ta || !tb || ta->dtype() != tb->dtype() || ta->NumElements() != 1 || tb->NumElements() != 1) return false;
      return ta->GetAsDouble(0) == tb->GetAsDouble(0);
    };
    return same(s1, s2, false) && same(z1, z2, true);
  }

  // x * 0.5 * (1 + erf(x / sqrt(2))) in the node order torch exports.
  std::string Gelu(const std::string& x, const std::string& output) {
    const std::string d = Op("Div", {x, F32("sqrt2", 1.4142135623730951f)});
    const std::string e = Op("Erf", {d});
    const std::string a = Op("Add", {e, F32("one", 1.0f)});
    const std::string m = Op("Mul", {x, a});
    return Op("Mul", {m, F32("half", 0.5f)}, output);
  }

  // Normalization over the last axis (LayerNormalization-17 from opset 17;
  // before, the ops torch exports for it). `rms`: no mean subtracted, no
  // beta (SimplifiedLayerNormalization).
  absl::Status Norm(const std::string& x, const std::string& gamma, const std::string& beta, float epsilon,
                    int64_t axis, bool rms, const std::string& output) {
    if (!rms && opset_ >= 17) {
      onnx::NodeProto& n = Emit("LayerNormalization", {x, gamma, beta}, output);
      SetInt(n, "axis", axis);
      SetFloat(n, "epsilon", epsilon);
      return absl::OkStatus();
    }
    if (axis != -1) return Error("normalizes from axis ", axis, "; ged lowers it for axis -1 only");
    std::string centered = x;
    if (!rms) {
      onnx::NodeProto& mean = Emit("ReduceMean", {x});
      SetInts(mean, "axes", {-1});
      centered = Op("Sub", {x, mean.output(0)});
    }
    const std::string sq = Op("Pow", {centered, F32("two", 2.0f)});
    onnx::NodeProto& var = Emit("ReduceMean", {sq});
    SetInts(var, "axes", {-1});
    const std::string v = Op("Add", {var.output(0), F32("epsilon", epsilon)});
    const std::string sd = Op("Sqrt", {v});
    const std::string normed = Op("Div", {centered, sd});
    if (beta.empty()) {
      Op("Mul", {normed, gamma}, output);
    } else {
      Op("Add", {Op("Mul", {normed, gamma}), beta}, output);
    }
    return absl::OkStatus();
  }

  // An activation named by FusedConv / FusedGemm, applied to x into output.
  absl::Status Activation(const std::string& act, const std::vector<float>& params, const std::string& x,
                          const std::string& output) {
    auto param = [&](size_t i, float fallback) { return i < params.size() ? params[i] : fallback; };
    if (act.empty() || act == "Identity") {
      Op("Identity", {x}, output);
    } else if (act == "Relu" || act == "Tanh" || act == "Sigmoid") {
      Op(act, {x}, output);
    } else if (act == "LeakyRelu") {
      SetFloat(Emit("LeakyRelu", {x}, output), "alpha", param(0, 0.01f));
    } else if (act == "HardSigmoid") {
      onnx::NodeProto& n = Emit("HardSigmoid", {x}, output);
      SetFloat(n, "alpha", param(0, 0.2f));
      SetFloat(n, "beta", param(1, 0.5f));
    } else if (act == "Clip") {
      if (params.size() < 2) return Error("activation Clip needs two activation_params (min, max)");
      Op("Clip", {x, F32("min", params[0]), F32("max", params[1])}, output);
    } else {
      return Error("activation '", act, "' is not one ged lowers (Relu, Tanh, Sigmoid, LeakyRelu, HardSigmoid, Clip)");
    }
    return absl::OkStatus();
  }

 private:
  const onnx::NodeProto& node_;
  int64_t opset_;
  ModelFacts& facts_;
  NodeList& out_;
};

using LowerFn = std::function<absl::Status(Lowering&)>;

// The rules of each family, added to `rules` by op type.
void AddQuantizedRules(StringMap<LowerFn>& rules);
void AddTransformerRules(StringMap<LowerFn>& rules);

}  // namespace ge::frontend::contrib
