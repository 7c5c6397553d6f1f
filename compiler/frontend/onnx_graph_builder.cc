// Builds ir::Graphs from ONNX GraphProtos. One GraphBuilder converts one
// GraphProto (the main graph or a subgraph) into one ir::Graph: Data nodes
// for inputs and captures, Const / FileConstant nodes for initializers, one
// node per canonical ONNX node, a NetOutput. Edges are wired by tensor name
// after every node of the graph exists, so node order does not matter here
// (ged's structural check has already rejected cycles and dangling names).
#include "compiler/frontend/onnx_graph_builder.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/frontend/onnx_attr_convert.h"
#include "compiler/frontend/onnx_external_data.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/frontend/onnx_op_support.h"
#include "compiler/frontend/onnx_tensor.h"
#include "onnx/defs/schema.h"

namespace ge::frontend {
namespace {

// Node names of one graph: ONNX node names are reserved for the first node
// carrying them, so that a Const made from an initializer or an adapter's
// helper never takes a name a later ONNX node needs. A name is taken once a
// node of the graph has it: the builder adds each node right after claiming
// its name (or fails the import), so the graph's own name index is the
// table of taken names. Reserved names are views of the GraphProto's
// strings, which outlive the builder.
class NodeNamer {
 public:
  explicit NodeNamer(const ir::Graph& graph) : graph_(graph) {}

  void ReserveFor(size_t nodes) { reserved_.reserve(nodes); }
  void Reserve(std::string_view name) {
    if (!name.empty()) reserved_.insert(name);
  }
  std::string Claim(std::string_view preferred, std::string_view op_type, bool may_take_reserved) {
    if (!preferred.empty() && !Taken(preferred) &&
        (may_take_reserved || !reserved_.contains(preferred))) {
      return std::string(preferred);
    }
    int64_t& counter = counters_[op_type];
    for (;;) {
      std::string candidate = StrCat(op_type, "_", counter++);
      if (!Taken(candidate) && !reserved_.contains(candidate)) return candidate;
    }
  }

 private:
  bool Taken(std::string_view name) const { return graph_.FindNode(name) != nullptr; }

  const ir::Graph& graph_;
  absl::flat_hash_set<std::string_view> reserved_;
  StringMap<int64_t> counters_;
};

bool HasGraphAttribute(const onnx::NodeProto& node) {
  for (const auto& attr : node.attribute()) {
    if (attr.type() == onnx::AttributeProto::GRAPH || attr.type() == onnx::AttributeProto::GRAPHS) {
      return true;
    }
  }
  return false;
}

void CollectTensorNames(const onnx::GraphProto& g, StringSet& names) {
  for (const auto& v : g.input()) names.insert(v.name());
  for (const auto& v : g.output()) names.insert(v.name());
  for (const auto& v : g.value_info()) names.insert(v.name());
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& node : g.node()) {
    for (const auto& n : node.input()) names.insert(n);
    for (const auto& n : node.output()) names.insert(n);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectTensorNames(attr.g(), names);
      for (const auto& sub : attr.graphs()) CollectTensorNames(sub, names);
    }
  }
}

// "graph 'g': node 'n' (Op)" for error messages, built only when a message
// needs it: eagerly it would be a string allocation per imported node.
class LazyLabel {
 public:
  LazyLabel(const ir::Graph& graph, const onnx::NodeProto& node, int index)
      : graph_(graph), node_(node), index_(index) {}
  const std::string& get() const {
    if (text_.empty()) text_ = StrCat("graph '", graph_.name(), "': ", NodeLabel(node_, index_));
    return text_;
  }

 private:
  const ir::Graph& graph_;
  const onnx::NodeProto& node_;
  int index_;
  mutable std::string text_;
};

// State shared by the builders of every graph in the tree.
struct ModelState {
  explicit ModelState(const OnnxBuildContext& c) : ctx(c) {}

  // A tensor name no graph of the model uses. The table of used names is
  // built on the first call: only opset adapters that add tensors ask, and
  // most models never need it (on a million-node model it costs ~0.5 s).
  std::string FreshTensorName(std::string_view base) {
    if (!tensor_names_built) {
      const onnx::GraphProto& main = ctx.model->graph();
      tensor_names.reserve(static_cast<size_t>(main.node_size()) * 2);
      CollectTensorNames(main, tensor_names);
      tensor_names_built = true;
    }
    std::string name(base);
    for (int k = 1; tensor_names.contains(name); ++k) name = StrCat(base, "_", k);
    tensor_names.insert(name);
    return name;
  }
  std::string UniqueSubgraphName(std::string_view base) {
    std::string name(base);
    for (int k = 1; subgraph_names.contains(name); ++k) name = StrCat(base, "_", k);
    subgraph_names.insert(name);
    return name;
  }

