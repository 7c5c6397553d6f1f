// NormReluFusion: BatchNormalization -> Relu as one primitive
// (norm_relu_fusion.h).
#include "runtime/engines/cpu_dense/norm_relu_fusion.h"

#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

bool IsNorm(const ir::Node& n) { return n.type() == "BatchNormalization" || n.type() == "InstanceNormalization"; }

// The Relu a BatchNormalization (InstanceNormalization) can absorb, or null.
ir::Node* FusableRelu(const ir::Node& bn, const NodeFilter& can_rewrite) {
  if (!IsNorm(bn) || !can_rewrite(bn) || bn.num_outputs() != 1) return nullptr;
  if (bn.op_desc().GetAttrOr<int64_t>(kAttrFusedRelu, 0) != 0) return nullptr;
  if (sdk::IntAttr(bn.op_desc(), "training_mode", 0) != 0) return nullptr;
  if (!bn.control_inputs().empty() || !bn.control_outputs().empty()) return nullptr;
  const ir::ValueType& x = bn.op_desc().input(0).type;
  if (!x.is_tensor() || x.shape().unknown_rank() || x.shape().rank() < 2 || x.shape().rank() > 5) return nullptr;
  if (bn.type() == "InstanceNormalization" && x.shape().rank() < 3) return nullptr;
  const ir::InPort* use = SingleConsumer(bn, 0);
  if (use == nullptr) return nullptr;
  ir::Node* relu = use->node;
  if (relu->type() != "Relu" || !can_rewrite(*relu) || relu->num_outputs() != 1) return nullptr;
  if (!relu->control_inputs().empty() || !relu->control_outputs().empty()) return nullptr;
  if (relu->op_desc().output(0).type.dtype() != bn.op_desc().output(0).type.dtype()) return nullptr;
  for (const ir::InPort& c : relu->consumers(0)) {
    if (c.node->type() == ir::kNetOutput) return nullptr;  // the Relu's tensor name is a graph output's
  }
  return relu;
}

}  // namespace

absl::StatusOr<bool> FuseNormRelu(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](ir::Node* n) {
    if (IsNorm(*n)) names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* bn = graph.FindNode(name);
    if (bn == nullptr) continue;
    ir::Node* relu = FusableRelu(*bn, can_rewrite);
    if (relu == nullptr) continue;
    ir::OpDesc& op = bn->mutable_op_desc();
    op.SetAttr(kAttrFusedRelu, ir::AttrValue(int64_t{1}));
    op.mutable_output(0) = relu->op_desc().output(0);
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(relu, 0, bn, 0));
    graph.RemoveNode(relu);
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
