// `_GroupNorm`: group normalization in the layout of the convolutions around
// it, with the per-channel affine map and an optional SiLU.
//
//   Y = _GroupNorm(X, Scale, Bias) {num_groups, epsilon, activation}
//
// X is [N, C, S...] (rank 3 to 5, f32), C a multiple of num_groups (G);
// Scale and Bias are f32 [C]. Per sample n and group g (channels
// [g C/G, (g+1) C/G)), over those channels and every spatial position:
//   y = (x - mean[n, g]) / sqrt(var[n, g] + epsilon) * Scale[c] + Bias[c]
// then, with activation = "silu", y * sigmoid(y). The kernel
// (group_norm_kernel.cc) reads and writes plain, channels-last (NHWC /
// NDHWC) and channel-blocked (nChw8c / nChw16c) tensors alike, so the layout
// pass keeps its input's layout (docs/design/cpu_dense.md, "Group
// normalization").
//
// torch exports nn.GroupNorm as Reshape [N, G, -1] -> InstanceNormalization
// (G ones and zeros) -> Reshape back to X's shape -> Mul by the [C, 1, 1]
// weight -> Add of the [C, 1, 1] bias, and SiLU as x * Sigmoid(x). Between
// convolutions that oneDNN runs channels-last that chain ran plain: a
// reorder of X to plain, the normalization, the element-wise tail, and a
// reorder back for the next convolution, with the Reshapes (ge_local)
// cutting cpu_dense's subgraphs (a latent-diffusion VAE decoder: 18 of them).
//
// FuseGroupNorms rewrites, before placement, Reshape -> InstanceNormalization
// -> Reshape whose Reshapes split X's channels into G groups and restore X's
// shape (f32 X of rank 3-5, every dim but the batch known, the
// InstanceNormalization's scale and bias constant), followed by any
// of a Mul and an Add by per-channel or one-element constants (folded into
// Scale and Bias, in double) and then x * Sigmoid(x), into `_GroupNorm`.
// The intermediate tensors must have no other reader. Only cpu_dense runs
// the op.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ops/op_registry.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

inline constexpr std::string_view kGroupNormOp = "_GroupNorm";

// Registers the `_GroupNorm` schema in `registry` unless it is there.
absl::Status RegisterGroupNormOp(ops::OpRegistry& registry);

// Rewrites every eligible chain of `graph` (not its subgraphs); returns
// whether anything changed.
absl::StatusOr<bool> FuseGroupNorms(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
