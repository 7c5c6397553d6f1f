// The host_cpu engine: attributes, CheckSupported over the kernel table and
// the kernel factory.
#include "runtime/engines/host_cpu/host_cpu_engine.h"

#include "base/ir/node.h"
#include "base/status.h"

namespace ge::engine {

absl::Status HostCpuInfoStore::CheckSupported(const ir::Node& node) const {
  return CheckSupportedOp(node.op_desc());
}

absl::Status HostCpuInfoStore::CheckSupportedOp(const ir::OpDesc& op) const {
  const host_cpu::KernelDef* def = table_.Find(op.type());
  if (def == nullptr) {
    return Unimplemented(kHostCpuEngineName, " has no kernel for op type ", op.type());
  }
  GE_RETURN_IF_ERROR(table_.CheckDtypes(*def, op, kHostCpuEngineName));
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

namespace {

EngineAttributes MakeAttributes() {
  EngineAttributes a;
  a.name = std::string(kHostCpuEngineName);
  a.compute_cost = 10;
  a.runtime_type = RuntimeType::kHost;
  a.atomic = true;
  a.independent_stream = false;
  a.attach = false;
  a.skip_assign_stream = false;
  a.version = "1.0";
  return a;
}

}  // namespace

HostCpuEngine::HostCpuEngine()
    : attributes_(MakeAttributes()), info_store_(table_), factory_(table_) {
  host_cpu::RegisterHostCpuKernels(table_);
}

HostCpuEngine::~HostCpuEngine() = default;

}  // namespace ge::engine
