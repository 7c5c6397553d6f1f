// Loop selection and the support checks of cpu_fused's kernels.
#include "runtime/engines/cpu_fused/fused_kernels.h"

#include <atomic>

#include "base/status.h"
#include "runtime/engines/cpu_fused/fused_ops.h"
#include "runtime/engines/sdk/cpu_features.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_fused {
namespace {

std::atomic<const FusedLoops*> g_loops{nullptr};

absl::Status CheckFloatInputs(const ir::OpDesc& op) {
  for (int i = 0; i < op.num_inputs(); ++i) {
    const ir::ValueType& t = op.input(i).type;
    if (t.is_tensor() && t.dtype() == DataType::kUndefined) continue;  // absent optional input
    if (!t.is_tensor() || t.dtype() != DataType::kFloat) {
      return sdk::NodeUnimplemented(op, "cpu_fused runs float32 only; input ", i, " is ", t.ToString());
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool CpuHasAvx2() { return sdk::HostVectorIsa() >= sdk::VectorIsa::kAvx2; }

absl::Status SelectLoops(bool force_avx2) {
  if (!CpuHasAvx2()) return FailedPrecondition("cpu_fused needs AVX2, FMA and F16C, which this CPU lacks");
  const sdk::VectorIsa isa = sdk::CapVectorIsa(sdk::HostVectorIsa(), force_avx2 ? "avx2" : nullptr);
  g_loops.store(isa == sdk::VectorIsa::kAvx512 ? &avx512::Loops() : &avx2::Loops());
  return absl::OkStatus();
}

const FusedLoops& Loops() {
  const FusedLoops* loops = g_loops.load(std::memory_order_relaxed);
  if (loops == nullptr) {
    (void)SelectLoops(false);
    loops = g_loops.load();
    if (loops == nullptr) loops = &avx2::Loops();  // unreachable when the engine loaded
  }
  return *loops;
}

absl::Status CheckAttention(const ir::OpDesc& op) {
  if (op.num_inputs() < 3 || op.num_inputs() > 5 || op.num_outputs() != 1) {
    return sdk::NodeUnimplemented(op, "expects 3 to 5 inputs and one output");
  }
  GE_RETURN_IF_ERROR(CheckFloatInputs(op));
  const Shape& q = op.input(kAttentionQ).type.shape();
  if (!q.unknown_rank() && q.rank() < 2) return sdk::NodeUnimplemented(op, "Q must have rank 2 or more");
  return absl::OkStatus();
}

absl::Status CheckAddLayerNorm(const ir::OpDesc& op) {
  if (op.num_inputs() < 2 || op.num_inputs() > 5 || op.num_outputs() != 1) {
    return sdk::NodeUnimplemented(op, "expects 2 to 5 inputs and one output");
  }
  return CheckFloatInputs(op);
}

absl::Status CheckFusedOp(const ir::OpDesc& op) {
  if (op.type() == kFusedAttentionOp) return CheckAttention(op);
  if (op.type() == kFusedAddLayerNormOp) return CheckAddLayerNorm(op);
  return absl::UnimplementedError(StrCat("cpu_fused has no kernel for op type ", op.type(), " (node '", op.name(), "')"));
}

}  // namespace ge::engine::cpu_fused
