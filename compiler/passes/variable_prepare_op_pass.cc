// VariablePrepareOpPass: writer chains, read-before-write edges and VarRefs.
#include "compiler/passes/variable_prepare_op_pass.h"

#include <deque>

#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_util.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::compiler {
namespace {

// Nodes reachable from `start` through data and control edges.
absl::flat_hash_set<const ir::Node*> Downstream(const ir::Node* start) {
  absl::flat_hash_set<const ir::Node*> seen = {start};
  std::deque<const ir::Node*> queue = {start};
  while (!queue.empty()) {
    const ir::Node* n = queue.front();
    queue.pop_front();
    for (const ir::Node* next : n->OutNodes()) {
      if (seen.insert(next).second) queue.push_back(next);
    }
  }
  return seen;
}

absl::Status AddVarRef(ir::Graph& graph, ir::Node& variable, ir::Node& last_writer) {
  ir::OpDesc ref(graph.UniqueNodeName(variable.name() + "_ref"), std::string(ir::kVariable));
  for (const auto& [k, v] : variable.op_desc().attrs()) {
    if (k != ir::kAttrValue && k != engine::kAttrInitValue) ref.SetAttr(k, v);
  }
  ref.SetAttr(engine::kAttrRefVarSrcVarName, VariableNameOf(variable));
  ref.AddOutput(variable.op_desc().output(0));
  GE_ASSIGN_OR_RETURN(ir::Node * var_ref, graph.AddNode(std::move(ref)));
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(&last_writer, 0, var_ref, 0));
  return graph.AddControlEdge(&last_writer, var_ref);
}

absl::StatusOr<bool> PrepareVariable(ir::Graph& graph, ir::Node& variable, const std::vector<ir::Node*>& order) {
  const std::vector<ir::Node*> writers = WritersOf(variable, order);
  if (writers.empty()) return false;
  const std::string name = VariableNameOf(variable);
  for (size_t i = 0; i < writers.size(); ++i) {
    writers[i]->mutable_op_desc().SetAttr(engine::kAttrVarName, name);
    if (i > 0) GE_RETURN_IF_ERROR(graph.AddControlEdge(writers[i - 1], writers[i]));
  }
  const absl::flat_hash_set<const ir::Node*> after_first = Downstream(writers.front());
  std::vector<ir::Node*> readers;
  for (const ir::InPort& use : variable.consumers(0)) {
    if (!IsVariableWriter(*use.node) && !after_first.contains(use.node)) readers.push_back(use.node);
  }
  for (ir::Node* reader : readers) GE_RETURN_IF_ERROR(graph.AddControlEdge(reader, writers.front()));
  GE_RETURN_IF_ERROR(AddVarRef(graph, variable, *writers.back()));
  return true;
}

}  // namespace

absl::StatusOr<bool> VariablePrepareOpPass::Run(ir::Graph& root) {
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    if (!HasVariable(*graph)) continue;
    GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph->TopologicalOrder());
    for (ir::Node* node : order) {
      if (node->type() != ir::kVariable || node->op_desc().GetAttr<std::string>(engine::kAttrRefVarSrcVarName)) continue;
      GE_ASSIGN_OR_RETURN(bool done, PrepareVariable(*graph, *node, order));
      changed = changed || done;
    }
  }
  return changed;
}

}  // namespace ge::compiler
