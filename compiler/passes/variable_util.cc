// Shared predicates of the variable passes.
#include "compiler/passes/variable_util.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
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
  // A writer takes the variable as its input 0, so it is one of the
  // variable's consumers; `order` only sorts them (and is never
  // dereferenced: it may hold nodes a pass has removed since).
  absl::flat_hash_set<const ir::Node*> candidates;
  for (const ir::InPort& use : variable.consumers(0)) {
    if (use.index == 0 && IsVariableWriter(*use.node)) candidates.insert(use.node);
  }
  std::vector<ir::Node*> writers;
  if (candidates.empty()) return writers;
  for (ir::Node* n : order) {
    if (candidates.contains(n)) writers.push_back(n);
  }
  return writers;
}

bool HasVariable(const ir::Graph& graph) {
  bool found = false;
  graph.ForEachNode([&](const ir::Node* n) { found = found || n->type() == ir::kVariable; });
  return found;
}

std::vector<ir::Graph*> GraphAndSubgraphs(ir::Graph& graph) {
  std::vector<ir::Graph*> graphs = {&graph};
  if (graph.is_root()) {
    for (ir::Graph* g : graph.subgraphs()) graphs.push_back(g);
  }
  return graphs;
}

}  // namespace ge::compiler
