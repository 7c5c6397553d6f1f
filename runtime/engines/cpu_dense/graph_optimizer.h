// CpuDenseGraphOptimizer: cpu_dense's graph optimizations (GE's
// FEGraphOptimizer role).
//
// OptimizeOriginalGraph (the whole graph, before placement; the compiler
// driver's pass cpu_dense.OptimizeOriginalGraph) runs, on the root graph
// and every subgraph, 1 to 3 below, where 2 absorbs no binary post-op (Add,
// Sub, Mul, Div: a bias or residual Add, GELU's arithmetic): those wait for
// OptimizeFusedGraph, which runs after the composite engine's fusions
// (cpu_fused's add + layer norm claims the residual Add). The steps:
//   1. ConvBatchNormFold: Conv + BatchNormalization with constant
//      parameters become one Conv (engine-neutral: any engine benefits);
//      then (among others) GroupNorms and ChannelSoftmaxes (group_norm.h,
//      channel_softmax.h): torch's GroupNorm export and attention over
//      branches become cpu_dense nodes that keep channels-last tensors
//      channels-last;
//   2. PostOpFusion: Conv / MatMul / Gemm + Add / activations / GELU become
//      `_DenseFused` nodes, which only cpu_dense runs, so it creates them
//      only where CheckSupported accepts them (the compiler runs an
//      engine's optimizer only when the engine is not excluded);
//   3. MarkConstInputs: the `_const_inputs` attribute lists the inputs of
//      Conv, MatMul, Gemm, `_DenseFused`, the int8 ops, LSTM, GRU and RNN
//      fed by constants, so their kernels pack weights once (also where
//      shapes are dynamic and Prepare sees no values). After partitioning
//      such an input is fed by the subgraph's input node (PlaceHolder,
//      InnerData); an index marked before stays marked then.
// Fusion and folding come before marking because they create the nodes
// and constants to mark. Nodes forced to another engine (`_ge_engine`) or
// to the host (`_host_exec`) are left alone.
//
// OptimizeFusedGraph (each subgraph placed on cpu_dense) runs 2 and 3 on
// nodes placed on cpu_dense, for graphs that reach the engine without the
// original-graph step, then 4. BlockedLayoutPass (layout_pass.h): oneDNN's
// blocked layouts between cpu_dense nodes, TransData where they meet plain
// readers. It runs last, on the final nodes, and only after placement:
// TransData and layouts are decided per engine. Running it again on its
// own output changes nothing.
//
// OptimizeGraphBeforeBuild (the merged graph, where a Const reaches its
// readers directly again) runs 5. LayOutWeightPanels (weight_panels.h):
// constant B matrices of packed-path products stored as the panels the GEMM
// reads, on the final nodes.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/engines/api/engine.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// Sets `_const_inputs` on the dense nodes of `graph` that `can_rewrite`
// accepts; returns whether any attribute changed.
absl::StatusOr<bool> MarkConstInputs(ir::Graph& graph, const NodeFilter& can_rewrite);

class CpuDenseGraphOptimizer final : public GraphOptimizer {
 public:
  // `context` (the engine's) outlives the optimizer.
  CpuDenseGraphOptimizer(SupportCheck supported, const DenseContext& context)
      : supported_(std::move(supported)), context_(context) {}
  std::string_view name() const override { return "cpu_dense"; }
  absl::StatusOr<bool> OptimizeOriginalGraph(ir::Graph& graph) override;
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) override;
  // 5. LayOutWeightPanels on the nodes placed on cpu_dense.
  absl::StatusOr<bool> OptimizeGraphBeforeBuild(ir::Graph& graph) override;
  // Its rewrites start at Conv, MatMul, Gemm and fused dense nodes (post-op
  // fusion, constant inputs) and at nodes that start layouts.
  bool MayOptimizeFused(const ir::Node& node) const override;

 private:
  absl::StatusOr<bool> OptimizeOne(ir::Graph& graph, const NodeFilter& can_rewrite, bool fold);
  SupportCheck supported_;
  const DenseContext& context_;
};

}  // namespace ge::engine::cpu_dense
