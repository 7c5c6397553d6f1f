// AttentionFusion: scaled dot-product attention becomes one
// `_FusedAttention` node (fused_ops.h).
//
// The pattern, read back from each Softmax over the last axis:
//
//   Q' = Div(Q, s) | Mul(Q, s) | Mul(s, Q)          (optional pre-scale)
//   Kt = Transpose(K) {swaps the last two axes}      (absorbed when present)
//   S  = MatMul(Q', Kt)
//   S' = Div(S, s) | Mul(S, s) | Mul(s, S)          (optional post-scale)
//   S''= Add(S', M) | Add(M, S')                     (optional mask)
//   P  = Softmax(S'') {last axis};  Y = MatMul(P, V)
//
// as torch's exports of nn.MultiheadAttention (pre-scaled Q, K already
// transposed by one Transpose of its own) and of BERT-style self-attention
// (scores divided, then masked) produce them. At most one scale; `s` is any
// one-element float tensor (a constant behind the partition boundary, so it
// stays an input). Every intermediate must have the next step as its only
// consumer and no control edges; all values are float32 with static shapes;
// Q, Kt and V have one rank and equal batch dims (the MatMuls do not
// broadcast). Anything else is left alone.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"

namespace ge::engine::cpu_fused {

// Rewrites every match in `graph`; returns whether it changed anything.
absl::StatusOr<bool> FuseAttention(ir::Graph& graph);

}  // namespace ge::engine::cpu_fused
