// Ingestion checks: client input without file-system reach, operator input
// with its files resolved beneath the weights root (see ingest.h).
#include "session/ingest.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <map>
#include <system_error>

#include "base/io/external_data.h"
#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/variables/file_constant.h"

namespace ge::session {
namespace {

namespace fs = std::filesystem;
using Kind = ir::AttrValue::Kind;

constexpr std::string_view kFileConstant = "FileConstant";

// Attributes that name files, on any node.
bool IsPathAttribute(std::string_view name) {
  return name == variables::kAttrFilePath || name == io::kAttrLocation || name == variables::kAttrFileId ||
         name == io::kAttrModelDir;
}

// The `_`-prefixed attributes a client's source graph may carry (the
// documented user attributes of docs/options.md), with their kinds.
const std::map<std::string_view, Kind, std::less<>>& UserAttributes() {
  static const auto* table = new std::map<std::string_view, Kind, std::less<>>{
      {"_ge_engine", Kind::kString},
      {"_host_exec", Kind::kBool},
      {"_force_unknown_shape", Kind::kBool},
      {"_is_support_addr_refresh", Kind::kBool},
      {"_tiling_depend", Kind::kBool},
      {"_support_tiling_offload", Kind::kBool},
      {"_stage_level", Kind::kInt},
      {"_stream_label", Kind::kString},
      {"_control_flow_group", Kind::kInt},
      {"_ref_variable", Kind::kBool},
      // Structure a GraphDef spells out: an op's domain and opset, an
      // InnerData's parent input, a graph input's default value.
      {"_onnx_domain", Kind::kString},
      {"_onnx_opset", Kind::kInt},
      {"_parent_index", Kind::kInt},
      {"_default_value", Kind::kTensor},
  };
  return *table;
}

// What the importer and the compiler add, as a compiled model holds them.
// A model with none of these but its graphs is still checked by the .gem
// loader; this list only keeps unknown (and path) attributes out.
const std::map<std::string_view, Kind, std::less<>>& CompilerAttributes() {
  static const auto* table = new std::map<std::string_view, Kind, std::less<>>{
      {"_engine_name", Kind::kString},
      {"_is_unknown_shape", Kind::kBool},
      {"_user_shape", Kind::kShape},
      {"_multi_batch_case", Kind::kBool},
      {"_dynamic_shape_partitioned", Kind::kBool},
      {"_partitioned_by", Kind::kString},
      {"_peer_node", Kind::kString},
      {"_peer_port", Kind::kInt},
      {"_control", Kind::kBool},
      {"_var_format_changes", Kind::kInt},
      {"_var_trans_road", Kind::kStrings},
      {"_var_original_shape", Kind::kShape},
      {"_var_original_dtype", Kind::kInt},
      {"_ref_var_src_var_name", Kind::kString},
      {"_var_name", Kind::kString},
      {"_init_value", Kind::kTensor},
      {"_const_inputs", Kind::kInts},
      {"_var_logic_addr", Kind::kInt},
      {"_onnx_capture", Kind::kBool},
      {"_onnx_num_captures", Kind::kInt},
      {"_onnx_ir_version", Kind::kInt},
      {"_onnx_producer", Kind::kString},
  };
  return *table;
}

std::string_view KindName(Kind kind) {
  static constexpr std::string_view kNames[] = {"int",  "float",  "string",  "bool",  "tensor",  "graph",  "shape",
                                                "ints", "floats", "strings", "bools", "tensors", "graphs", "shapes"};
  const size_t i = static_cast<size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

// One attribute of client input; `owner` names the node or graph.
absl::Status CheckClientAttribute(const std::string& owner, std::string_view name, const ir::AttrValue& value,
                                  AttrPolicy policy) {
  if (IsPathAttribute(name)) {
    return InvalidArgument(owner, ": attribute '", name,
                           "' names a file of the daemon's host; requests may not (only models the operator "
                           "configures may read files)");
  }
  if (name.empty() || name.front() != '_') return absl::OkStatus();
  std::optional<Kind> kind;
  if (auto it = UserAttributes().find(name); it != UserAttributes().end()) {
    kind = it->second;
  } else if (policy == AttrPolicy::kCompiled) {
    if (auto c = CompilerAttributes().find(name); c != CompilerAttributes().end()) kind = c->second;
  }
  if (!kind) {
    return InvalidArgument(owner, ": attribute '", name, "' is reserved (a `_` attribute that is not one of the ",
                           policy == AttrPolicy::kCompiled ? "user or compiler" : "user",
                           " attributes listed in docs/options.md)");
  }
  if (value.kind() != *kind) {
    return InvalidArgument(owner, ": attribute '", name, "' must be a ", KindName(*kind), ", got a ",
                           KindName(value.kind()));
  }
  return absl::OkStatus();
}

absl::Status CheckOneGraph(const ir::Graph& graph, AttrPolicy policy) {
  const std::string graph_label = StrCat("graph '", graph.name(), "'");
  for (const auto& [name, value] : graph.attrs()) {
    GE_RETURN_IF_ERROR(CheckClientAttribute(graph_label, name, value, policy));
  }
  for (const ir::Node* node : graph.nodes()) {
    const std::string label = StrCat("node '", node->name(), "' (", node->type(), ")");
    if (node->type() == kFileConstant) {
      return InvalidArgument(label, ": FileConstant reads a file of the daemon's host; requests may not",
                             policy == AttrPolicy::kCompiled
                                 ? " (a .gem sent as bytes must hold its weights: compile it without "
                                   "--external-weight)"
                                 : "");
    }
    for (const auto& [name, value] : node->op_desc().attrs()) {
      GE_RETURN_IF_ERROR(CheckClientAttribute(label, name, value, policy));
    }
  }
  return absl::OkStatus();
}

// ONNX: tensors stored as external data.
absl::Status CheckOnnxTensor(const onnx::TensorProto& tensor, const std::string& owner) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL || tensor.external_data_size() > 0) {
    return InvalidArgument(owner, ": tensor '", tensor.name(),
                           "' is stored as external data (data_location EXTERNAL), which names a file of the "
                           "daemon's host; send the model with its weights inside it");
  }
  return absl::OkStatus();
}

absl::Status CheckOnnxGraph(const onnx::GraphProto& graph);

// A node of a client's source graph by its type and attribute names.
absl::Status CheckNodeByName(const std::string& label, std::string_view type, std::string_view attribute) {
  if (type == kFileConstant) {
    return InvalidArgument(label, ": FileConstant reads a file of the daemon's host; requests may not");
  }
  if (IsPathAttribute(attribute)) {
    return InvalidArgument(label, ": attribute '", attribute, "' names a file of the daemon's host; requests may not");
  }
  if (!attribute.empty() && attribute.front() == '_' && !UserAttributes().contains(attribute)) {
    return InvalidArgument(label, ": attribute '", attribute,
                           "' is reserved (a `_` attribute that is not one of the user attributes listed in "
                           "docs/options.md)");
  }
  return absl::OkStatus();
}

absl::Status CheckOnnxNode(const onnx::NodeProto& node) {
  const std::string label = StrCat("node '", node.name(), "' (", node.op_type(), ")");
  GE_RETURN_IF_ERROR(CheckNodeByName(label, node.op_type(), ""));
  for (const onnx::AttributeProto& attr : node.attribute()) {
    GE_RETURN_IF_ERROR(CheckNodeByName(label, node.op_type(), attr.name()));
    const std::string owner = StrCat(label, " attribute '", attr.name(), "'");
    if (attr.has_t()) GE_RETURN_IF_ERROR(CheckOnnxTensor(attr.t(), owner));
    for (const onnx::TensorProto& t : attr.tensors()) GE_RETURN_IF_ERROR(CheckOnnxTensor(t, owner));
    if (attr.has_sparse_tensor()) {
      GE_RETURN_IF_ERROR(CheckOnnxTensor(attr.sparse_tensor().values(), owner));
      GE_RETURN_IF_ERROR(CheckOnnxTensor(attr.sparse_tensor().indices(), owner));
    }
    if (attr.has_g()) GE_RETURN_IF_ERROR(CheckOnnxGraph(attr.g()));
    for (const onnx::GraphProto& g : attr.graphs()) GE_RETURN_IF_ERROR(CheckOnnxGraph(g));
  }
  return absl::OkStatus();
}

absl::Status CheckOnnxGraph(const onnx::GraphProto& graph) {
  const std::string label = StrCat("graph '", graph.name(), "' initializer");
  for (const onnx::TensorProto& t : graph.initializer()) GE_RETURN_IF_ERROR(CheckOnnxTensor(t, label));
  for (const onnx::SparseTensorProto& t : graph.sparse_initializer()) {
    GE_RETURN_IF_ERROR(CheckOnnxTensor(t.values(), label));
    GE_RETURN_IF_ERROR(CheckOnnxTensor(t.indices(), label));
  }
  for (const onnx::NodeProto& node : graph.node()) GE_RETURN_IF_ERROR(CheckOnnxNode(node));
  return absl::OkStatus();
}

// Every external tensor of an operator's ONNX graph, with its location.
absl::Status ForEachExternalTensor(const onnx::GraphProto& graph,
                                   const std::function<absl::Status(const onnx::TensorProto&)>& fn) {
  auto visit = [&fn](const onnx::TensorProto& t) {
    return t.data_location() == onnx::TensorProto::EXTERNAL ? fn(t) : absl::OkStatus();
  };
  for (const onnx::TensorProto& t : graph.initializer()) GE_RETURN_IF_ERROR(visit(t));
  for (const onnx::SparseTensorProto& t : graph.sparse_initializer()) {
    GE_RETURN_IF_ERROR(visit(t.values()));
    GE_RETURN_IF_ERROR(visit(t.indices()));
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_t()) GE_RETURN_IF_ERROR(visit(attr.t()));
      for (const onnx::TensorProto& t : attr.tensors()) GE_RETURN_IF_ERROR(visit(t));
      if (attr.has_g()) GE_RETURN_IF_ERROR(ForEachExternalTensor(attr.g(), fn));
      for (const onnx::GraphProto& g : attr.graphs()) GE_RETURN_IF_ERROR(ForEachExternalTensor(g, fn));
    }
  }
  return absl::OkStatus();
}

