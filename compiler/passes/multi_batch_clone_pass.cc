// MultiBatchClonePass: CollectIoNodes, CreateRootGraph, CreateSubgraphs,
// PruneDirectOutput.
#include "compiler/passes/multi_batch_clone_pass.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/ops/gear_index.h"
#include "base/status.h"

namespace ge::compiler {
namespace {

struct IoNodes {
  std::vector<ir::Node*> data;  // by index
  ir::Node* net_output = nullptr;
  // NetOutput inputs fed by a Data node directly (PruneDirectOutput).
  std::vector<bool> direct;
};

std::string InputName(const ir::Node& data) {
  const std::string& framework = data.op_desc().output(0).name;
  return framework.empty() ? data.name() : framework;
}

// Gives a Data node a new shape, on its declared type and its shape attribute.
void SetDataShape(ir::Node& data, const Shape& shape) {
  ir::OpDesc& op = data.mutable_op_desc();
  for (int i = 0; i < op.num_outputs(); ++i) {
    if (op.output(i).type.is_tensor()) op.mutable_output(i).type.mutable_tensor().shape = shape;
  }
  for (int i = 0; i < op.num_inputs(); ++i) {
    if (op.input(i).type.is_tensor()) op.mutable_input(i).type.mutable_tensor().shape = shape;
  }
  if (op.HasAttr("shape")) op.SetAttr("shape", shape);
}

absl::StatusOr<IoNodes> CollectIoNodes(const ir::Graph& root) {
  IoNodes io;
  io.data = root.InputNodes();
  io.net_output = root.OutputNode();
  if (io.data.empty()) return InvalidArgument("gears need graph inputs; graph '", root.name(), "' has none");
  if (io.net_output == nullptr) return InvalidArgument("graph '", root.name(), "' has no NetOutput");
  for (size_t i = 0; i < io.data.size(); ++i) {
    const ir::ValueType& type = io.data[i]->op_desc().output(0).type;
    if (!type.is_tensor()) {
      return InvalidArgument("gears need tensor inputs; input '", InputName(*io.data[i]), "' is ", type.ToString());
    }
    if (io.data[i]->op_desc().GetAttrOr<int64_t>(ir::kAttrIndex, 0) != static_cast<int64_t>(i)) {
      return InvalidArgument("gears need Data indices 0..n-1; '", io.data[i]->name(), "' has another");
    }
  }
  for (int k = 0; k < io.net_output->num_inputs(); ++k) {
    const ir::OutPort p = io.net_output->input(k);
    io.direct.push_back(p && p.node->type() == ir::kData);
  }
  for (const ir::Node* n : root.nodes()) {
    if (!n->op_desc().subgraph_names().empty()) {
      return Unimplemented("gears: node '", n->name(), "' (", n->type(),
                           ") owns subgraphs, and graphs with control flow cannot be cloned per gear yet");
    }
  }
  return io;
}

// A copy of the root's nodes and edges as subgraph `name`, its Data nodes
// shaped `shapes` and its NetOutput without the pruned outputs.
absl::StatusOr<std::unique_ptr<ir::Graph>> CloneBranch(const ir::Graph& root, const IoNodes& io,
                                                        const std::string& name, const std::vector<Shape>& shapes) {
  auto branch = std::make_unique<ir::Graph>(name);
  branch->mutable_attrs() = root.attrs();
  absl::flat_hash_map<const ir::Node*, ir::Node*> copies;
  for (const ir::Node* n : root.nodes()) {
    ir::OpDesc op = n->op_desc();
    if (n == io.net_output) {
      op.mutable_inputs().clear();
      for (int k = 0; k < n->num_inputs(); ++k) {
        if (!io.direct[k]) op.AddInput(n->op_desc().input(k));
      }
    }
    GE_ASSIGN_OR_RETURN(ir::Node * copy, branch->AddNode(std::move(op)));
    copies[n] = copy;
  }
  for (size_t i = 0; i < io.data.size(); ++i) SetDataShape(*copies[io.data[i]], shapes[i]);
  for (const ir::Node* n : root.nodes()) {
    ir::Node* dst = copies[n];
    int port = 0;
    for (int k = 0; k < n->num_inputs(); ++k) {
      if (n == io.net_output && io.direct[k]) continue;
      const ir::OutPort p = n->input(k);
      if (p) GE_RETURN_IF_ERROR(branch->AddEdge(copies[p.node], p.index, dst, port));
      ++port;
    }
    for (ir::Node* c : n->control_inputs()) GE_RETURN_IF_ERROR(branch->AddControlEdge(copies[c], dst));
  }
  return branch;
}

}  // namespace

absl::StatusOr<bool> MultiBatchClonePass::Run(ir::Graph& root) {
  if (!options_.enabled() && options_.input_shapes.empty()) return false;
  std::vector<GraphInput> inputs;
  for (const ir::Node* data : root.InputNodes()) {
    const ir::ValueType& type = data->op_desc().output(0).type;
    inputs.push_back({InputName(*data), type.is_tensor() ? type.shape() : Shape::UnknownRank()});
  }
  // --input_shape also matches the node's own name.
  GearOptions options = options_;
  for (InputShapeOption& opt : options.input_shapes) {
    for (const ir::Node* data : root.InputNodes()) {
      if (data->name() == opt.name) opt.name = InputName(*data);
    }
  }
  GE_ASSIGN_OR_RETURN(ResolvedGears gears, ResolveGears(options, inputs));
  if (!options.enabled()) {
    std::vector<ir::Node*> data = root.InputNodes();
    for (size_t i = 0; i < data.size(); ++i) SetDataShape(*data[i], gears.user_shapes[i]);
    return true;
  }
  GE_ASSIGN_OR_RETURN(IoNodes io, CollectIoNodes(root));

  // CreateSubgraphs: the clones, taken before the root changes.
  std::vector<std::unique_ptr<ir::Graph>> branches;
  for (size_t g = 0; g < gears.shapes.size(); ++g) {
    GE_ASSIGN_OR_RETURN(auto branch, CloneBranch(root, io, StrCat(root.name(), "_gear_", g), gears.shapes[g]));
    branches.push_back(std::move(branch));
  }
  if (options.hybrid) {
    GE_ASSIGN_OR_RETURN(auto branch, CloneBranch(root, io, StrCat(root.name(), "_dynamic"), gears.user_shapes));
    branches.push_back(std::move(branch));
  }

  // CreateRootGraph: keep the Data nodes (max shapes) and the NetOutput,
  // drop everything else, add GearIndex and Case.
  absl::flat_hash_set<const ir::Node*> keep(io.data.begin(), io.data.end());
  keep.insert(io.net_output);
  for (ir::Node* n : root.nodes()) {
    if (!keep.contains(n)) root.RemoveNode(n);
  }
  for (size_t i = 0; i < io.data.size(); ++i) {
    SetDataShape(*io.data[i], gears.max_shapes[i]);
    io.data[i]->mutable_op_desc().SetAttr(ir::kAttrUserShape, gears.user_shapes[i]);
  }

  ops::GearTable table;
  table.num_inputs = static_cast<int>(io.data.size());
  table.gears = gears.shapes;
  table.labels = gears.labels;
  table.option = options.OptionName();
  table.fallback_branch = options.hybrid ? static_cast<int64_t>(gears.shapes.size()) : -1;
  ir::OpDesc index_op(root.UniqueNodeName("gear_index"), std::string(ops::kGearIndex));
  for (const ir::Node* data : io.data) index_op.AddInput({"", data->op_desc().output(0).type});
  index_op.AddOutput({"", ir::ValueType::Tensor(DataType::kInt32, Shape())});
  table.ToOpDesc(index_op);
  index_op.SetAttr(ir::kAttrForceUnknownShape, true);
  GE_ASSIGN_OR_RETURN(ir::Node * index, root.AddNode(std::move(index_op)));

  ir::OpDesc case_op(root.UniqueNodeName("gear_case"), std::string(ir::kCase));
  case_op.AddInput({"branch_index", ir::ValueType::Tensor(DataType::kInt32, Shape())});
  for (const ir::Node* data : io.data) case_op.AddInput({"", data->op_desc().output(0).type});
  for (int k = 0; k < io.net_output->num_inputs(); ++k) {
    if (!io.direct[k]) case_op.AddOutput({io.net_output->op_desc().input(k).name, ir::ValueType()});
  }
  std::vector<ir::GraphRef> refs;
  for (const auto& b : branches) {
    refs.push_back({b->name()});
    case_op.mutable_subgraph_names().push_back(b->name());
  }
  case_op.SetAttr("branches", std::move(refs));
  case_op.SetAttr(ir::kAttrMultiBatchCase, true);
  case_op.SetAttr(ir::kAttrForceUnknownShape, true);
  GE_ASSIGN_OR_RETURN(ir::Node * case_node, root.AddNode(std::move(case_op)));

  for (size_t i = 0; i < io.data.size(); ++i) {
    GE_RETURN_IF_ERROR(root.AddEdge(io.data[i], 0, index, static_cast<int>(i)));
    GE_RETURN_IF_ERROR(root.AddEdge(io.data[i], 0, case_node, static_cast<int>(i) + 1));
  }
  GE_RETURN_IF_ERROR(root.AddEdge(index, 0, case_node, 0));
  // PruneDirectOutput: outputs that are inputs keep their Data producer.
  int case_output = 0;
  for (int k = 0; k < io.net_output->num_inputs(); ++k) {
    if (io.direct[k]) continue;
    root.RemoveInputEdge(io.net_output, k);
    GE_RETURN_IF_ERROR(root.AddEdge(case_node, case_output++, io.net_output, k));
  }
  for (auto& b : branches) GE_RETURN_IF_ERROR(root.AddSubgraph(std::move(b), case_node).status());
  GE_LOG_INFO("compiler", "graph '{}': {} gears of {} ({}){}", root.name(), gears.shapes.size(), options.OptionName(),
              table.GearList(), options.hybrid ? ", with the dynamic graph for other shapes" : "");
  return true;
}

}  // namespace ge::compiler
