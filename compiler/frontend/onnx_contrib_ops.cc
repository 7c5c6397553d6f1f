// Lowering of ONNX Runtime's com.microsoft contrib ops into default-domain
// ONNX nodes (see onnx_contrib_ops.h). Each rewrite keeps the original
// node's output tensor names, so consumers need no rewiring; helper tensors
// get fresh names unused anywhere in the model.
#include "compiler/frontend/onnx_contrib_ops.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <optional>

#include "absl/strings/str_join.h"
#include "base/status.h"
#include "base/strings.h"
#include "base/tensor.h"
#include "compiler/frontend/onnx_tensor.h"

namespace ge::frontend {
namespace {

using NodeList = std::deque<onnx::NodeProto>;

const onnx::AttributeProto* Attr(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
int64_t IntAttr(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a != nullptr ? a->i() : fallback;
}
float FloatAttr(const onnx::NodeProto& node, std::string_view name, float fallback) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a != nullptr ? a->f() : fallback;
}
std::string StringAttr(const onnx::NodeProto& node, std::string_view name, std::string_view fallback) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a != nullptr ? a->s() : std::string(fallback);
}

void SetInt(onnx::NodeProto& n, std::string_view name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(std::string(name));
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void SetFloat(onnx::NodeProto& n, std::string_view name, float v) {
  auto* a = n.add_attribute();
  a->set_name(std::string(name));
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
void SetInts(onnx::NodeProto& n, std::string_view name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(std::string(name));
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
// Copies the named attributes of `from` that are present.
void CopyAttrs(const onnx::NodeProto& from, onnx::NodeProto& to, std::initializer_list<std::string_view> names) {
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
        if (auto it = ranks_.find(n.input(0)); it != ranks_.end()) ranks_.try_emplace(n.output(0), it->second);
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

// ---------------------------------------------------------------- quantized ops

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

// ---------------------------------------------------------------- transformer and fused ops

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

const StringMap<LowerFn>& ContribRules() {
  static const auto* rules = new StringMap<LowerFn>{
      {"QLinearAdd", BinaryQLinear("Add")},
      {"QLinearMul", BinaryQLinear("Mul")},
      {"QLinearSigmoid", UnaryQLinear("Sigmoid", {})},
      {"QLinearLeakyRelu", UnaryQLinear("LeakyRelu", {"alpha"})},
      {"QLinearSoftmax", LowerQLinearSoftmax},
      {"QLinearGlobalAveragePool", [](Lowering& l) { return LowerPoolQLinear(l, "GlobalAveragePool"); }},
      {"QLinearAveragePool", [](Lowering& l) { return LowerPoolQLinear(l, "AveragePool"); }},
      {"QLinearReduceMean", LowerQLinearReduceMean},
      {"QLinearConcat", LowerQLinearConcat},
      {"QLinearWhere", LowerQLinearWhere},
      {"QLinearConv", LowerQLinearConv},
      {"NhwcMaxPool", LowerNhwcMaxPool},
      {"QGemm", LowerQGemm},
      {"QuantizeLinear", QdqToOnnx("QuantizeLinear")},
      {"DequantizeLinear", QdqToOnnx("DequantizeLinear")},
      {"MatMulIntegerToFloat", LowerMatMulIntegerToFloat},
      {"DynamicQuantizeMatMul", LowerDynamicQuantizeMatMul},
      {"Gelu", LowerGelu},
      {"BiasGelu", LowerBiasGelu},
      {"FastGelu", LowerFastGelu},
      {"QuickGelu", LowerQuickGelu},
      {"BiasAdd", LowerBiasAdd},
      {"SkipLayerNormalization", [](Lowering& l) { return LowerSkipNorm(l, false); }},
      {"SkipSimplifiedLayerNormalization", [](Lowering& l) { return LowerSkipNorm(l, true); }},
      {"LayerNormalization", [](Lowering& l) { return LowerLayerNorm(l, false); }},
      {"SimplifiedLayerNormalization", [](Lowering& l) { return LowerLayerNorm(l, true); }},
      {"FusedConv", LowerFusedConv},
      {"FusedGemm", LowerFusedGemm},
      {"FusedMatMul", LowerFusedMatMul},
      {"Attention", [](Lowering& l) { return LowerAttentionChecked(l, false); }},
      {"QAttention", [](Lowering& l) { return LowerAttentionChecked(l, true); }},
      {"EmbedLayerNormalization", LowerEmbedLayerNorm},
  };
  return *rules;
}

absl::Status LowerGraph(onnx::GraphProto& graph, int64_t opset, ModelFacts& facts) {
  bool any = false;
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) GE_RETURN_IF_ERROR(LowerGraph(*attr.mutable_g(), opset, facts));
      for (auto& sub : *attr.mutable_graphs()) GE_RETURN_IF_ERROR(LowerGraph(sub, opset, facts));
    }
    const std::string_view domain = NormalizeDomain(node.domain());
    if (domain == kMicrosoftDomain) {
      any = true;
    } else if (domain.empty() && ((node.op_type() == "LayerNormalization" && opset < 17) ||
                                  node.op_type() == "SimplifiedLayerNormalization")) {
      any = true;
    }
  }
  if (!any) return absl::OkStatus();
  NodeList out;
  for (const auto& node : graph.node()) {
    const std::string_view domain = NormalizeDomain(node.domain());
    const bool ms = domain == kMicrosoftDomain;
    const bool ort_norm = domain.empty() && ((node.op_type() == "LayerNormalization" && opset < 17) ||
                                             node.op_type() == "SimplifiedLayerNormalization");
    if (!ms && !ort_norm) {
      out.push_back(node);
      continue;
    }
    auto rule = ContribRules().find(node.op_type());
    if (rule == ContribRules().end()) {
      return InvalidArgument("node '", node.name(), "': op '", node.op_type(), "' (domain '", kMicrosoftDomain,
                             "', ONNX Runtime's contrib ops) is not supported by ged; ged lowers these ",
                             kMicrosoftDomain, " ops: ", absl::StrJoin(LoweredContribOps(), ", "));
    }
    if (opset < 11) {
      return InvalidArgument("node '", node.name(), "': ", DomainForMessages(domain), "::", node.op_type(),
                             " in a model of ai.onnx opset ", opset, "; ged lowers contrib ops from opset 11");
    }
    Lowering lowering(node, opset, facts, out);
    GE_RETURN_IF_ERROR(rule->second(lowering));
  }
  graph.clear_node();
  for (auto& n : out) *graph.add_node() = std::move(n);
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> LoweredContribOps() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : ContribRules()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status LowerContribOps(onnx::ModelProto& model, const OpsetMap& opsets) {
  auto onnx_opset = opsets.find("");
  if (onnx_opset == opsets.end()) return absl::OkStatus();
  ModelFacts facts(model);
  return LowerGraph(*model.mutable_graph(), onnx_opset->second, facts);
}

}  // namespace ge::frontend
