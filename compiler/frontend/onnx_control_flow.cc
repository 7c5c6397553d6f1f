// Loop and Scan -> While (see onnx_control_flow.h for the forms). The ONNX
// body becomes the While body in place: its Data nodes are renumbered to
// the While's loop-carried order, new Data nodes and the counter / gather /
// accumulate nodes are added, and its NetOutput is rebuilt. Everything is
// typed loosely (new outputs undefined): compile-time shape inference types
// the While with its loop-carried generalization.
#include "compiler/frontend/onnx_control_flow.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/frontend/onnx_importer.h"

namespace ge::frontend {
namespace {

using ir::Graph;
using ir::Node;
using ir::OutPort;
using ir::ValueType;

// Copies of function-local constants: building them from a temporary Shape
// trips GCC 12's -Wuninitialized on absl::InlinedVector's move.
ValueType I64Scalar() {
  static const ValueType* type = new ValueType(ir::TensorDesc(DataType::kInt64, Shape()));
  return *type;
}
ValueType BoolScalar() {
  static const ValueType* type = new ValueType(ir::TensorDesc(DataType::kBool, Shape()));
  return *type;
}
ValueType SequenceOf(DataType dtype) { return ValueType::Sequence(ValueType::Tensor(dtype, Shape::UnknownRank())); }

// `type` with every shape made unknown: the kind and dtype a loop-carried
// value keeps, leaving its shapes to compile-time inference.
ValueType Loosened(const ValueType& type) {
  switch (type.kind()) {
    case ValueType::Kind::kTensor:
      return type.dtype() == DataType::kUndefined ? ValueType() : ValueType::Tensor(type.dtype(), Shape::UnknownRank());
    case ValueType::Kind::kSequence:
      return ValueType::Sequence(Loosened(*type.element()));
    case ValueType::Kind::kOptional:
      return ValueType::Optional(Loosened(*type.element()));
  }
  return ValueType();
}

std::string Label(const Node& node) { return StrCat("node '", node.name(), "' (", node.type(), ")"); }

// Adds a node of `type` named after `prefix`, fed by `inputs` (each input
// typed like its producer), with outputs of `output_types`.
absl::StatusOr<Node*> Emit(Graph& g, std::string_view prefix, std::string_view type,
                           const std::vector<OutPort>& inputs, std::vector<ValueType> output_types,
                           ir::AttrMap attrs = {}) {
  ir::OpDesc op(g.UniqueNodeName(prefix), std::string(type));
  for (const OutPort& in : inputs) op.AddInput({"", in.node->op_desc().output(in.index).type});
  for (ValueType& t : output_types) op.AddOutput({"", std::move(t)});
  for (auto& [name, value] : attrs) op.SetAttr(name, std::move(value));
  GE_ASSIGN_OR_RETURN(Node * node, g.AddNode(std::move(op)));
  for (size_t i = 0; i < inputs.size(); ++i) {
    GE_RETURN_IF_ERROR(g.AddEdge(inputs[i].node, inputs[i].index, node, static_cast<int>(i)));
  }
  return node;
}

absl::StatusOr<OutPort> EmitConst(Graph& g, std::string_view prefix, Tensor value) {
  ValueType type = ValueType::Tensor(value.dtype(), value.shape());
  GE_ASSIGN_OR_RETURN(Node * n, Emit(g, prefix, ir::kConst, {}, {type}, {{std::string(ir::kAttrValue), value}}));
  return OutPort{n, 0};
}

absl::StatusOr<OutPort> EmitData(Graph& g, std::string_view prefix, int64_t index, ValueType type) {
  GE_ASSIGN_OR_RETURN(Node * n, Emit(g, prefix, ir::kData, {}, {std::move(type)},
                                     {{std::string(ir::kAttrIndex), index}}));
  return OutPort{n, 0};
}

absl::StatusOr<OutPort> Emit1(Graph& g, std::string_view prefix, std::string_view type,
                              const std::vector<OutPort>& inputs, ValueType output = {}, ir::AttrMap attrs = {}) {
  GE_ASSIGN_OR_RETURN(Node * n, Emit(g, prefix, type, inputs, {std::move(output)}, std::move(attrs)));
  return OutPort{n, 0};
}

std::string UniqueSubgraphName(const Graph& g, const std::string& base) {
  const Graph* root = g.root();
  std::string name = base;
  for (int k = 1; root->FindSubgraph(name) != nullptr || name == root->name(); ++k) name = StrCat(base, "_", k);
  return name;
}

// The ONNX body of a Loop / Scan: its Data nodes by index, its NetOutput and
// what feeds it.
struct Body {
  Graph* graph = nullptr;
  std::vector<Node*> data;
  Node* output = nullptr;
  std::vector<OutPort> results;
  std::vector<std::string> result_names;

