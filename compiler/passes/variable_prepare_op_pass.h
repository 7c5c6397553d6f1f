// VariablePrepareOpPass: orders the reads and writes of every variable a
// graph writes (GE's VariablePrepareOpPass).
//
// For each Variable v of each graph of the tree with writers (Assign,
// AssignAdd, AssignSub whose input 0 is v):
//   - every writer gets `_var_name` = v's variable name, so its kernel
//     writes the session's variable whatever carries input 0;
//   - writers are chained by control edges in topological order;
//   - every other reader of v that does not depend on the first writer gets
//     a control edge to it: it reads the value from before this run's writes;
//   - a VarRef (a Variable node with `_ref_var_src_var_name` = v) follows
//     the last writer through a control edge, and the consumers of the last
//     writer's output read the VarRef: they see the value after every write.
// VariableRefDeleteOpPass removes the VarRefs again once the passes that
// need them have run.
#pragma once

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class VariablePrepareOpPass final : public GraphPass {
 public:
  std::string_view name() const override { return "VariablePrepareOpPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;
};

}  // namespace ge::compiler
