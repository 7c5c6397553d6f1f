// BlockedLayoutPass: keeps activations in the layout oneDNN's convolutions
// prefer (channel-blocked NChw16c on AVX-512) between consecutive cpu_dense
// nodes, with TransData nodes only where that layout meets a reader of
// plain tensors (seeds/02: formats change at subgraph boundaries).
//
// In topological order over the nodes the filter accepts (those placed on
// cpu_dense):
//   * a Conv (or `_DenseFused` over one) writes the layout oneDNN picks for
//     it (ConvPreferredFormat) when its output is a rank 3-5 f32/bf16
//     tensor of known shape whose channels fill whole blocks; a depthwise
//     convolution whose source holds kLargeDepthwiseBytes or more, which
//     this host runs channels-last, takes oneDNN's channel-blocked layout
//     with the convolution feeding it and those reading it, when their
//     primitives run on JIT kernels in that layout (depthwise blocks,
//     docs/design/cpu_dense.md);
//   * unary element-wise ops, MaxPool / AveragePool and BatchNormalization
//     write the layout their input 0 has; binary element-wise ops of two
//     same-shape operands write the layout of either operand (the other
//     operand is converted with a TransData when it is plain);
//   * GlobalAveragePool / GlobalMaxPool read any layout and write plain;
//   * `_ChannelShuffle` (channel_shuffle.h) writes its input's layout when
//     that is channels-last;
//   * `_GroupNorm` (group_norm.h) writes the layout its input has, like
//     the unary ops; `_ChannelSoftmax` (channel_softmax.h) reads a
//     channels-last input of one position per sample in place;
//   * `_ChannelsLastView` (channels_last_view.h) writes channels-last by
//     definition (its output format is set when it is formed), so layouts
//     start there too: a convolution reads it in place, other readers get a
//     TransData.
// Then each consumer of a non-plain output either reads that layout (the
// nodes above at their data ports; a Conv's X; a fused Conv's add operand)
// or gets a TransData back to plain in front of it — one per producer
// output, shared by such consumers (End nodes at subgraph boundaries
// included). The chosen layouts are written into the IoDescs' formats,
// which the kernels read. Layouts never change a tensor's byte size here
// (channels fill whole blocks), so executors keep sizing buffers by shape.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// The source size from which a depthwise convolution runs in a depthwise
// block (docs/perf.md, session 16): from 4 MiB (four times a core's L2 on
// the AVX-512 hosts measured) the blocked block wins at 1 thread, while at
// 2 threads the channels-last one still wins up to about 8 MiB (each core
// holds a part); the pass does not know the thread count, so 8 MiB, where
// the blocked kernels win at both.
inline constexpr int64_t kLargeDepthwiseBytes = int64_t{8} << 20;

// Depthwise blocks are on unless GED_CPU_DENSE_DW_BLOCKS=off (read once);
// the setter moves them for tests (the layout pass reads it when it runs).
bool DepthwiseBlocksEnabled();
void SetDepthwiseBlocksEnabled(bool on);

// Assigns layouts in `graph` (not its subgraphs); returns whether anything
// changed. TransData nodes it inserts carry `_engine_name` = cpu_dense
// when the node they serve does.
absl::StatusOr<bool> AssignBlockedLayouts(ir::Graph& graph, const NodeFilter& on_dense,
                                          const DenseContext& context);

// Whether layouts start at `node`: a convolution, or a node whose output is
// already in a non-plain layout. A graph without one keeps every tensor
// plain and AssignBlockedLayouts leaves it unchanged.
bool StartsLayouts(const ir::Node& node);

}  // namespace ge::engine::cpu_dense
