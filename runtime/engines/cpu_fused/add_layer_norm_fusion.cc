// AddLayerNormFusion: matching around each LayerNormalization and the
// rewrite.
#include "runtime/engines/cpu_fused/add_layer_norm_fusion.h"

#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_fused/fused_ops.h"
#include "runtime/engines/cpu_fused/fusion_util.h"

namespace ge::engine::cpu_fused {
namespace {

struct NormMatch {
  ir::Node* norm = nullptr;
  ir::Node* pre_add = nullptr;   // Add(X, R) before the norm
  ir::Node* post_add = nullptr;  // Add(Y, P) after it
  int post_operand = -1;         // P's input index on post_add
};

// A two-input Add of float32 tensors with its output's static shape.
bool PlainAdd(const ir::Node& add) {
  if (add.type() != "Add" || add.num_inputs() != 2) return false;
  const ir::ValueType& y = add.op_desc().output(0).type;
  if (!IsStaticFloat(y)) return false;
  for (int i = 0; i < 2; ++i) {
    if (!add.input(i) || TypeAt(add.input(i)) != y) return false;
  }
  return true;
}

std::optional<NormMatch> Match(ir::Node* norm) {
  if (norm->num_inputs() < 2 || norm->num_inputs() > 3 || !norm->input(0) || !norm->input(1)) return std::nullopt;
  // Mean and InvStdDev, when declared, must be unused.
  for (int i = 1; i < norm->num_outputs(); ++i) {
    if (!norm->consumers(i).empty()) return std::nullopt;
  }
  const ir::OpDesc& op = norm->op_desc();
  if (op.FindAttr(ir::kAttrEngine) != nullptr || op.FindAttr(ir::kAttrHostExec) != nullptr) return std::nullopt;
  if (!norm->control_inputs().empty() || !norm->control_outputs().empty()) return std::nullopt;
  const ir::ValueType& y = op.output(0).type;
  if (!IsStaticFloat(y) || TypeAt(norm->input(0)) != y) return std::nullopt;
  const auto axis = ops::NormalizeAxis(op.GetAttrOr<int64_t>("axis", -1), y.shape().rank());
  if (!axis.ok()) return std::nullopt;
  int64_t n = 1;
  for (int64_t i = *axis; i < y.shape().rank(); ++i) n *= y.shape().dim(i);
  for (int i = 1; i < norm->num_inputs(); ++i) {
    if (!norm->input(i)) continue;
    const ir::ValueType& t = TypeAt(norm->input(i));
    if (!IsStaticFloat(t) || t.shape().NumElementsUnchecked() != n) return std::nullopt;
  }
  NormMatch m;
  m.norm = norm;
  ir::Node* pre = norm->input(0).node;
  if (PlainAdd(*pre) && Absorbable(*pre, /*single_use=*/true)) m.pre_add = pre;
  // The norm's Y and its consumers: exactly one, the Add after it.
  const ir::InPort* use = SingleConsumer(*norm, 0);
  if (use != nullptr && PlainAdd(*use->node) && Absorbable(*use->node, /*single_use=*/false) &&
      use->node->input(0).node != use->node->input(1).node) {
    m.post_add = use->node;
    m.post_operand = 1 - use->index;
  }
  if (m.pre_add == nullptr && m.post_add == nullptr) return std::nullopt;
  return m;
}

absl::Status Rewrite(ir::Graph& graph, const NormMatch& m) {
  ir::Node* last = m.post_add != nullptr ? m.post_add : m.norm;
  const std::string name = last->name();
  ir::OpDesc op(graph.UniqueNodeName(name + "_add_norm"), std::string(kFusedAddLayerNormOp));
  op.SetAttr("axis", m.norm->op_desc().GetAttrOr<int64_t>("axis", -1));
  op.SetAttr("epsilon", m.norm->op_desc().GetAttrOr<float>("epsilon", 1e-5f));
  SetFusedNodeAttrs(*last, op);
  // (input index of the fused node, where its value enters today)
  std::vector<std::pair<int, ir::InPort>> sources;
  sources.emplace_back(kNormX, m.pre_add != nullptr ? ir::InPort{m.pre_add, 0} : ir::InPort{m.norm, 0});
  sources.emplace_back(kNormScale, ir::InPort{m.norm, 1});
  if (m.norm->num_inputs() > 2 && m.norm->input(2)) sources.emplace_back(kNormBias, ir::InPort{m.norm, 2});
  if (m.pre_add != nullptr) sources.emplace_back(kNormResidual, ir::InPort{m.pre_add, 1});
  if (m.post_add != nullptr) sources.emplace_back(kNormPostAddend, ir::InPort{m.post_add, m.post_operand});
  const int count = sources.back().first + 1;
  for (int i = 0; i < count; ++i) op.AddInput(ir::IoDesc{});
  for (const auto& [index, in] : sources) op.mutable_input(index) = in.node->op_desc().input(in.index);
  op.AddOutput(last->op_desc().output(0));
  GE_ASSIGN_OR_RETURN(ir::Node * fused, graph.AddNode(std::move(op)));
  for (const auto& [index, in] : sources) {
    const ir::OutPort src = in.node->input(in.index);
    GE_RETURN_IF_ERROR(graph.AddEdge(src.node, src.index, fused, index));
  }
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(last, 0, fused, 0));
  if (m.post_add != nullptr) graph.RemoveNode(m.post_add);
  graph.RemoveNode(m.norm);
  if (m.pre_add != nullptr) graph.RemoveNode(m.pre_add);
  return graph.RenameNode(fused, name);
}

}  // namespace

absl::StatusOr<bool> FuseAddLayerNorm(ir::Graph& graph) {
  std::vector<std::string> norms;
  graph.ForEachNode([&](const ir::Node* n) {
    if (n->type() == "LayerNormalization") norms.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : norms) {
    ir::Node* norm = graph.FindNode(name);
    if (norm == nullptr || norm->type() != "LayerNormalization") continue;
    std::optional<NormMatch> m = Match(norm);
    if (!m) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, *m));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_fused