  const OnnxBuildContext& ctx;
  CaptureAnalysis captures;
  StringSet tensor_names;  // see FreshTensorName
  bool tensor_names_built = false;
  StringSet subgraph_names;
};

class GraphBuilder {
 public:
  GraphBuilder(ModelState& model, const onnx::GraphProto& proto, ir::Graph* graph,
               const GraphBuilder* parent)
      : model_(model), proto_(proto), graph_(graph), parent_(parent), namer_(*graph) {
    lookup_.type_of = [this](const std::string& t) { return FindOnnxType(t); };
    lookup_.constant_of = [this](const std::string& t) { return FindConstant(t); };
    lookup_.is_consumed = [this](const std::string& t) { return IsConsumed(t); };
    lookup_.fresh_tensor_name = [this](std::string_view b) { return model_.FreshTensorName(b); };
  }

  // The main graph: inputs (with IR >= 4 defaults), initializers, nodes.
  absl::Status BuildMain();
  // A subgraph: formal inputs, then one Data node per capture of its parent.
  absl::Status BuildSubgraph(const std::vector<std::string>& captures);

 private:
  // An input to wire once every producer exists; the tensor is the name in
  // the node's IoDesc.
  struct PendingEdge {
    ir::Node* node;
    int port;
  };

  absl::Status IndexGraph();
  bool IsConsumed(const std::string& tensor);
  absl::Status BuildBody();
  const onnx::TypeProto* FindOnnxType(const std::string& tensor) const;
  const onnx::TensorProto* FindConstant(const std::string& tensor) const;
  absl::StatusOr<ir::ValueType> TypeOf(const std::string& tensor) const;
  absl::StatusOr<ir::Node*> AddNode(ir::OpDesc op);
  absl::StatusOr<ir::Node*> AddDataNode(const std::string& tensor, int64_t index);
  absl::Status AddInitializer(const onnx::TensorProto& init, int index);
  absl::Status TakeDeferredValues();
  absl::Status AddExternalInitializer(const onnx::TensorProto& init);
  absl::Status ConvertNode(const onnx::NodeProto& node, int index);
  absl::Status ConvertCanonical(const onnx::NodeProto& node, int64_t opset, bool is_original,
                                const LazyLabel& label);
  absl::Status ConvertConstant(const onnx::NodeProto& node, int64_t opset, bool is_original,
                               const LazyLabel& label);
  absl::Status AddIoDescs(const onnx::NodeProto& node, bool is_original, ir::OpDesc& op);
  absl::Status AddSubgraphs(const onnx::NodeProto& node, ir::Node* ir_node);
  absl::StatusOr<std::string> BuildChild(const onnx::GraphProto& g, std::string_view base,
                                         ir::Node* ir_node,
                                         const std::vector<std::string>& captures);
  absl::Status AddNetOutput();
  absl::Status ConnectEdges();

  ModelState& model_;
  const onnx::GraphProto& proto_;
  ir::Graph* graph_;
  const GraphBuilder* parent_;
  AdapterLookup lookup_;
  NodeNamer namer_;
  StringMap<const onnx::TypeProto*> onnx_types_;
  StringMap<ir::ValueType> known_types_;  // constants, whose types are exact
  StringMap<const onnx::TensorProto*> constants_;
  StringMap<const onnx::TensorProto*> initializers_;
  // Consts whose values come from the model's initializer at the index once
  // the nodes are converted (OnnxBuildContext::release_initializers).
  std::vector<std::pair<ir::Node*, int>> deferred_values_;
  std::map<std::string, onnx::TypeProto> initializer_types_;  // stable addresses
  // What the graph's nodes and outputs read; built on the first
  // IsConsumed (only opset adapters ask).
  StringSet consumed_;
  bool consumed_built_ = false;
  // Keys view the producers' output IoDesc names: the nodes' port tables do
  // not change while the graph is being built.
  absl::flat_hash_map<std::string_view, ir::OutPort> producers_;
  std::vector<PendingEdge> pending_;
};

