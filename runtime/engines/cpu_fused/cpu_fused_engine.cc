// The cpu_fused engine: attributes, CheckSupported, the kernel factory and
// Initialize.
#include "runtime/engines/cpu_fused/cpu_fused_engine.h"

#include "base/ir/node.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "runtime/engines/api/attributes.h"
#include "runtime/engines/cpu_fused/fused_kernels.h"
#include "runtime/engines/cpu_fused/fused_ops.h"

namespace ge::engine {

absl::Status CpuFusedInfoStore::CheckSupported(const ir::Node& node) const {
  return cpu_fused::CheckFusedOp(node.op_desc());
}

std::vector<std::string> CpuFusedInfoStore::SupportedOpTypes() const {
  return {std::string(cpu_fused::kFusedAddLayerNormOp), std::string(cpu_fused::kFusedAttentionOp)};
}

absl::StatusOr<std::unique_ptr<Kernel>> CpuFusedKernelFactory::CreateKernel(const ir::OpDesc& op) const {
  if (op.type() == cpu_fused::kFusedAttentionOp) return cpu_fused::CreateAttentionKernel(op);
  if (op.type() == cpu_fused::kFusedAddLayerNormOp) return cpu_fused::CreateAddLayerNormKernel(op);
  return Unimplemented(cpu_fused::kEngineName, " has no kernel for op type ", op.type(), " (node '", op.name(), "')");
}

CpuFusedEngine::CpuFusedEngine() {
  EmbeddedAttributes embedded = ParseEmbeddedAttributes(cpu_fused::kAttributesJson, cpu_fused::kEngineName);
  attributes_ = std::move(embedded.attributes);
  attributes_error_ = std::move(embedded.error);
}

CpuFusedEngine::~CpuFusedEngine() = default;

absl::Status CpuFusedEngine::Initialize(const EngineOptions& options) {
  (void)options;
  GE_RETURN_IF_ERROR(attributes_error_);
  GE_RETURN_IF_ERROR(cpu_fused::SelectLoops(/*force_avx2=*/false));
  return cpu_fused::RegisterFusedOps(ops::OpRegistry::Global());
}

}  // namespace ge::engine
