// cpu_fused's graph optimizer: the fusion order.
#include "runtime/engines/cpu_fused/graph_optimizer.h"

#include "base/status.h"
#include "runtime/engines/cpu_fused/add_layer_norm_fusion.h"
#include "runtime/engines/cpu_fused/attention_fusion.h"

namespace ge::engine::cpu_fused {

bool CpuFusedGraphOptimizer::MayOptimizeFused(const ir::Node& node) const {
  return node.type() == "Softmax" || node.type() == "LayerNormalization";
}

absl::StatusOr<bool> CpuFusedGraphOptimizer::OptimizeFusedGraph(ir::Graph& graph) {
  GE_ASSIGN_OR_RETURN(bool attention, FuseAttention(graph));
  GE_ASSIGN_OR_RETURN(bool norms, FuseAddLayerNorm(graph));
  return attention || norms;
}

}  // namespace ge::engine::cpu_fused
