// InferShapes: shape inference over a graph and the subgraphs its nodes own.
//
// Nodes are inferred in topological order. Before a node that owns
// subgraphs is inferred, its subgraphs are: their input nodes (Data with
// `_parent_index` or `index`, InnerData with `_parent_index`) first take the
// types of the parent's inputs, so that the parent's own inference (If's
// branch merge, While's loop-carried generalization, PartitionedCall's
// outputs) reads subgraph results computed for these very inputs. While's
// body runs to a fixpoint: a loop-carried value whose type the body changes
// is generalized (dims to -1, rank to unknown) and the body re-inferred.
// The branches of a multi-batch Case (`_multi_batch_case`) keep their own
// input types: each is one gear's static copy of the graph.
#include "base/ops/op_registry.h"

#include "base/ir/op_types.h"
#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

// Generalizing only loses knowledge, so a While body reaches its fixpoint
// after at most one step per dim; past this many steps every loop-carried
// value becomes unknown-rank, which is always a fixpoint.
constexpr int kMaxWhileSteps = 16;

absl::Status InferGraph(ir::Graph& graph, const OpRegistry& registry);

// The types of `node`'s inputs as its producers give them; an undefined
// type for an absent input.
std::vector<ir::ValueType> ParentInputTypes(const ir::Node& node) {
  std::vector<ir::ValueType> types(node.num_inputs());
  for (int i = 0; i < node.num_inputs(); ++i) {
    const ir::OutPort p = node.input(i);
    types[i] = p ? p.node->op_desc().output(p.index).type : node.op_desc().input(i).type;
  }
  return types;
}

absl::StatusOr<ir::Graph*> Subgraph(const ir::Node& parent, const std::string& name) {
  ir::Graph* g = name.empty() ? nullptr : parent.owner_graph()->FindSubgraph(name);
  if (g == nullptr) {
    return InvalidArgument("node '", parent.name(), "' (", parent.type(), "): subgraph '", name,
                           "' not found");
  }
  return g;
}

// Gives the subgraph's input nodes the parent's input types. Data nodes
// without `_parent_index` map `index` to parent input index + offset (If and
// Case skip their condition / branch index).
absl::Status BindSubgraphInputs(const ir::Node& parent, ir::Graph& sub,
                                const std::vector<ir::ValueType>& types, int offset) {
  for (ir::Node* n : sub.nodes()) {
    const bool data = n->type() == ir::kData;
    if (!data && n->type() != ir::kInnerData) continue;
    const ir::OpDesc& op = n->op_desc();
    int64_t index;
    if (auto p = op.GetAttr<int64_t>(ir::kAttrParentIndex)) {
      index = *p;
    } else if (data) {
      index = op.GetAttrOr<int64_t>(ir::kAttrIndex, 0) + offset;
    } else {
      continue;
    }
    if (index < 0 || index >= static_cast<int64_t>(types.size())) {
      return InvalidArgument("subgraph '", sub.name(), "': input node '", n->name(),
                             "' maps to input ", index, " of '", parent.name(), "' (", parent.type(),
                             "), which has ", types.size(), " inputs");
    }
    const ir::ValueType& type = types[index];
    if (type.is_tensor() && type.dtype() == DataType::kUndefined) continue;
    ir::OpDesc& desc = n->mutable_op_desc();
    for (int i = 0; i < desc.num_outputs(); ++i) desc.mutable_output(i).type = type;
    for (int i = 0; i < desc.num_inputs(); ++i) desc.mutable_input(i).type = type;
  }
  return absl::OkStatus();
}

absl::Status BindAndInfer(const ir::Node& parent, const std::string& name,
                          const std::vector<ir::ValueType>& types, int offset,
                          const OpRegistry& registry) {
  GE_ASSIGN_OR_RETURN(ir::Graph * sub, Subgraph(parent, name));
  GE_RETURN_IF_ERROR(BindSubgraphInputs(parent, *sub, types, offset));
  return InferGraph(*sub, registry);
}

// The declared port types of every node of a graph and of the subgraphs
// those nodes own, so that a While body can be re-inferred from scratch.
struct TypeSnapshot {
  std::vector<std::pair<ir::Node*, std::vector<ir::IoDesc>>> inputs, outputs;

  void Take(ir::Graph& graph) {
    for (ir::Node* n : graph.nodes()) {
      inputs.emplace_back(n, n->op_desc().inputs());
      outputs.emplace_back(n, n->op_desc().outputs());
      for (const std::string& name : n->op_desc().subgraph_names()) {
        if (ir::Graph* sub = graph.FindSubgraph(name)) Take(*sub);
      }
    }
  }
  void Restore() const {
    for (const auto& [n, descs] : inputs) n->mutable_op_desc().mutable_inputs() = descs;
    for (const auto& [n, descs] : outputs) n->mutable_op_desc().mutable_outputs() = descs;
  }
};

