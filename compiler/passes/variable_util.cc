// Shared predicates of the variable passes.
#include "compiler/passes/variable_util.h"

#include <algorithm>

#include "base/ir/op_types.h"
#include "base/tensor.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::compiler {

bool IsVariableWriter(const ir::Node& node) {
  const std::string& t = node.type();
  return t == "Assign" || t == "AssignAdd" || t == "AssignSub";
}

std::string VariableNameOf(const ir::Node& variable) {
  return variable.op_desc().GetAttrOr<std::string>(engine::kAttrRefVarSrcVarName, variable.name());
}

bool HasInitValue(const ir::Node& variable) {
  return variable.op_desc().GetAttr<Tensor>(ir::kAttrValue).has_value() ||
         variable.op_desc().GetAttr<Tensor>(engine::kAttrInitValue).has_value();
}

std::vector<ir::Node*> WritersOf(const ir::Node& variable, const std::vector<ir::Node*>& order) {
  std::vector<ir::Node*> writers;
  for (ir::Node* n : order) {
    if (!IsVariableWriter(*n) || n->num_inputs() < 1) continue;
    ir::OutPort p = n->input(0);
    if (p.node == &variable && p.index == 0) writers.push_back(n);
  }
  return writers;
}

std::vector<ir::Graph*> GraphAndSubgraphs(ir::Graph& graph) {
  std::vector<ir::Graph*> graphs = {&graph};
  if (graph.is_root()) {
    for (ir::Graph* g : graph.subgraphs()) graphs.push_back(g);
  }
  return graphs;
}

}  // namespace ge::compiler
