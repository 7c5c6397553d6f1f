// Graph helpers for cpu_dense's passes.
#include "runtime/engines/cpu_dense/graph_util.h"

#include <array>

#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::engine::cpu_dense {
namespace {

bool IsStorageView(std::string_view type) {
  static constexpr std::array<std::string_view, 5> kViews = {ir::kIdentity, "Reshape", "Squeeze", "Unsqueeze",
                                                             "Flatten"};
  for (std::string_view v : kViews) {
    if (v == type) return true;
  }
  return false;
}

}  // namespace

const Tensor* ConstInput(const ir::Node& node, int i) {
  if (i >= node.num_inputs()) return nullptr;
  ir::OutPort p = node.input(i);
  // A bounded walk up through views.
  for (int depth = 0; p && depth < 8; ++depth) {
    if (p.node->type() == ir::kConst) {
      const ir::AttrValue* v = p.node->op_desc().FindAttr(ir::kAttrValue);
      return v != nullptr ? v->get<Tensor>() : nullptr;
    }
    if (!IsStorageView(p.node->type()) || p.index != 0 || p.node->num_inputs() < 1) return nullptr;
    p = p.node->input(0);
  }
  return nullptr;
}

bool IsConstInput(const ir::Node& node, int i) { return ConstInput(node, i) != nullptr; }

const ir::InPort* SingleConsumer(const ir::Node& node, int port) {
  const auto& consumers = node.consumers(port);
  return consumers.size() == 1 ? &consumers[0] : nullptr;
}

std::optional<float> ConstScalar(const ir::Node& node, int i) {
  const Tensor* t = ConstInput(node, i);
  if (t == nullptr || t->NumElements() != 1) return std::nullopt;
  if (t->dtype() == DataType::kString || t->dtype() == DataType::kUndefined) return std::nullopt;
  return static_cast<float>(t->GetAsDouble(0));
}

absl::StatusOr<ir::Node*> AddConst(ir::Graph& graph, std::string_view name_prefix, Tensor value) {
  ir::OpDesc op(graph.UniqueNodeName(name_prefix), std::string(ir::kConst));
  op.AddOutput({"", ir::ValueType::Tensor(value.dtype(), value.shape())});
  op.SetAttr(ir::kAttrValue, ir::AttrValue(std::move(value)));
  return graph.AddNode(std::move(op));
}

void RemoveIfUnused(ir::Graph& graph, ir::Node* node) {
  if (node != nullptr && !node->HasConsumers() && node->control_outputs().empty()) {
    graph.RemoveNode(node);
  }
}

void RemoveDeadProducers(ir::Graph& graph, std::vector<std::string> names) {
  while (!names.empty()) {
    ir::Node* p = graph.FindNode(names.back());
    names.pop_back();
    if (p == nullptr || p->HasConsumers() || !p->control_outputs().empty() || p->type() == ir::kData ||
        p->type() == ir::kPlaceHolder || p->type() == ir::kInnerData) {
      continue;
    }
    for (int i = 0; i < p->num_inputs(); ++i) {
      if (p->input(i)) names.push_back(p->input(i).node->name());
    }
    graph.RemoveNode(p);
  }
}

}  // namespace ge::engine::cpu_dense
