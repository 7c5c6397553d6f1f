// The host_cpu engine: attributes (its embedded json), CheckSupported over
// the kernel table and the kernel factory.
#include "runtime/engines/host_cpu/host_cpu_engine.h"

#include "base/ir/node.h"
#include "base/status.h"
#include "runtime/engines/api/attributes.h"

namespace ge::engine {

absl::Status HostCpuInfoStore::CheckSupported(const ir::Node& node) const {
  return CheckSupportedOp(node.op_desc());
}

absl::Status HostCpuInfoStore::CheckSupportedOp(const ir::OpDesc& op) const {
  const host_cpu::KernelDef* def = table_.Find(op.type());
  if (def == nullptr) {
    return Unimplemented(kHostCpuEngineName, " has no kernel for op type ", op.type());
  }
  GE_RETURN_IF_ERROR(sdk::CheckPortDtypes(op, def->input_dtypes, def->output_dtypes, kHostCpuEngineName));
  // Creating the kernel validates the attributes the kernel depends on
  // (Conv's auto_pad, BatchNormalization's training_mode, Cast's `to`).
  auto kernel = def->create(op);
  if (!kernel.ok()) {
    return absl::Status(kernel.status().code(),
                        StrCat(op.type(), " on ", kHostCpuEngineName, ": ",
                               kernel.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Kernel>> HostCpuKernelFactory::CreateKernel(
    const ir::OpDesc& op) const {
  const host_cpu::KernelDef* def = table_.Find(op.type());
  if (def == nullptr) {
    return Unimplemented(kHostCpuEngineName, " has no kernel for op type ", op.type(),
                         " (node '", op.name(), "')");
  }
  return def->create(op);
}

HostCpuEngine::HostCpuEngine() : info_store_(table_), factory_(table_) {
  EmbeddedAttributes embedded = ParseEmbeddedAttributes(host_cpu::kAttributesJson, kHostCpuEngineName);
  attributes_ = std::move(embedded.attributes);
  attributes_error_ = std::move(embedded.error);
  host_cpu::RegisterHostCpuKernels(table_);
}

absl::Status HostCpuEngine::Initialize(const EngineOptions& options) {
  (void)options;
  return attributes_error_;
}

HostCpuEngine::~HostCpuEngine() = default;

}  // namespace ge::engine
