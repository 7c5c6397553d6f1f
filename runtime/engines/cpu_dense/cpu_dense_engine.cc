// The cpu_dense engine: attributes (its embedded json), CheckSupported, the kernel factory and
// Initialize.
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"

#include "base/ir/node.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "runtime/engines/api/attributes.h"
#include "runtime/engines/cpu_dense/channel_shuffle.h"
#include "runtime/engines/cpu_dense/channel_softmax.h"
#include "runtime/engines/cpu_dense/channels_last_view.h"
#include "runtime/engines/cpu_dense/dense_fused_op.h"
#include "runtime/engines/cpu_dense/group_norm.h"
#include "runtime/engines/cpu_dense/prepared_weights.h"

namespace ge::engine {

absl::Status CpuDenseInfoStore::CheckSupported(const ir::Node& node) const {
  GE_RETURN_IF_ERROR(init_status_);
  return cpu_dense::CheckSupportedNode(table_, node, context_);
}

absl::Status CpuDenseInfoStore::CheckSupportedOp(const ir::OpDesc& op) const {
  GE_RETURN_IF_ERROR(init_status_);
  return cpu_dense::CheckSupported(table_, op, context_);
}

absl::StatusOr<std::unique_ptr<Kernel>> CpuDenseKernelFactory::CreateKernel(const ir::OpDesc& op) const {
  GE_RETURN_IF_ERROR(init_status_);
  const cpu_dense::DenseKernelDef* def = table_.Find(op.type());
  if (def == nullptr) {
    return Unimplemented(kCpuDenseEngineName, " has no kernel for op type ", op.type(), " (node '",
                         op.name(), "')");
  }
  return def->create(op, context_);
}

absl::StatusOr<TaskDef> CpuDenseKernelBuilder::BuildTask(const KernelFactory& factory, std::string_view engine_name,
                                                         PrepareContext& ctx) const {
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, factory.CreateKernel(*ctx.op));
  cpu_dense::PreparedWeights recorded;
  {
    const cpu_dense::PreparedWeights::Scope scope(&recorded);
    GE_RETURN_IF_ERROR(kernel->Prepare(ctx));
  }
  TaskDef task;
  task.engine = std::string(engine_name);
  task.kernel = ctx.op->type();
  task.workspace_bytes = ctx.workspace_bytes;
  if (!recorded.empty()) {
    task.param_version = cpu_dense::kPreparedParamVersion;
    task.params = recorded.Params();
    task.prepared = recorded.Buffers();
  }
  return task;
}

absl::StatusOr<std::unique_ptr<Kernel>> CpuDenseKernelBuilder::LoadKernel(const KernelFactory& factory,
                                                                          const TaskDef& task,
                                                                          PrepareContext& ctx) const {
  if (task.param_version == 0) return KernelBuilder::LoadKernel(factory, task, ctx);
  if (task.param_version != cpu_dense::kPreparedParamVersion) {
    return FailedPrecondition("node '", ctx.op->name(), "': task parameters of version ", task.param_version,
                              " for engine '", task.engine, "', which reads versions 0 and ",
                              cpu_dense::kPreparedParamVersion);
  }
  // The description and buffers come from a .gem (untrusted): checked
  // here, and each buffer again against the layout the kernel computes.
  absl::StatusOr<cpu_dense::PreparedWeights> offered = cpu_dense::PreparedWeights::ForLoad(task.params, task.prepared);
  if (!offered.ok()) return Annotate(offered.status(), StrCat("node '", ctx.op->name(), "'"));
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, factory.CreateKernel(*ctx.op));
  const cpu_dense::PreparedWeights::Scope scope(&*offered);
  GE_RETURN_IF_ERROR(kernel->Prepare(ctx));
  return kernel;
}

namespace {

// Whether oneDNN runs bf16 natively here (AVX512-BF16 or AMX).
bool NativeBf16() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  return (isa & bf16) == bf16;
}

}  // namespace

CpuDenseEngine::CpuDenseEngine()
    : info_store_(table_, context_, init_status_),
      factory_(table_, context_, init_status_),
      optimizer_([this](const ir::OpDesc& op) { return info_store_.CheckSupportedOp(op); }, context_) {
  try {
    context_.engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    context_.bf16 = NativeBf16();
  } catch (const dnnl::error& e) {
    init_status_ = Internal("cpu_dense: oneDNN's CPU engine is unavailable: ", e.what());
  }
  EmbeddedAttributes embedded = ParseEmbeddedAttributes(cpu_dense::kAttributesJson, kCpuDenseEngineName);
  attributes_ = std::move(embedded.attributes);
  attributes_error_ = std::move(embedded.error);
  cpu_dense::RegisterDenseKernels(table_);
}

void CpuDenseEngine::SetReferenceEngine(const Engine* reference) {
  context_.reference = reference == nullptr ? nullptr : &reference->kernel_factory();
}

CpuDenseEngine::~CpuDenseEngine() = default;

absl::Status CpuDenseEngine::Initialize(const EngineOptions& options) {
  (void)options;
  GE_RETURN_IF_ERROR(attributes_error_);
  GE_RETURN_IF_ERROR(init_status_);
  GE_RETURN_IF_ERROR(cpu_dense::RegisterChannelShuffleOp(ops::OpRegistry::Global()));
  GE_RETURN_IF_ERROR(cpu_dense::RegisterChannelsLastViewOp(ops::OpRegistry::Global()));
  GE_RETURN_IF_ERROR(cpu_dense::RegisterGroupNormOp(ops::OpRegistry::Global()));
  GE_RETURN_IF_ERROR(cpu_dense::RegisterChannelSoftmaxOp(ops::OpRegistry::Global()));
  return cpu_dense::RegisterDenseFusedOp(ops::OpRegistry::Global());
}

}  // namespace ge::engine
