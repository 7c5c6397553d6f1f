// AttentionFusion: matching back from Softmax and the rewrite.
#include "runtime/engines/cpu_fused/attention_fusion.h"

#include <string>
#include <vector>

#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_fused/fused_ops.h"
#include "runtime/engines/cpu_fused/fusion_util.h"

namespace ge::engine::cpu_fused {
namespace {

struct AttentionMatch {
  ir::Node* softmax = nullptr;
  ir::Node* scores = nullptr;  // MatMul(Q', Kt)
  ir::Node* output = nullptr;  // MatMul(P, V)
  std::vector<ir::Node*> absorbed;
  ir::InPort q, k, v;          // where each operand enters the matched nodes
  ir::InPort scale, mask;      // node null when absent
  bool k_transposed = true;
  bool divides = false;
};

// A float32 value of one element (a scale).
bool IsScalarFloat(const ir::OutPort& p) {
  if (!p) return false;
  const std::optional<int64_t> n = StaticElements(TypeAt(p));
  return n == 1 && TypeAt(p).dtype() == DataType::kFloat;
}

// When `n` scales its input `data_index` by a one-element operand: that
// operand's port, and whether it divides.
std::optional<std::pair<ir::InPort, bool>> ScaleOperand(ir::Node* n, int data_index) {
  if (n->num_inputs() != 2 || !Absorbable(*n, /*single_use=*/true)) return std::nullopt;
  const int other = 1 - data_index;
  if (!IsScalarFloat(n->input(other))) return std::nullopt;
  if (n->type() == "Div" && data_index == 0) return std::make_pair(ir::InPort{n, other}, true);
  if (n->type() == "Mul") return std::make_pair(ir::InPort{n, other}, false);
  return std::nullopt;
}

int64_t SoftmaxAxis(const ir::Node& softmax) {
  const ir::OpDesc& op = softmax.op_desc();
  // Before opset 13 the default axis is 1 (and the op flattens from it);
  // with the last axis both definitions are the same row-wise softmax.
  const int64_t opset = op.GetAttrOr<int64_t>("_onnx_opset", 13);
  return op.GetAttrOr<int64_t>("axis", opset >= 13 ? -1 : 1);
}

// Walks back from the Softmax over scale and mask to the scores MatMul.
bool MatchScores(AttentionMatch& m) {
  ir::OutPort p = m.softmax->input(0);
  if (p && p.node->type() == "Add" && p.node->num_inputs() == 2 && Absorbable(*p.node, true)) {
    ir::Node* add = p.node;
    // The scores side is the one produced by the chain (a Div, Mul or MatMul).
    for (int side = 0; side < 2; ++side) {
      const ir::OutPort s = add->input(side);
      if (!s || (s.node->type() != "MatMul" && s.node->type() != "Div" && s.node->type() != "Mul")) continue;
      if (TypeAt(s) != add->op_desc().output(0).type) continue;
      m.mask = {add, 1 - side};
      m.absorbed.push_back(add);
      p = s;
      break;
    }
    if (m.mask.node == nullptr) return false;
  }
  if (p && (p.node->type() == "Div" || p.node->type() == "Mul")) {
    ir::Node* scale = p.node;
    int data = 0;
    if (scale->type() == "Mul" && IsScalarFloat(scale->input(0)) && !IsScalarFloat(scale->input(1))) data = 1;
    auto operand = ScaleOperand(scale, data);
    if (!operand) return false;
    std::tie(m.scale, m.divides) = *operand;
    m.absorbed.push_back(scale);
    p = scale->input(data);
  }
  if (!p || p.node->type() != "MatMul" || !Absorbable(*p.node, true)) return false;
  m.scores = p.node;
  return true;
}

// Q (over an optional pre-scale) and K (over an optional Transpose).
bool MatchOperands(AttentionMatch& m) {
  m.q = {m.scores, 0};
  const ir::OutPort q = m.scores->input(0);
  if (m.scale.node == nullptr && q && (q.node->type() == "Div" || q.node->type() == "Mul")) {
    ir::Node* scale = q.node;
    int data = 0;
    if (scale->type() == "Mul" && IsScalarFloat(scale->input(0)) && !IsScalarFloat(scale->input(1))) data = 1;
    if (auto operand = ScaleOperand(scale, data)) {
      std::tie(m.scale, m.divides) = *operand;
      m.absorbed.push_back(scale);
      m.q = {scale, data};
    }
  }
  m.k = {m.scores, 1};
  const ir::OutPort k = m.scores->input(1);
  if (k && k.node->type() == "Transpose" && Absorbable(*k.node, true)) {
    const auto perm = k.node->op_desc().GetAttr<std::vector<int64_t>>("perm");
    const int64_t rank = TypeAt(k).shape().rank();
    bool swap = perm.has_value() && static_cast<int64_t>(perm->size()) == rank && rank >= 2;
    for (int64_t i = 0; swap && i < rank; ++i) {
      const int64_t want = i == rank - 2 ? rank - 1 : i == rank - 1 ? rank - 2 : i;
      swap = (*perm)[i] == want;
    }
    if (swap) {
      m.k = {k.node, 0};
      m.k_transposed = false;
      m.absorbed.push_back(k.node);
    }
  }
  return true;
}

// Types: float32, static shapes, one rank, equal batch dims, a mask that
// broadcasts to the scores.
bool TypesFit(const AttentionMatch& m) {
  auto type_of = [](const ir::InPort& in) -> const ir::ValueType& { return in.node->op_desc().input(in.index).type; };
  const ir::ValueType& q = type_of(m.q);
  const ir::ValueType& k = type_of(m.k);
  const ir::ValueType& v = type_of(m.v);
  const ir::ValueType& scores = m.scores->op_desc().output(0).type;
  const ir::ValueType& y = m.output->op_desc().output(0).type;
  for (const ir::ValueType* t : {&q, &k, &v, &scores, &y}) {
    if (!IsStaticFloat(*t)) return false;
  }
  const int64_t rank = q.shape().rank();
  if (rank < 2 || k.shape().rank() != rank || v.shape().rank() != rank || scores.shape().rank() != rank) return false;
  for (int64_t i = 0; i + 2 < rank; ++i) {
    if (k.shape().dim(i) != q.shape().dim(i) || v.shape().dim(i) != q.shape().dim(i)) return false;
  }
  if (m.mask.node != nullptr) {
    const ir::ValueType& mask = type_of(m.mask);
    if (!IsStaticFloat(mask) || !ops::CheckUnidirectionalBroadcast(mask.shape(), scores.shape()).ok()) return false;
  }
  return true;
}

std::optional<AttentionMatch> Match(ir::Node* softmax) {
  AttentionMatch m;
  m.softmax = softmax;
  if (!Absorbable(*softmax, true) || softmax->num_inputs() != 1) return std::nullopt;
  const ir::ValueType& probs = softmax->op_desc().output(0).type;
  if (!IsStaticFloat(probs)) return std::nullopt;
  const auto axis = ops::NormalizeAxis(SoftmaxAxis(*softmax), probs.shape().rank());
  if (!axis.ok() || *axis != probs.shape().rank() - 1) return std::nullopt;
  const ir::InPort* use = SingleConsumer(*softmax, 0);
  if (use == nullptr || use->index != 0 || use->node->type() != "MatMul") return std::nullopt;
  if (!Absorbable(*use->node, /*single_use=*/false)) return std::nullopt;
  m.output = use->node;
  m.v = {m.output, 1};
  if (!MatchScores(m) || !MatchOperands(m) || !TypesFit(m)) return std::nullopt;
  return m;
}

absl::Status Rewrite(ir::Graph& graph, const AttentionMatch& m) {
  const std::string name = m.output->name();
  ir::OpDesc op(graph.UniqueNodeName(name + "_attention"), std::string(kFusedAttentionOp));
  op.SetAttr(kAttrKTransposed, int64_t{m.k_transposed ? 1 : 0});
  op.SetAttr(kAttrScaleDivides, int64_t{m.divides ? 1 : 0});
  SetFusedNodeAttrs(*m.output, op);
  const ir::InPort inputs[] = {m.q, m.k, m.v, m.scale, m.mask};
  // Absent optional inputs in the middle stay as empty ports; trailing ones go.
  const int count = m.mask.node != nullptr ? 5 : m.scale.node != nullptr ? 4 : 3;
  for (int i = 0; i < count; ++i) {
    const ir::InPort& in = inputs[i];
    op.AddInput(in.node == nullptr ? ir::IoDesc{} : in.node->op_desc().input(in.index));
  }
  op.AddOutput(m.output->op_desc().output(0));
  GE_ASSIGN_OR_RETURN(ir::Node * fused, graph.AddNode(std::move(op)));
  for (int i = 0; i < fused->num_inputs(); ++i) {
    const ir::InPort& in = inputs[i];
    if (in.node == nullptr) continue;
    const ir::OutPort src = in.node->input(in.index);
    GE_RETURN_IF_ERROR(graph.AddEdge(src.node, src.index, fused, i));
  }
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(m.output, 0, fused, 0));
  graph.RemoveNode(m.output);
  graph.RemoveNode(m.softmax);
  for (ir::Node* n : m.absorbed) graph.RemoveNode(n);
  graph.RemoveNode(m.scores);
  return graph.RenameNode(fused, name);
}

}  // namespace

absl::StatusOr<bool> FuseAttention(ir::Graph& graph) {
  bool any = false;
  graph.ForEachNode([&](const ir::Node* n) { any = any || n->type() == "Softmax"; });
  if (!any) return false;
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  std::vector<std::string> softmaxes;
  for (ir::Node* n : order) {
    if (n->type() == "Softmax") softmaxes.push_back(n->name());
  }
  bool changed = false;
  for (const std::string& name : softmaxes) {
    ir::Node* softmax = graph.FindNode(name);
    if (softmax == nullptr || softmax->type() != "Softmax") continue;
    std::optional<AttentionMatch> m = Match(softmax);
    if (!m) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, *m));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_fused
