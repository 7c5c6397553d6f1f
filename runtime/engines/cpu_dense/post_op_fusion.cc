// Post-op fusion: chain matching, the GELU patterns and the rewrite.
#include "runtime/engines/cpu_dense/post_op_fusion.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/ir/inplace_attr.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/dnnl_util.h"
#include "runtime/engines/cpu_dense/gelu_tanh_match.h"
#include "runtime/engines/cpu_dense/post_ops.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

struct Match {
  ir::Node* base = nullptr;
  std::vector<ir::Node*> absorbed;  // in chain order
  PostOpChain chain;
  ir::OutPort bias;    // MatMul's [N] bias
  ir::IoDesc bias_desc;
  ir::OutPort addend;  // the add step's operand
  ir::IoDesc addend_desc;
  ir::OutPort result;  // what the fused node produces
  // Residual adds and SiLU may join (the engine partition's pass).
  bool residuals = true;
};

const ir::ValueType& OutputType(const ir::OutPort& p) { return p.node->op_desc().output(p.index).type; }

bool Near(std::optional<float> v, double target) {
  return v.has_value() && std::fabs(*v - target) <= 1e-3 * std::fabs(target);
}

bool Absorbable(const ir::Node& n, const NodeFilter& can_rewrite) {
  return can_rewrite(n) && n.control_inputs().empty() && n.control_outputs().empty() && n.num_outputs() == 1;
}

// The input of binary `n` other than port `index`'s producer, when it is a
// constant scalar.
std::optional<float> OtherScalar(const ir::Node& n, int index) {
  return n.num_inputs() == 2 ? ConstScalar(n, 1 - index) : std::nullopt;
}

// x * 0.5 * (1 + Erf(x / sqrt(2))) hanging off `x`: the five nodes, the
// last producing the result.
std::optional<std::vector<ir::Node*>> MatchGelu(const ir::OutPort& x, const NodeFilter& can_rewrite) {
  const auto& uses = x.node->consumers(x.index);
  if (uses.size() != 2) return std::nullopt;
  const int d = uses[0].node->type() == "Div" ? 0 : 1;
  ir::Node* div = uses[d].node;
  ir::Node* mul1 = uses[1 - d].node;
  if (div->type() != "Div" || uses[d].index != 0 || mul1->type() != "Mul" || mul1 == div) return std::nullopt;
  if (!Near(ConstScalar(*div, 1), std::sqrt(2.0))) return std::nullopt;
  const ir::InPort* e = SingleConsumer(*div, 0);
  if (e == nullptr || e->node->type() != "Erf") return std::nullopt;
  const ir::InPort* a = SingleConsumer(*e->node, 0);
  if (a == nullptr || a->node->type() != "Add" || !Near(OtherScalar(*a->node, a->index), 1.0)) return std::nullopt;
  ir::Node* add = a->node;
  const ir::InPort* m2 = SingleConsumer(*mul1, 0);
  if (m2 == nullptr || m2->node->type() != "Mul") return std::nullopt;
  ir::Node* mul2 = m2->node;
  const ir::InPort* add_use = SingleConsumer(*add, 0);
  if (add_use == nullptr) return std::nullopt;
  const int x_port = uses[1 - d].index;
  const bool torch_order = add_use->node == mul1 && add_use->index == 1 - x_port &&
                           Near(OtherScalar(*mul2, m2->index), 0.5);
  const bool half_first = add_use->node == mul2 && add_use->index == 1 - m2->index &&
                          Near(OtherScalar(*mul1, x_port), 0.5);
  if (!torch_order && !half_first) return std::nullopt;
  std::vector<ir::Node*> nodes = {div, e->node, add, mul1, mul2};
  for (ir::Node* n : nodes) {
    if (!Absorbable(*n, can_rewrite)) return std::nullopt;
  }
  if (mul2->op_desc().output(0).type != OutputType(x)) return std::nullopt;
  return nodes;
}

// x * Sigmoid(x) hanging off `x` (SiLU, EfficientNet's swish): the Sigmoid
// and the Mul, the Mul producing the result.
std::optional<std::vector<ir::Node*>> MatchSwish(const ir::OutPort& x, const NodeFilter& can_rewrite) {
  const auto& uses = x.node->consumers(x.index);
  if (uses.size() != 2) return std::nullopt;
  const int s = uses[0].node->type() == "Sigmoid" ? 0 : 1;
  ir::Node* sigmoid = uses[s].node;
  ir::Node* mul = uses[1 - s].node;
  if (sigmoid->type() != "Sigmoid" || mul->type() != "Mul" || mul->num_inputs() != 2) return std::nullopt;
  const ir::InPort* use = SingleConsumer(*sigmoid, 0);
  if (use == nullptr || use->node != mul || use->index != 1 - uses[1 - s].index) return std::nullopt;
  std::vector<ir::Node*> nodes = {sigmoid, mul};
  for (ir::Node* n : nodes) {
    if (!Absorbable(*n, can_rewrite)) return std::nullopt;
  }
  if (mul->op_desc().output(0).type != OutputType(x)) return std::nullopt;
  return nodes;
}

