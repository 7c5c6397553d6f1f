// `_ChannelShuffle`: ShuffleNet's channel shuffle (and the channel slices
// read from it) as one cpu_dense op.
//
//   Y = _ChannelShuffle(X...) {group = g, begin = b, count = n}
//
// X is [N, C, spatial...] with C a multiple of g, or the join along the
// channels of several inputs (a Concat folded in). The shuffled tensor's
// channel c reads X's channel (c % g) * (C / g) + c / g (X viewed as
// [N, g, C / g, spatial...], axes 1 and 2 swapped, viewed back); Y holds
// its channels [b, b + n), [N, n, spatial...]. `count` defaults to C - b.
//
// torch exports the shuffle as Reshape -> Transpose(perm [0, 2, 1, 3...])
// -> Reshape, and ShuffleNet v2's `chunk` after it as channel Slices. They
// ran on cpu_vector (Transpose, Slice) and ge_local (the views) in the plain
// layout, between convolutions oneDNN runs channels-last on AVX-512: the
// activations went to plain and back in every block (38 reorders a run of
// shufflenet_v2). On channels-last ports the shuffle permutes each
// position's channel row; the layout pass keeps it (and the Concat and
// convolutions around it) channels-last.
//
// FuseChannelShuffles rewrites, before placement, a Reshape (constant
// shape) -> Transpose -> Reshape (constant shape) chain whose types say
// [N, C, S...] -> [N, g, C/g, S...] -> [N, C/g, g, S...] -> [N, C, S...]
// (rank 3 to 5 for X, f32 or bf16, the views and the Transpose read by
// nothing else) into `_ChannelShuffle` nodes: one per Slice of the result
// along axis 1 with constant bounds and step 1 (begin and count from the
// clamped bounds), one per read output of a Split along axis 1 (its parts
// from the outputs' types), one with every channel for any other reader.
// Then a Concat along the channels whose every reader is such a shuffle
// goes: the shuffles read its inputs (ShuffleNet v2 joins two halves before
// each shuffle; with two groups the kernel interleaves them directly).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ops/op_registry.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

inline constexpr std::string_view kChannelShuffleOp = "_ChannelShuffle";

// Registers the `_ChannelShuffle` schema in `registry` unless it is there.
absl::Status RegisterChannelShuffleOp(ops::OpRegistry& registry);

// The source channel of each of the `count` output channels from `begin`
// of the shuffle of `channels` channels in `group` groups.
std::vector<int64_t> ShuffleSources(int64_t channels, int64_t group, int64_t begin, int64_t count);

// Rewrites every eligible shuffle of `graph` (not its subgraphs); returns
// whether anything changed.
absl::StatusOr<bool> FuseChannelShuffles(ir::Graph& graph, const NodeFilter& can_rewrite);

// Rewrites every Slice along the channels (constant bounds, step 1) and
// every Split along the channels of a convolution's output (rank 3 to 5,
// f32 or bf16, dims known but the batch) into `_ChannelShuffle` nodes of
// one group: the layout pass then keeps them, and the gates read from them,
// in the convolution's layout. WaveNet's gated activations (tanh of one
// half of a dilated convolution's channels times sigmoid of the other) ran
// their Slices on cpu_vector in the plain layout: two reorders a layer
// around channels-last convolutions on AVX-512.
absl::StatusOr<bool> FuseChannelSlices(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