  absl::Status ReadResults(const Node& owner) {
    results.clear();
    result_names.clear();
    for (int i = 0; i < output->num_inputs(); ++i) {
      if (!output->input(i)) {
        return InvalidArgument(Label(owner), ": output ", i, " of body '", graph->name(), "' is not produced");
      }
      results.push_back(output->input(i));
      result_names.push_back(output->op_desc().input(i).name);
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<Body> ReadBody(const Node& node, size_t expected_inputs) {
  std::string name;
  if (auto ref = node.op_desc().GetAttr<ir::GraphRef>("body")) {
    name = ref->name;
  } else if (!node.op_desc().subgraph_names().empty()) {
    name = node.op_desc().subgraph_names()[0];
  }
  Body body;
  body.graph = node.owner_graph()->FindSubgraph(name);
  if (body.graph == nullptr) return InvalidArgument(Label(node), ": body subgraph '", name, "' not found");
  body.data = body.graph->InputNodes();
  if (body.data.size() != expected_inputs) {
    return InvalidArgument(Label(node), ": body '", name, "' has ", body.data.size(), " inputs, expected ",
                           expected_inputs, " (formal inputs and captures)");
  }
  body.output = body.graph->OutputNode();
  if (body.output == nullptr) return InvalidArgument(Label(node), ": body '", name, "' has no NetOutput");
  GE_RETURN_IF_ERROR(body.ReadResults(node));
  return body;
}

// Renumbers the body's existing Data nodes from `first` on by `shift`.
void ShiftDataIndices(Body& body, size_t first, int64_t shift) {
  for (size_t i = first; i < body.data.size(); ++i) {
    body.data[i]->mutable_op_desc().SetAttr(ir::kAttrIndex, static_cast<int64_t>(i) + shift);
  }
}

// Replaces the body's NetOutput by one returning `results`.
absl::Status RebuildOutput(Body& body, const std::vector<OutPort>& results, const std::vector<std::string>& names) {
  const std::string name = body.output->name();
  body.graph->RemoveNode(body.output);
  GE_ASSIGN_OR_RETURN(body.output, Emit(*body.graph, name, ir::kNetOutput, results, {}));
  for (size_t i = 0; i < names.size() && i < results.size(); ++i) {
    body.output->mutable_op_desc().mutable_input(static_cast<int>(i)).name = names[i];
  }
  return absl::OkStatus();
}

// The dtype a scan output accumulates: the body's result type, else the
// ONNX node's declared output type.
absl::StatusOr<DataType> ScanDtype(const Node& node, const OutPort& result, int output, int k) {
  const ValueType& t = result.node->op_desc().output(result.index).type;
  if (t.is_tensor() && t.dtype() != DataType::kUndefined) return t.dtype();
  if (output < node.num_outputs()) {
    const ValueType& declared = node.op_desc().output(output).type;
    if (declared.is_tensor() && declared.dtype() != DataType::kUndefined) return declared.dtype();
  }
  return InvalidArgument(Label(node), ": the dtype of scan output ", k,
                         " is unknown (declare the output's type or keep ONNX shape inference on)");
}

// One LoopAccumulatorInit per scan output, before the loop.
absl::StatusOr<std::vector<OutPort>> EmitAccumulators(Graph& g, const Node& node, const Body& body, int first_result,
                                                      int first_output, int count) {
  std::vector<OutPort> accs;
  for (int k = 0; k < count; ++k) {
    GE_ASSIGN_OR_RETURN(DataType dtype, ScanDtype(node, body.results[first_result + k], first_output + k, k));
    GE_ASSIGN_OR_RETURN(OutPort acc, Emit1(g, StrCat(node.name(), "/acc_init"), "LoopAccumulatorInit", {},
                                           SequenceOf(dtype), {{"dtype", static_cast<int64_t>(dtype)}}));
    accs.push_back(acc);
  }
  return accs;
}

// Body side of the accumulators: a Data node per accumulator (indices from
// `first_index`) and an Append of scan result k to it.
absl::StatusOr<std::vector<OutPort>> EmitAppends(Body& body, const std::vector<OutPort>& accs, int64_t first_index,
                                                 int first_result) {
  std::vector<OutPort> appended;
  for (size_t k = 0; k < accs.size(); ++k) {
    const ValueType& type = accs[k].node->op_desc().output(0).type;
    GE_ASSIGN_OR_RETURN(OutPort data, EmitData(*body.graph, "acc", first_index + static_cast<int64_t>(k), type));
    GE_ASSIGN_OR_RETURN(OutPort app, Emit1(*body.graph, "acc_append", "LoopAccumulatorAppend",
                                           {data, body.results[first_result + k]}, type));
    appended.push_back(app);
  }
  return appended;
}

// The control_flow engine's While attributes (its kAttrCondReads and
// kAttrCondCounter): the cond subgraph reads only the first N loop-carried
// values, so an iteration copies no others (an accumulator) into the cond's
// inputs; and it computes `value[a] < value[b]` (and `value[c]` when c >= 0)
// for [a, b, c], which the kernel then evaluates without running it.
constexpr std::string_view kAttrCondReads = "_cond_reads";
constexpr std::string_view kAttrCondCounter = "_cond_counter";

// Replaces `node` by a While of the same name over `inputs`, owning `cond`
// (which reads the first `cond_reads` values and computes `cond_counter`)
// and the (edited) ONNX body.
absl::StatusOr<Node*> EmitWhile(Graph& g, Node* node, const std::vector<OutPort>& inputs, Graph* body,
                                std::unique_ptr<Graph> cond, int64_t cond_reads, std::vector<int64_t> cond_counter) {
  const std::string name = node->name();
  GE_RETURN_IF_ERROR(g.RenameNode(node, g.UniqueNodeName(StrCat(name, "/onnx"))));
  ir::AttrMap attrs = {{"cond", ir::GraphRef{cond->name()}},
                       {"body", ir::GraphRef{body->name()}},
                       {std::string(kAttrCondReads), cond_reads},
                       {std::string(kAttrCondCounter), std::move(cond_counter)}};
  for (const auto& [key, value] : node->op_desc().attrs()) {
    if (key.rfind('_', 0) == 0 && key != kAttrOnnxNumCaptures) attrs[key] = value;
  }
  std::vector<ValueType> output_types;
  for (const OutPort& in : inputs) output_types.push_back(Loosened(in.node->op_desc().output(in.index).type));
  GE_ASSIGN_OR_RETURN(Node * w, Emit(g, name, ir::kWhile, inputs, std::move(output_types), attrs));
  w->mutable_op_desc().mutable_subgraph_names() = {cond->name(), body->name()};
  body->SetParent(&g, w);
  GE_RETURN_IF_ERROR(g.AddSubgraph(std::move(cond), w).status());
  return w;
}

// Scan output k: LoopAccumulatorStack of the While's accumulator, used
// where the ONNX node's output was.
absl::Status EmitStack(Graph& g, Node* node, int output, Node* w, int acc_port, const OutPort& result,
                       ir::AttrMap attrs) {
  if (output >= node->num_outputs()) return absl::OkStatus();  // an unused trailing output
  const Shape& element = result.node->op_desc().output(result.index).type.shape();
  if (element.IsFullyKnown()) attrs["element_shape"] = element;
  GE_ASSIGN_OR_RETURN(Node * stack, Emit(g, StrCat(w->name(), "/stack"), "LoopAccumulatorStack",
                                         {OutPort{w, acc_port}}, {ValueType()}, std::move(attrs)));
  stack->mutable_op_desc().mutable_output(0).name = node->op_desc().output(output).name;
  return g.ReplaceAllUses(node, output, stack, 0);
}

// A loop-carried value entering as an optional but declared as its content
// on the ONNX node's output (the body always returns a value) leaves the
// While through OptionalGetElement.
absl::Status MoveOutput(Graph& g, Node* node, int output, Node* w, int port) {
  if (output >= node->num_outputs()) return absl::OkStatus();
  const ValueType& declared = node->op_desc().output(output).type;
  const bool unwrap = w->op_desc().output(port).type.kind() == ValueType::Kind::kOptional &&
                      declared.kind() != ValueType::Kind::kOptional &&
                      (!declared.is_tensor() || declared.dtype() != DataType::kUndefined);
  if (!unwrap) {
    w->mutable_op_desc().mutable_output(port).name = node->op_desc().output(output).name;
    return g.ReplaceAllUses(node, output, w, port);
  }
  GE_ASSIGN_OR_RETURN(Node * get, Emit(g, StrCat(w->name(), "/get"), "OptionalGetElement", {OutPort{w, port}},
                                       {Loosened(declared)}));
  get->mutable_op_desc().mutable_output(0).name = node->op_desc().output(output).name;
  return g.ReplaceAllUses(node, output, get, 0);
}

absl::StatusOr<OutPort> RequireInput(const Node& node, int i, std::string_view what) {
  if (i >= node.num_inputs() || !node.input(i)) {
    return InvalidArgument(Label(node), ": ", what, " (input ", i, ") is absent; ged cannot lower that");
  }
  return node.input(i);
}

// ---- Loop ----

absl::StatusOr<std::unique_ptr<Graph>> BuildLoopCond(const Graph& g, const std::string& loop_name) {
  auto cond = std::make_unique<Graph>(UniqueSubgraphName(g, StrCat(loop_name, "_cond")));
  GE_ASSIGN_OR_RETURN(OutPort iter, EmitData(*cond, "iter", 0, I64Scalar()));
  GE_ASSIGN_OR_RETURN(OutPort go, EmitData(*cond, "cond", 1, BoolScalar()));
  GE_ASSIGN_OR_RETURN(OutPort trip_count, EmitData(*cond, "trip_count", 2, I64Scalar()));
  GE_ASSIGN_OR_RETURN(OutPort below, Emit1(*cond, "below_trip_count", "Less", {iter, trip_count}, BoolScalar()));
  GE_ASSIGN_OR_RETURN(OutPort both, Emit1(*cond, "continue", "And", {below, go}, BoolScalar()));
  GE_RETURN_IF_ERROR(Emit(*cond, "NetOutput", ir::kNetOutput, {both}, {}).status());
  return cond;
}

// Body Data [iter, cond, v (N), captures (C)] becomes [iter, cond, M, v,
// captures, accumulators]; the results [cond_out, v_out, scan_out (K)]
// become [iter + 1, cond_out or cond, M, v_out, captures, appended].
absl::Status RewriteLoopBody(Body& body, int n, int c, const std::vector<OutPort>& accs, bool has_cond) {
  ShiftDataIndices(body, 2, 1);
  Graph& b = *body.graph;
  GE_ASSIGN_OR_RETURN(OutPort trip_count, EmitData(b, "trip_count", 2, I64Scalar()));
  GE_ASSIGN_OR_RETURN(OutPort one, EmitConst(b, "one", Tensor::Scalar(int64_t{1})));
  GE_ASSIGN_OR_RETURN(OutPort next, Emit1(b, "next_iter", "Add", {OutPort{body.data[0], 0}, one}, I64Scalar()));
  GE_ASSIGN_OR_RETURN(std::vector<OutPort> appended, EmitAppends(body, accs, 3 + n + c, 1 + n));
  std::vector<OutPort> results = {next, has_cond ? body.results[0] : OutPort{body.data[1], 0}, trip_count};
  std::vector<std::string> names = {"", body.result_names[0], ""};
  for (int j = 0; j < n; ++j) {
    results.push_back(body.results[1 + j]);
    names.push_back(body.result_names[1 + j]);
  }
  for (int j = 0; j < c; ++j) results.push_back(OutPort{body.data[2 + n + j], 0});
  results.insert(results.end(), appended.begin(), appended.end());
  return RebuildOutput(body, results, names);
}

// A loop-carried value the body only grows: its Data node's one use is a
// Concat that takes it first (appending the other inputs) or last
// (prepending them), and that Concat's one use is the body result of the
// same value. `torch.cat([acc, x])` in a scripted loop exports so
// (torchvision's paste-masks loop): as a tensor every iteration copies all
// earlier rows into a new buffer, O(n^2) bytes over n iterations.
struct GrownCarry {
  int j = -1;              // the loop-carried value's index
  Node* concat = nullptr;  // the body's Concat
  bool prepend = false;    // the value is the Concat's last input
  int64_t axis = 0;
  DataType dtype = DataType::kUndefined;
};

std::optional<GrownCarry> FindGrownCarry(const Node& loop, const Body& body, int j) {
  const Node* data = body.data[2 + j];
  if (data->consumers(0).size() != 1) return std::nullopt;
  const ir::InPort use = data->consumers(0)[0];
  Node* concat = use.node;
  if (concat->type() != "Concat" || concat->num_inputs() < 2 || !concat->control_inputs().empty() ||
      !concat->control_outputs().empty()) {
    return std::nullopt;
  }
  const bool first = use.index == 0, last = use.index == concat->num_inputs() - 1;
  if (!first && !last) return std::nullopt;
  for (int i = 0; i < concat->num_inputs(); ++i) {
    if (!concat->input(i)) return std::nullopt;
  }
  const OutPort result = body.results[1 + j];
  if (result.node != concat || result.index != 0 || concat->consumers(0).size() != 1) return std::nullopt;
  auto axis = concat->op_desc().GetAttr<int64_t>("axis");
  if (!axis) return std::nullopt;
  // The value enters and leaves as a tensor of one known dtype.
  const OutPort initial = loop.input(2 + j);
  if (!initial) return std::nullopt;
  const ValueType& entered = initial.node->op_desc().output(initial.index).type;
  if (!entered.is_tensor() || entered.dtype() == DataType::kUndefined || j >= loop.num_outputs()) {
    return std::nullopt;
  }
  const ValueType& declared = loop.op_desc().output(j).type;
  if (declared.kind() != ValueType::Kind::kTensor ||
      (declared.dtype() != DataType::kUndefined && declared.dtype() != entered.dtype())) {
    return std::nullopt;
  }
  return GrownCarry{j, concat, last && !first, *axis, entered.dtype()};
}

// The carried value becomes a sequence of its pieces: it enters as
// [initial], the body appends the Concat's other inputs (in reverse order
// when it prepends) instead of copying, and LoopAccumulatorConcat joins the
// pieces once after the loop (last piece first when prepending). Returns
// the While's input for the value; the body result j is the last append.
absl::StatusOr<OutPort> RewriteGrownCarry(Graph& g, const Node& loop, Body& body, const GrownCarry& grown) {
  const ValueType seq = SequenceOf(grown.dtype);
  GE_ASSIGN_OR_RETURN(OutPort init, Emit1(g, StrCat(loop.name(), "/grow_init"), "LoopAccumulatorInit", {}, seq,
                                          {{"dtype", static_cast<int64_t>(grown.dtype)}}));
  GE_ASSIGN_OR_RETURN(OutPort entered, Emit1(g, StrCat(loop.name(), "/grow_initial"), "LoopAccumulatorAppend",
                                             {init, loop.input(2 + grown.j)}, seq));
  Graph& b = *body.graph;
  Node* data = body.data[2 + grown.j];
  data->mutable_op_desc().mutable_output(0).type = seq;
  std::vector<OutPort> pieces;
  for (int i = 0; i < grown.concat->num_inputs(); ++i) {
    const OutPort in = grown.concat->input(i);
    if (in.node != data) pieces.push_back(in);
  }
  if (grown.prepend) std::reverse(pieces.begin(), pieces.end());
  const std::string name = grown.concat->name();
  b.RemoveNode(grown.concat);
  OutPort acc{data, 0};
  for (const OutPort& piece : pieces) {
    GE_ASSIGN_OR_RETURN(acc, Emit1(b, StrCat(name, "/append"), "LoopAccumulatorAppend", {acc, piece}, seq,
                                   {{"merge_axis", grown.axis}, {"merge_reverse", int64_t{grown.prepend ? 1 : 0}}}));
  }
  body.results[1 + grown.j] = acc;
  return entered;
}

// The loop output of a grown carry: the pieces joined along the Concat's
// axis, used where the ONNX node's output was.
absl::Status EmitGrownOutput(Graph& g, Node* loop, Node* w, int port, const GrownCarry& grown) {
  GE_ASSIGN_OR_RETURN(Node * joined,
                      Emit(g, StrCat(w->name(), "/grown"), "LoopAccumulatorConcat", {OutPort{w, port}}, {ValueType()},
                           {{"axis", grown.axis}, {"reverse", int64_t{grown.prepend ? 1 : 0}}}));
  joined->mutable_op_desc().mutable_output(0).name = loop->op_desc().output(grown.j).name;
  return g.ReplaceAllUses(loop, grown.j, joined, 0);
}

absl::Status LowerLoop(Graph& g, Node* loop) {
  const int64_t c = loop->op_desc().GetAttrOr<int64_t>(kAttrOnnxNumCaptures, 0);
  const int p = loop->num_inputs() - static_cast<int>(c);
  if (c < 0 || p < 0) return InvalidArgument(Label(*loop), ": bad ", kAttrOnnxNumCaptures, " ", c);
  const int n = std::max(p - 2, 0);
  GE_ASSIGN_OR_RETURN(Body body, ReadBody(*loop, 2 + n + c));
  const int k = static_cast<int>(body.results.size()) - 1 - n;
  if (k < 0) {
    return InvalidArgument(Label(*loop), ": body returns ", body.results.size(), " values for ", n,
                           " loop-carried values and a condition");
  }
  const bool has_trip_count = p >= 1 && loop->input(0);
  const bool has_cond = p >= 2 && loop->input(1);
  const std::string& name = loop->name();
  GE_ASSIGN_OR_RETURN(OutPort iter0, EmitConst(g, StrCat(name, "/iter_init"), Tensor::Scalar(int64_t{0})));
  OutPort trip_count = has_trip_count ? loop->input(0) : OutPort{};
  if (!has_trip_count) {
    GE_ASSIGN_OR_RETURN(trip_count, EmitConst(g, StrCat(name, "/no_trip_count"),
                                              Tensor::Scalar(std::numeric_limits<int64_t>::max())));
  }
  OutPort cond = has_cond ? loop->input(1) : OutPort{};
  if (!has_cond) {
    GE_ASSIGN_OR_RETURN(cond, EmitConst(g, StrCat(name, "/no_cond"), Tensor::Scalar(true)));
  }
  std::vector<OutPort> inputs = {iter0, cond, trip_count};
  for (int j = 0; j < n + c; ++j) {
    GE_ASSIGN_OR_RETURN(OutPort in, RequireInput(*loop, j < n ? 2 + j : p + j - n,
                                                 j < n ? "a loop-carried value" : "a capture"));
    inputs.push_back(in);
  }
  std::vector<std::optional<GrownCarry>> grown(n);
  for (int j = 0; j < n; ++j) {
    grown[j] = FindGrownCarry(*loop, body, j);
    if (grown[j]) {
      GE_ASSIGN_OR_RETURN(inputs[3 + j], RewriteGrownCarry(g, *loop, body, *grown[j]));
    }
  }
  GE_ASSIGN_OR_RETURN(std::vector<OutPort> accs, EmitAccumulators(g, *loop, body, 1 + n, n, k));
  inputs.insert(inputs.end(), accs.begin(), accs.end());
  const std::vector<OutPort> scan_results(body.results.begin() + 1 + n, body.results.end());
  GE_RETURN_IF_ERROR(Annotate(RewriteLoopBody(body, n, static_cast<int>(c), accs, has_cond), Label(*loop)));
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> cond_graph, BuildLoopCond(g, name));
  // BuildLoopCond: iter < trip_count && cond.
  GE_ASSIGN_OR_RETURN(Node * w, EmitWhile(g, loop, inputs, body.graph, std::move(cond_graph), 3, {0, 2, 1}));
  for (int j = 0; j < n; ++j) {
    GE_RETURN_IF_ERROR(grown[j] ? EmitGrownOutput(g, loop, w, 3 + j, *grown[j]) : MoveOutput(g, loop, j, w, 3 + j));
  }
  for (int s = 0; s < k; ++s) {
    GE_RETURN_IF_ERROR(EmitStack(g, loop, n + s, w, 3 + n + static_cast<int>(c) + s, scan_results[s], {}));
  }
  g.RemoveNode(loop);
  return absl::OkStatus();
}

// ---- Scan ----

struct ScanAttrs {
  int64_t num_scan_inputs = 0;
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
};

absl::StatusOr<std::vector<int64_t>> IntsAttr(const Node& node, std::string_view name, size_t count,
                                              bool is_direction) {
  auto values = node.op_desc().GetAttr<std::vector<int64_t>>(name);
  if (!values) return std::vector<int64_t>(count, 0);
  if (values->size() != count) {
    return InvalidArgument(Label(node), ": attribute '", name, "' has ", values->size(), " values, expected ", count);
  }
  for (int64_t v : *values) {
    if (is_direction && v != 0 && v != 1) {
      return InvalidArgument(Label(node), ": attribute '", name, "' holds ", v, "; directions are 0 or 1");
    }
  }
  return *values;
}

absl::StatusOr<ScanAttrs> ReadScanAttrs(const Node& node, int num_outputs) {
  ScanAttrs a;
  GE_ASSIGN_OR_RETURN(a.num_scan_inputs, node.op_desc().RequireAttr<int64_t>("num_scan_inputs"));
  const size_t m = static_cast<size_t>(a.num_scan_inputs);
  GE_ASSIGN_OR_RETURN(a.input_axes, IntsAttr(node, "scan_input_axes", m, false));
  GE_ASSIGN_OR_RETURN(a.input_directions, IntsAttr(node, "scan_input_directions", m, true));
  GE_ASSIGN_OR_RETURN(a.output_axes, IntsAttr(node, "scan_output_axes", num_outputs, false));
  GE_ASSIGN_OR_RETURN(a.output_directions, IntsAttr(node, "scan_output_directions", num_outputs, true));
  return a;
}

absl::StatusOr<std::unique_ptr<Graph>> BuildScanCond(const Graph& g, const std::string& scan_name) {
  auto cond = std::make_unique<Graph>(UniqueSubgraphName(g, StrCat(scan_name, "_cond")));
  GE_ASSIGN_OR_RETURN(OutPort i, EmitData(*cond, "i", 0, I64Scalar()));
  GE_ASSIGN_OR_RETURN(OutPort length, EmitData(*cond, "length", 1, I64Scalar()));
  GE_ASSIGN_OR_RETURN(OutPort more, Emit1(*cond, "more", "Less", {i, length}, BoolScalar()));
  GE_RETURN_IF_ERROR(Emit(*cond, "NetOutput", ir::kNetOutput, {more}, {}).status());
  return cond;
}

// Element input m of the body becomes the whole scan input, read through
// Gather(input, index, axis) by what used the element.
absl::Status GatherElements(Body& body, int n, const ScanAttrs& a, OutPort i, OutPort length, OutPort one) {
  Graph& b = *body.graph;
  OutPort reversed;
  for (int64_t m = 0; m < a.num_scan_inputs; ++m) {
    if (a.input_directions[m] == 1 && !reversed) {
      GE_ASSIGN_OR_RETURN(OutPort last, Emit1(b, "last_index", "Sub", {length, one}, I64Scalar()));
      GE_ASSIGN_OR_RETURN(reversed, Emit1(b, "reversed_index", "Sub", {last, i}, I64Scalar()));
    }
    Node* element = body.data[n + m];
    const ValueType element_type = element->op_desc().output(0).type;
    GE_ASSIGN_OR_RETURN(Node * gather, Emit(b, StrCat(element->name(), "/gather"), "Gather", {},
                                            {element_type}, {{"axis", a.input_axes[m]}}));
    const std::vector<ir::InPort> users = element->consumers(0);
    for (const ir::InPort& use : users) {
      b.RemoveInputEdge(use.node, use.index);
      GE_RETURN_IF_ERROR(b.AddEdge(gather, 0, use.node, use.index));
    }
    element->mutable_op_desc().mutable_output(0).type = ValueType();  // the whole input, typed by inference
    b.AddInputPort(gather, {"", ValueType()});
    b.AddInputPort(gather, {"", I64Scalar()});
    GE_RETURN_IF_ERROR(b.AddEdge(element, 0, gather, 0));
    const OutPort index = a.input_directions[m] == 1 ? reversed : i;
    GE_RETURN_IF_ERROR(b.AddEdge(index.node, index.index, gather, 1));
  }
  return absl::OkStatus();
}

// Body Data [state (N), element (M), captures (C)] becomes [i, length,
// state, scan input, captures, accumulators]; the results [state_out,
// scan_out (K)] become [i + 1, length, state_out, scan inputs, captures,
// appended].
absl::Status RewriteScanBody(Body& body, const Node& scan, int n, int c, const ScanAttrs& a,
                             const std::vector<OutPort>& accs) {
  ShiftDataIndices(body, 0, 2);
  Graph& b = *body.graph;
  GE_ASSIGN_OR_RETURN(OutPort i, EmitData(b, "i", 0, I64Scalar()));
  GE_ASSIGN_OR_RETURN(OutPort length, EmitData(b, "length", 1, I64Scalar()));
  GE_ASSIGN_OR_RETURN(OutPort one, EmitConst(b, "one", Tensor::Scalar(int64_t{1})));
  GE_ASSIGN_OR_RETURN(OutPort next, Emit1(b, "next_i", "Add", {i, one}, I64Scalar()));
  GE_RETURN_IF_ERROR(GatherElements(body, n, a, i, length, one));
  GE_RETURN_IF_ERROR(body.ReadResults(scan));  // an element returned as is now comes from its Gather
  const int m = static_cast<int>(a.num_scan_inputs);
  GE_ASSIGN_OR_RETURN(std::vector<OutPort> appended, EmitAppends(body, accs, 2 + n + m + c, n));
  std::vector<OutPort> results = {next, length};
  std::vector<std::string> names = {"", ""};
  for (int j = 0; j < n; ++j) {
    results.push_back(body.results[j]);
    names.push_back(body.result_names[j]);
  }
  for (int j = 0; j < m + c; ++j) results.push_back(OutPort{body.data[n + j], 0});
  results.insert(results.end(), appended.begin(), appended.end());
  return RebuildOutput(body, results, names);
}

// The number of iterations: the length of scan input 0 along its axis.
absl::StatusOr<OutPort> EmitScanLength(Graph& g, const Node& scan, OutPort input, int64_t axis) {
  GE_ASSIGN_OR_RETURN(OutPort shape, Emit1(g, StrCat(scan.name(), "/shape"), "Shape", {input},
                                           ValueType::Tensor(DataType::kInt64, Shape{-1})));
  GE_ASSIGN_OR_RETURN(OutPort dim, EmitConst(g, StrCat(scan.name(), "/axis"), Tensor::Scalar(axis)));
  return Emit1(g, StrCat(scan.name(), "/length"), "Gather", {shape, dim}, I64Scalar(), {{"axis", int64_t{0}}});
}

absl::Status LowerScan(Graph& g, Node* scan) {
  const int64_t c = scan->op_desc().GetAttrOr<int64_t>(kAttrOnnxNumCaptures, 0);
  const int p = scan->num_inputs() - static_cast<int>(c);
  GE_ASSIGN_OR_RETURN(int64_t num_scan_inputs, scan->op_desc().RequireAttr<int64_t>("num_scan_inputs"));
  const int n = p - static_cast<int>(num_scan_inputs);
  if (c < 0 || num_scan_inputs < 1 || n < 0) {
    return InvalidArgument(Label(*scan), ": has ", p, " inputs besides ", c, " captures but num_scan_inputs is ",
                           num_scan_inputs);
  }
  const int m = static_cast<int>(num_scan_inputs);
  GE_ASSIGN_OR_RETURN(Body body, ReadBody(*scan, n + m + c));
  const int k = static_cast<int>(body.results.size()) - n;
  if (k < 0) return InvalidArgument(Label(*scan), ": body returns fewer values than the ", n, " states");
  GE_ASSIGN_OR_RETURN(ScanAttrs attrs, ReadScanAttrs(*scan, k));
  const std::string& name = scan->name();
  GE_ASSIGN_OR_RETURN(OutPort i0, EmitConst(g, StrCat(name, "/i_init"), Tensor::Scalar(int64_t{0})));
  GE_ASSIGN_OR_RETURN(OutPort first, RequireInput(*scan, n, "scan input 0"));
  GE_ASSIGN_OR_RETURN(OutPort length, EmitScanLength(g, *scan, first, attrs.input_axes[0]));
  std::vector<OutPort> inputs = {i0, length};
  for (int j = 0; j < p + c; ++j) {
    GE_ASSIGN_OR_RETURN(OutPort in, RequireInput(*scan, j, j < n ? "a state" : j < p ? "a scan input" : "a capture"));
    inputs.push_back(in);
  }
  GE_ASSIGN_OR_RETURN(std::vector<OutPort> accs, EmitAccumulators(g, *scan, body, n, n, k));
  inputs.insert(inputs.end(), accs.begin(), accs.end());
  const std::vector<OutPort> scan_results(body.results.begin() + n, body.results.end());
  GE_RETURN_IF_ERROR(Annotate(RewriteScanBody(body, *scan, n, static_cast<int>(c), attrs, accs), Label(*scan)));
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> cond_graph, BuildScanCond(g, name));
  // BuildScanCond: i < length.
  GE_ASSIGN_OR_RETURN(Node * w, EmitWhile(g, scan, inputs, body.graph, std::move(cond_graph), 2, {0, 1, -1}));
  for (int j = 0; j < n; ++j) GE_RETURN_IF_ERROR(MoveOutput(g, scan, j, w, 2 + j));
  for (int s = 0; s < k; ++s) {
    const int acc_port = 2 + n + m + static_cast<int>(c) + s;
    GE_RETURN_IF_ERROR(EmitStack(g, scan, n + s, w, acc_port, scan_results[s],
                                 {{"axis", attrs.output_axes[s]}, {"reverse", attrs.output_directions[s]}}));
  }
  g.RemoveNode(scan);
  return absl::OkStatus();
}

}  // namespace

absl::Status LowerOnnxControlFlow(ir::Graph& root) {
  std::vector<Node*> nodes;
  std::vector<Graph*> graphs = {&root};
  for (Graph* sub : root.subgraphs()) graphs.push_back(sub);
  for (Graph* g : graphs) {
    g->ForEachNode([&](Node* node) {
      if (node->type() == "Loop" || node->type() == "Scan") nodes.push_back(node);
    });
  }
  for (Node* node : nodes) {
    Graph& g = *node->owner_graph();
    GE_RETURN_IF_ERROR(node->type() == "Loop" ? LowerLoop(g, node) : LowerScan(g, node));
  }
  return absl::OkStatus();
}

}  // namespace ge::frontend
