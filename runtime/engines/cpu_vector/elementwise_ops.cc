// The fusable element-wise op tables and the unary attribute reader.
#include "runtime/engines/cpu_vector/elementwise_ops.h"

#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_vector {
namespace {

// Costs as elementwise_kernels.cc registers them.
constexpr UnaryOpInfo kUnary[] = {
    {"Relu", UnaryOp::kRelu, 1},
    {"Neg", UnaryOp::kNeg, 1},
    {"Abs", UnaryOp::kAbs, 1},
    {"Sigmoid", UnaryOp::kSigmoid, 4},
    {"Tanh", UnaryOp::kTanh, 4},
    {"Exp", UnaryOp::kExp, 4},
    {"Log", UnaryOp::kLog, 16},
    {"Sqrt", UnaryOp::kSqrt, 2},
    {"Erf", UnaryOp::kErf, 16},
    {"Ceil", UnaryOp::kCeil, 1},
    {"Floor", UnaryOp::kFloor, 1},
    {"Round", UnaryOp::kRound, 1},
    {"Reciprocal", UnaryOp::kReciprocal, 2},
    {"Sin", UnaryOp::kSin, 16},
    {"Cos", UnaryOp::kCos, 16},
    {"Softplus", UnaryOp::kSoftplus, 16},
    {"Softsign", UnaryOp::kSoftsign, 2},
    {"HardSwish", UnaryOp::kHardSwish, 2},
    {"LeakyRelu", UnaryOp::kLeakyRelu, 1},
    {"HardSigmoid", UnaryOp::kHardSigmoid, 1},
    {"Elu", UnaryOp::kElu, 4},
};

constexpr BinaryOpInfo kBinary[] = {
    {"Add", BinaryOp::kAdd, 1},  {"Sub", BinaryOp::kSub, 1}, {"Mul", BinaryOp::kMul, 1}, {"Div", BinaryOp::kDiv, 2},
    {"Pow", BinaryOp::kPow, 16}, {"Max", BinaryOp::kMax, 1}, {"Min", BinaryOp::kMin, 1}, {"PRelu", BinaryOp::kPRelu, 1},
};

}  // namespace

const UnaryOpInfo* FindUnaryOp(std::string_view type) {
  for (const UnaryOpInfo& e : kUnary) {
    if (e.type == type) return &e;
  }
  return nullptr;
}

const BinaryOpInfo* FindBinaryOp(std::string_view type) {
  for (const BinaryOpInfo& e : kBinary) {
    if (e.type == type) return &e;
  }
  return nullptr;
}

UnaryParams ReadUnaryParams(const ir::OpDesc& op, UnaryOp kind) {
  UnaryParams p;
  switch (kind) {
    case UnaryOp::kLeakyRelu: p.alpha = sdk::FloatAttr(op, "alpha", 0.01f); break;
    case UnaryOp::kHardSigmoid:
      p.alpha = sdk::FloatAttr(op, "alpha", 0.2f);
      p.beta = sdk::FloatAttr(op, "beta", 0.5f);
      break;
    case UnaryOp::kElu: p.alpha = sdk::FloatAttr(op, "alpha", 1.0f); break;
    default: break;
  }
  return p;
}

}  // namespace ge::engine::cpu_vector
