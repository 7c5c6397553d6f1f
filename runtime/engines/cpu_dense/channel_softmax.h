// `_ChannelSoftmax`: a softmax over groups of each sample's values with the
// data movement around it, as one cpu_dense node.
//
//   Y_0, ..., Y_{k-1} = _ChannelSoftmax(X) {groups, sources, ranks, dims}
//
// X is [N, ...] (f32) with T values per sample; `groups` gives each of them
// its softmax group (T ids). Per sample, p = the softmax of X within each
// group; output j is [N, d_j...] (ranks[j] dims taken in order from `dims`)
// whose i-th value per sample is p[sources_j[i]] (`sources` holds every
// output's indices, one after the other).
//
// Attention over branches (selective-kernel units: the logits of K
// branches as one [N, K C, 1, 1] convolution output, Reshape to
// [N, K, C, 1, 1], Softmax over the branch axis, Gather (or Split and
// Squeeze, or Slice) of each branch's [N, C, 1, 1] weights; ResNeSt's
// split attention with a Transpose of the radix and cardinality axes and
// Reshapes back) weights channels-last convolution outputs per channel. The
// views ran on ge_local and the Gathers on cpu_vector, and since the weights
// feed back into the branches' cpu_dense subgraph, the engine partition cut
// it there: every branch output was reordered to plain at the cut and the
// weighted sum back (sknet: 4 reorders per unit). As one cpu_dense node the
// whole chain stays in one subgraph, and the per-channel products read the
// branches where they are (layout_pass.h).
//
// FuseChannelSoftmaxes rewrites, before placement, each Softmax (opset 13+,
// over an axis past the batch) whose input comes from X through views and
// Transposes (Reshape, Flatten, Squeeze, Unsqueeze, Identity) and whose
// result goes through those and Gather, Split and Slice (constant, along
// axes past the batch, step 1) until readers that are none of them: every
// such op keeps the batch as axis 0, every dim but the batch known, X f32
// of one vector per sample ([N, T] or [N, T, 1, ...]: logits of a pooled
// or 1x1 convolution, not a map or an attention's scores) with at most
// kMaxChannelSoftmaxValues values, at least one
// movement op. The movement is evaluated at compile time on index arrays
// (which of X's values each output value is), so any order of those ops
// becomes the same node. Only cpu_dense runs the op.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ops/op_registry.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

inline constexpr std::string_view kChannelSoftmaxOp = "_ChannelSoftmax";
inline constexpr int64_t kMaxChannelSoftmaxValues = 16384;

// Registers the `_ChannelSoftmax` schema in `registry` unless it is there.
absl::Status RegisterChannelSoftmaxOp(ops::OpRegistry& registry);

// Rewrites every eligible Softmax of `graph` (not its subgraphs); returns
// whether anything changed.
absl::StatusOr<bool> FuseChannelSoftmaxes(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
