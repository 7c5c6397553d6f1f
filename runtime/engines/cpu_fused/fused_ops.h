// The fused ops of cpu_fused, made by its graph optimizer and run only by
// cpu_fused.
//
//   Y = _FusedAttention(Q, K, V, S?, M?) {k_transposed, scale_divides}
//     Y = softmax(Q Kt * s + M, last axis) V, where Kt = K when
//     k_transposed (K is [..., D, Sk]), else K with its last two axes
//     swapped (K is [..., Sk, D]); s = S (or 1 / S with scale_divides;
//     1 without S) and S holds one element. Q [..., Sq, D], V [..., Sk, Dv]
//     and K have the same rank and the same leading (batch) dims; M
//     broadcasts unidirectionally to [..., Sq, Sk]. Y is [..., Sq, Dv].
//
//   Y = _FusedAddLayerNorm(X, Scale, B?, R?, P?) {axis, epsilon}
//     Y = LayerNormalization(X + R, Scale, B; axis, epsilon) + P, with R
//     and P of X's shape (the residual added before the normalization and
//     the one added after it).
//
// Both are ONNX compositions, so inference follows the ONNX ops they
// replace, and results equal those of the unfused graph within float
// rounding. The schemas are registered when the engine initializes.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "base/ops/op_registry.h"

namespace ge::engine::cpu_fused {

inline constexpr std::string_view kFusedAttentionOp = "_FusedAttention";
inline constexpr std::string_view kFusedAddLayerNormOp = "_FusedAddLayerNorm";

inline constexpr std::string_view kAttrKTransposed = "k_transposed";
inline constexpr std::string_view kAttrScaleDivides = "scale_divides";

// Input positions.
inline constexpr int kAttentionQ = 0;
inline constexpr int kAttentionK = 1;
inline constexpr int kAttentionV = 2;
inline constexpr int kAttentionScale = 3;
inline constexpr int kAttentionMask = 4;
inline constexpr int kNormX = 0;
inline constexpr int kNormScale = 1;
inline constexpr int kNormBias = 2;
inline constexpr int kNormResidual = 3;
inline constexpr int kNormPostAddend = 4;

// Registers both schemas in `registry` unless they are there.
absl::Status RegisterFusedOps(ops::OpRegistry& registry);

}  // namespace ge::engine::cpu_fused
