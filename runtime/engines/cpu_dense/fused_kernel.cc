// The `_DenseFused` kernel: the base op's kernel (Conv or MatMul / Gemm)
// with the node's post-op chain, and its support check.
#include "runtime/engines/cpu_dense/dense_fused_op.h"
#include "runtime/engines/cpu_dense/dense_ops.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine::cpu_dense {
namespace {

absl::Status CheckFused(const ir::OpDesc& op, const DenseContext& ctx) {
  auto base = BaseOpDesc(op);
  if (!base.ok()) return Unsupported(op, base.status().message());
  auto chain = ParsePostOps(op);
  if (!chain.ok()) return Unsupported(op, chain.status().message());
  // oneDNN 2.6's JIT kernels give every post-op of one algorithm the
  // parameters of the first (relu then leaky relu computes two relus).
  for (size_t i = 0; i < chain->ops.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const PostOp& a = chain->ops[i];
      const PostOp& b = chain->ops[j];
      if (a.kind == b.kind && a.kind != PostOpKind::kAdd && (a.alpha != b.alpha || a.beta != b.beta)) {
        return Unsupported(op, "two ", PostOpName(a.kind), " post-ops with different parameters");
      }
    }
  }
  if (base->type() == "Conv") {
    GE_RETURN_IF_ERROR(CheckConv(*base, ctx));
  } else if (base->type() == "MatMul") {
    GE_RETURN_IF_ERROR(CheckMatMul(*base, ctx));
  } else {
    GE_RETURN_IF_ERROR(CheckGemm(*base, ctx));
  }
  const bool has_operand = op.num_inputs() > kFusedAddInput &&
                           InputDtype(op, kFusedAddInput) != DataType::kUndefined;
  if (chain->has_add() != has_operand) {
    return Unsupported(op, chain->has_add() ? "the add post-op has no operand (input 3)"
                                            : "input 3 is given but no add post-op uses it");
  }
  if (!chain->has_add()) return absl::OkStatus();
  GE_RETURN_IF_ERROR(CheckFloatInput(op, kFusedAddInput, ctx));
  if (InputDtype(op, kFusedAddInput) != InputDtype(op, 0)) {
    return Unsupported(op, "the add operand's dtype differs from X's");
  }
  const Shape add = InputShape(op, kFusedAddInput);
  if (base->type() == "Conv") {
    const Shape& y = op.output(0).type.shape();
    // A dynamic batch may differ at run time only by an operand batch of 1,
    // which the kernel repeats.
    if (!OnlyBatchUnknown(y) || add != y) {
      return Unsupported(op, "a Conv's add operand must have the output's shape, known but for the batch");
    }
    return absl::OkStatus();
  }
  return CheckMatMulPostOps(*base, *chain, add);
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateFused(const ir::OpDesc& op, const DenseContext& ctx) {
  GE_ASSIGN_OR_RETURN(ir::OpDesc base, BaseOpDesc(op));
  GE_ASSIGN_OR_RETURN(PostOpChain chain, ParsePostOps(op));
  if (base.type() == "Conv") return CreateConvKernel(op, base, std::move(chain), ctx);
  return CreateMatMulKernel(op, base, std::move(chain), ctx);
}

}  // namespace

void RegisterFusedKernels(DenseKernelTable& table) {
  table.Add({std::string(kDenseFusedOp), {DataType::kFloat, DataType::kBFloat16}, CheckFused,
             CreateFused});
}

}  // namespace ge::engine::cpu_dense
