// The float element-wise ops element-wise fusion (fused_elementwise.h) may
// put in one program, by ONNX op type, with the ISA loop each runs as a
// single op in elementwise_kernels.cc: a fused program calls exactly the
// loops the single ops would, so its results equal theirs bit for bit.
//
// Unary entries take X only (their attributes, if any, are read by
// ReadUnaryParams, the reader the single-op kernels use too); binary
// entries take exactly two inputs (Max and Min are variadic in ONNX:
// two-input nodes only). Left out: Clip (bounds are inputs), Sign, Not,
// IsNaN, comparisons and logic (bool), Mod (integer rules).
#pragma once

#include <cstdint>
#include <string_view>

#include "base/ir/op_desc.h"
#include "runtime/engines/cpu_vector/isa_kernels.h"

namespace ge::engine::cpu_vector {

struct UnaryOpInfo {
  std::string_view type;
  UnaryOp op;
  int64_t cost;  // element operations per element, for thread splitting
};

struct BinaryOpInfo {
  std::string_view type;
  BinaryOp op;
  int64_t cost;
};

// The entry of a fusable op type, or null.
const UnaryOpInfo* FindUnaryOp(std::string_view type);
const BinaryOpInfo* FindBinaryOp(std::string_view type);

// The attributes of `op` for its unary kind (LeakyRelu: alpha; HardSigmoid:
// alpha, beta; Elu: alpha), with ONNX's defaults; zeros for the others.
UnaryParams ReadUnaryParams(const ir::OpDesc& op, UnaryOp kind);

}  // namespace ge::engine::cpu_vector
