// The checks of a loaded .gem: graphs verified and typed again, the static
// program against its graph, and what a client's .gem may not carry.
#include "runtime/model/gem_verify.h"

#include <algorithm>
#include <set>
#include <string>

#include "base/ir/op_types.h"
#include "base/ir/verifier.h"
#include "base/ops/op_registry.h"
#include "base/options.h"
#include "base/status.h"

namespace ge::runtime {
namespace {

bool SameTensorType(const ir::ValueType& a, const ir::ValueType& b) {
  return a.is_tensor() && b.is_tensor() && a.dtype() == b.dtype() && a.shape() == b.shape();
}

// Const nodes hold a value of their declared type (the typing below trusts
// a Const's declared output as its type).
absl::Status CheckConsts(const ir::Graph& graph) {
  for (const ir::Node* node : graph.nodes()) {
    if (node->type() != ir::kConst) continue;
    auto value = node->op_desc().GetAttr<Tensor>(ir::kAttrValue);
    if (!value) continue;  // the verifier and the op schema refuse a Const without one
    if (node->num_outputs() != 1) return InvalidArgument("Const node '", node->name(), "' has no single output");
    const ir::ValueType& declared = node->op_desc().output(0).type;
    if (!declared.is_tensor() || (declared.dtype() != DataType::kUndefined && declared.dtype() != value->dtype()) ||
        (declared.shape().IsFullyKnown() && declared.shape() != value->shape())) {
      return InvalidArgument("Const node '", node->name(), "' declares ", declared.ToString(), " but holds ",
                             DataTypeName(value->dtype()), value->shape().ToString());
    }
  }
  return absl::OkStatus();
}

// `infer`: also run shape inference over the graph. The partitioned form
// of a multi-batch model keeps each gear branch typed for its gear while
// its root carries the max shapes, so inference over the whole tree would
// refuse a sound file; that form is structure- and Const-checked, and every
// program that runs is checked against the flat graph it came from.
absl::Status VerifyAndType(ir::Graph& graph, const std::string& what, bool infer) {
  GE_RETURN_IF_ERROR(Annotate(ir::VerifyGraph(graph), what));
  GE_RETURN_IF_ERROR(Annotate(CheckConsts(graph), what));
  for (const ir::Graph* sub : graph.subgraphs()) GE_RETURN_IF_ERROR(Annotate(CheckConsts(*sub), what));
  // Inference refines unknown dims and refuses a recorded type that
  // contradicts what the op computes from its inputs.
  if (infer) GE_RETURN_IF_ERROR(Annotate(ops::InferShapes(graph), StrCat(what, ": its recorded types do not check")));
  return absl::OkStatus();
}

// Data and InnerData nodes in StaticProgram::inputs order (the task
// builder's StaticInputNodes).
std::vector<const ir::Node*> ProgramInputNodes(const ir::Graph& graph) {
  std::vector<const ir::Node*> inputs;
  for (const ir::Node* node : graph.nodes()) {
    if (node->type() == ir::kData || node->type() == ir::kInnerData) inputs.push_back(node);
  }
  auto key = [](const ir::Node* n) {
    const ir::OpDesc& op = n->op_desc();
    return op.GetAttrOr<int64_t>(ir::kAttrParentIndex, op.GetAttrOr<int64_t>(ir::kAttrIndex, 0));
  };
  std::stable_sort(inputs.begin(), inputs.end(), [&](const ir::Node* a, const ir::Node* b) { return key(a) < key(b); });
  return inputs;
}

bool IsProgramSource(std::string_view type) {
  return type == ir::kData || type == ir::kInnerData || type == ir::kConst || type == ir::kNetOutput ||
         type == ir::kInnerNetOutput || type == ir::kNoOp || type == ir::kVariable || type == ir::kFileConstant;
}

absl::Status CheckProgramAgainstGraph(const StaticProgram& p, const ir::Graph& graph) {
  const std::vector<const ir::Node*> inputs = ProgramInputNodes(graph);
  if (p.inputs.size() != inputs.size()) {
    return InvalidArgument("the program has ", p.inputs.size(), " inputs; the graph has ", inputs.size(),
                           " Data nodes");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::ValueType& type = inputs[i]->op_desc().output(0).type;
    if (!SameTensorType(p.inputs[i].type, type)) {
      return InvalidArgument("program input ", i, " is ", p.inputs[i].type.ToString(), " but its Data node '",
                             inputs[i]->name(), "' is ", type.ToString());
    }
  }
  const ir::Node* net_output = nullptr;
  for (const ir::Node* node : graph.nodes()) {
    if (node->type() == ir::kNetOutput || node->type() == ir::kInnerNetOutput) net_output = node;
  }
  const int num_outputs = net_output != nullptr ? net_output->num_inputs() : 0;
  if (p.outputs.size() != static_cast<size_t>(num_outputs)) {
    return InvalidArgument("the program has ", p.outputs.size(), " outputs; the graph has ", num_outputs);
  }
  for (int o = 0; o < num_outputs; ++o) {
    const ir::OutPort port = net_output->input(o);
    if (!port) return InvalidArgument("graph output ", o, " is not connected");
    const ir::ValueType& type = port.node->op_desc().output(port.index).type;
    if (!SameTensorType(p.outputs[o].type, type)) {
      return InvalidArgument("program output ", o, " is ", p.outputs[o].type.ToString(), " but the graph's is ",
                             type.ToString());
    }
  }
  for (const StaticWeight& w : p.weights) {
    const ir::Node* node = graph.FindNode(w.node);
    if (node == nullptr || node->type() != ir::kConst || node->num_outputs() != 1 ||
        !SameTensorType(node->op_desc().output(0).type, ir::ValueType::Tensor(w.value.dtype(), w.value.shape()))) {
      return InvalidArgument("weight '", w.node, "' is not a Const node of its type in the graph");
    }
  }
  std::set<std::string> seen;
  for (const StaticTask& task : p.tasks) {
    const ir::Node* node = graph.FindNode(task.op.name());
    if (node == nullptr || IsProgramSource(node->type())) {
      return InvalidArgument("a task names node '", task.op.name(), "', which is not a computing node of the graph");
    }
    if (!seen.insert(task.op.name()).second) {
      return InvalidArgument("node '", task.op.name(), "' has more than one task");
    }
    auto engine = node->op_desc().GetAttr<std::string>(ir::kAttrEngineName);
    if (!engine || *engine != task.def.engine) {
      return InvalidArgument("the task of node '", task.op.name(), "' runs on engine '", task.def.engine,
                             "', but the node is placed on '", engine ? *engine : std::string(), "'");
    }
  }
  return absl::OkStatus();
}

absl::Status NoFileConstants(const ir::Graph& graph, const std::string& what) {
  for (const ir::Node* node : graph.nodes()) {
    if (node->type() == ir::kFileConstant) {
      return InvalidArgument(what, ": node '", node->name(),
                             "' is a FileConstant, which reads a file of the daemon; a .gem sent by a client must "
                             "carry its weights inline (compile it without --external-weight)");
    }
  }
  return absl::OkStatus();
}

}  // namespace

// The option table's operator-only keys (paths and files of the host).
bool IsPathOption(std::string_view key) {
  const OptionSpec* spec = FindOptionSpec(key);
  return spec != nullptr && spec->operator_only;
}

absl::Status VerifyModelGraphs(CompiledModel& model) {
  if (model.graph == nullptr) return InvalidArgument("no graph");
  GE_RETURN_IF_ERROR(VerifyAndType(*model.graph, "the graph", /*infer=*/true));
  if (model.partitioned != nullptr) {
    GE_RETURN_IF_ERROR(VerifyAndType(*model.partitioned, "the partitioned graph", /*infer=*/false));
  }
  return absl::OkStatus();
}

absl::Status VerifyModelProgram(const CompiledModel& model) {
  if (!model.program) return absl::OkStatus();
  if (model.graph == nullptr) return InvalidArgument("no graph");
  return Annotate(CheckProgramAgainstGraph(*model.program, *model.graph), "the static program");
}

absl::Status VerifyLoadedModel(CompiledModel& model) {
  GE_RETURN_IF_ERROR(VerifyModelGraphs(model));
  return VerifyModelProgram(model);
}

absl::Status CheckClientModel(const CompiledModel& model) {
  for (const auto& [key, value] : model.options) {
    if (IsPathOption(key)) {
      return InvalidArgument("option ", key,
                             " names a path or file of the daemon, which a .gem sent by a client "
                             "may not carry (the operator sets it)");
    }
  }
  GE_RETURN_IF_ERROR(Annotate(ValidateOptions(model.options), "the options of the .gem"));
  for (const ir::Graph* g : {model.graph.get(), model.partitioned.get()}) {
    if (g == nullptr) continue;
    GE_RETURN_IF_ERROR(NoFileConstants(*g, StrCat("graph '", g->name(), "'")));
    for (const ir::Graph* sub : g->subgraphs())
      GE_RETURN_IF_ERROR(NoFileConstants(*sub, StrCat("subgraph '", sub->name(), "'")));
  }
  return absl::OkStatus();
}

}  // namespace ge::runtime
