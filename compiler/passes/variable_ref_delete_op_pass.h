// VariableRefDeleteOpPass: removes the VarRefs VariablePrepareOpPass added
// (GE's VariableRefDeleteOpPass). A VarRef's consumers read the output of
// the writer its control input names again (that output is the variable's
// value after the write), and inherit its control edges; a VarRef without
// consumers simply goes.
#pragma once

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class VariableRefDeleteOpPass final : public GraphPass {
 public:
  std::string_view name() const override { return "VariableRefDeleteOpPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;
};

}  // namespace ge::compiler
