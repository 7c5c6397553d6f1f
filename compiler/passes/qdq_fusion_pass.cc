// QdqFusionPass: matching DQ -> op -> Q chains and building the int8 nodes.
#include "compiler/passes/qdq_fusion_pass.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/status.h"

namespace ge::compiler {
namespace {

constexpr std::string_view kDq = "DequantizeLinear";
constexpr std::string_view kQ = "QuantizeLinear";

bool IsInt8(DataType d) { return d == DataType::kInt8 || d == DataType::kUint8; }

const Tensor* ConstOf(const ir::OutPort& p) {
  if (!p || p.node->type() != ir::kConst) return nullptr;
  const ir::AttrValue* v = p.node->op_desc().FindAttr(ir::kAttrValue);
  return v != nullptr ? v->get<Tensor>() : nullptr;
}

ir::OutPort InputOf(const ir::Node& n, int i) { return i < n.num_inputs() ? n.input(i) : ir::OutPort{}; }

const ir::ValueType& TypeOf(const ir::OutPort& p) { return p.node->op_desc().output(p.index).type; }

// The one consumer of output 0 (null when none, several, or other outputs
// are read too).
ir::Node* OnlyConsumer(const ir::Node& n) {
  for (int o = 1; o < n.num_outputs(); ++o) {
    if (!n.consumers(o).empty()) return nullptr;
  }
  const auto& c = n.consumers(0);
  if (c.size() != 1 || !n.control_outputs().empty()) return nullptr;
  return c[0].node;
}

// A DequantizeLinear (or QuantizeLinear) with constant parameters.
struct QParams {
  ir::Node* node = nullptr;
  ir::OutPort data;         // DQ: the quantized input; Q: the float input
  ir::OutPort scale, zero;  // zero may be empty (then 0 of `dtype`)
  const Tensor* scale_value = nullptr;
  const Tensor* zero_value = nullptr;
  DataType dtype = DataType::kUndefined;  // the quantized type
  int64_t axis = 1;
  int64_t count() const { return scale_value->NumElements(); }
  float ScaleAt(int64_t c) const { return static_cast<float>(scale_value->GetAsDouble(count() == 1 ? 0 : c)); }
  int64_t ZeroAt(int64_t c) const {
    if (zero_value == nullptr) return 0;
    return zero_value->GetAsInt64(zero_value->NumElements() == 1 ? 0 : c);
  }
};

std::optional<QParams> ReadParams(ir::Node* n, std::string_view type) {
  if (n == nullptr || n->type() != type || n->num_inputs() < 2) return std::nullopt;
  QParams q;
  q.node = n;
  q.data = n->input(0);
  q.scale = n->input(1);
  q.zero = InputOf(*n, 2);
  q.scale_value = ConstOf(q.scale);
  if (!q.data || q.scale_value == nullptr || q.scale_value->dtype() != DataType::kFloat) return std::nullopt;
  if (q.zero) {
    q.zero_value = ConstOf(q.zero);
    if (q.zero_value == nullptr || q.zero_value->NumElements() != q.scale_value->NumElements()) return std::nullopt;
  }
  q.dtype = type == kDq ? TypeOf(q.data).dtype() : n->op_desc().output(0).type.dtype();
  if (q.zero_value != nullptr && q.zero_value->dtype() != q.dtype) return std::nullopt;
  q.axis = n->op_desc().GetAttrOr<int64_t>("axis", 1);
  for (int64_t c = 0; c < q.count(); ++c) {
    if (!(q.ScaleAt(c) > 0) || !std::isfinite(q.ScaleAt(c))) return std::nullopt;
  }
  return q;
}

// Activations: per tensor, int8.
std::optional<QParams> ActivationDq(const ir::OutPort& p) {
  if (!p || p.index != 0) return std::nullopt;
  auto q = ReadParams(p.node, kDq);
  if (!q || q->count() != 1 || !IsInt8(q->dtype)) return std::nullopt;
  return q;
}

// Constant weights of rank `rank` (any when < 0) quantized per tensor or
// along `axis` (normalized).
std::optional<QParams> WeightDq(const ir::OutPort& p, int64_t channel_axis) {
  if (!p || p.index != 0) return std::nullopt;
  auto q = ReadParams(p.node, kDq);
  if (!q || !IsInt8(q->dtype)) return std::nullopt;
  const Tensor* w = ConstOf(q->data);
  if (w == nullptr || w->shape().rank() < 1) return std::nullopt;
  if (q->count() != 1) {
    const int64_t rank = w->shape().rank();
    const int64_t axis = q->axis < 0 ? q->axis + rank : q->axis;
    const int64_t ch = channel_axis < 0 ? channel_axis + rank : channel_axis;
    if (axis != ch || q->count() != w->shape().dim(ch)) return std::nullopt;
  }
  return q;
}

int64_t MinOf(DataType d) { return d == DataType::kInt8 ? -128 : 0; }

// What one rewrite builds.
struct Chain {
  ir::Node* core = nullptr;  // Conv / MatMul / Gemm
  ir::Node* relu = nullptr;  // the absorbed Relu or Clip, or null
  QParams x, w, y;
  ir::OutPort bias;  // Conv's, or empty
};

// Whether Clip `n` (constant bounds, either may be absent) changes nothing
// that `q`'s saturation does not: its lower bound quantizes to the type's
// minimum or below and its upper bound to the maximum or above, so
// Q(Clip(v)) == Q(v) for every v (Q is monotone). A ReLU6 (Clip 0, 6)
// before a u8 Q of zero point 0 calibrated on values within [0, 6] is one.
bool ClipAbsorbedBy(const ir::Node& n, const QParams& q) {
  const float scale = q.ScaleAt(0);
  const auto zero = static_cast<float>(q.ZeroAt(0));
  const auto lo = static_cast<float>(MinOf(q.dtype)), hi = lo + 255.0f;
  for (int i : {1, 2}) {
    const ir::OutPort p = InputOf(n, i);
    if (!p) continue;
    const Tensor* t = ConstOf(p);
    if (t == nullptr || t->NumElements() != 1) return false;
    // As QuantizeLinear computes it: the f32 quotient, rounded half to even.
    const float v = std::nearbyint(static_cast<float>(t->GetAsDouble(0)) / scale) + zero;
    if (std::isnan(v) || (i == 1 ? v > lo : v < hi)) return false;
  }
  return true;
}

// Finds core [-> Relu | Clip] -> Q upstream of `q`: a Relu when Q's zero
// point is its type's minimum, a Clip when Q saturates alike
// (ClipAbsorbedBy).
std::optional<Chain> MatchOutput(ir::Node* q_node) {
  auto y = ReadParams(q_node, kQ);
  if (!y || y->count() != 1 || !IsInt8(y->dtype) || y->data.index != 0) return std::nullopt;
  Chain c;
  c.y = *y;
  ir::Node* up = y->data.node;
  if (up->type() == "Relu" || up->type() == "Clip") {
    const bool absorbed = up->type() == "Relu" ? y->ZeroAt(0) == MinOf(y->dtype) : ClipAbsorbedBy(*up, *y);
    if (OnlyConsumer(*up) != q_node || !absorbed || !up->input(0) || up->input(0).index != 0) {
      return std::nullopt;
    }
    c.relu = up;
    up = up->input(0).node;
    if (OnlyConsumer(*up) != c.relu) return std::nullopt;
  } else if (OnlyConsumer(*up) != q_node) {
    return std::nullopt;
  }
  c.core = up;
  for (ir::Node* n : {c.core, c.relu, q_node}) {
    if (n != nullptr && !n->control_inputs().empty()) return std::nullopt;
  }
  return c;
}

absl::StatusOr<ir::Node*> AddConst(ir::Graph& g, const std::string& prefix, Tensor value) {
  ir::OpDesc op(g.UniqueNodeName(prefix), std::string(ir::kConst));
  op.AddOutput({"", ir::ValueType::Tensor(value.dtype(), value.shape())});
  op.SetAttr(ir::kAttrValue, ir::AttrValue(std::move(value)));
  return g.AddNode(std::move(op));
}

// The weights of a MatMul/Gemm as [K, N]: `data` itself, or (transB) a new
// Const holding `w` ([N, K], one byte per element) transposed.
absl::StatusOr<ir::OutPort> WeightsKN(ir::Graph& g, const Tensor& w, ir::OutPort data, bool trans_b,
                                      const std::string& prefix) {
  if (!trans_b) return data;
  const int64_t n = w.shape().dim(0), k = w.shape().dim(1);
  GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(w.dtype(), Shape{k, n}));
  const auto* src = static_cast<const uint8_t*>(w.raw_data());
  auto* dst = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) dst[j * n + i] = src[i * k + j];
  }
  GE_ASSIGN_OR_RETURN(ir::Node * tn, AddConst(g, prefix + "_weights_t", std::move(t)));
  return ir::OutPort{tn, 0};
}

