// EinsumLowering: two-operand Einsum products become a batched MatMul.
//
// torch exports `torch.einsum` as ONNX Einsum, which only host_cpu runs, by its
// reference loop (a multiply-add per element of the whole label space, one
// thread, double accumulators): a diffusion UNet's pixel self-attention
// ("bhdi,bhdj->bhij", then "bhij,bhdj->bhdi") took 86 % of the model's time,
// 25x ONNX Runtime. An Einsum of two float32 inputs whose labels fall into
//
//   batch  (in both inputs and the output),
//   K      (in both inputs, not in the output: summed),
//   M      (in the first input and the output only),
//   N      (in the second input and the output only),
//
// with at most one K, one M and one N label, no label repeated within a term
// (a diagonal) and no ellipsis, is a batched matrix product: each input is
// transposed to [batch..., M, K] / [batch..., K, N] (Transpose only when the
// order differs), a missing M, K or N becomes a dim of 1 (Unsqueeze; removed
// again by Squeeze), MatMul multiplies, and a last Transpose gives the
// output's label order. Known sizes of one label must agree (as host_cpu
// requires; a dim of 1 does not broadcast). When
// the output lists N before M the operands swap roles if that saves a
// Transpose. The last node takes the Einsum's name. Other Einsums (one or
// three operands, diagonals, ellipses, several contracted labels, a label
// summed out of one input alone, other dtypes) stay for host_cpu.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

// Lowers every eligible Einsum of `graph` (not its subgraphs) that passes
// `can_rewrite`; returns whether anything changed.
absl::StatusOr<bool> LowerEinsums(ir::Graph& graph, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