// Tries to absorb `next` (the single consumer of the chain's result at
// `port`) into `m`; false when the chain ends there.
bool AbsorbOne(Match& m, ir::Node* next, int port) {
  const std::string& type = next->type();
  const ir::OpDesc& op = next->op_desc();
  PostOp step;
  if (type == "Relu") {
    step = {PostOpKind::kRelu, 0.0f, 0.0f};
  } else if (type == "LeakyRelu") {
    step = {PostOpKind::kRelu, sdk::FloatAttr(op, "alpha", 0.01f), 0.0f};
  } else if (type == "Sigmoid") {
    step = {PostOpKind::kSigmoid, 0.0f, 0.0f};
  } else if (type == "Tanh") {
    step = {PostOpKind::kTanh, 0.0f, 0.0f};
  } else if (type == "Elu") {
    step = {PostOpKind::kElu, sdk::FloatAttr(op, "alpha", 1.0f), 0.0f};
  } else if (type == "HardSwish") {
    step = {PostOpKind::kHardSwish, 0.0f, 0.0f};
  } else if (type == "HardSigmoid") {
    // clip(alpha y + beta, 0, 1): two steps.
    m.chain.ops.push_back({PostOpKind::kLinear, sdk::FloatAttr(op, "alpha", 0.2f), sdk::FloatAttr(op, "beta", 0.5f)});
    step = {PostOpKind::kClip, 0.0f, 1.0f};
  } else if (type == "Clip") {
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    for (int i = 1; i <= 2 && i < next->num_inputs(); ++i) {
      if (!next->input(i)) continue;
      std::optional<float> v = ConstScalar(*next, i);
      if (!v) return false;
      (i == 1 ? lo : hi) = *v;
    }
    step = {PostOpKind::kClip, std::min(lo, hi), hi};
  } else if (type == "Add" && next->num_inputs() == 2) {
    const ir::OutPort other = next->input(1 - port);
    if (!other) return false;
    const Shape& out = OutputType(m.result).shape();
    const Shape& shape = OutputType(other).shape();
    if (op.output(0).type.shape() != out) return false;
    // A dynamic batch: a convolution's residual Add of the same shape (the
    // kernel repeats an operand whose batch turns out to be 1).
    if (!shape.IsFullyKnown() && !(m.base->type() == "Conv" && shape == out && OnlyBatchUnknown(out))) {
      return false;
    }
    const bool row_bias = m.base->type() == "MatMul" && m.chain.ops.empty() && !m.bias &&
                          shape.rank() == 1 && out.rank() >= 1 && shape.dim(0) == out.dim(out.rank() - 1);
    if (row_bias) {
      m.bias = other;
      m.bias_desc = op.input(1 - port);
      return true;
    }
    if (m.chain.has_add() || !m.residuals) return false;
    // A convolution's add is oneDNN's sum post-op, which its JIT
    // convolutions take only as the first post-op (after an activation the
    // reference convolution would run: a TCN's conv + GELU + residual).
    if (m.base->type() == "Conv" && !m.chain.ops.empty()) return false;
    const bool fits = m.base->type() == "Conv" ? shape == out : ops::CheckUnidirectionalBroadcast(shape, out).ok();
    if (!fits) return false;
    m.addend = other;
    m.addend_desc = op.input(1 - port);
    step = {PostOpKind::kAdd, 0.0f, 0.0f};
  } else {
    return false;
  }
  m.chain.ops.push_back(step);
  return true;
}

// Extends the chain from the base node as far as it goes.
void ExtendChain(Match& m, const NodeFilter& can_rewrite) {
  for (;;) {
    if (auto gelu = MatchGelu(m.result, can_rewrite)) {
      m.absorbed.insert(m.absorbed.end(), gelu->begin(), gelu->end());
      m.chain.ops.push_back({PostOpKind::kGeluErf, 0.0f, 0.0f});
      m.result = {gelu->back(), 0};
      continue;
    }
    if (auto gelu = MatchGeluTanh(m.result, can_rewrite)) {
      m.absorbed.insert(m.absorbed.end(), gelu->begin(), gelu->end());
      m.chain.ops.push_back({PostOpKind::kGeluTanh, 0.0f, 0.0f});
      m.result = {gelu->back(), 0};
      continue;
    }
    // SiLU waits for the engine partition like the residuals (as before
    // GELU joined the early pass): where the cost model puts its Sigmoid
    // and Mul decides.
    if (auto swish = m.residuals ? MatchSwish(m.result, can_rewrite) : std::nullopt) {
      m.absorbed.insert(m.absorbed.end(), swish->begin(), swish->end());
      m.chain.ops.push_back({PostOpKind::kSwish, 1.0f, 0.0f});
      m.result = {swish->back(), 0};
      continue;
    }
    const ir::InPort* use = SingleConsumer(*m.result.node, m.result.index);
    if (use == nullptr || !Absorbable(*use->node, can_rewrite)) return;
    if (use->node->op_desc().output(0).type.dtype() != OutputType(m.result).dtype()) return;
    if (!AbsorbOne(m, use->node, use->index)) return;
    m.absorbed.push_back(use->node);
    m.result = {use->node, 0};
  }
}