// A zero point input: the given one, or a new constant 0 of `dtype`.
absl::StatusOr<ir::OutPort> ZeroPort(ir::Graph& g, const QParams& q, const std::string& prefix) {
  if (q.zero) return q.zero;
  GE_ASSIGN_OR_RETURN(Tensor zero, Tensor::Allocate(q.dtype, Shape{}));
  GE_ASSIGN_OR_RETURN(ir::Node * n, AddConst(g, prefix + "_zero_point", std::move(zero)));
  return ir::OutPort{n, 0};
}

void RemoveIfUnused(ir::Graph& g, ir::Node* n) {
  if (n != nullptr && !n->HasConsumers() && n->control_outputs().empty() && n->type() != ir::kData) {
    std::vector<ir::Node*> inputs;
    for (const ir::OutPort& p : n->inputs()) {
      if (p) inputs.push_back(p.node);
    }
    g.RemoveNode(n);
    for (ir::Node* in : inputs) {
      if (in->type() == ir::kConst || in->type() == kDq) RemoveIfUnused(g, in);
    }
  }
}

// Replaces the chain ending at `c.y.node` by `op` fed by `inputs`.
absl::Status Replace(ir::Graph& g, Chain& c, ir::OpDesc op, const std::vector<ir::OutPort>& inputs) {
  for (const ir::OutPort& p : inputs) op.AddInput({p.node->op_desc().output(p.index).name, TypeOf(p)});
  op.AddOutput(c.y.node->op_desc().output(0));
  GE_ASSIGN_OR_RETURN(ir::Node * n, g.AddNode(std::move(op)));
  for (size_t i = 0; i < inputs.size(); ++i)
    GE_RETURN_IF_ERROR(g.AddEdge(inputs[i].node, inputs[i].index, n, static_cast<int>(i)));
  GE_RETURN_IF_ERROR(g.ReplaceAllUses(c.y.node, 0, n, 0));
  std::vector<ir::Node*> upstream;
  for (ir::Node* m : {c.y.node, c.relu, c.core}) {
    if (m == nullptr) continue;
    for (const ir::OutPort& p : m->inputs()) {
      if (p) upstream.push_back(p.node);
    }
  }
  for (ir::Node* m : {c.y.node, c.relu, c.core}) {
    if (m != nullptr) g.RemoveNode(m);
  }
  std::set<ir::Node*> seen;
  for (ir::Node* u : upstream) {
    if (u != c.y.node && u != c.relu && u != c.core && seen.insert(u).second) RemoveIfUnused(g, u);
  }
  return absl::OkStatus();
}

