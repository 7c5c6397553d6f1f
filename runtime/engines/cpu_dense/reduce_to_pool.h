// ReduceToPool: a max or mean over spatial axes of a convolution's output
// becomes a pooling: a global one over every spatial axis, a windowed one
// over some of them.
//
// torch exports `x.max(dim=2)[0]` (PointNet's max over points),
// `x.mean(dim=2)` (an audio net's average over time) and `x.mean((2, 3),
// keepdim=True)` (squeeze-excite in timm-style nets) as ReduceMax /
// ReduceMean, which cpu_dense does not run: the reduction went to
// cpu_vector, and the convolution's channel-blocked output was reordered to
// plain for it first (PointNet: 0.81 ms for [1, 1024, 1024], more than the
// reduction). GlobalMaxPool / GlobalAveragePool compute the same values and
// cpu_dense runs them on the blocked layout (their plain [N, C, 1...]
// output has the blocked bytes), so nothing is reordered.
//
// A ReduceMax or ReduceMean rewrites when it passes `can_rewrite`, its
// input is f32 of a known rank 3 to 5, its axes (the attribute, or a
// constant second input) are spatial axes only (2..rank-1), and its
// input comes from a convolution or pooling, directly or through up to
// three element-wise nodes (activations, a residual Add, a squeeze-excite
// Mul), the producers whose outputs the layout pass blocks: a reduction over
// the last axis of a transformer's [batch, sequence, hidden] (LayerNorm
// written out) keeps its own kernel. keepdims=1 gives the pooling alone,
// keepdims=0 a Flatten(axis=1) after it ([N, C, 1...] -> [N, C]). Means
// differ from the reduction's only by summation order; a max is exact
// (a NaN in a window may be lost, as in MaxPool).
//
// Over some of the spatial axes (whose extents must be known), the
// reduction is a MaxPool / AveragePool whose window spans those axes (1
// along the others; stride 1, no padding), with a Squeeze of the reduced
// axes for keepdims=0. DGCNN's and PointNet++'s max over the neighbours of
// each point (`x.max(dim=-1)` on the [B, C, N, K] output of an edge
// convolution) is the case: the pooling reads the convolution's
// channels-last output in place, where the reduction needed a reorder of
// the whole [B, C, N, K] tensor to plain; what is reordered now (when a
// plain reader follows) is the K-times smaller result.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// Rewrites every eligible reduction of `graph` (not its subgraphs); returns
// whether anything changed.
absl::StatusOr<bool> ReduceToGlobalPool(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