absl::Status GraphBuilder::IndexGraph() {
  // Sized up front: growing million-entry tables rehashes them many times.
  const auto nodes = static_cast<size_t>(proto_.node_size());
  onnx_types_.reserve(static_cast<size_t>(proto_.input_size() + proto_.output_size() + proto_.value_info_size() +
                                          proto_.initializer_size()));
  producers_.reserve(nodes + static_cast<size_t>(proto_.input_size() + proto_.initializer_size()));
  pending_.reserve(nodes * 2);
  namer_.ReserveFor(nodes + static_cast<size_t>(proto_.initializer_size()));
  for (const auto& v : proto_.input()) {
    if (v.has_type()) onnx_types_.emplace(v.name(), &v.type());
  }
  for (const auto& v : proto_.output()) {
    if (v.has_type()) onnx_types_.emplace(v.name(), &v.type());
  }
  for (const auto& v : proto_.value_info()) {
    if (v.has_type()) onnx_types_.emplace(v.name(), &v.type());
  }
  if (proto_.sparse_initializer_size() > 0) {
    return InvalidArgument("graph '", proto_.name(), "': sparse initializer '",
                           proto_.sparse_initializer(0).values().name(), "' is not supported");
  }
  for (const auto& init : proto_.initializer()) {
    initializers_.emplace(init.name(), &init);
    if (init.data_location() != onnx::TensorProto::EXTERNAL) constants_.emplace(init.name(), &init);
    // Initializers need not be declared anywhere; give adapters their types.
    if (onnx_types_.contains(init.name())) continue;
    onnx::TypeProto& type = initializer_types_[init.name()];
    type.mutable_tensor_type()->set_elem_type(init.data_type());
    for (int64_t d : init.dims())
      type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  }
  for (const auto& [name, type] : initializer_types_) onnx_types_.emplace(name, &type);
  for (const auto& node : proto_.node()) {
    namer_.Reserve(node.name());
    if (node.op_type() == "Constant" && NormalizeDomain(node.domain()).empty() &&
        node.output_size() == 1 && node.attribute_size() == 1 &&
        node.attribute(0).name() == "value" && node.attribute(0).has_t()) {
      constants_.emplace(node.output(0), &node.attribute(0).t());
    }
  }
  return absl::OkStatus();
}

bool GraphBuilder::IsConsumed(const std::string& tensor) {
  if (!consumed_built_) {
    consumed_.reserve(static_cast<size_t>(proto_.node_size()));
    for (const auto& node : proto_.node()) {
      for (const auto& in : node.input()) consumed_.insert(in);
      if (HasGraphAttribute(node)) {
        for (const auto& c : model_.captures.NodeCaptures(node)) consumed_.insert(c);
      }
    }
    for (const auto& v : proto_.output()) consumed_.insert(v.name());
    consumed_built_ = true;
  }
  return consumed_.contains(tensor);
}

const onnx::TypeProto* GraphBuilder::FindOnnxType(const std::string& tensor) const {
  for (const GraphBuilder* b = this; b != nullptr; b = b->parent_) {
    if (auto it = b->onnx_types_.find(tensor); it != b->onnx_types_.end()) return it->second;
  }
  return nullptr;
}

const onnx::TensorProto* GraphBuilder::FindConstant(const std::string& tensor) const {
  for (const GraphBuilder* b = this; b != nullptr; b = b->parent_) {
    if (auto it = b->constants_.find(tensor); it != b->constants_.end()) return it->second;
  }
  return nullptr;
}

absl::StatusOr<ir::ValueType> GraphBuilder::TypeOf(const std::string& tensor) const {
  for (const GraphBuilder* b = this; b != nullptr; b = b->parent_) {
    if (auto it = b->known_types_.find(tensor); it != b->known_types_.end()) return it->second;
    if (auto it = b->onnx_types_.find(tensor); it != b->onnx_types_.end()) {
      absl::StatusOr<ir::ValueType> type = OnnxTypeToValueType(*it->second, "value");
      // The message names the value; building that name for every call
      // would be a string per port.
      if (!type.ok()) return OnnxTypeToValueType(*it->second, StrCat("value '", tensor, "'"));
      return type;
    }
  }
  return UnknownValueType();
}