// The bias in int32 at scale x_scale * w_scale[c]; nullopt when it is not
// a constant (or a DQ of one) of M elements.
std::optional<Tensor> QuantizedBias(const Chain& c, int64_t m) {
  const Tensor* b = ConstOf(c.bias);
  std::vector<double> values;
  if (b != nullptr && b->dtype() == DataType::kFloat && b->NumElements() == m) {
    for (int64_t i = 0; i < m; ++i) values.push_back(b->GetAsDouble(i));
  } else if (c.bias && c.bias.index == 0) {
    auto dq = ReadParams(c.bias.node, kDq);
    const Tensor* q = dq ? ConstOf(dq->data) : nullptr;
    if (q == nullptr || q->dtype() != DataType::kInt32 || q->NumElements() != m ||
        (dq->count() != 1 && dq->count() != m)) {
      return std::nullopt;
    }
    for (int64_t i = 0; i < m; ++i) {
      values.push_back(static_cast<double>(q->GetAsInt64(i) - dq->ZeroAt(i)) * dq->ScaleAt(i));
    }
  } else {
    return std::nullopt;
  }
  auto t = Tensor::Allocate(DataType::kInt32, Shape{m});
  if (!t.ok()) return std::nullopt;
  for (int64_t i = 0; i < m; ++i) {
    const double s = static_cast<double>(c.x.ScaleAt(0)) * static_cast<double>(c.w.ScaleAt(i));
    const double v = std::nearbyint(values[i] / s);
    if (!(std::fabs(v) < 2147483647.0)) return std::nullopt;
    t->data<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return *std::move(t);
}

absl::StatusOr<bool> FuseConv(ir::Graph& g, Chain& c) {
  ir::Node* conv = c.core;
  if (conv->num_inputs() < 2) return false;
  auto x = ActivationDq(conv->input(0));
  auto w = WeightDq(conv->input(1), 0);
  if (!x || !w) return false;
  c.x = *x;
  c.w = *w;
  const int64_t m = ConstOf(w->data)->shape().dim(0);
  c.bias = InputOf(*conv, 2);
  std::optional<Tensor> bias;
  if (c.bias) {
    bias = QuantizedBias(c, m);
    if (!bias) return false;
  }
  const std::string prefix = conv->name();
  GE_ASSIGN_OR_RETURN(ir::OutPort xz, ZeroPort(g, c.x, prefix + "_x"));
  GE_ASSIGN_OR_RETURN(ir::OutPort wz, ZeroPort(g, c.w, prefix + "_w"));
  GE_ASSIGN_OR_RETURN(ir::OutPort yz, ZeroPort(g, c.y, prefix + "_y"));
  std::vector<ir::OutPort> inputs = {c.x.data, c.x.scale, xz, c.w.data, c.w.scale, wz, c.y.scale, yz};
  if (bias) {
    GE_ASSIGN_OR_RETURN(ir::Node * b, AddConst(g, prefix + "_bias_int32", *std::move(bias)));
    inputs.push_back({b, 0});
  }
  ir::OpDesc op(g.UniqueNodeName(prefix + "_quant"), "QLinearConv");
  op.mutable_attrs() = conv->op_desc().attrs();
  GE_RETURN_IF_ERROR(Replace(g, c, std::move(op), inputs));
  return true;
}

// MatMul [K, N] weights, or Gemm's (transposed when transB).
absl::StatusOr<bool> FuseMatMul(ir::Graph& g, Chain& c) {
  ir::Node* mm = c.core;
  const bool gemm = mm->type() == "Gemm";
  bool trans_b = false;
  if (gemm) {
    const ir::OpDesc& d = mm->op_desc();
    if (d.GetAttrOr<int64_t>("transA", 0) != 0 || d.GetAttrOr<float>("alpha", 1.0f) != 1.0f) return false;
    if (InputOf(*mm, 2)) return false;  // a C stays in float
    trans_b = d.GetAttrOr<int64_t>("transB", 0) != 0;
  }
  if (mm->num_inputs() < 2) return false;
  auto a = ActivationDq(mm->input(0));
  auto b = WeightDq(mm->input(1), trans_b ? 0 : -1);
  if (!a || !b) return false;
  const Tensor* bw = ConstOf(b->data);
  if (bw->shape().rank() != 2 && (gemm || b->count() != 1)) return false;
  c.x = *a;
  c.w = *b;
  const std::string prefix = mm->name();
  GE_ASSIGN_OR_RETURN(ir::OutPort weights, WeightsKN(g, *bw, b->data, trans_b, prefix));
  GE_ASSIGN_OR_RETURN(ir::OutPort az, ZeroPort(g, c.x, prefix + "_a"));
  GE_ASSIGN_OR_RETURN(ir::OutPort bz, ZeroPort(g, c.w, prefix + "_b"));
  GE_ASSIGN_OR_RETURN(ir::OutPort yz, ZeroPort(g, c.y, prefix + "_y"));
  ir::OpDesc op(g.UniqueNodeName(prefix + "_quant"), "QLinearMatMul");
  GE_RETURN_IF_ERROR(Replace(g, c, std::move(op), {c.x.data, c.x.scale, az, weights, c.w.scale, bz, c.y.scale, yz}));
  return true;
}

// Whether `b` repeats along `a` as a suffix of its dims (its dims, leading
// 1s dropped, all known and equal to a's last ones), or has one element.
bool SuffixOf(const Shape& a, const Shape& b) {
  if (a.unknown_rank() || b.unknown_rank() || !b.IsFullyKnown()) return false;
  if (b.NumElementsUnchecked() == 1) return true;
  int lead = 0;
  while (lead < b.rank() && b.dim(lead) == 1) ++lead;
  const int k = b.rank() - lead;
  if (k > a.rank()) return false;
  for (int d = 0; d < k; ++d) {
    if (b.dim(lead + d) != a.dim(a.rank() - k + d)) return false;
  }
  return true;
}

// DQ(a), DQ(b) -> Add [-> Relu] -> Q with per-tensor parameters, one int8
// type and one shape for a, b and the sum (of known rank; an unknown dim,
// such as a dynamic batch, must be unknown in both at the same place, and
// the kernels refuse operands that then differ), or one operand a bias over
// the other's last axes or a scalar (SuffixOf; it becomes B): ged's
// `_QLinearAdd`.
absl::StatusOr<bool> FuseAdd(ir::Graph& g, Chain& c) {
  ir::Node* add = c.core;
  if (add->num_inputs() != 2) return false;
  auto a = ActivationDq(add->input(0));
  auto b = ActivationDq(add->input(1));
  if (!a || !b || a->dtype != c.y.dtype || b->dtype != c.y.dtype) return false;
  // A bias over the last axes (or a scalar) in either operand: it becomes B.
  if (TypeOf(a->data).shape() != TypeOf(b->data).shape() &&
      SuffixOf(TypeOf(b->data).shape(), TypeOf(a->data).shape())) {
    std::swap(a, b);
  }
  const Shape& sa = TypeOf(a->data).shape();
  const Shape& sb = TypeOf(b->data).shape();
  if (sa.unknown_rank() || (sb != sa && !SuffixOf(sa, sb)) || add->op_desc().output(0).type.shape() != sa) {
    return false;
  }
  const std::string prefix = add->name();
  GE_ASSIGN_OR_RETURN(ir::OutPort az, ZeroPort(g, *a, prefix + "_a"));
  GE_ASSIGN_OR_RETURN(ir::OutPort bz, ZeroPort(g, *b, prefix + "_b"));
  GE_ASSIGN_OR_RETURN(ir::OutPort yz, ZeroPort(g, c.y, prefix + "_y"));
  ir::OpDesc op(g.UniqueNodeName(prefix + "_quant"), "_QLinearAdd");
  GE_RETURN_IF_ERROR(Replace(g, c, std::move(op), {a->data, a->scale, az, b->data, b->scale, bz, c.y.scale, yz}));
  return true;
}

// A node of type `type` fed by `inputs`, with the one output `out`, named
// uniquely after `prefix`.
absl::StatusOr<ir::Node*> AddOp(ir::Graph& g, const std::string& prefix, std::string_view type,
                                const std::vector<ir::OutPort>& inputs, ir::IoDesc out, ir::AttrMap attrs = {}) {
  ir::OpDesc op(g.UniqueNodeName(prefix), std::string(type));
  op.mutable_attrs() = std::move(attrs);
  for (const ir::OutPort& p : inputs) op.AddInput({p.node->op_desc().output(p.index).name, TypeOf(p)});
  op.AddOutput(std::move(out));
  GE_ASSIGN_OR_RETURN(ir::Node * n, g.AddNode(std::move(op)));
  for (size_t i = 0; i < inputs.size(); ++i) {
    GE_RETURN_IF_ERROR(g.AddEdge(inputs[i].node, inputs[i].index, n, static_cast<int>(i)));
  }
  return n;
}

// DQ(a), DQ(B const) -> MatMul / Gemm [+ C] whose float result is not
// requantized (a classifier's logits): the integer product in int32
// (MatMulInteger, exact), then to float and scaled per column by a_scale *
// b_scale[n], then C added:
//   MatMulInteger(a, B, a_zero) -> Cast(f32) -> Mul(scale[N]) [-> Add(C)].
// Gemm: transA 0, alpha 1, beta 1 (any C that broadcasts to the result);
// transB transposes the constant weights. The result equals the float
// chain's up to float rounding (the chain multiplies each product by its
// scales before summing; this sums exact integers first), as ONNX Runtime's
// integer form of this chain does.
absl::StatusOr<bool> FuseFloatMatMul(ir::Graph& g, ir::Node* mm) {
  const bool gemm = mm->type() == "Gemm";
  if (mm->num_inputs() < 2 || mm->num_outputs() != 1 || !mm->control_inputs().empty()) return false;
  if (mm->op_desc().output(0).type.dtype() != DataType::kFloat) return false;
  bool trans_b = false;
  if (gemm) {
    const ir::OpDesc& d = mm->op_desc();
    if (d.GetAttrOr<int64_t>("transA", 0) != 0 || d.GetAttrOr<float>("alpha", 1.0f) != 1.0f) return false;
    if (InputOf(*mm, 2) && d.GetAttrOr<float>("beta", 1.0f) != 1.0f) return false;
    trans_b = d.GetAttrOr<int64_t>("transB", 0) != 0;
  } else if (mm->num_inputs() != 2) {
    return false;
  }
  auto a = ActivationDq(mm->input(0));
  auto b = WeightDq(mm->input(1), trans_b ? 0 : -1);
  if (!a || !b || b->dtype != DataType::kInt8) return false;  // MatMulInteger's B on cpu_dense: s8
  const Tensor* bw = ConstOf(b->data);
  if (bw->shape().rank() != 2) return false;
  for (int64_t c = 0; c < b->count(); ++c) {
    if (b->ZeroAt(c) != 0) return false;
  }
  const int64_t n = bw->shape().dim(trans_b ? 0 : 1), k = bw->shape().dim(trans_b ? 1 : 0);
  // The int32 sum cannot overflow: |a - a_zero| <= 255, |b| <= max |b|.
  int64_t b_max = 0;
  for (int64_t i = 0; i < bw->NumElements(); ++i) b_max = std::max(b_max, std::abs(bw->GetAsInt64(i)));
  if (k * 255 * b_max > std::numeric_limits<int32_t>::max()) return false;
  const std::string prefix = mm->name();
  GE_ASSIGN_OR_RETURN(ir::OutPort weights, WeightsKN(g, *bw, b->data, trans_b, prefix));
  GE_ASSIGN_OR_RETURN(Tensor scale, Tensor::Allocate(DataType::kFloat, Shape{n}));
  for (int64_t c = 0; c < n; ++c) scale.data<float>()[c] = a->ScaleAt(0) * b->ScaleAt(c);
  GE_ASSIGN_OR_RETURN(ir::Node * scale_node, AddConst(g, prefix + "_scale", std::move(scale)));
  GE_ASSIGN_OR_RETURN(ir::OutPort az, ZeroPort(g, *a, prefix + "_a"));
  const ir::IoDesc& out = mm->op_desc().output(0);
  const Shape& shape = out.type.shape();
  auto typed = [&](DataType d) { return ir::IoDesc{"", ir::ValueType::Tensor(d, shape)}; };
  GE_ASSIGN_OR_RETURN(ir::Node * product,
                      AddOp(g, prefix + "_integer", "MatMulInteger", {a->data, weights, az}, typed(DataType::kInt32)));
  ir::AttrMap to;
  to["to"] = ir::AttrValue(static_cast<int64_t>(DataType::kFloat));
  GE_ASSIGN_OR_RETURN(ir::Node * cast,
                      AddOp(g, prefix + "_float", "Cast", {{product, 0}}, typed(DataType::kFloat), std::move(to)));
  const ir::OutPort c = gemm ? InputOf(*mm, 2) : ir::OutPort{};
  GE_ASSIGN_OR_RETURN(ir::Node * scaled, AddOp(g, prefix + "_scaled", "Mul", {{cast, 0}, {scale_node, 0}},
                                               c ? typed(DataType::kFloat) : out));
  ir::Node* last = scaled;
  if (c) {
    GE_ASSIGN_OR_RETURN(last, AddOp(g, prefix + "_bias", "Add", {{scaled, 0}, c}, out));
  }
  GE_RETURN_IF_ERROR(g.ReplaceAllUses(mm, 0, last, 0));
  std::vector<ir::Node*> upstream;
  for (const ir::OutPort& p : mm->inputs()) {
    if (p) upstream.push_back(p.node);
  }
  g.RemoveNode(mm);
  std::set<ir::Node*> seen;
  for (ir::Node* u : upstream) {
    if (seen.insert(u).second) RemoveIfUnused(g, u);
  }
  return true;
}

// DQ(x), DQ(W const s8, zero points 0) [, bias] -> Conv whose float result
// is not requantized (it feeds a GlobalAveragePool, a float head): the
// integer convolution in int32 (ConvInteger, exact), then to float, scaled
// per output channel by x_scale * w_scale[m] and the bias added:
//   ConvInteger(x, W, x_zero) -> Cast(f32) -> Mul(scale[1, M, 1...]) [-> Add(bias[1, M, 1...])].
// The bias: a float constant of M elements or a DequantizeLinear'd int32
// one. The result equals the float chain's up to float rounding (the
// products are summed exactly first), as FuseFloatMatMul's does.
absl::StatusOr<bool> FuseFloatConv(ir::Graph& g, ir::Node* conv) {
  if (conv->num_inputs() < 2 || conv->num_outputs() != 1 || !conv->control_inputs().empty()) return false;
  const ir::IoDesc& out = conv->op_desc().output(0);
  if (out.type.dtype() != DataType::kFloat || out.type.shape().unknown_rank() || out.type.shape().rank() < 3) {
    return false;
  }
  auto x = ActivationDq(conv->input(0));
  auto w = WeightDq(conv->input(1), 0);
  if (!x || !w || w->dtype != DataType::kInt8) return false;  // ConvInteger's weights on cpu_dense: s8
  const Tensor* wt = ConstOf(w->data);
  const int64_t m = wt->shape().dim(0);
  for (int64_t c = 0; c < w->count(); ++c) {
    if (w->ZeroAt(c) != 0) return false;
  }
  // The int32 sum cannot overflow: |x - x_zero| <= 255 over K = C/group * kernel products.
  int64_t w_max = 0;
  for (int64_t i = 0; i < wt->NumElements(); ++i) w_max = std::max(w_max, std::abs(wt->GetAsInt64(i)));
  const int64_t k = m > 0 ? wt->NumElements() / m : 0;
  if (k * 255 * w_max > std::numeric_limits<int32_t>::max()) return false;
  // Per-channel constants shaped [1, M, 1, ...] to broadcast over the output.
  const int rank = out.type.shape().rank();
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  dims[1] = m;
  GE_ASSIGN_OR_RETURN(Tensor scale, Tensor::Allocate(DataType::kFloat, Shape(dims)));
  for (int64_t c = 0; c < m; ++c) scale.data<float>()[c] = x->ScaleAt(0) * w->ScaleAt(c);
  std::optional<Tensor> bias;
  if (const ir::OutPort b = InputOf(*conv, 2)) {
    GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DataType::kFloat, Shape(dims)));
    const Tensor* fb = ConstOf(b);
    if (fb != nullptr && fb->dtype() == DataType::kFloat && fb->NumElements() == m) {
      for (int64_t c = 0; c < m; ++c) t.data<float>()[c] = static_cast<float>(fb->GetAsDouble(c));
    } else {
      auto dq = b.index == 0 ? ReadParams(b.node, kDq) : std::nullopt;
      const Tensor* q = dq ? ConstOf(dq->data) : nullptr;
      if (q == nullptr || q->dtype() != DataType::kInt32 || q->NumElements() != m ||
          (dq->count() != 1 && dq->count() != m)) {
        return false;
      }
      for (int64_t c = 0; c < m; ++c) {
        t.data<float>()[c] = static_cast<float>(static_cast<double>(q->GetAsInt64(c) - dq->ZeroAt(c)) * dq->ScaleAt(c));
      }
    }
    bias = std::move(t);
  }
  const std::string prefix = conv->name();
  GE_ASSIGN_OR_RETURN(ir::OutPort xz, ZeroPort(g, *x, prefix + "_x"));
  const Shape& shape = out.type.shape();
  auto typed = [&](DataType d) { return ir::IoDesc{"", ir::ValueType::Tensor(d, shape)}; };
  GE_ASSIGN_OR_RETURN(ir::Node * product, AddOp(g, prefix + "_integer", "ConvInteger", {x->data, w->data, xz},
                                                typed(DataType::kInt32), conv->op_desc().attrs()));
  ir::AttrMap to;
  to["to"] = ir::AttrValue(static_cast<int64_t>(DataType::kFloat));
  GE_ASSIGN_OR_RETURN(ir::Node * cast,
                      AddOp(g, prefix + "_float", "Cast", {{product, 0}}, typed(DataType::kFloat), std::move(to)));
  GE_ASSIGN_OR_RETURN(ir::Node * scale_node, AddConst(g, prefix + "_scale", std::move(scale)));
  GE_ASSIGN_OR_RETURN(ir::Node * last, AddOp(g, prefix + "_scaled", "Mul", {{cast, 0}, {scale_node, 0}},
                                             bias ? typed(DataType::kFloat) : out));
  if (bias) {
    GE_ASSIGN_OR_RETURN(ir::Node * bias_node, AddConst(g, prefix + "_bias", *std::move(bias)));
    GE_ASSIGN_OR_RETURN(last, AddOp(g, prefix + "_bias", "Add", {{last, 0}, {bias_node, 0}}, out));
  }
  GE_RETURN_IF_ERROR(g.ReplaceAllUses(conv, 0, last, 0));
  std::vector<ir::Node*> upstream;
  for (const ir::OutPort& p : conv->inputs()) {
    if (p) upstream.push_back(p.node);
  }
  g.RemoveNode(conv);
  std::set<ir::Node*> seen;
  for (ir::Node* u : upstream) {
    if (seen.insert(u).second) RemoveIfUnused(g, u);
  }
  return true;
}

