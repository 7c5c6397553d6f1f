// GatherElements on cpu_vector, and its broadcast form.
//
// torch.gather over expanded tensors (DGCNN's neighbours:
// `gather(x.unsqueeze(2).expand(B, C, N, N), 3, idx.unsqueeze(1).expand(B,
// C, N, K))`) exports as GatherElements reading two Expands; the data one is
// [B, C, N, N], hundreds of megabytes at batch 8, written every run only to
// be read at K of its N columns. `_GatherElementsBroadcast(data, indices)`
// is GatherElements(Expand(data, data_shape), Expand(indices,
// indices_shape), axis): one kernel walks the output and reads both sources
// with zero strides on their broadcast dims, so neither expansion exists.
// The rewrite (GatherFromExpand, cpu_vector's graph optimizer
// `cpu_vector_gather`, on each cpu_vector subgraph after placement) turns a
// GatherElements whose data and/or indices come from an Expand of static
// shapes into it; an Expand left without readers goes, with the producers
// of its shape that only it read (docs/design/gather_broadcast.md).
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ops/op_registry.h"
#include "runtime/engines/api/engine.h"
#include "runtime/engines/cpu_vector/vector_kernel.h"

namespace ge::engine::cpu_vector {

inline constexpr std::string_view kGatherElementsBroadcastOp = "_GatherElementsBroadcast";
// Attributes: `axis` (non-negative), and the shapes the two inputs broadcast
// to (numpy rules): `data_shape`, `indices_shape` (the output's shape).
inline constexpr std::string_view kAttrDataShape = "data_shape";
inline constexpr std::string_view kAttrIndicesShape = "indices_shape";

// Registers the op's schema in `registry` unless it is there.
absl::Status RegisterGatherElementsBroadcastOp(ops::OpRegistry& registry);

// GatherElements, `_GatherElementsBroadcast` and ScatterElements kernels.
void RegisterGatherKernels(VectorKernelTable& table);

// Rewrites every GatherElements of `graph` reading an Expand (as above);
// true when it changed the graph.
absl::StatusOr<bool> GatherFromExpand(ir::Graph& graph);

class GatherFromExpandOptimizer final : public GraphOptimizer {
 public:
  std::string_view name() const override { return "cpu_vector_gather"; }
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) override { return GatherFromExpand(graph); }
  bool MayOptimizeFused(const ir::Node& node) const override { return node.type() == "GatherElements"; }
};

}  // namespace ge::engine::cpu_vector
