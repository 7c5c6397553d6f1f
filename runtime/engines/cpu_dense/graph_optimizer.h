// CpuDenseGraphOptimizer: cpu_dense's graph optimizations (GE's
// FEGraphOptimizer role).
//
// OptimizeOriginalGraph (the whole graph, before placement) runs, on the
// root graph and every subgraph:
//   1. ConvBatchNormFold: Conv + BatchNormalization with constant
//      parameters become one Conv (engine-neutral: any engine benefits);
//   2. PostOpFusion: Conv / MatMul / Gemm + Add / activations / GELU become
//      `_DenseFused` nodes, which only cpu_dense runs, so it creates them
//      only where CheckSupported accepts them (the compiler runs an
//      engine's optimizer only when the engine is not excluded);
//   3. MarkConstInputs: the `_const_inputs` attribute lists the inputs of
//      Conv, MatMul, Gemm and `_DenseFused` fed by constants, so their
//      kernels pack weights once.
// Fusion and folding come before marking because they create the nodes
// and constants to mark. Nodes forced to another engine (`_ge_engine`) or
// to the host (`_host_exec`) are left alone.
//
// OptimizeFusedGraph (each subgraph placed on cpu_dense) runs 2 and 3 on
// nodes placed on cpu_dense, for graphs that reach the engine without the
// original-graph step.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/engines/api/engine.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// Sets `_const_inputs` on the dense nodes of `graph` that `can_rewrite`
// accepts; returns whether any attribute changed.
absl::StatusOr<bool> MarkConstInputs(ir::Graph& graph, const NodeFilter& can_rewrite);

class CpuDenseGraphOptimizer final : public GraphOptimizer {
 public:
  explicit CpuDenseGraphOptimizer(SupportCheck supported) : supported_(std::move(supported)) {}
  std::string_view name() const override { return "cpu_dense"; }
  absl::StatusOr<bool> OptimizeOriginalGraph(ir::Graph& graph) override;
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) override;

 private:
  absl::StatusOr<bool> OptimizeOne(ir::Graph& graph, const NodeFilter& can_rewrite, bool fold);
  SupportCheck supported_;
};

}  // namespace ge::engine::cpu_dense