ir::OpDesc FusedOpDesc(const Match& m, std::string name) {
  const ir::OpDesc& base = m.base->op_desc();
  ir::OpDesc f(std::move(name), std::string(kDenseFusedOp));
  for (const auto& [key, value] : base.attrs()) f.SetAttr(key, value);
  f.SetAttr(kAttrFusedBase, ir::AttrValue(base.type()));
  SetPostOps(m.chain, f);
  for (const ir::IoDesc& in : base.inputs()) f.AddInput(in);
  const int wanted = m.addend ? 4 : m.bias ? 3 : f.num_inputs();
  while (f.num_inputs() < wanted) f.AddInput(ir::IoDesc{});
  if (m.bias) f.mutable_input(kFusedBiasInput) = m.bias_desc;
  if (m.addend) f.mutable_input(kFusedAddInput) = m.addend_desc;
  // The sum post-op accumulates onto the destination: Y may live in R's buffer.
  if (m.addend && base.type() == "Conv") {
    f.SetAttr(ir::kAttrInplaceInputs, ir::AttrValue(std::vector<int64_t>{kFusedAddInput}));
  }
  f.AddOutput(m.result.node->op_desc().output(m.result.index));
  return f;
}

absl::Status Rewrite(ir::Graph& graph, const Match& m, ir::OpDesc fused_desc) {
  const std::string base_name = m.base->name();
  GE_ASSIGN_OR_RETURN(ir::Node * fused, graph.AddNode(std::move(fused_desc)));
  for (int i = 0; i < m.base->num_inputs(); ++i) {
    const ir::OutPort p = m.base->input(i);
    if (p) GE_RETURN_IF_ERROR(graph.AddEdge(p.node, p.index, fused, i));
  }
  if (m.bias) GE_RETURN_IF_ERROR(graph.AddEdge(m.bias.node, m.bias.index, fused, kFusedBiasInput));
  if (m.addend) GE_RETURN_IF_ERROR(graph.AddEdge(m.addend.node, m.addend.index, fused, kFusedAddInput));
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(m.result.node, m.result.index, fused, 0));
  for (ir::Node* c : m.base->control_inputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(c, fused));
  for (ir::Node* c : m.base->control_outputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(fused, c));
  // Constants only the absorbed nodes read (GELU's sqrt 2, Clip's bounds) go too.
  std::set<std::string> inputs;
  for (ir::Node* n : m.absorbed) {
    for (const ir::OutPort& p : n->inputs()) {
      if (p) inputs.insert(p.node->name());
    }
  }
  for (auto it = m.absorbed.rbegin(); it != m.absorbed.rend(); ++it) graph.RemoveNode(*it);
  graph.RemoveNode(m.base);
  for (const std::string& name : inputs) {
    ir::Node* n = graph.FindNode(name);
    if (n != nullptr && n->type() == "Const") RemoveIfUnused(graph, n);
  }
  return graph.RenameNode(fused, base_name);
}

}  // namespace

absl::StatusOr<bool> FusePostOps(ir::Graph& graph, const NodeFilter& can_rewrite, const SupportCheck& supported,
                                 bool residual_adds) {
  auto is_base = [](const ir::Node* n) { return n->type() == "Conv" || n->type() == "MatMul" || n->type() == "Gemm"; };
  bool any_base = false;  // most graphs have none: skip the topological order
  graph.ForEachNode([&](const ir::Node* n) { any_base = any_base || is_base(n); });
  if (!any_base) return false;
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  std::vector<std::string> names;
  for (ir::Node* n : order) {
    if (n->type() == "Conv" || n->type() == "MatMul" || n->type() == "Gemm") names.push_back(n->name());
  }
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* base = graph.FindNode(name);  // earlier rewrites may have removed it
    if (base == nullptr || (base->type() != "Conv" && base->type() != "MatMul" && base->type() != "Gemm")) continue;
    if (!can_rewrite(*base) || base->num_outputs() != 1) continue;
    const Shape& out = base->op_desc().output(0).type.shape();
    if (!out.IsFullyKnown() && !(base->type() == "Conv" && OnlyBatchUnknown(out))) continue;
    Match m;
    m.base = base;
    m.result = {base, 0};
    m.residuals = residual_adds;
    ExtendChain(m, can_rewrite);
    if (m.chain.ops.empty() && !m.bias) continue;
    ir::OpDesc fused = FusedOpDesc(m, graph.UniqueNodeName(name + "_fused"));
    if (!supported(fused).ok()) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, m, std::move(fused)));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
