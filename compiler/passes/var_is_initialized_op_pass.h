// VarIsInitializedOpPass: answers VarIsInitializedOp at compile time when
// it can (GE's VarIsInitializedOpPass).
//
// A VarIsInitializedOp whose input 0 is a Variable with an init value
// (`value` or `_init_value`) becomes Const(true): the variable holds that
// value from its first allocation on. Otherwise the op keeps asking at run
// time: it gets `_var_name` and loses its input edge, so that asking does not
// read (and allocate) the variable. A VarIsInitializedOp fed by anything
// but a Variable is an error naming the node.
#pragma once

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class VarIsInitializedOpPass final : public GraphPass {
 public:
  std::string_view name() const override { return "VarIsInitializedOpPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;
};

}  // namespace ge::compiler