bool SameParams(const QParams& a, const QParams& b) {
  return a.dtype == b.dtype && a.count() == 1 && b.count() == 1 && a.ScaleAt(0) == b.ScaleAt(0) &&
         a.ZeroAt(0) == b.ZeroAt(0);
}

// DQ -> MaxPool -> Q with one scale and zero point: MaxPool on the int8 tensor.
absl::StatusOr<bool> FuseMaxPool(ir::Graph& g, ir::Node* q_node) {
  auto y = ReadParams(q_node, kQ);
  if (!y || y->data.index != 0 || y->data.node->type() != "MaxPool") return false;
  ir::Node* pool = y->data.node;
  if (OnlyConsumer(*pool) != q_node || !pool->control_inputs().empty() || !q_node->control_inputs().empty()) {
    return false;
  }
  auto x = ActivationDq(pool->input(0));
  if (!x || !SameParams(*x, *y)) return false;
  ir::Node* dq = x->node;
  g.RemoveInputEdge(pool, 0);
  GE_RETURN_IF_ERROR(g.AddEdge(x->data.node, x->data.index, pool, 0));
  pool->mutable_op_desc().mutable_input(0).type = TypeOf(x->data);
  pool->mutable_op_desc().mutable_output(0).type = q_node->op_desc().output(0).type;
  GE_RETURN_IF_ERROR(g.ReplaceAllUses(q_node, 0, pool, 0));
  std::vector<ir::Node*> upstream;
  for (const ir::OutPort& p : q_node->inputs()) {
    if (p && p.node != pool) upstream.push_back(p.node);
  }
  g.RemoveNode(q_node);
  for (ir::Node* u : upstream) RemoveIfUnused(g, u);
  RemoveIfUnused(g, dq);
  return true;
}

