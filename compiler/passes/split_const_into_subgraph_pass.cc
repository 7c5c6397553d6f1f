// SplitConstIntoSubgraphPass: Consts inside subgraphs for small constants
// passed in from the owner.
#include "compiler/passes/split_const_into_subgraph_pass.h"

#include <optional>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_util.h"

namespace ge::compiler {
namespace {

// The owner input a subgraph input node takes.
int64_t ParentIndexOf(const ir::Node& input, int offset) {
  const ir::OpDesc& op = input.op_desc();
  if (auto p = op.GetAttr<int64_t>(ir::kAttrParentIndex)) return *p;
  if (input.type() == ir::kData) return op.GetAttrOr<int64_t>(ir::kAttrIndex, 0) + offset;
  return -1;
}

// A While body changes input `i` unless its output i is that input itself.
bool PassesThrough(const ir::Graph& body, const ir::Node& input, int64_t i) {
  const ir::Node* out = body.OutputNode();
  if (out == nullptr || i >= out->num_inputs()) return false;
  return out->input(static_cast<int>(i)).node == &input;
}

// Whether `node` is a Const small enough to copy into subgraphs.
bool SmallConstant(const ir::Node& node) {
  if (node.type() != ir::kConst || node.num_outputs() != 1) return false;
  std::optional<Tensor> value = node.op_desc().GetAttr<Tensor>(ir::kAttrValue);
  return value && value->dtype() != DataType::kString && value->SizeInBytes() <= SplitConstIntoSubgraphPass::kMaxBytes;
}

absl::StatusOr<bool> SplitInto(ir::Graph& sub, const ir::Node& owner, const ir::Node& constant, int64_t index,
                               int offset) {
  bool changed = false;
  std::vector<ir::Node*> inputs;
  for (ir::Node* input : sub.nodes()) {
    if ((input->type() != ir::kData && input->type() != ir::kInnerData) || ParentIndexOf(*input, offset) != index) {
      continue;
    }
    inputs.push_back(input);
  }
  for (ir::Node* input : inputs) {
    const bool is_while = owner.type() == ir::kWhile;
    if (is_while && !PassesThrough(sub, *input, index)) continue;
    std::vector<ir::InPort> uses;
    for (const ir::InPort& use : input->consumers(0)) {
      if (!(is_while && use.node == sub.OutputNode())) uses.push_back(use);
    }
    if (uses.empty()) continue;
    ir::OpDesc copy(sub.UniqueNodeName(StrCat(constant.name(), "_in_", sub.name())), std::string(ir::kConst));
    for (const auto& [k, v] : constant.op_desc().attrs()) copy.SetAttr(k, v);
    copy.AddOutput(constant.op_desc().output(0));
    GE_ASSIGN_OR_RETURN(ir::Node * node, sub.AddNode(std::move(copy)));
    for (const ir::InPort& use : uses) {
      sub.RemoveInputEdge(use.node, use.index);
      GE_RETURN_IF_ERROR(sub.AddEdge(node, 0, use.node, use.index));
    }
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> SplitConstIntoSubgraphPass::Run(ir::Graph& root) {
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    for (ir::Node* owner : graph->nodes()) {
      if (owner->op_desc().subgraph_names().empty()) continue;
      const int offset = (owner->type() == ir::kIf || owner->type() == ir::kCase) ? 1 : 0;
      for (int i = 0; i < owner->num_inputs(); ++i) {
        ir::OutPort p = owner->input(i);
        if (!p || !SmallConstant(*p.node)) continue;
        for (const std::string& name : owner->op_desc().subgraph_names()) {
          ir::Graph* sub = root.FindSubgraph(name);
          if (sub == nullptr) return InvalidArgument("node '", owner->name(), "': subgraph '", name, "' not found");
          GE_ASSIGN_OR_RETURN(bool done, SplitInto(*sub, *owner, *p.node, i, offset));
          changed = changed || done;
        }
      }
    }
  }
  return changed;
}

}  // namespace ge::compiler
