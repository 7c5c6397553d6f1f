// PostOpFusion: folds the element-wise consumers of a Conv, MatMul or Gemm
// into one `_DenseFused` node that oneDNN runs as a single primitive with
// post-ops (post_ops.h).
//
// Starting at each Conv / MatMul / Gemm with a known output shape, the pass
// follows the chain of single consumers and absorbs, in order:
//   Relu, LeakyRelu, Sigmoid, Tanh, Elu;
//   Clip with constant (or absent) bounds;
//   Add of another tensor that broadcasts to the result without growing it
//     (a MatMul's first Add of an [N] vector becomes its bias; otherwise the
//     operand is the `add` step's input, at most one per chain; a Conv's
//     operand must have the output's shape);
//   GELU as exported by PyTorch and Hugging Face: x * 0.5 * (1 + Erf(x / sqrt 2))
//     in either multiplication order (Div, Erf, Add, Mul, Mul);
//   GELU's tanh form in any arrangement of its arithmetic (gelu_tanh_match.h).
// Every absorbed node must pass the filter, have no control edges and keep
// the dtype. The fused node keeps the base node's name and attributes and
// takes over the last absorbed node's output; it is created only when
// cpu_dense's CheckSupported accepts it, so the engine never receives a
// node it cannot run.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// Fuses every chain in `graph` (not its subgraphs); returns whether
// anything changed. Without `residual_adds` (before placement, where the
// composite engine's add + layer norm still wants the residual Add) an Add
// joins a chain only as a MatMul's [N] bias and SiLU waits too; GELU's
// arithmetic fuses either way.
absl::StatusOr<bool> FusePostOps(ir::Graph& graph, const NodeFilter& can_rewrite, const SupportCheck& supported,
                                 bool residual_adds = true);

}  // namespace ge::engine::cpu_dense