// DQ(x) -> Q, the DQ read by the Q only, per-tensor parameters and one int8
// type on both sides: a requantization (what QLinearConcat's inputs of other
// scales become). With equal parameters Q(DQ(x)) is x; else
// _QLinearAdd(x, 0) in the output's parameters: B a scalar 0 of scale 1 and
// zero point 0 adds exactly nothing (rb * 0 = 0), so C = saturate(round(x *
// x_scale / y_scale + y_zero - x_zero * x_scale / y_scale)), one int8 pass.
absl::StatusOr<bool> FuseRequantize(ir::Graph& g, ir::Node* q_node) {
  auto y = ReadParams(q_node, kQ);
  if (!y || y->count() != 1 || !IsInt8(y->dtype) || !q_node->control_inputs().empty()) return false;
  auto x = ActivationDq(y->data);
  if (!x || x->dtype != y->dtype || OnlyConsumer(*x->node) != q_node || !x->node->control_inputs().empty()) {
    return false;
  }
  const Shape& shape = TypeOf(x->data).shape();
  if (shape.unknown_rank()) return false;
  ir::Node* dq = x->node;
  if (SameParams(*x, *y)) {
    GE_RETURN_IF_ERROR(g.ReplaceAllUses(q_node, 0, x->data.node, x->data.index));
    g.RemoveNode(q_node);
    RemoveIfUnused(g, dq);
    return true;
  }
  const std::string prefix = q_node->name();
  GE_ASSIGN_OR_RETURN(Tensor zero, Tensor::Allocate(x->dtype, Shape{}));
  GE_ASSIGN_OR_RETURN(ir::Node * b, AddConst(g, prefix + "_zero", std::move(zero)));
  GE_ASSIGN_OR_RETURN(ir::Node * one, AddConst(g, prefix + "_unit_scale", Tensor::Scalar<float>(1.0f)));
  GE_ASSIGN_OR_RETURN(ir::OutPort xz, ZeroPort(g, *x, prefix + "_x"));
  GE_ASSIGN_OR_RETURN(ir::OutPort yz, ZeroPort(g, *y, prefix + "_y"));
  Chain c;
  c.y = *y;
  ir::OpDesc op(g.UniqueNodeName(prefix + "_requantize"), "_QLinearAdd");
  GE_RETURN_IF_ERROR(Replace(g, c, std::move(op), {x->data, x->scale, xz, {b, 0}, {one, 0}, {b, 0}, y->scale, yz}));
  return true;
}

