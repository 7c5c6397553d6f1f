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

// The other side: an inference BatchNormalization read only by one Conv
// (at X) without padding folds into that Conv's weights and bias,
//
//   y = Conv(BN(x), W, B)  with  a = scale / sqrt(var + epsilon), s = bias - mean * a
//     = Conv(x, W * a[c], B + sum_{c,k} W[., c, k] * s[c])
//
// (c the input channel through the Conv's group; exact because every tap
// reads a normalized value: with padding, the padded zeros would not be).
// Pre-norm blocks (VAN, PoolFormer: BN on the residual stream feeding a
// 1x1 convolution) ran the BN on its own, on plain layouts. Run after
// FoldConvBatchNorm (a Conv -> BN pair folds backwards first).
absl::StatusOr<bool> FoldBatchNormIntoConv(ir::Graph& graph, const NodeFilter& can_rewrite);

// A Mul by a per-output-channel constant (a scalar, [M, 1, ...] or
// [1, M, 1, ...]) that alone reads a Conv's output folds into the Conv:
// W'[o] = W[o] * f[o], B'[o] = B[o] * f[o]. Layer scales (VAN, PoolFormer,
// ConvNeXt-style blocks: x + gamma * conv(...)) then leave the residual Add
// to the Conv's sum post-op instead of an element-wise chain on another
// engine in the plain layout.
absl::StatusOr<bool> FoldConvChannelScale(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
