// The cpu_vector engine: attributes (its embedded json), CheckSupported, the kernel factory and
// builder, and ISA selection at Initialize.
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"

#include "base/ir/node.h"
#include "absl/strings/escaping.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "runtime/engines/cpu_vector/fused_elementwise.h"
#include "runtime/engines/api/attributes.h"

namespace ge::engine {

absl::Status CpuVectorInfoStore::CheckSupported(const ir::Node& node) const {
  return cpu_vector::CheckSupported(table_, node.op_desc());
}

absl::StatusOr<std::unique_ptr<Kernel>> CpuVectorKernelFactory::CreateKernel(const ir::OpDesc& op) const {
  const cpu_vector::VectorKernelDef* def = table_.Find(op.type());
  if (def == nullptr) {
    return Unimplemented(cpu_vector::kEngineName, " has no kernel for op type ", op.type(), " (node '", op.name(), "')");
  }
  return def->create(op);
}

std::string CpuVectorKernelBuilder::Signature(const PrepareContext& ctx) {
  std::string out;
  for (size_t i = 0; i < ctx.input_types.size(); ++i) StrAppend(&out, i ? "," : "", ctx.input_types[i].ToString());
  out += "->";
  for (size_t i = 0; i < ctx.output_types.size(); ++i) StrAppend(&out, i ? "," : "", ctx.output_types[i].ToString());
  return out;
}

absl::StatusOr<TaskDef> CpuVectorKernelBuilder::BuildTask(const KernelFactory& factory, std::string_view engine_name,
                                                          PrepareContext& ctx) const {
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, factory.CreateKernel(*ctx.op));
  GE_RETURN_IF_ERROR(kernel->Prepare(ctx));
  TaskDef task;
  task.engine = std::string(engine_name);
  task.kernel = ctx.op->type();
  task.param_version = kParamVersion;
  task.params = Signature(ctx);
  task.workspace_bytes = ctx.workspace_bytes;
  return task;
}

absl::StatusOr<std::unique_ptr<Kernel>> CpuVectorKernelBuilder::LoadKernel(const KernelFactory& factory,
                                                                           const TaskDef& task,
                                                                           PrepareContext& ctx) const {
  if (task.param_version != kParamVersion) {
    return FailedPrecondition("node '", ctx.op->name(), "': task parameters of version ", task.param_version,
                              " for engine '", task.engine, "', which reads only version ", kParamVersion);
  }
  const std::string signature = Signature(ctx);
  if (task.params != signature) {
    // The blob comes from a .gem (untrusted): its bytes are shown escaped
    // and cut short.
    return InvalidArgument(
        "node '", ctx.op->name(), "': the task's ", task.params.size(), "-byte parameter blob was built for \"",
        absl::CHexEscape(absl::string_view(task.params).substr(0, 120)), "\" but is loaded for ", signature);
  }
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, factory.CreateKernel(*ctx.op));
  GE_RETURN_IF_ERROR(kernel->Prepare(ctx));
  return kernel;
}

CpuVectorEngine::CpuVectorEngine() : info_store_(table_), factory_(table_) {
  EmbeddedAttributes embedded = ParseEmbeddedAttributes(cpu_vector::kAttributesJson, cpu_vector::kEngineName);
  attributes_ = std::move(embedded.attributes);
  attributes_error_ = std::move(embedded.error);
  cpu_vector::RegisterVectorKernels(table_);
}

CpuVectorEngine::~CpuVectorEngine() = default;

absl::Status CpuVectorEngine::Initialize(const EngineOptions& options) {
  GE_RETURN_IF_ERROR(attributes_error_);
  auto it = options.find("ge.cpu_vector.isa");
  const std::string isa = it == options.end() ? "auto" : it->second;
  if (isa != "auto" && isa != "avx2") {
    return InvalidArgument("ge.cpu_vector.isa must be auto or avx2, got '", isa, "'");
  }
  GE_RETURN_IF_ERROR(cpu_vector::SelectIsa(isa == "avx2"));
  GE_RETURN_IF_ERROR(cpu_vector::RegisterGatherElementsBroadcastOp(ops::OpRegistry::Global()));
  return cpu_vector::RegisterFusedElementwiseOp(ops::OpRegistry::Global());
}

}  // namespace ge::engine
