// `_FusedElementwise`: a group of float32 element-wise ops run as one
// kernel, made by cpu_vector's element-wise fusion (elementwise_fusion.h).
//
//   Y = _FusedElementwise(X0, X1, ...) {ops, args, alphas, betas}
//
// The program is in static single assignment form: instruction k computes
// value n + k (n = the number of inputs; values 0..n-1 are the inputs) as
// ops[k] (an ONNX op type of elementwise_ops.h) of args[2k] and, for a
// binary op, args[2k + 1] (-1 for a unary op), each an earlier value;
// alphas[k] / betas[k] are its attributes (LeakyRelu, HardSigmoid, Elu).
// Y is the last instruction's value. Every value is computed over Y's
// shape, the numpy broadcast of all inputs: element-wise ops commute with
// broadcasting, so this equals running the ops one by one.
//
// The kernel walks Y in blocks of kFusedBlock elements and runs the whole
// program on each block, its intermediate values in a few block-sized
// registers (allocated by liveness at creation), so they stay in L1; each
// instruction is one call of the ISA loop the single op runs, hence the
// same float operations in the same order. Inputs of Y's element count are
// read in place, one-element inputs by stride 0, any other broadcast input
// is gathered per block. Blocks split across the device's threads when the
// whole program's work is large (vector_kernel.h's kParallelWork).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/ops/op_registry.h"
#include "runtime/engines/cpu_vector/isa_kernels.h"
#include "runtime/engines/cpu_vector/vector_kernel.h"

namespace ge::engine::cpu_vector {

inline constexpr std::string_view kFusedElementwiseOp = "_FusedElementwise";
inline constexpr std::string_view kAttrFusedOps = "ops";
inline constexpr std::string_view kAttrFusedArgs = "args";
inline constexpr std::string_view kAttrFusedAlphas = "alphas";
inline constexpr std::string_view kAttrFusedBetas = "betas";

// Elements per block (per register).
inline constexpr int64_t kFusedBlock = 256;

// One decoded instruction. Operands: >= 0 a register, < 0 input -1 - x.
// dst is a register, or -1 for the last instruction (it writes Y).
struct FusedInstr {
  bool binary = false;
  UnaryOp unary = UnaryOp::kRelu;
  BinaryOp bin = BinaryOp::kAdd;
  UnaryParams params;
  int32_t a = 0, b = 0;
  int32_t dst = -1;
  int64_t cost = 1;
};

struct FusedProgram {
  int num_inputs = 0;
  std::vector<FusedInstr> code;
  int num_registers = 0;
  int64_t cost = 0;  // element operations per element of Y
};

// Decodes and checks `op`'s program (it may come from a .gem) and
// allocates its registers; InvalidArgument naming the node otherwise.
absl::StatusOr<FusedProgram> DecodeFusedProgram(const ir::OpDesc& op);

// Registers the op's schema in `registry` unless it is there.
absl::Status RegisterFusedElementwiseOp(ops::OpRegistry& registry);

// Adds the kernel to cpu_vector's table: float32 inputs and a program that
// decodes.
void RegisterFusedElementwiseKernel(VectorKernelTable& table);

}  // namespace ge::engine::cpu_vector