absl::StatusOr<ir::Node*> GraphBuilder::AddNode(ir::OpDesc op) {
  GE_ASSIGN_OR_RETURN(ir::Node * node, graph_->AddNode(std::move(op)));
  const ir::OpDesc& desc = node->op_desc();
  for (int i = 0; i < desc.num_outputs(); ++i) {
    const std::string& name = desc.output(i).name;
    if (name.empty()) continue;
    if (!producers_.emplace(name, ir::OutPort{node, i}).second) {
      return InvalidArgument("graph '", graph_->name(), "': tensor '", name,
                             "' is produced twice (second producer: node '", node->name(), "')");
    }
  }
  for (int i = 0; i < desc.num_inputs(); ++i) {
    if (!desc.input(i).name.empty()) pending_.push_back({node, i});
  }
  return node;
}

absl::StatusOr<ir::Node*> GraphBuilder::AddDataNode(const std::string& tensor, int64_t index) {
  ir::OpDesc op(namer_.Claim(tensor, ir::kData, /*may_take_reserved=*/true),
                std::string(ir::kData));
  GE_ASSIGN_OR_RETURN(ir::ValueType type, TypeOf(tensor));
  op.AddOutput(ir::IoDesc{tensor, std::move(type)});
  op.SetAttr(ir::kAttrIndex, index);
  return AddNode(std::move(op));
}

absl::Status GraphBuilder::AddInitializer(const onnx::TensorProto& init, int index) {
  if (init.data_location() == onnx::TensorProto::EXTERNAL) return AddExternalInitializer(init);
  // Adapters read initializers from the model while nodes convert, so a
  // value whose bytes are to be freed is taken only after the last node.
  constexpr size_t kDeferBytes = size_t{64} << 10;
  const bool defer = parent_ == nullptr && model_.ctx.release_initializers != nullptr && init.has_raw_data() &&
                     init.raw_data().size() >= kDeferBytes;
  std::optional<Tensor> value;
  ir::TensorDesc desc;
  if (defer) {
    const std::string label = StrCat("initializer '", init.name(), "'");
    GE_ASSIGN_OR_RETURN(desc.dtype, DataTypeFromOnnx(init.data_type(), label));
    GE_ASSIGN_OR_RETURN(desc.shape, ShapeFromProto(init, "initializer"));
  } else {
    GE_ASSIGN_OR_RETURN(value, TensorFromProto(init, "initializer"));
    desc = ir::TensorDesc(value->dtype(), value->shape());
  }
  known_types_[init.name()] = desc;
  ir::OpDesc op(namer_.Claim(init.name(), "Const", /*may_take_reserved=*/false),
                std::string(ir::kConst));
  op.AddOutput(ir::IoDesc{init.name(), desc});
  if (value) op.SetAttr(ir::kAttrValue, *std::move(value));
  GE_ASSIGN_OR_RETURN(ir::Node * node, AddNode(std::move(op)));
  if (defer) deferred_values_.emplace_back(node, index);
  return absl::OkStatus();
}

absl::Status GraphBuilder::TakeDeferredValues() {
  if (deferred_values_.empty()) return absl::OkStatus();
  onnx::GraphProto* main = model_.ctx.release_initializers->mutable_graph();
  for (const auto& [node, index] : deferred_values_) {
    onnx::TensorProto* init = main->mutable_initializer(index);
    GE_ASSIGN_OR_RETURN(Tensor value, TensorFromProto(*init, "initializer"));
    node->mutable_op_desc().SetAttr(ir::kAttrValue, std::move(value));
    std::string().swap(*init->mutable_raw_data());
  }
  deferred_values_.clear();
  return absl::OkStatus();
}

absl::Status GraphBuilder::AddExternalInitializer(const onnx::TensorProto& init) {
  GE_ASSIGN_OR_RETURN(ExternalDataRef ref, ExternalDataRefFromProto(init, model_.ctx.model_dir));
  GE_RETURN_IF_ERROR(CheckExternalData(ref));
  known_types_[init.name()] = ir::TensorDesc(ref.dtype, ref.shape);
  ir::OpDesc op(namer_.Claim(init.name(), "FileConstant", /*may_take_reserved=*/false),
                std::string(ir::kFileConstant));
  op.AddOutput(ir::IoDesc{init.name(), ir::TensorDesc(ref.dtype, ref.shape)});
  SetExternalDataAttrs(ref, op);
  return AddNode(std::move(op)).status();
}

