// ConvTapTrim: drops the kernel taps of a convolution that only ever read
// padding, at compile time.
//
// A dilated convolution whose dilation reaches past the input reads zeros
// with its outer taps at every output position: DeepLabV3's ASPP branches
// (3x3, dilation 24 and 36, padding = dilation) on a 16x16 feature map
// multiply 8 of their 9 taps by padding, and oneDNN's JIT convolution ran
// each as a full 3x3 over an explicitly padded 88x88 source (100 ms for
// 960 -> 256 channels at batch 1, against 3 ms as the 1x1 it is). For each
// spatial axis the pass finds the taps k whose input positions
// o * stride - pad_begin + k * dilation fall outside [0, D) for every
// output o; when the first or last taps are dead it keeps the live range
// [k0, k1]: the weights become a sliced constant, kernel_shape k1 - k0 + 1,
// pad_begin - k0 * dilation and pad_end - (K - 1 - k1) * dilation (the
// output size stays the same), dilation 1 where one tap remains.
//
// A Conv rewrites when it passes `can_rewrite`, auto_pad is NOTSET, its
// input's spatial dims and its weights' shape are known, its weights are a
// constant and the new pads stay non-negative. The result is exact: the
// dropped taps only ever multiplied zeros. An engine-neutral rewrite (a
// plain Conv), like ConvBatchNormFold.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// Trims every eligible Conv of `graph` (not its subgraphs); returns whether
// anything changed.
absl::StatusOr<bool> TrimConvTaps(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
