// `_ChannelsLastView`: a channels-last tensor handed to a convolution
// without a copy.
//
//   Y = _ChannelsLastView(X)
//
// X is a plain [N, S1, ..., Sk, C] tensor (rank 3 to 5); Y is the logical
// [N, C, S1, ..., Sk] tensor Transpose(X, perm [0, r-1, 1, ..., r-2]) would
// make, stored channels-last (NHWC / NDHWC; rank 3's NHWC is oneDNN's nwc).
// Those bytes are X's own, so Y is a view (OpSchema::views): no compute and
// no memory.
//
// Point-cloud and graph nets (DGCNN's edge convolutions, PointNet++'s
// grouped MLPs) build their features as [B, N, K, C] (gathered neighbours,
// a Concat along the last axis) and torch's `permute(0, 3, 1, 2)` turns
// them into Conv2d's [B, C, N, K]; a Conv1d after `transpose(1, 2)` of
// [B, L, C] is the rank-3 form. The Transpose ran on cpu_vector (a 32 MB
// copy at batch 8, memory-bound), and oneDNN's convolution, channels-last
// on AVX-512, reordered the plain result back into the layout X already
// had: two copies of the largest tensor of the net per convolution.
//
// FuseChannelsLastViews rewrites, before placement, a Transpose with that
// perm whose input is f32 or bf16 with every dim but the batch known, not
// a constant, and whose every reader is a Conv at its X port, into the
// view; the layout pass (layout_pass.h) then keeps the convolution's
// source channels-last (ConvPreferredFormat with a channels-last arrival)
// and converts the view for any reader that needs another layout.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ops/op_registry.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

inline constexpr std::string_view kChannelsLastViewOp = "_ChannelsLastView";

// Registers the `_ChannelsLastView` schema in `registry` unless it is there.
absl::Status RegisterChannelsLastViewOp(ops::OpRegistry& registry);

// Rewrites every eligible Transpose of `graph` (not its subgraphs); returns
// whether anything changed.
absl::StatusOr<bool> FuseChannelsLastViews(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
