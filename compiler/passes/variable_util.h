// Helpers the variable passes share: what a variable and a writer are, and
// the name a Variable node stands for; and the subgraph walk that gives a
// subgraph its own node for a value its owner passes in (variables, small
// constants).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"

namespace ge::compiler {

// Assign, AssignAdd, AssignSub.
bool IsVariableWriter(const ir::Node& node);
// The variable a Variable node (or a VarRef) stands for.
std::string VariableNameOf(const ir::Node& variable);
// Whether `variable` has an init value (`value` or `_init_value`).
bool HasInitValue(const ir::Node& variable);
// The writers whose input 0 is `variable`'s output, in `order`'s order.
std::vector<ir::Node*> WritersOf(const ir::Node& variable, const std::vector<ir::Node*>& order);
// Whether `graph` (this graph only) holds a Variable node: the passes that
// need a topological order skip graphs without one (most graphs).
bool HasVariable(const ir::Graph& graph);
// `graph` and every subgraph of its tree (root first).
std::vector<ir::Graph*> GraphAndSubgraphs(ir::Graph& graph);

// For every node of `root`'s tree that owns subgraphs, and every input of it
// that `captured` accepts: each subgraph input node fed by that input gets a
// node of its own, `make_node(subgraph, source)`, in its place (a While
// body's NetOutput keeps a pass-through, the loop carries it; a body that
// changes the carried value keeps its input). Whether anything changed.
absl::StatusOr<bool> ReplaceCapturedInputs(
    ir::Graph& root, const std::function<bool(const ir::Node& source)>& captured,
    const std::function<ir::OpDesc(ir::Graph& subgraph, const ir::Node& source)>& make_node);

}  // namespace ge::compiler
