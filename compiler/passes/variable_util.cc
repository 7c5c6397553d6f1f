// Shared predicates of the variable passes.
#include "compiler/passes/variable_util.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/status.h"
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

absl::StatusOr<bool> ReplaceInSubgraph(
    ir::Graph& sub, const ir::Node& owner, const ir::Node& source, int64_t index, int offset,
    const std::function<ir::OpDesc(ir::Graph& subgraph, const ir::Node& source)>& make_node) {
  bool changed = false;
  std::vector<ir::Node*> inputs;
  for (ir::Node* input : sub.nodes()) {
    if ((input->type() == ir::kData || input->type() == ir::kInnerData) && ParentIndexOf(*input, offset) == index) {
      inputs.push_back(input);
    }
  }
  const bool is_while = owner.type() == ir::kWhile;
  for (ir::Node* input : inputs) {
    if (is_while && !PassesThrough(sub, *input, index)) continue;
    std::vector<ir::InPort> uses;
    for (const ir::InPort& use : input->consumers(0)) {
      if (!(is_while && use.node == sub.OutputNode())) uses.push_back(use);
    }
    if (uses.empty()) continue;
    GE_ASSIGN_OR_RETURN(ir::Node * node, sub.AddNode(make_node(sub, source)));
    for (const ir::InPort& use : uses) {
      sub.RemoveInputEdge(use.node, use.index);
      GE_RETURN_IF_ERROR(sub.AddEdge(node, 0, use.node, use.index));
    }
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> ReplaceCapturedInputs(
    ir::Graph& root, const std::function<bool(const ir::Node& source)>& captured,
    const std::function<ir::OpDesc(ir::Graph& subgraph, const ir::Node& source)>& make_node) {
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    for (ir::Node* owner : graph->nodes()) {
      if (owner->op_desc().subgraph_names().empty()) continue;
      const int offset = (owner->type() == ir::kIf || owner->type() == ir::kCase) ? 1 : 0;
      for (int i = 0; i < owner->num_inputs(); ++i) {
        ir::OutPort p = owner->input(i);
        if (!p || !captured(*p.node)) continue;
        for (const std::string& name : owner->op_desc().subgraph_names()) {
          ir::Graph* sub = root.FindSubgraph(name);
          if (sub == nullptr) return InvalidArgument("node '", owner->name(), "': subgraph '", name, "' not found");
          GE_ASSIGN_OR_RETURN(bool done, ReplaceInSubgraph(*sub, *owner, *p.node, i, offset, make_node));
          changed = changed || done;
        }
      }
    }
  }
  return changed;
}

}  // namespace ge::compiler