absl::StatusOr<bool> RunOnGraph(ir::Graph& g) {
  bool changed = false;
  std::vector<std::string> names;
  g.ForEachNode([&](ir::Node* n) {
    if (n->type() == kQ) names.push_back(n->name());
  });
  for (const std::string& name : names) {
    ir::Node* q = g.FindNode(name);
    if (q == nullptr) continue;
    GE_ASSIGN_OR_RETURN(bool pooled, FuseMaxPool(g, q));
    if (pooled) {
      changed = true;
      continue;
    }
    GE_ASSIGN_OR_RETURN(bool requantized, FuseRequantize(g, q));
    if (requantized) {
      changed = true;
      continue;
    }
    std::optional<Chain> chain = MatchOutput(q);
    if (!chain) continue;
    absl::StatusOr<bool> fused = false;
    const std::string& type = chain->core->type();
    if (type == "Conv") {
      fused = FuseConv(g, *chain);
    } else if (type == "MatMul" || type == "Gemm") {
      fused = FuseMatMul(g, *chain);
    } else if (type == "Add") {
      fused = FuseAdd(g, *chain);
    }
    GE_RETURN_IF_ERROR(fused.status());
    if (*fused) GE_LOG_DEBUG("compiler", "QdqFusionPass: fused {} ending at {}", type, name);
    changed = changed || *fused;
  }
  // Products left in float (no Q after them, or a chain the rules above
  // refused): the integer form with a float result.
  std::vector<std::string> products;
  g.ForEachNode([&](ir::Node* n) {
    if (n->type() == "MatMul" || n->type() == "Gemm" || n->type() == "Conv") products.push_back(n->name());
  });
  for (const std::string& name : products) {
    ir::Node* mm = g.FindNode(name);
    if (mm == nullptr) continue;
    GE_ASSIGN_OR_RETURN(bool fused, mm->type() == "Conv" ? FuseFloatConv(g, mm) : FuseFloatMatMul(g, mm));
    if (fused) GE_LOG_DEBUG("compiler", "QdqFusionPass: {} computes on integers with a float result", name);
    changed = changed || fused;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> QdqFusionPass::Run(ir::Graph& root) {
  GE_ASSIGN_OR_RETURN(bool changed, RunOnGraph(root));
  for (ir::Graph* sub : root.subgraphs()) {
    GE_ASSIGN_OR_RETURN(bool c, RunOnGraph(*sub));
    changed = changed || c;
  }
  return changed;
}

}  // namespace ge::compiler
