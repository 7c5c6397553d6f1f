// SplitVariableIntoSubgraphPass: a subgraph reads a variable directly
// instead of through its owner's input (GE's SplitVariableIntoSubgraphPass).
//
// For every If / Case / While / PartitionedCall input fed by a Variable,
// each subgraph's input node bound to that input (by the parent-index
// conventions: If / Case Data index i <- input i + 1, others input i,
// `_parent_index` wins) hands its consumers to a VarRef of the variable
// inside the subgraph. The input node stays (indices are unchanged). A
// While body is rewritten only where it passes the variable through
// unchanged (its output i is its input i): a loop-carried value that the
// body changes is a value, not the variable.
#pragma once

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class SplitVariableIntoSubgraphPass final : public GraphPass {
 public:
  std::string_view name() const override { return "SplitVariableIntoSubgraphPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;
};

}  // namespace ge::compiler
