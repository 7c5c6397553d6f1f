// control_flow: kernel table, support checks and the engine's option.
#include "runtime/engines/control_flow/control_flow_engine.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "base/ir/node.h"
#include "base/status.h"
#include "runtime/engines/api/attributes.h"

namespace ge::engine {
namespace control_flow {

const std::vector<KernelEntry>& KernelTable() {
  static const std::vector<KernelEntry>* table = new std::vector<KernelEntry>{
      {"Case", CreateCaseKernel},
      {"GearIndex", CreateGearIndexKernel},
      {"If", CreateIfKernel},
      {"LoopAccumulatorAppend", CreateAccumulatorAppendKernel},
      {"LoopAccumulatorConcat", CreateAccumulatorConcatKernel},
      {"LoopAccumulatorInit", CreateAccumulatorInitKernel},
      {"LoopAccumulatorStack", CreateAccumulatorStackKernel},
      {"PartitionedCall", CreatePartitionedCallKernel},
      {"SequenceMap", CreateSequenceMapKernel},
      {"While", CreateWhileKernel},
  };
  return *table;
}

namespace {

const KernelEntry* FindKernel(std::string_view type) {
  for (const KernelEntry& e : KernelTable()) {
    if (e.op_type == type) return &e;
  }
  return nullptr;
}

}  // namespace
}  // namespace control_flow

class ControlFlowEngine::InfoStore final : public OpsKernelInfoStore {
 public:
  absl::Status CheckSupported(const ir::Node& node) const override {
    if (control_flow::FindKernel(node.type()) != nullptr) return absl::OkStatus();
    return Unimplemented("control_flow has no kernel for op type ", node.type());
  }
  std::vector<std::string> SupportedOpTypes() const override {
    std::vector<std::string> out;
    for (const control_flow::KernelEntry& e : control_flow::KernelTable()) out.emplace_back(e.op_type);
    return out;
  }
};

class ControlFlowEngine::Factory final : public KernelFactory {
 public:
  explicit Factory(const control_flow::KernelOptions& options) : options_(options) {}
  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc& op) const override {
    const control_flow::KernelEntry* entry = control_flow::FindKernel(op.type());
    if (entry == nullptr) {
      return Unimplemented("control_flow has no kernel for op type ", op.type(), " (node '", op.name(), "')");
    }
    return entry->create(op, options_);
  }

 private:
  const control_flow::KernelOptions& options_;
};

ControlFlowEngine::ControlFlowEngine()
    : info_store_(std::make_unique<InfoStore>()), factory_(std::make_unique<Factory>(kernel_options_)) {
  EmbeddedAttributes embedded = ParseEmbeddedAttributes(control_flow::kAttributesJson, "control_flow");
  attributes_ = std::move(embedded.attributes);
  attributes_error_ = std::move(embedded.error);
}

ControlFlowEngine::~ControlFlowEngine() = default;

absl::Status ControlFlowEngine::Initialize(const EngineOptions& options) {
  GE_RETURN_IF_ERROR(attributes_error_);
  if (auto source = options.find(control_flow::kOptionMaxLoopIterationsSource); source != options.end()) {
    kernel_options_.max_loop_iterations_source = source->second;
  }
  auto it = options.find(control_flow::kOptionMaxLoopIterations);
  if (it == options.end() || it->second.empty()) return absl::OkStatus();
  int64_t cap = 0;
  if (!absl::SimpleAtoi(AbslView(it->second), &cap) || cap < -1) {
    return InvalidArgument("option ", control_flow::kOptionMaxLoopIterations, ": expected an integer >= -1 (-1: no cap), got '",
                           it->second, "'");
  }
  kernel_options_.max_loop_iterations = cap;
  return absl::OkStatus();
}

const OpsKernelInfoStore& ControlFlowEngine::info_store() const { return *info_store_; }
const KernelFactory& ControlFlowEngine::kernel_factory() const { return *factory_; }

}  // namespace ge::engine
