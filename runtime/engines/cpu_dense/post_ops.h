// Fused post-operations of cpu_dense's Conv / MatMul / Gemm.
//
// The graph optimizer folds element-wise consumers of a Conv, MatMul or
// Gemm into one `_DenseFused` node (dense_fused_op.h) whose attributes list
// the chain: `post_ops` names each step, `post_alpha` / `post_beta` carry
// its parameters. Steps apply in order to the base op's result:
//   add       y + R, R the node's input 3 (a residual, numpy-broadcast to y)
//   relu      max(y, 0) + alpha * min(y, 0)  (alpha 0: Relu; LeakyRelu's slope)
//   clip      min(max(y, alpha), beta)
//   sigmoid, tanh, elu (alpha), gelu_erf (0.5 y (1 + erf(y / sqrt 2))),
//   gelu_tanh (0.5 y (1 + tanh(sqrt(2 / pi) (y + 0.044715 y^3))))
//   hardswish (y relu6(y + 3) / 6), swish (y sigmoid(alpha y))
//   linear    alpha y + beta (with clip 0..1: HardSigmoid)
// oneDNN applies them inside the primitive (post-ops), so the intermediate
// results never reach memory.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace ge::engine::cpu_dense {

inline constexpr std::string_view kDenseFusedOp = "_DenseFused";
inline constexpr std::string_view kAttrFusedBase = "base";  // "Conv", "MatMul" or "Gemm"
inline constexpr std::string_view kAttrPostOps = "post_ops";
inline constexpr std::string_view kAttrPostAlpha = "post_alpha";
inline constexpr std::string_view kAttrPostBeta = "post_beta";
// Input positions of _DenseFused.
inline constexpr int kFusedBiasInput = 2;  // Conv's B, Gemm's C, MatMul's bias ([N])
inline constexpr int kFusedAddInput = 3;   // the `add` step's operand

enum class PostOpKind { kAdd, kRelu, kClip, kSigmoid, kTanh, kElu, kGeluErf, kHardSwish, kSwish, kLinear, kGeluTanh };

struct PostOp {
  PostOpKind kind = PostOpKind::kRelu;
  float alpha = 0.0f;
  float beta = 0.0f;
};

struct PostOpChain {
  std::vector<PostOp> ops;
  bool has_add() const;
};

std::string_view PostOpName(PostOpKind kind);
std::optional<PostOpKind> ParsePostOpName(std::string_view name);

// Reads the chain from a node's attributes (empty when it has none).
// InvalidArgument naming the node for unknown steps, mismatched parameter
// lists or more than one `add`.
absl::StatusOr<PostOpChain> ParsePostOps(const ir::OpDesc& op);
// Writes `chain` into a node's attributes.
void SetPostOps(const PostOpChain& chain, ir::OpDesc& op);

// How the `add` step reaches oneDNN: as a sum (the operand is placed in
// the destination before the primitive runs: full-shape operands) or as a
// binary post-op reading `add_md` (broadcast operands).
enum class AddMode { kSum, kBinary };

// Appends the oneDNN post-ops of `chain` to `ops`.
void AppendPostOps(const PostOpChain& chain, AddMode add_mode, const dnnl::memory::desc& add_md,
                   dnnl::post_ops& ops);

// The execution argument of the binary `add` when the chain was appended
// after `first_index` other post-ops (DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) |
// DNNL_ARG_SRC_1); -1 when the chain has no add.
int BinaryAddArg(const PostOpChain& chain, int first_index = 0);

}  // namespace ge::engine::cpu_dense
