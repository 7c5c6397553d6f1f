// VarIsInitializedOpPass: Const(true) for variables with init values,
// `_var_name` for the rest.
#include "compiler/passes/var_is_initialized_op_pass.h"

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_util.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::compiler {
namespace {

absl::Status ReplaceWithTrue(ir::Graph& graph, ir::Node* node) {
  ir::OpDesc constant(graph.UniqueNodeName(node->name() + "_const"), std::string(ir::kConst));
  constant.SetAttr(ir::kAttrValue, Tensor::Scalar<bool>(true));
  constant.AddOutput(node->op_desc().output(0));
  GE_ASSIGN_OR_RETURN(ir::Node * c, graph.AddNode(std::move(constant)));
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(node, 0, c, 0));
  for (ir::Node* out : std::vector<ir::Node*>(node->control_outputs())) GE_RETURN_IF_ERROR(graph.AddControlEdge(c, out));
  graph.RemoveNode(node);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> VarIsInitializedOpPass::Run(ir::Graph& root) {
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    for (ir::Node* node : graph->nodes()) {
      if (node->type() != "VarIsInitializedOp") continue;
      if (node->num_inputs() < 1 || !node->input(0)) {
        if (!node->op_desc().GetAttr<std::string>(engine::kAttrVarName)) {
          return InvalidArgument("node '", node->name(), "' (VarIsInitializedOp) has no variable input and no _var_name");
        }
        continue;
      }
      const ir::Node* var = node->input(0).node;
      if (var->type() != ir::kVariable) {
        return InvalidArgument("node '", node->name(), "' (VarIsInitializedOp): input 0 comes from '", var->name(),
                               "' (", var->type(), "), not a Variable");
      }
      if (HasInitValue(*var)) {
        GE_RETURN_IF_ERROR(ReplaceWithTrue(*graph, node));
      } else {
        node->mutable_op_desc().SetAttr(engine::kAttrVarName, VariableNameOf(*var));
        graph->RemoveInputEdge(node, 0);
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace ge::compiler