absl::Status InferWhileSubgraphs(const ir::Node& node, const OpRegistry& registry) {
  const ir::OpDesc& op = node.op_desc();
  GE_ASSIGN_OR_RETURN(ir::Graph * body, Subgraph(node, SubgraphName(op, 1, "body")));
  std::vector<ir::ValueType> loop = ParentInputTypes(node);
  TypeSnapshot snapshot;
  snapshot.Take(*body);
  for (int step = 0;; ++step) {
    if (step > 0) snapshot.Restore();
    if (step == kMaxWhileSteps) {
      for (ir::ValueType& t : loop) t = ir::ValueType::Tensor(t.dtype(), Shape::UnknownRank());
    }
    GE_RETURN_IF_ERROR(BindSubgraphInputs(node, *body, loop, 0));
    GE_RETURN_IF_ERROR(InferGraph(*body, registry));
    GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> results, SubgraphOutputTypes(*body));
    if (results.size() != loop.size()) {
      return InvalidArgument("node '", node.name(), "' (While): body '", body->name(), "' returns ",
                             results.size(), " values for ", loop.size(), " loop-carried inputs");
    }
    std::vector<ir::ValueType> next = loop;
    for (size_t i = 0; i < loop.size(); ++i) {
      if (loop[i].is_tensor() && loop[i].dtype() == DataType::kUndefined) continue;
      auto general = GeneralizeValueTypes(loop[i], results[i]);
      if (!general.ok()) {
        return InvalidArgument("node '", node.name(), "' (While): loop-carried value ", i, ": ",
                               StdView(general.status().message()));
      }
      next[i] = *std::move(general);
    }
    if (next == loop || step >= kMaxWhileSteps) break;
    loop = std::move(next);
  }
  return BindAndInfer(node, SubgraphName(op, 0, "cond"), loop, 0, registry);
}

absl::Status InferSubgraphsOf(const ir::Node& node, const OpRegistry& registry) {
  const ir::OpDesc& op = node.op_desc();
  const std::string& type = op.type();
  if (type == ir::kWhile) return InferWhileSubgraphs(node, registry);
  const std::vector<ir::ValueType> types = ParentInputTypes(node);
  if (type == ir::kIf) {
    GE_RETURN_IF_ERROR(BindAndInfer(node, SubgraphName(op, 0, "then_branch"), types, 1, registry));
    return BindAndInfer(node, SubgraphName(op, 1, "else_branch"), types, 1, registry);
  }
  if (type == ir::kCase) {
    // A multi-batch Case's branches are typed by their gears: the parent
    // passes max-shape values whose run-time shapes are the branch's own.
    const bool keep_types = op.GetAttrOr<bool>(ir::kAttrMultiBatchCase, false);
    for (const std::string& name : SubgraphNames(op, "branches")) {
      if (keep_types) {
        GE_ASSIGN_OR_RETURN(ir::Graph * sub, Subgraph(node, name));
        GE_RETURN_IF_ERROR(InferGraph(*sub, registry));
        continue;
      }
      GE_RETURN_IF_ERROR(BindAndInfer(node, name, types, 1, registry));
    }
    return absl::OkStatus();
  }
  if (type == ir::kPartitionedCall) {
    return BindAndInfer(node, SubgraphName(op, 0, "f"), types, 0, registry);
  }
  // Other owners: infer their subgraphs as they are.
  for (const std::string& name : op.subgraph_names()) {
    GE_ASSIGN_OR_RETURN(ir::Graph * sub, Subgraph(node, name));
    GE_RETURN_IF_ERROR(InferGraph(*sub, registry));
  }
  return absl::OkStatus();
}

// Whether `op` names subgraphs, in subgraph_names() or in graph attributes.
bool OwnsSubgraphs(const ir::OpDesc& op) {
  if (!op.subgraph_names().empty()) return true;
  for (const auto& [name, value] : op.attrs()) {
    if (value.kind() == ir::AttrValue::Kind::kGraph || value.kind() == ir::AttrValue::Kind::kGraphs) {
      return true;
    }
  }
  return false;
}

absl::Status InferGraph(ir::Graph& graph, const OpRegistry& registry) {
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  for (ir::Node* node : order) {
    if (OwnsSubgraphs(node->op_desc())) GE_RETURN_IF_ERROR(InferSubgraphsOf(*node, registry));
    GE_RETURN_IF_ERROR(InferNode(*node, registry));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InferShapes(ir::Graph& graph, const OpRegistry& registry) {
  return InferGraph(graph, registry);
}

}  // namespace ge::ops
