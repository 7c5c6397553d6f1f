// `_DenseFused`: a Conv, MatMul or Gemm with a chain of fused post-ops
// (post_ops.h), made by the cpu_dense graph optimizer and run only by
// cpu_dense.
//
//   Y = _DenseFused(X, W, B?, R?) {base = "Conv" | "MatMul" | "Gemm",
//                                  post_ops, post_alpha, post_beta,
//                                  <the base op's own attributes>}
//
// X, W and B are the base op's inputs (Conv's X, W, B; Gemm's A, B, C;
// MatMul's A, B and, for MatMul only, a bias broadcast along the last dim).
// R is the operand of the `add` step. The output type is the base op's,
// inferred by the base op's own schema, so inference of the fused node can
// never disagree with the nodes it replaced.
//
// A Conv with an `add` step carries `_inplace_inputs = [3]`
// (base/ir/inplace_attr.h): oneDNN's sum post-op accumulates onto the
// destination, so the static memory planner may give Y the buffer of a
// residual R that dies at the node, and the kernel then skips copying R into
// Y. MatMul and Gemm do not (their packed GEMM keeps partial sums in Y before
// it reads R).
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/ops/op_registry.h"

namespace ge::engine::cpu_dense {

// Registers the `_DenseFused` schema in `registry` unless it is there.
absl::Status RegisterDenseFusedOp(ops::OpRegistry& registry);

// The base op of a `_DenseFused` node: its type, its inputs (2 for MatMul,
// else 3) and its attributes without the fused ones, named like the node.
// InvalidArgument when `base` is missing or not Conv, MatMul or Gemm.
absl::StatusOr<ir::OpDesc> BaseOpDesc(const ir::OpDesc& fused);

}  // namespace ge::engine::cpu_dense
