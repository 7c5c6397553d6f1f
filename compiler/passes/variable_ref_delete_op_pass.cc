// VariableRefDeleteOpPass: VarRefs out, writer outputs back in.
#include "compiler/passes/variable_ref_delete_op_pass.h"

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_util.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::compiler {

absl::StatusOr<bool> VariableRefDeleteOpPass::Run(ir::Graph& root) {
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    for (ir::Node* node : graph->nodes()) {
      if (node->type() != ir::kVariable || !node->op_desc().GetAttr<std::string>(engine::kAttrRefVarSrcVarName)) {
        continue;
      }
      ir::Node* writer = nullptr;
      for (ir::Node* c : node->control_inputs()) {
        if (IsVariableWriter(*c)) writer = c;
      }
      // A VarRef SplitVariableIntoSubgraphPass made (no writer) reads the variable: it stays.
      if (writer == nullptr) continue;
      GE_RETURN_IF_ERROR(graph->ReplaceAllUses(node, 0, writer, 0));
      for (ir::Node* out : std::vector<ir::Node*>(node->control_outputs())) {
        GE_RETURN_IF_ERROR(graph->AddControlEdge(writer, out));
      }
      graph->RemoveNode(node);
      changed = true;
    }
  }
  return changed;
}

}  // namespace ge::compiler
