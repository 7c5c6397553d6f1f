// InferShapesPass: fills every node's output types from the op registry's
// shape and type inference, refining unknown dims where inputs allow.
#pragma once

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class InferShapesPass final : public GraphPass {
 public:
  std::string_view name() const override { return "InferShapesPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;
};

}  // namespace ge::compiler
