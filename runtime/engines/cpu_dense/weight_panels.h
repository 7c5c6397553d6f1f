// LayOutWeightPanels: constant GEMM weights stored in the order the packed
// GEMM reads them, so that a model holds its weights once.
//
// The packed path of MatMul / Gemm (packed_matmul.h) reads B as panels of
// kGemmPanel columns. Packed at run time from the plain constant, the
// panels were a second copy of every weight the path reads: BERT-base held
// its 340 MB of projections twice (peak RSS 1.6x ONNX Runtime's, which
// drops an initializer once its kernels have pre-packed it). Here the
// constant itself becomes the panels, once, at compile time, the way
// ONNX Runtime's NCHWc transformer stores convolution weights in the layout
// its kernels read: the compiled graph, the .gem and the executor then hold
// one copy, and nothing packs at load.
//
// A Const rewrites when it is an f32 matrix of at least kMinPanelBytes whose
// every reader is a MatMul, Gemm or `_DenseFused` product of them that
// `can_rewrite` accepts, reading it directly as B, with a known A whose
// product takes the packed path for its row count (PackedGemmFits; A not
// transposed, alpha 1, Gemm's C absent or a bias row), all readers
// agreeing on B's k, n and transposition, and n a multiple of kGemmPanel
// (the panels then hold exactly the k * n values, so the Const keeps its
// dims and type). The Const and its readers get kAttrGemmPanels. The values
// are the same numbers in another order: results do not change.
//
// Graphs that lay out the same storage the same way share one panel buffer
// while any of them holds it: the per-shape graphs of a JIT-compiled model,
// compiled from copies of one graph, then hold one copy between them.
//
// A reader whose plan leaves the packed path after all (a fused operand
// that does not line up, GED_CPU_DENSE_GEMM=onednn at load) unpacks the
// panels once and runs as before (matmul_kernel.cc).
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

inline constexpr size_t kMinPanelBytes = size_t{256} << 10;

// Rewrites the eligible Consts of `graph`; returns whether any changed.
absl::StatusOr<bool> LayOutWeightPanels(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
