// ConstantFoldingPass: evaluates at compile time what does not depend on the
// graph's inputs (GE's ConstantFoldingPass and DimensionComputePass).
//
// Walks every graph in topological order and replaces a node by Const nodes
// holding its outputs when
//   - it is Shape or Size of a tensor whose shape is fully known (the value
//     is the shape, whatever the data), or
//   - every input it has is a Const, it has no control inputs, its op is of
//     ONNX's default domain, stateless, owns no subgraph, and produces
//     tensors only: its outputs are computed by the reference engine's
//     kernel (EngineAttributes::reference, host_cpu today), the one engine
//     that has a kernel for every op.
// A node whose results would be much larger than its inputs is left alone
// (Expand, Tile, ConstantOfShape of a big shape would only bloat the model):
// folding is allowed when the outputs take at most the inputs' bytes plus
// kMaxGrowthBytes, or when no output has more elements than the largest
// input (bytes then grow only by a wider dtype: a DequantizeLinear of
// constant s8 weights that no int8 node took, folded once instead of
// dequantized on every run). A kernel that fails at compile time leaves its node as it
// is: the error, if it is one, belongs to run time (the node may sit in a
// branch that never runs).
//
// Folding makes later shapes known: the consumers of a folded node are
// inferred again before they are considered, so a torch-exported
// Shape -> Gather -> Concat -> Reshape chain collapses in one walk and the
// Reshape's output becomes static. Const inputs left without consumers are
// removed.
#pragma once

#include <cstddef>

#include "compiler/passes/graph_pass.h"
#include "runtime/engines/engine_registry.h"

namespace ge::compiler {

class ConstantFoldingPass final : public GraphPass {
 public:
  static constexpr size_t kMaxGrowthBytes = size_t{1} << 20;

  // Kernels come from `engines`' reference engine; without one only Shape
  // and Size fold.
  explicit ConstantFoldingPass(const engine::EngineRegistry& engines) : engines_(engines) {}

  std::string_view name() const override { return "ConstantFoldingPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;

 private:
  const engine::EngineRegistry& engines_;
};

}  // namespace ge::compiler
