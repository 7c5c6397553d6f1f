// IR <-> protobuf conversion. The readers treat the proto as hostile: every
// enum, size and reference is checked before it is used, element counts are
// checked against the bytes actually present before anything is allocated,
// and nesting is bounded, so malformed input yields InvalidArgument and
// never a crash or an unbounded allocation.
#include "base/ir/proto_convert.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "base/ir/graph_walk.h"
#include "base/status.h"

namespace ge::ir {
namespace {

constexpr int kMaxValueTypeDepth = 32;

bool HasStorage(const Tensor& t) {
  if (t.NumElements() == 0) return true;
  return t.raw_data() != nullptr && t.buffer()->size() >= t.byte_offset() + t.SizeInBytes();
}

absl::StatusOr<ValueType> ValueTypeFromProtoAt(const ge::v1::ValueTypeDef& proto, int depth) {
  if (depth > kMaxValueTypeDepth)
    return InvalidArgument("value type nests deeper than ", kMaxValueTypeDepth);
  if (!ge::v1::ValueTypeDef::Kind_IsValid(proto.kind())) {
    return InvalidArgument("unknown value type kind ", static_cast<int>(proto.kind()));
  }
  if (proto.kind() != ge::v1::ValueTypeDef::TENSOR) {
    if (!proto.has_element() || proto.has_tensor()) {
      return InvalidArgument("a sequence or optional type needs an element and no tensor");
    }
    GE_ASSIGN_OR_RETURN(ValueType element, ValueTypeFromProtoAt(proto.element(), depth + 1));
    return proto.kind() == ge::v1::ValueTypeDef::SEQUENCE ? ValueType::Sequence(std::move(element))
                                                          : ValueType::Optional(std::move(element));
  }
  if (proto.has_element()) return InvalidArgument("a tensor type has no element type");
  const ge::v1::TensorDescDef& t = proto.tensor();
  if (!IsValidDataType(t.dtype()))
    return InvalidArgument("unknown dtype ", static_cast<int>(t.dtype()));
  TensorDesc desc;
  desc.dtype = static_cast<DataType>(t.dtype());
  GE_ASSIGN_OR_RETURN(desc.shape, ShapeFromProto(t.shape()));
  if (!t.format().empty()) {
    std::optional<Format> format = ParseFormat(t.format());
    if (!format) return InvalidArgument("unknown format '", t.format(), "'");
    desc.format = *format;
  }
  return ValueType(std::move(desc));
}

// Checks that every byte of a bool tensor's raw data is 0 or 1: any other
// value read through a bool is undefined behaviour.
absl::Status CheckBoolBytes(const std::string& raw) {
  for (size_t i = 0; i < raw.size(); ++i) {
    if (static_cast<unsigned char>(raw[i]) > 1) {
      return InvalidArgument("bool tensor element ", i, " has byte value ",
                             static_cast<int>(static_cast<unsigned char>(raw[i])));
    }
  }
  return absl::OkStatus();
}

// Strict UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF), as protobuf checks proto3 `string` fields.
bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      extra = 1, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (extra == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// A reader rejects a whole message whose `string` field is not UTF-8, so
// the writer refuses such names up front and says which.
absl::Status RequireUtf8(std::string_view s, std::string_view what) {
  if (IsUtf8(s)) return absl::OkStatus();
  return InvalidArgument(what, " \"", StdView(absl::CHexEscape(AbslView(s))),
                         "\" is not valid UTF-8, which the proto's string fields require");
}

template <typename T, typename Repeated>
std::vector<T> ToVector(const Repeated& values) {
  return std::vector<T>(values.begin(), values.end());
}

absl::StatusOr<AttrValue> ListFromProto(const ge::v1::AttrValueDef& proto) {
  using Def = ge::v1::AttrValueDef;
  switch (proto.value_case()) {
    case Def::kInts:
      return AttrValue(ToVector<int64_t>(proto.ints().values()));
    case Def::kFloats:
      return AttrValue(ToVector<float>(proto.floats().values()));
    case Def::kStrings:
      return AttrValue(ToVector<std::string>(proto.strings().values()));
    case Def::kBools:
      return AttrValue(ToVector<bool>(proto.bools().values()));
    case Def::kGraphs: {
      std::vector<GraphRef> refs;
      for (const std::string& name : proto.graphs().values()) refs.push_back(GraphRef{name});
      return AttrValue(std::move(refs));
    }
    case Def::kTensors: {
      std::vector<Tensor> tensors;
      for (int i = 0; i < proto.tensors().values_size(); ++i) {
        auto t = TensorFromProto(proto.tensors().values(i));
        if (!t.ok()) return Annotate(t.status(), StrCat("tensor ", i));
        tensors.push_back(*std::move(t));
      }
      return AttrValue(std::move(tensors));
    }
    case Def::kShapes: {
      std::vector<Shape> shapes;
      for (int i = 0; i < proto.shapes().values_size(); ++i) {
        auto s = ShapeFromProto(proto.shapes().values(i));
        if (!s.ok()) return Annotate(s.status(), StrCat("shape ", i));
        shapes.push_back(*std::move(s));
      }
      return AttrValue(std::move(shapes));
    }
    default:
      break;
  }
  return InvalidArgument("attribute has no value");
}

absl::Status AttrsToProto(const AttrMap& attrs,
                          google::protobuf::Map<std::string, ge::v1::AttrValueDef>* proto) {
  for (const auto& [name, value] : attrs) {
    GE_RETURN_IF_ERROR(RequireUtf8(name, "attribute name"));
    absl::Status status = AttrValueToProto(value, &(*proto)[name]);
    if (!status.ok()) return Annotate(status, StrCat("attribute '", name, "'"));
  }
  return absl::OkStatus();
}

absl::Status AttrsFromProto(const google::protobuf::Map<std::string, ge::v1::AttrValueDef>& proto,
                            AttrMap* attrs) {
  for (const auto& [name, value] : proto) {
    if (name.empty()) return InvalidArgument("an attribute has an empty name");
    auto v = AttrValueFromProto(value);
    if (!v.ok()) return Annotate(v.status(), StrCat("attribute '", name, "'"));
    attrs->emplace(name, *std::move(v));
  }
  return absl::OkStatus();
}

// ---- Graphs to proto ----

absl::Status NodeToProto(const Node& node, ge::v1::NodeDef* proto) {
  const Graph* graph = node.owner_graph();
  const OpDesc& op = node.op_desc();
  GE_RETURN_IF_ERROR(RequireUtf8(node.name(), "node name"));
  GE_RETURN_IF_ERROR(RequireUtf8(node.type(), "op type"));
  for (const IoDesc& io : op.inputs()) GE_RETURN_IF_ERROR(RequireUtf8(io.name, "input name"));
  for (const IoDesc& io : op.outputs()) GE_RETURN_IF_ERROR(RequireUtf8(io.name, "output name"));
  for (const std::string& sub : op.subgraph_names()) {
    GE_RETURN_IF_ERROR(RequireUtf8(sub, "subgraph name"));
  }
  proto->set_name(node.name());
  proto->set_type(node.type());
  bool named_inputs = false;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const OutPort src = node.input(i);
    ge::v1::InputRef* ref = proto->add_inputs();
    if (src.node != nullptr) {
      if (src.node->owner_graph() != graph) {
        return FailedPrecondition("input ", i, " comes from '", src.node->name(),
                                  "' of another graph (dangling edge)");
      }
      ref->set_node(src.node->name());
      ref->set_port(src.index);
    }
    ValueTypeToProto(op.input(i).type, proto->add_input_types());
    named_inputs = named_inputs || !op.input(i).name.empty();
  }
  if (named_inputs) {
    for (const IoDesc& io : op.inputs()) proto->add_input_names(io.name);
  }
  bool named_outputs = false;
  for (const IoDesc& io : op.outputs()) {
    ValueTypeToProto(io.type, proto->add_output_types());
    named_outputs = named_outputs || !io.name.empty();
  }
  if (named_outputs) {
    for (const IoDesc& io : op.outputs()) proto->add_output_names(io.name);
  }
  for (const Node* c : node.control_inputs()) {
    if (c->owner_graph() != graph) {
      return FailedPrecondition("control input '", c->name(), "' is in another graph");
    }
    proto->add_control_inputs(c->name());
  }
  for (const std::string& sub : op.subgraph_names()) proto->add_subgraphs(sub);
  return AttrsToProto(op.attrs(), proto->mutable_attrs());
}

absl::Status GraphBodyToProto(const Graph& graph, ge::v1::GraphDef* proto) {
  GE_RETURN_IF_ERROR(RequireUtf8(graph.name(), "graph name"));
  proto->set_name(graph.name());
  GE_RETURN_IF_ERROR(Annotate(AttrsToProto(graph.attrs(), proto->mutable_attrs()),
                              StrCat("graph '", graph.name(), "'")));
  absl::Status status;
  graph.ForEachNode([&](const Node* node) {
    if (!status.ok()) return;
    status = NodeToProto(*node, proto->add_nodes());
    if (!status.ok()) {
      status = Annotate(status, StrCat("graph '", graph.name(), "' node '", node->name(), "'"));
    }
  });
  return status;
}

// ---- Graphs from proto ----

absl::Status CheckCount(int count, int expected, std::string_view what, bool may_be_empty) {
  if (count == expected || (may_be_empty && count == 0)) return absl::OkStatus();
  return InvalidArgument("has ", count, " ", what, " for ", expected, " ports");
}

absl::Status AddNodeFromProto(const ge::v1::NodeDef& def, Graph* graph) {
  if (def.name().empty()) return InvalidArgument("a node has an empty name");
  const std::string where = StrCat("node '", def.name(), "'");
  if (def.type().empty()) return InvalidArgument(where, " has an empty op type");
  GE_RETURN_IF_ERROR(Annotate(CheckCount(def.input_types_size(), def.inputs_size(), "input types",
                                         /*may_be_empty=*/false),
                              where));
  GE_RETURN_IF_ERROR(Annotate(CheckCount(def.input_names_size(), def.inputs_size(), "input names",
                                         /*may_be_empty=*/true),
                              where));
  GE_RETURN_IF_ERROR(Annotate(CheckCount(def.output_names_size(), def.output_types_size(),
                                         "output names", /*may_be_empty=*/true),
                              where));
  OpDesc op(def.name(), def.type());
  for (int i = 0; i < def.inputs_size(); ++i) {
    IoDesc io;
    auto type = ValueTypeFromProtoAt(def.input_types(i), 0);
    if (!type.ok()) return Annotate(type.status(), StrCat(where, " input ", i));
    io.type = *std::move(type);
    if (def.input_names_size() > 0) io.name = def.input_names(i);
    op.AddInput(std::move(io));
  }
  for (int o = 0; o < def.output_types_size(); ++o) {
    IoDesc io;
    auto type = ValueTypeFromProtoAt(def.output_types(o), 0);
    if (!type.ok()) return Annotate(type.status(), StrCat(where, " output ", o));
    io.type = *std::move(type);
    if (def.output_names_size() > 0) io.name = def.output_names(o);
    op.AddOutput(std::move(io));
  }
  GE_RETURN_IF_ERROR(Annotate(AttrsFromProto(def.attrs(), &op.mutable_attrs()), where));
  for (const std::string& sub : def.subgraphs()) {
    if (sub.empty()) return InvalidArgument(where, " names a subgraph with an empty name");
    op.mutable_subgraph_names().push_back(sub);
  }
  return graph->AddNode(std::move(op)).status();
}

absl::Status AddEdgesFromProto(const ge::v1::NodeDef& def, Graph* graph) {
  Node* node = graph->FindNode(def.name());
  for (int i = 0; i < def.inputs_size(); ++i) {
    const ge::v1::InputRef& ref = def.inputs(i);
    auto where = [&] { return StrCat("input ", i, " of node '", def.name(), "'"); };
    if (ref.node().empty()) {
      if (ref.port() != 0) return InvalidArgument(where(), " is absent but has port ", ref.port());
      continue;
    }
    Node* src = graph->FindNode(ref.node());
    if (src == nullptr) return InvalidArgument(where(), " names missing node '", ref.node(), "'");
    if (ref.port() < 0 || ref.port() >= src->num_outputs()) {
      return InvalidArgument(where(), " names port ", ref.port(), " of '", ref.node(),
                             "', which has ", src->num_outputs(), " outputs");
    }
    GE_RETURN_IF_ERROR(graph->AddEdge(src, ref.port(), node, i));
  }
  absl::flat_hash_set<const Node*> seen;
  for (const std::string& name : def.control_inputs()) {
    Node* src = graph->FindNode(name);
    if (src == nullptr || src == node || !seen.insert(src).second) {
      return InvalidArgument("control input '", name, "' of node '", def.name(), "' is ",
                             src == nullptr ? "missing"
                             : src == node  ? "the node itself"
                                            : "repeated");
    }
    GE_RETURN_IF_ERROR(graph->AddControlEdge(src, node));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Graph>> GraphBodyFromProto(const ge::v1::GraphDef& def) {
  if (def.name().empty()) return InvalidArgument("a graph has an empty name");
  auto graph = std::make_unique<Graph>(def.name());
  const std::string where = StrCat("graph '", def.name(), "'");
  GE_RETURN_IF_ERROR(Annotate(AttrsFromProto(def.attrs(), &graph->mutable_attrs()), where));
  for (const ge::v1::NodeDef& node : def.nodes()) {
    GE_RETURN_IF_ERROR(Annotate(AddNodeFromProto(node, graph.get()), where));
  }
  for (const ge::v1::NodeDef& node : def.nodes()) {
    GE_RETURN_IF_ERROR(Annotate(AddEdgesFromProto(node, graph.get()), where));
  }
  return graph;
}

// Points each subgraph at its parent and checks that the tree hangs
// together: parents exist and lead to the root, parent nodes list their
// subgraphs, and every listed subgraph names that node as its parent.
absl::Status LinkSubgraphs(const ge::v1::GraphDef& def, Graph* root,
                           const std::vector<Graph*>& subs) {
  for (int i = 0; i < def.subgraphs_size(); ++i) {
    const ge::v1::GraphDef& sd = def.subgraphs(i);
    Graph* parent =
        sd.parent_graph() == root->name() ? root : root->FindSubgraph(sd.parent_graph());
    if (parent == nullptr || parent == subs[i]) {
      return InvalidArgument("subgraph '", sd.name(), "' has parent graph '", sd.parent_graph(),
                             parent ? "', itself" : "', which does not exist");
    }
    Node* node = nullptr;
    if (!sd.parent_node().empty()) {
      node = parent->FindNode(sd.parent_node());
      const auto* names = node ? &node->op_desc().subgraph_names() : nullptr;
      if (names == nullptr || std::find(names->begin(), names->end(), sd.name()) == names->end()) {
        return InvalidArgument("subgraph '", sd.name(), "' has parent node '", sd.parent_node(),
                               "' in graph '", parent->name(), "', which does not list it");
      }
    }
    subs[i]->SetParent(parent, node);
  }
  for (size_t i = 0; i < subs.size(); ++i) {
    const Graph* g = subs[i];
    for (size_t steps = 0; g != nullptr && g != root && steps <= subs.size(); ++steps) {
      g = g->parent_graph();
    }
    if (g != root) return InvalidArgument("the parents of subgraph '", subs[i]->name(), "' loop");
  }
  std::vector<const Graph*> graphs = {root};
  graphs.insert(graphs.end(), subs.begin(), subs.end());
  for (const Graph* g : graphs) {
    absl::Status status;
    g->ForEachNode([&](const Node* node) {
      for (const std::string& name : node->op_desc().subgraph_names()) {
        const Graph* sub = status.ok() ? root->FindSubgraph(name) : nullptr;
        if (status.ok() && (sub == nullptr || sub->parent_node() != node)) {
          status = InvalidArgument(
              "node '", node->name(), "' of graph '", g->name(), "' names subgraph '", name,
              sub ? "', whose parent is another node" : "', which does not exist");
        }
      }
    });
    GE_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

}  // namespace

void ShapeToProto(const Shape& shape, ge::v1::ShapeDef* proto) {
  proto->Clear();
  if (shape.unknown_rank()) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : shape.dims()) proto->add_dims(d);
}

absl::StatusOr<Shape> ShapeFromProto(const ge::v1::ShapeDef& proto) {
  if (proto.unknown_rank()) {
    if (proto.dims_size() > 0) return InvalidArgument("a shape of unknown rank has dims");
    return Shape::UnknownRank();
  }
  for (int i = 0; i < proto.dims_size(); ++i) {
    if (proto.dims(i) < kUnknownDim) {
      return InvalidArgument("shape dim ", i, " is ", proto.dims(i), " (only -1 may be negative)");
    }
  }
  return Shape(absl::MakeConstSpan(proto.dims().data(), proto.dims_size()));
}

void ValueTypeToProto(const ValueType& type, ge::v1::ValueTypeDef* proto) {
  proto->Clear();
  switch (type.kind()) {
    case ValueType::Kind::kTensor: {
      proto->set_kind(ge::v1::ValueTypeDef::TENSOR);
      const TensorDesc& desc = type.tensor();
      ge::v1::TensorDescDef* t = proto->mutable_tensor();
      t->set_dtype(static_cast<ge::v1::DataType>(desc.dtype));
      ShapeToProto(desc.shape, t->mutable_shape());
      if (desc.format != Format::kND) t->set_format(std::string(FormatName(desc.format)));
      return;
    }
    case ValueType::Kind::kSequence:
      proto->set_kind(ge::v1::ValueTypeDef::SEQUENCE);
      break;
    case ValueType::Kind::kOptional:
      proto->set_kind(ge::v1::ValueTypeDef::OPTIONAL);
      break;
  }
  ValueTypeToProto(*type.element(), proto->mutable_element());
}

absl::StatusOr<ValueType> ValueTypeFromProto(const ge::v1::ValueTypeDef& proto) {
  return ValueTypeFromProtoAt(proto, 0);
}

absl::Status TensorToProto(const Tensor& tensor, ge::v1::TensorDef* proto) {
  proto->Clear();
  proto->set_dtype(static_cast<ge::v1::DataType>(tensor.dtype()));
  if (!tensor.defined()) return absl::OkStatus();
  if (!tensor.shape().IsFullyKnown()) {
    return InvalidArgument("tensor of shape ", tensor.shape().ToString(), " has unknown dims");
  }
  if (!HasStorage(tensor))
    return FailedPrecondition("tensor ", tensor.DebugString(0), " has no storage");
  for (int64_t d : tensor.shape().dims()) proto->add_dims(d);
  if (tensor.dtype() == DataType::kString) {
    for (int64_t i = 0; i < tensor.NumElements(); ++i)
      proto->add_string_data(tensor.data<std::string>()[i]);
  } else {
    proto->set_raw_data(tensor.raw_data(), tensor.SizeInBytes());
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> TensorFromProto(const ge::v1::TensorDef& proto) {
  if (!IsValidDataType(proto.dtype())) {
    return InvalidArgument("unknown tensor dtype ", static_cast<int>(proto.dtype()));
  }
  const auto dtype = static_cast<DataType>(proto.dtype());
  if (dtype == DataType::kUndefined) {
    if (proto.dims_size() > 0 || !proto.raw_data().empty() || proto.string_data_size() > 0) {
      return InvalidArgument("a tensor of undefined dtype has dims or data");
    }
    return Tensor();
  }
  Shape shape;
  for (int i = 0; i < proto.dims_size(); ++i) {
    if (proto.dims(i) < 0)
      return InvalidArgument("tensor dim ", i, " is negative (", proto.dims(i), ")");
    shape.push_back(proto.dims(i));
  }
  GE_ASSIGN_OR_RETURN(int64_t count, shape.NumElements());
  const std::string what = StrCat("tensor ", DataTypeName(dtype), shape.ToString());
  if (dtype == DataType::kString) {
    if (!proto.raw_data().empty() || proto.string_data_size() != count) {
      return InvalidArgument(what, " has ", proto.string_data_size(), " strings and ",
                             proto.raw_data().size(), " raw bytes; expected ", count, " strings");
    }
    GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
    for (int64_t i = 0; i < count; ++i) t.data<std::string>()[i] = proto.string_data(i);
    return t;
  }
  GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(dtype, count));
  if (proto.string_data_size() > 0 || proto.raw_data().size() != bytes) {
    return InvalidArgument(what, " has ", proto.raw_data().size(), " raw bytes and ",
                           proto.string_data_size(), " strings; expected ", bytes, " raw bytes");
  }
  if (dtype == DataType::kBool)
    GE_RETURN_IF_ERROR(Annotate(CheckBoolBytes(proto.raw_data()), what));
  GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  if (bytes > 0) std::memcpy(t.raw_data(), proto.raw_data().data(), bytes);
  return t;
}

absl::Status AttrValueToProto(const AttrValue& value, ge::v1::AttrValueDef* proto) {
  proto->Clear();
  using Kind = AttrValue::Kind;
  const auto& v = value.variant();
  switch (value.kind()) {
    case Kind::kInt:
      proto->set_i(std::get<int64_t>(v));
      break;
    case Kind::kFloat:
      proto->set_f(std::get<float>(v));
      break;
    case Kind::kString:
      proto->set_s(std::get<std::string>(v));
      break;
    case Kind::kBool:
      proto->set_b(std::get<bool>(v));
      break;
    case Kind::kTensor:
      return TensorToProto(std::get<Tensor>(v), proto->mutable_t());
    case Kind::kGraph:
      GE_RETURN_IF_ERROR(RequireUtf8(std::get<GraphRef>(v).name, "graph reference"));
      proto->set_g(std::get<GraphRef>(v).name);
      break;
    case Kind::kShape:
      ShapeToProto(std::get<Shape>(v), proto->mutable_shape());
      break;
    case Kind::kInts:
      proto->mutable_ints();
      for (int64_t x : std::get<std::vector<int64_t>>(v)) proto->mutable_ints()->add_values(x);
      break;
    case Kind::kFloats:
      proto->mutable_floats();
      for (float x : std::get<std::vector<float>>(v)) proto->mutable_floats()->add_values(x);
      break;
    case Kind::kStrings:
      proto->mutable_strings();
      for (const auto& x : std::get<std::vector<std::string>>(v))
        proto->mutable_strings()->add_values(x);
      break;
    case Kind::kBools:
      proto->mutable_bools();
      for (bool x : std::get<std::vector<bool>>(v)) proto->mutable_bools()->add_values(x);
      break;
    case Kind::kTensors: {
      auto* list = proto->mutable_tensors();
      const auto& tensors = std::get<std::vector<Tensor>>(v);
      for (size_t i = 0; i < tensors.size(); ++i) {
        GE_RETURN_IF_ERROR(
            Annotate(TensorToProto(tensors[i], list->add_values()), StrCat("tensor ", i)));
      }
      break;
    }
    case Kind::kGraphs:
      proto->mutable_graphs();
      for (const GraphRef& g : std::get<std::vector<GraphRef>>(v)) {
        GE_RETURN_IF_ERROR(RequireUtf8(g.name, "graph reference"));
        proto->mutable_graphs()->add_values(g.name);
      }
      break;
    case Kind::kShapes:
      proto->mutable_shapes();
      for (const Shape& s : std::get<std::vector<Shape>>(v))
        ShapeToProto(s, proto->mutable_shapes()->add_values());
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<AttrValue> AttrValueFromProto(const ge::v1::AttrValueDef& proto) {
  using Def = ge::v1::AttrValueDef;
  switch (proto.value_case()) {
    case Def::kI:
      return AttrValue(proto.i());
    case Def::kF:
      return AttrValue(proto.f());
    case Def::kS:
      return AttrValue(proto.s());
    case Def::kB:
      return AttrValue(proto.b());
    case Def::kT: {
      GE_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(proto.t()));
      return AttrValue(std::move(t));
    }
    case Def::kG:
      return AttrValue(GraphRef{proto.g()});
    case Def::kShape: {
      GE_ASSIGN_OR_RETURN(Shape s, ShapeFromProto(proto.shape()));
      return AttrValue(std::move(s));
    }
    default:
      return ListFromProto(proto);
  }
}

absl::Status GraphToProto(const Graph& graph, ge::v1::GraphDef* proto) {
  proto->Clear();
  GE_RETURN_IF_ERROR(GraphBodyToProto(graph, proto));
  for (const Graph* sub : SubgraphsBelow(graph)) {
    if (sub->parent_graph() == nullptr) {
      return FailedPrecondition("subgraph '", sub->name(), "' has no parent graph");
    }
    ge::v1::GraphDef* def = proto->add_subgraphs();
    GE_RETURN_IF_ERROR(GraphBodyToProto(*sub, def));
    def->set_parent_graph(sub->parent_graph()->name());
    if (sub->parent_node() != nullptr) def->set_parent_node(sub->parent_node()->name());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Graph>> GraphFromProto(const ge::v1::GraphDef& proto) {
  if (!proto.parent_graph().empty() || !proto.parent_node().empty()) {
    return InvalidArgument("root graph '", proto.name(), "' names a parent");
  }
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> root, GraphBodyFromProto(proto));
  std::vector<Graph*> subs;
  for (const ge::v1::GraphDef& def : proto.subgraphs()) {
    if (def.subgraphs_size() > 0) {
      return InvalidArgument("subgraph '", def.name(), "' holds subgraphs; only the root may");
    }
    GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> sub, GraphBodyFromProto(def));
    GE_ASSIGN_OR_RETURN(Graph * added, root->AddSubgraph(std::move(sub), nullptr));
    subs.push_back(added);
  }
  GE_RETURN_IF_ERROR(LinkSubgraphs(proto, root.get(), subs));
  return root;
}

}  // namespace ge::ir