absl::Status GraphBuilder::BuildMain() {
  GE_RETURN_IF_ERROR(IndexGraph());
  const bool inputs_have_defaults = model_.ctx.model->ir_version() >= 4;
  StringSet input_defaults;
  int64_t index = 0;
  for (const auto& input : proto_.input()) {
    auto init = initializers_.find(input.name());
    if (init != initializers_.end() && !inputs_have_defaults) continue;  // a constant
    GE_ASSIGN_OR_RETURN(ir::Node * data, AddDataNode(input.name(), index++));
    if (init == initializers_.end()) continue;
    if (init->second->data_location() == onnx::TensorProto::EXTERNAL) {
      return InvalidArgument("graph input '", input.name(),
                             "' has a default value stored as external data; not supported");
    }
    GE_ASSIGN_OR_RETURN(Tensor value, TensorFromProto(*init->second, "initializer"));
    data->mutable_op_desc().SetAttr(kAttrDefaultValue, std::move(value));
    input_defaults.insert(input.name());
  }
  for (int i = 0; i < proto_.initializer_size(); ++i) {
    const onnx::TensorProto& init = proto_.initializer(i);
    if (!input_defaults.contains(init.name())) GE_RETURN_IF_ERROR(AddInitializer(init, i));
  }
  GE_RETURN_IF_ERROR(BuildBody());
  return TakeDeferredValues();
}

absl::Status GraphBuilder::BuildSubgraph(const std::vector<std::string>& captures) {
  GE_RETURN_IF_ERROR(IndexGraph());
  int64_t index = 0;
  for (const auto& input : proto_.input()) {
    GE_RETURN_IF_ERROR(AddDataNode(input.name(), index++).status());
  }
  for (const std::string& capture : captures) {
    GE_ASSIGN_OR_RETURN(ir::Node * data, AddDataNode(capture, index++));
    data->mutable_op_desc().SetAttr(kAttrOnnxCapture, true);
  }
  StringSet inputs;
  for (const auto& input : proto_.input()) inputs.insert(input.name());
  for (int i = 0; i < proto_.initializer_size(); ++i) {
    const onnx::TensorProto& init = proto_.initializer(i);
    if (!inputs.contains(init.name())) GE_RETURN_IF_ERROR(AddInitializer(init, i));
  }
  return BuildBody();
}

absl::Status GraphBuilder::BuildBody() {
  for (int i = 0; i < proto_.node_size(); ++i) {
    GE_RETURN_IF_ERROR(ConvertNode(proto_.node(i), i));
  }
  GE_RETURN_IF_ERROR(AddNetOutput());
  return ConnectEdges();
}

