// Helpers the variable passes share: what a variable and a writer are, and
// the name a Variable node stands for.
#pragma once

#include <string>
#include <vector>

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

}  // namespace ge::compiler
