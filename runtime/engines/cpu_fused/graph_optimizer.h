// CpuFusedGraphOptimizer: the fusions of the composite engine.
//
// OptimizeFusedGraph runs on each subgraph the composite engine partition
// gives cpu_fused: connected regions of nodes placed on cpu_dense and
// cpu_vector (the engines whose confs name cpu_fused as their composite
// engine), cut at End / PlaceHolder pairs where other engines' nodes (the
// Consts on ge_local, host_cpu fallbacks) feed them. It runs
//   1. AttentionFusion (attention_fusion.h), then
//   2. AddLayerNormFusion (add_layer_norm_fusion.h).
// Attention first: neither pattern contains the other's nodes, but the
// attention rewrite is the one that removes the most nodes, and matching
// norms afterwards sees the final graph. Fused nodes are placed on
// cpu_fused, whose kernels run them; the atomic partition that follows
// gives them their own subgraphs and cpu_dense's layout pass sees them as
// plain readers. The regions come after cpu_dense's own fusions
// (`_DenseFused`), which never absorb Div, Softmax or LayerNormalization, so
// the two engines' patterns do not compete.
//
// Before placement (OptimizeOriginalGraph) it does nothing: what crosses
// cpu_dense and cpu_vector is only known once they are placed.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/engines/api/engine.h"

namespace ge::engine::cpu_fused {

class CpuFusedGraphOptimizer final : public GraphOptimizer {
 public:
  std::string_view name() const override { return "cpu_fused"; }
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) override;
  // Both fusions are anchored at their Softmax or LayerNormalization.
  bool MayOptimizeFused(const ir::Node& node) const override;
};

}  // namespace ge::engine::cpu_fused
