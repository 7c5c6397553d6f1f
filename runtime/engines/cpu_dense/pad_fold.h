// PadFold: constant-zero Pad nodes that need no kernel, at compile time.
//
// torch exports DenseNet's transition AvgPool2d as Pad(pads = 0) then
// AveragePool, and a padded convolution as Pad then Conv in some models. Such
// a Pad ran on host_cpu's generic kernel, on one thread, between two layout
// conversions (cpu_dense's blocked activation to plain and back). Two cases
// fold, when the Pad is `constant` mode, its pads are a constant, its value
// is absent or a constant 0, it has no axes input and no control edges:
//
//  * every pad is 0: the Pad is an identity; its consumers read its input
//    (unless a consumer is the graph's NetOutput, whose output name it gives);
//  * its only consumer is a Conv (or `_DenseFused` on a Conv) with explicit
//    pads (auto_pad NOTSET), the pads are non-negative and zero on the batch
//    and channel dims: they add to the Conv's own pads, which pad with zeros;
//  * the same with an AveragePool that counts its pads (count_include_pad =
//    1, or no pads of its own; it is set to 1), without ceil_mode or
//    dilations, every resulting pad below the window: torch exports
//    AvgPool2d(count_include_pad=True) with padding as Pad + AveragePool
//    (Inception's pool branches), and the Pad ran on host_cpu between two
//    layout conversions.
//
// Engine-neutral rewrites (a plain Conv or AveragePool, or no node), like
// ConvBatchNormFold.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// Folds every eligible Pad of `graph` (not its subgraphs) that passes
// `can_rewrite` (and whose Conv does, for the second case); returns whether
// anything changed.
absl::StatusOr<bool> FoldPads(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