bool IsBeneath(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

}  // namespace

absl::Status CheckClientOptions(const OptionMap& options, std::string_view where) {
  for (const auto& [key, value] : options) {
    const OptionSpec* spec = FindOptionSpec(key);
    if (spec != nullptr && spec->operator_only) {
      return InvalidArgument(where, where.empty() ? "" : ": ", "option '", key,
                             "' names a path or file on the daemon's host and may only be set by the operator "
                             "(the daemon's configuration, gectl), not over RPC");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckClientGraph(const ir::Graph& graph, AttrPolicy policy) {
  GE_RETURN_IF_ERROR(CheckOneGraph(graph, policy));
  for (const ir::Graph* sub : graph.subgraphs()) GE_RETURN_IF_ERROR(CheckOneGraph(*sub, policy));
  return absl::OkStatus();
}

absl::Status CheckClientOp(std::string_view op_type, const std::vector<std::string>& attributes) {
  const std::string label = StrCat("ExecuteOp op (", op_type, ")");
  GE_RETURN_IF_ERROR(CheckNodeByName(label, op_type, ""));
  for (const std::string& name : attributes) GE_RETURN_IF_ERROR(CheckNodeByName(label, op_type, name));
  return absl::OkStatus();
}

absl::Status CheckClientOnnx(const onnx::ModelProto& model) {
  GE_RETURN_IF_ERROR(CheckOnnxGraph(model.graph()));
  for (const onnx::FunctionProto& function : model.functions()) {
    for (const onnx::NodeProto& node : function.node()) GE_RETURN_IF_ERROR(CheckOnnxNode(node));
  }
  return absl::OkStatus();
}

absl::Status CheckClientCompiledModel(const runtime::CompiledModel& model) {
  if (model.graph != nullptr) GE_RETURN_IF_ERROR(CheckClientGraph(*model.graph, AttrPolicy::kCompiled));
  if (model.partitioned != nullptr) {
    GE_RETURN_IF_ERROR(CheckClientGraph(*model.partitioned, AttrPolicy::kCompiled));
  }
  for (const variables::VarInfo& var : model.variables.vars) {
    if (!var.file.path.empty() || var.kind == variables::VarKind::kFileConstant) {
      return InvalidArgument("variable '", var.name, "' reads file '", var.file.path,
                             "' of the daemon's host; requests may not (compile the model without "
                             "--external-weight)");
    }
  }
  return CheckClientOptions(model.options, "the compiled model's options");
}

absl::StatusOr<std::string> ResolveBeneath(const std::string& root, const std::string& path) {
  std::error_code ec;
  const fs::path real_root = fs::canonical(root, ec);
  if (ec) return InvalidArgument("weights root '", root, "' cannot be resolved: ", ec.message());
  fs::path p(path);
  if (p.is_relative()) p = real_root / p;
  // weakly_canonical resolves every symlink of the part that exists.
  const fs::path real = fs::weakly_canonical(p, ec);
  if (ec) return InvalidArgument("'", path, "' cannot be resolved: ", ec.message());
  if (!IsBeneath(real, real_root)) {
    return InvalidArgument("'", path, "' resolves to ", real.string(), ", outside the weights root ",
                           real_root.string());
  }
  return real.string();
}

absl::Status CheckOperatorOnnx(const onnx::ModelProto& model, const std::string& model_dir,
                               const std::string& weights_root) {
  return ForEachExternalTensor(model.graph(), [&](const onnx::TensorProto& t) -> absl::Status {
    std::string location;
    for (const auto& entry : t.external_data()) {
      if (entry.key() == "location") location = entry.value();
    }
    // The importer refuses absolute locations and ones leaving the model's
    // directory; the file must also lie beneath the weights root.
    GE_ASSIGN_OR_RETURN(fs::path file, io::ResolveExternalDataPath(model_dir, location, t.name()));
    absl::StatusOr<std::string> real = ResolveBeneath(weights_root, file.string());
    if (!real.ok()) {
      return InvalidArgument("tensor '", t.name(), "' location '", location, "': ", real.status().message());
    }
    return absl::OkStatus();
  });
}

absl::Status ResolveOperatorFiles(ir::Graph& graph, const std::string& weights_root, const OptionMap& options,
                                  std::vector<std::string>* files) {
  std::vector<ir::Graph*> graphs = {&graph};
  for (ir::Graph* sub : graph.subgraphs()) graphs.push_back(sub);
  std::optional<variables::ValueBins> bins;
  for (ir::Graph* g : graphs) {
    for (ir::Node* node : g->nodes()) {
      if (node->type() != kFileConstant) continue;
      ir::OpDesc& op = node->mutable_op_desc();
      const std::string label = StrCat("node '", node->name(), "' (FileConstant)");
      const std::string model_dir = op.GetAttrOr<std::string>(io::kAttrModelDir, "");
      std::string attribute, path;
      if (auto file_path = op.GetAttrOr<std::string>(variables::kAttrFilePath, ""); !file_path.empty()) {
        attribute = variables::kAttrFilePath;
        fs::path p(file_path);
        path = (p.is_relative() && !model_dir.empty() ? fs::path(model_dir) / p : p).string();
      } else if (auto id = op.GetAttrOr<std::string>(variables::kAttrFileId, ""); !id.empty()) {
        attribute = variables::kAttrFileId;
        if (!bins) {
          GE_ASSIGN_OR_RETURN(bins, variables::ParseValueBins(OptionOrDefault(options, "ge.exec.value_bins")));
        }
        auto it = bins->find(id);
        if (it == bins->end()) continue;  // the runtime names the missing id
        path = it->second;
      } else if (auto location = op.GetAttrOr<std::string>(io::kAttrLocation, ""); !location.empty()) {
        attribute = io::kAttrLocation;
        fs::path p(location);
        path = (p.is_relative() ? fs::path(model_dir.empty() ? weights_root : model_dir) / p : p).string();
      } else {
        continue;  // names no file: the runtime says so
      }
      absl::StatusOr<std::string> real = ResolveBeneath(weights_root, path);
      if (!real.ok()) return InvalidArgument(label, ": attribute '", attribute, "': ", real.status().message());
      if (files != nullptr) files->push_back(*real);
      // The runtime opens file_path as resolved here (links followed once).
      if (attribute == variables::kAttrFilePath) op.SetAttr(variables::kAttrFilePath, *real);
    }
  }
  return absl::OkStatus();
}

}  // namespace ge::session
