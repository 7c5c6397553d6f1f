// AddLayerNormFusion: a LayerNormalization with the residual Add before it
// and/or the Add after it becomes one `_FusedAddLayerNorm` (fused_ops.h).
//
//   X' = Add(X, R)                       (absorbed when present)
//   Y  = LayerNormalization(X', Scale, B) {axis, epsilon}
//   Y' = Add(Y, P) | Add(P, Y)           (absorbed when present)
//
// Post-norm transformers (torch's TransformerEncoderLayer, BERT) have the
// first form, pre-norm ones the second. Both Adds must be plain element-wise
// sums of float32 tensors of one static shape (no broadcasting), the Add
// before the norm read only by it, the norm's Y read only by the Add after
// it, and the norm must not produce its Mean / InvStdDev outputs for anyone.
// Scale and B must hold as many elements as the normalized dims.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"

namespace ge::engine::cpu_fused {

// Rewrites every match in `graph`; returns whether it changed anything.
absl::StatusOr<bool> FuseAddLayerNorm(ir::Graph& graph);

}  // namespace ge::engine::cpu_fused
