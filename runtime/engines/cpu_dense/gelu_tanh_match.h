// GELU's tanh form hanging off a value, found by what the arithmetic computes
// rather than by one order of its nodes.
//
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) reaches ONNX in several
// shapes: torch's F.gelu(approximate="tanh") (x * x * x, the constants on the
// left), GPT-2's and Hugging Face's NewGELU (Pow(x, 3.0), 0.5 * x first),
// FastGELU factorings (x * (1 + 0.044715 x x)), Div by a constant for a Mul.
// MatchGeluTanh takes the nodes reachable from `x` through element-wise
// float ops (Add, Sub, Mul, Div, Pow, Tanh) whose other operands are `x`,
// nodes already taken or constant scalars (at most kMaxGeluNodes); it then
// looks for a node among them whose ancestors there form a closed region
// (every use of `x` and of each node but that one inside the region) and
// evaluates the region in double on sample points in [-8, 8]: the region is
// GELU-tanh when every point agrees with the formula within 1e-5 of
// max(1, |gelu(x)|) and it contains a Tanh. Erf-form GELU, x sigmoid(1.702 x)
// and any other function differ by far more at some sample point.
#pragma once

#include <optional>
#include <vector>

#include "base/ir/graph.h"
#include "runtime/engines/cpu_dense/graph_util.h"

namespace ge::engine::cpu_dense {

inline constexpr int kMaxGeluNodes = 12;

// The region's nodes in topological order, the last producing the result,
// or nullopt. Every node passes `can_rewrite`, has one output of `x`'s type
// and shape and no control edges.
std::optional<std::vector<ir::Node*>> MatchGeluTanh(const ir::OutPort& x, const NodeFilter& can_rewrite);

}  // namespace ge::engine::cpu_dense
