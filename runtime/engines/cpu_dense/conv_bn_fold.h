// ConvBatchNormFold: folds an inference BatchNormalization into the Conv
// that feeds it, at compile time.
//
//   y = BN(Conv(x, W, B))  with  a = scale / sqrt(var + epsilon)
//     = Conv(x, W * a[m], (B - mean) * a + bias)
//
// A pair folds when the Conv's only consumer is the BatchNormalization,
// the Conv's W (and B, when present) and the four BN parameters are
// constants, training_mode is 0, the BN's statistics outputs are unused,
// and the dtype is f32 or f64. New Const nodes hold the folded weights
// (computed in double); the old constants go when nothing else reads them.
// The Conv keeps its name and takes over the BN's output (and its tensor
// name, so graph outputs keep their names).
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// Folds every eligible pair in `graph` (not its subgraphs) whose two nodes
// pass `can_rewrite`; returns whether anything changed.
absl::StatusOr<bool> FoldConvBatchNorm(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