absl::Status GraphBuilder::ConvertNode(const onnx::NodeProto& node, int index) {
  const LazyLabel label(*graph_, node, index);
  const std::string_view domain = NormalizeDomain(node.domain());
  auto opset_it = model_.ctx.opsets.find(domain);
  if (opset_it == model_.ctx.opsets.end()) {
    return InvalidArgument(label.get(), ": uses domain '", DomainForMessages(domain),
                           "', which the model does not import");
  }
  const int64_t opset = opset_it->second;
  int op_version = static_cast<int>(opset);
  if (domain.empty()) {
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
    if (schema == nullptr) {
      return UnsupportedOpError(node, label.get(), domain, opset, *model_.ctx.registry);
    }
    op_version = schema->since_version();
    // Adapters index inputs and outputs; without the checker nothing else
    // has checked the counts yet.
    if (node.input_size() < schema->min_input() || node.input_size() > schema->max_input() ||
        node.output_size() < schema->min_output() || node.output_size() > schema->max_output()) {
      return InvalidArgument(label.get(), ": has ", node.input_size(), " inputs and ", node.output_size(),
                             " outputs; ", node.op_type(), "-", op_version, " takes ",
                             schema->min_input(), "..", schema->max_input(), " inputs and ",
                             schema->min_output(), "..", schema->max_output(), " outputs");
    }
  }
  const OpsetAdapter* adapter =
      domain.empty() ? model_.ctx.adapters->Find(node.op_type(), op_version) : nullptr;
  if (adapter == nullptr) return ConvertCanonical(node, opset, /*is_original=*/true, label);
  OpsetAdapterContext adapter_ctx(node, opset, op_version, lookup_);
  GE_RETURN_IF_ERROR(Annotate(adapter->fn(adapter_ctx), StrCat("graph '", graph_->name(), "'")));
  for (const onnx::NodeProto& emitted : adapter_ctx.TakeEmitted()) {
    if (HasGraphAttribute(emitted)) {  // only a malformed node gives an adapter one
      return InvalidArgument(label.get(), ": has a graph attribute, which ", node.op_type(), "-",
                             op_version, " does not take");
    }
    const bool is_main = !node.name().empty() && emitted.name() == node.name();
    GE_RETURN_IF_ERROR(ConvertCanonical(emitted, opset, is_main, label));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::ConvertConstant(const onnx::NodeProto& node, int64_t opset,
                                           bool is_original, const LazyLabel& label) {
  GE_ASSIGN_OR_RETURN(Tensor value, ConstantNodeValue(node, label.get()));
  if (node.output_size() != 1 || node.output(0).empty()) {
    return InvalidArgument(label.get(), ": a Constant needs exactly one output");
  }
  ir::TensorDesc desc(value.dtype(), value.shape());
  known_types_[node.output(0)] = desc;
  ir::OpDesc op(namer_.Claim(node.name(), node.op_type(), is_original), std::string(ir::kConst));
  op.AddOutput(ir::IoDesc{node.output(0), desc});
  op.SetAttr(ir::kAttrValue, std::move(value));
  op.SetAttr(ir::kAttrOpset, opset);
  return AddNode(std::move(op)).status();
}

absl::Status GraphBuilder::AddIoDescs(const onnx::NodeProto& node, bool is_original,
                                      ir::OpDesc& op) {
  // Trailing empty names are omitted optional inputs / outputs.
  int num_inputs = node.input_size();
  while (num_inputs > 0 && node.input(num_inputs - 1).empty()) --num_inputs;
  for (int i = 0; i < num_inputs; ++i) {
    const std::string& name = node.input(i);
    GE_ASSIGN_OR_RETURN(ir::ValueType type, name.empty() ? UnknownValueType() : TypeOf(name));
    op.AddInput(ir::IoDesc{name, std::move(type)});
  }
  if (is_original && HasGraphAttribute(node)) {
    const std::vector<std::string>& captures = model_.captures.NodeCaptures(node);
    for (const std::string& capture : captures) {
      GE_ASSIGN_OR_RETURN(ir::ValueType type, TypeOf(capture));
      op.AddInput(ir::IoDesc{capture, std::move(type)});
    }
    op.SetAttr(kAttrOnnxNumCaptures, static_cast<int64_t>(captures.size()));
  }
  int num_outputs = node.output_size();
  while (num_outputs > 0 && node.output(num_outputs - 1).empty()) --num_outputs;
  for (int i = 0; i < num_outputs; ++i) {
    const std::string& name = node.output(i);
    GE_ASSIGN_OR_RETURN(ir::ValueType type, name.empty() ? UnknownValueType() : TypeOf(name));
    op.AddOutput(ir::IoDesc{name, std::move(type)});
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::ConvertCanonical(const onnx::NodeProto& node, int64_t opset,
                                            bool is_original, const LazyLabel& label) {
  const std::string_view domain = NormalizeDomain(node.domain());
  if (domain.empty() && node.op_type() == "Constant") {
    return ConvertConstant(node, opset, is_original, label);
  }
  if (model_.ctx.registry->Find(node.op_type(), domain) == nullptr) {
    return UnsupportedOpError(node, label.get(), domain, opset, *model_.ctx.registry);
  }
  ir::OpDesc op(namer_.Claim(node.name(), node.op_type(), is_original), node.op_type());
  GE_RETURN_IF_ERROR(AddIoDescs(node, is_original, op));
  for (const auto& attr : node.attribute()) {
    if (attr.type() == onnx::AttributeProto::GRAPH || attr.type() == onnx::AttributeProto::GRAPHS) {
      continue;  // AddSubgraphs
    }
    GE_ASSIGN_OR_RETURN(ir::AttrValue value, ConvertAttribute(attr, label.get()));
    op.SetAttr(attr.name(), std::move(value));
  }
  op.SetAttr(ir::kAttrOpset, opset);
  if (!domain.empty()) op.SetAttr(kAttrOnnxDomain, std::string(domain));
  GE_ASSIGN_OR_RETURN(ir::Node * ir_node, AddNode(std::move(op)));
  if (is_original && HasGraphAttribute(node)) return AddSubgraphs(node, ir_node);
  return absl::OkStatus();
}

absl::Status GraphBuilder::AddSubgraphs(const onnx::NodeProto& node, ir::Node* ir_node) {
  // subgraph_names follows the op's order (If: then, else), not the order the
  // attributes happen to have in the proto.
  std::vector<const onnx::AttributeProto*> attrs;
  for (std::string_view first : {"then_branch", "else_branch"}) {
    if (const onnx::AttributeProto* a = FindAttribute(node, first)) attrs.push_back(a);
  }
  for (const auto& attr : node.attribute()) {
    if (attr.name() != "then_branch" && attr.name() != "else_branch") attrs.push_back(&attr);
  }
  const std::vector<std::string>& captures = model_.captures.NodeCaptures(node);
  ir::OpDesc& op = ir_node->mutable_op_desc();
  for (const onnx::AttributeProto* attr : attrs) {
    const std::string base = StrCat(ir_node->name(), "_", attr->name());
    if (attr->type() == onnx::AttributeProto::GRAPH) {
      GE_ASSIGN_OR_RETURN(std::string name, BuildChild(attr->g(), base, ir_node, captures));
      op.SetAttr(attr->name(), ir::GraphRef{name});
      op.mutable_subgraph_names().push_back(name);
    } else if (attr->type() == onnx::AttributeProto::GRAPHS) {
      std::vector<ir::GraphRef> refs;
      for (int k = 0; k < attr->graphs_size(); ++k) {
        GE_ASSIGN_OR_RETURN(std::string name,
                            BuildChild(attr->graphs(k), StrCat(base, "_", k), ir_node, captures));
        refs.push_back(ir::GraphRef{name});
        op.mutable_subgraph_names().push_back(name);
      }
      op.SetAttr(attr->name(), std::move(refs));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GraphBuilder::BuildChild(const onnx::GraphProto& g,
                                                     std::string_view base, ir::Node* ir_node,
                                                     const std::vector<std::string>& captures) {
  const std::string name = model_.UniqueSubgraphName(base);
  GE_ASSIGN_OR_RETURN(ir::Graph * sub,
                      graph_->AddSubgraph(std::make_unique<ir::Graph>(name), ir_node));
  GraphBuilder child(model_, g, sub, this);
  // Every subgraph of a node gets all of the node's captures, so that the
  // Data index of capture j is the same in each of them.
  absl::Status status = child.BuildSubgraph(captures);
  if (!status.ok()) return Annotate(status, StrCat("in subgraph '", name, "'"));
  return name;
}

absl::Status GraphBuilder::AddNetOutput() {
  ir::OpDesc op(namer_.Claim(ir::kNetOutput, ir::kNetOutput, /*may_take_reserved=*/false),
                std::string(ir::kNetOutput));
  for (const auto& out : proto_.output()) {
    GE_ASSIGN_OR_RETURN(ir::ValueType type, TypeOf(out.name()));
    op.AddInput(ir::IoDesc{out.name(), std::move(type)});
  }
  return AddNode(std::move(op)).status();
}

absl::Status GraphBuilder::ConnectEdges() {
  for (const PendingEdge& e : pending_) {
    const std::string& tensor = e.node->op_desc().input(e.port).name;
    auto it = producers_.find(tensor);
    if (it == producers_.end()) {
      return InvalidArgument("graph '", graph_->name(), "': node '", e.node->name(), "' input ",
                             e.port, " reads tensor '", tensor, "', which nothing produces");
    }
    GE_RETURN_IF_ERROR(graph_->AddEdge(it->second.node, it->second.index, e.node, e.port));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ir::Graph>> BuildGraphFromOnnx(const OnnxBuildContext& context) {
  const onnx::ModelProto& model = *context.model;
  const std::string name = model.graph().name().empty() ? "main" : model.graph().name();
  auto graph = std::make_unique<ir::Graph>(name);
  graph->mutable_attrs()[std::string(kAttrOnnxIrVersion)] =
      static_cast<int64_t>(model.ir_version());
  graph->mutable_attrs()[std::string(kAttrOnnxProducer)] = StrCat(
      model.producer_name(), model.producer_version().empty() ? "" : " ", model.producer_version());
  if (auto it = context.opsets.find(""); it != context.opsets.end()) {
    graph->mutable_attrs()[std::string(ir::kAttrOpset)] = it->second;
  }
  ModelState state(context);
  state.subgraph_names.insert(name);
  GraphBuilder builder(state, model.graph(), graph.get(), nullptr);
  GE_RETURN_IF_ERROR(builder.BuildMain());
  return graph;
}

}  // namespace ge::frontend
