// Graph helpers of cpu_fused's fusion passes.
#include "runtime/engines/cpu_fused/fusion_util.h"

#include <string>

#include "base/ir/op_types.h"

namespace ge::engine::cpu_fused {
namespace {

constexpr std::string_view kEngineName = "cpu_fused";
// The partitioner's stream label (compiler/partition/partition_attrs.h),
// which engines cannot include: fused nodes keep the label of the nodes
// they replace so that they stay in the same stream.
constexpr std::string_view kAttrStreamLabel = "_stream_label";

}  // namespace

const ir::ValueType& TypeAt(const ir::OutPort& port) { return port.node->op_desc().output(port.index).type; }

bool Absorbable(const ir::Node& node, bool single_use) {
  const std::string& type = node.type();
  if (type == ir::kPlaceHolder || type == ir::kEnd || type == ir::kData || type == ir::kNetOutput) return false;
  const ir::OpDesc& op = node.op_desc();
  if (op.FindAttr(ir::kAttrEngine) != nullptr || op.FindAttr(ir::kAttrHostExec) != nullptr) return false;
  if (!node.control_inputs().empty() || !node.control_outputs().empty() || node.num_outputs() != 1) return false;
  return !single_use || node.consumers(0).size() == 1;
}

const ir::InPort* SingleConsumer(const ir::Node& node, int port) {
  const auto& consumers = node.consumers(port);
  return consumers.size() == 1 ? &consumers[0] : nullptr;
}

bool IsStaticFloat(const ir::ValueType& type) {
  return type.is_tensor() && type.dtype() == DataType::kFloat && type.shape().IsFullyKnown();
}

std::optional<int64_t> StaticElements(const ir::ValueType& type) {
  if (!type.is_tensor() || !type.shape().IsFullyKnown()) return std::nullopt;
  return type.shape().NumElementsUnchecked();
}

void SetFusedNodeAttrs(const ir::Node& replaced, ir::OpDesc& fused) {
  fused.SetAttr(ir::kAttrEngineName, std::string(kEngineName));
  if (const ir::AttrValue* label = replaced.op_desc().FindAttr(kAttrStreamLabel)) {
    fused.SetAttr(kAttrStreamLabel, *label);
  }
}

}  // namespace ge::engine::cpu_fused
