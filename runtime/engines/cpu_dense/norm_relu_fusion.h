// NormReluFusion: a BatchNormalization whose only consumer is a Relu runs
// both in one oneDNN primitive (the `fuse_norm_relu` flag), after the
// engine partition, inside cpu_dense's own subgraph.
//
// Pre-activation networks (DenseNet's BatchNorm -> ReLU -> Conv in every
// layer and transition) cannot fold such a BatchNorm into the convolution
// after it (the ReLU sits between), so each ran as two passes over the
// activation: 62 BatchNorm and 62 ReLU primitives per DenseNet-121 run, the
// ReLUs about 4 % of its time. The pass marks the BatchNormalization with
// `_fused_relu = 1`, takes over the Relu's output and removes the Relu. It
// runs only where both nodes are placed on cpu_dense (no other engine ever
// sees the attribute) and the BatchNorm's input rank is known to be one
// cpu_dense runs (2-5), the Relu's output is not a graph output, and
// neither node has control edges. The kernel never hands a fused node to
// the reference engine (which would drop the ReLU): it reports an error.
// An InstanceNormalization (rank 3-5; cpu_dense's own kernel applies the
// ReLU in its last pass) fuses its Relu the same way: a style-transfer
// network follows each one with a ReLU.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

inline constexpr std::string_view kAttrFusedRelu = "_fused_relu";

// Fuses every eligible BatchNormalization -> Relu pair of `graph` (not its
// subgraphs) whose nodes pass `can_rewrite`; returns whether anything
// changed.
absl::StatusOr<bool> FuseNormRelu(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
