// SplitVariableIntoSubgraphPass: VarRefs inside subgraphs for variables
// passed in from the owner.
#include "compiler/passes/split_variable_into_subgraph_pass.h"

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_util.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::compiler {
namespace {

// The owner input a subgraph input node takes.
int64_t ParentIndexOf(const ir::Node& input, int offset) {
  const ir::OpDesc& op = input.op_desc();
  if (auto p = op.GetAttr<int64_t>(ir::kAttrParentIndex)) return *p;
  if (input.type() == ir::kData) return op.GetAttrOr<int64_t>(ir::kAttrIndex, 0) + offset;
  return -1;
}

// A While body changes input `i` unless its output i is that input itself.
bool PassesThrough(const ir::Graph& body, const ir::Node& input, int64_t i) {
  const ir::Node* out = body.OutputNode();
  if (out == nullptr || i >= out->num_inputs()) return false;
  return out->input(static_cast<int>(i)).node == &input;
}

absl::StatusOr<bool> SplitInto(ir::Graph& sub, const ir::Node& owner, const ir::Node& variable, int64_t index,
                               int offset) {
  bool changed = false;
  for (ir::Node* input : sub.nodes()) {
    if ((input->type() != ir::kData && input->type() != ir::kInnerData) || ParentIndexOf(*input, offset) != index) {
      continue;
    }
    if (input->consumers(0).empty()) continue;
    if (owner.type() == ir::kWhile && !PassesThrough(sub, *input, index)) continue;
    ir::OpDesc ref(sub.UniqueNodeName(variable.name() + "_in_" + sub.name()), std::string(ir::kVariable));
    for (const auto& [k, v] : variable.op_desc().attrs()) ref.SetAttr(k, v);
    ref.SetAttr(engine::kAttrRefVarSrcVarName, VariableNameOf(variable));
    ref.AddOutput(variable.op_desc().output(0));
    GE_ASSIGN_OR_RETURN(ir::Node * var_ref, sub.AddNode(std::move(ref)));
    // A While body's NetOutput keeps the pass-through (the loop carries it).
    std::vector<ir::InPort> uses = input->consumers(0);
    for (const ir::InPort& use : uses) {
      if (owner.type() == ir::kWhile && use.node == sub.OutputNode()) continue;
      sub.RemoveInputEdge(use.node, use.index);
      GE_RETURN_IF_ERROR(sub.AddEdge(var_ref, 0, use.node, use.index));
    }
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> SplitVariableIntoSubgraphPass::Run(ir::Graph& root) {
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    for (ir::Node* owner : graph->nodes()) {
      if (owner->op_desc().subgraph_names().empty()) continue;
      const int offset = (owner->type() == ir::kIf || owner->type() == ir::kCase) ? 1 : 0;
      for (int i = 0; i < owner->num_inputs(); ++i) {
        ir::OutPort p = owner->input(i);
        if (!p || p.node->type() != ir::kVariable) continue;
        for (const std::string& name : owner->op_desc().subgraph_names()) {
          ir::Graph* sub = root.FindSubgraph(name);
          if (sub == nullptr) return InvalidArgument("node '", owner->name(), "': subgraph '", name, "' not found");
          GE_ASSIGN_OR_RETURN(bool done, SplitInto(*sub, *owner, *p.node, i, offset));
          changed = changed || done;
        }
      }
    }
  }
  return changed;
}

}  // namespace ge::compiler
