// The model summary behind `gectl inspect`. Types are printed from the
// TypeProto directly (not through ir::ValueType) so that symbolic dims keep
// their names.
#include "compiler/frontend/onnx_inspect.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_join.h"
#include "base/dtype.h"
#include "base/status.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/frontend/onnx_model_check.h"

namespace ge::frontend {
namespace {

std::string ElemTypeName(int32_t elem_type) {
  if (elem_type <= 0 || !IsValidDataType(elem_type)) return StrCat("type", elem_type);
  return std::string(DataTypeName(static_cast<DataType>(elem_type)));
}

std::string TypeString(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& t = type.tensor_type();
      std::string out = t.elem_type() == 0 ? "?" : ElemTypeName(t.elem_type());
      if (!t.has_shape()) return out + "[...]";
      std::vector<std::string> dims;
      for (const auto& d : t.shape().dim()) {
        if (d.has_dim_value()) {
          dims.push_back(StrCat(d.dim_value()));
        } else if (d.has_dim_param()) {
          dims.push_back(d.dim_param());
        } else {
          dims.push_back("?");
        }
      }
      return StrCat(out, "[", absl::StrJoin(dims, ","), "]");
    }
    case onnx::TypeProto::kSequenceType:
      return StrCat("seq<", TypeString(type.sequence_type().elem_type()), ">");
    case onnx::TypeProto::kOptionalType:
      return StrCat("opt<", TypeString(type.optional_type().elem_type()), ">");
    case onnx::TypeProto::kMapType:
      return StrCat("map<", ElemTypeName(type.map_type().key_type()), ",",
                    TypeString(type.map_type().value_type()), ">");
    case onnx::TypeProto::kSparseTensorType:
      return "sparse";
    default:
      return "?";
  }
}

int64_t EmbeddedBytes(const onnx::TensorProto& t) {
  int64_t bytes = static_cast<int64_t>(t.raw_data().size());
  bytes += t.float_data_size() * 4 + t.int32_data_size() * 4 + t.int64_data_size() * 8 +
           t.uint64_data_size() * 8 + t.double_data_size() * 8;
  for (const auto& s : t.string_data()) bytes += static_cast<int64_t>(s.size());
  return bytes;
}

void CountNodes(const onnx::GraphProto& graph, std::map<std::string, int64_t>& histogram,
                OnnxModelSummary& summary) {
  for (const auto& node : graph.node()) {
    const std::string_view domain = NormalizeDomain(node.domain());
    ++histogram[domain.empty() ? node.op_type() : StrCat(domain, "::", node.op_type())];
    ++summary.num_nodes;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) {
        ++summary.num_subgraphs;
        CountNodes(attr.g(), histogram, summary);
      }
      for (const auto& g : attr.graphs()) {
        ++summary.num_subgraphs;
        CountNodes(g, histogram, summary);
      }
    }
  }
}

}  // namespace

OnnxModelSummary InspectOnnxModel(const onnx::ModelProto& model) {
  OnnxModelSummary s;
  s.ir_version = model.ir_version();
  s.producer_name = model.producer_name();
  s.producer_version = model.producer_version();
  const onnx::GraphProto& graph = model.graph();
  s.graph_name = graph.name();
  for (const auto& imp : model.opset_import()) {
    s.opset_imports.emplace_back(DomainForMessages(NormalizeDomain(imp.domain())), imp.version());
  }
  StringSet initializers;
  for (const auto& init : graph.initializer()) {
    initializers.insert(init.name());
    ++s.num_initializers;
    if (init.data_location() == onnx::TensorProto::EXTERNAL) ++s.num_external_initializers;
    s.initializer_bytes += EmbeddedBytes(init);
  }
  for (const auto& in : graph.input()) {
    const bool is_initializer = initializers.contains(in.name());
    if (is_initializer && model.ir_version() < 4) continue;
    s.inputs.push_back({in.name(), TypeString(in.type()), is_initializer});
  }
  for (const auto& out : graph.output()) s.outputs.push_back({out.name(), TypeString(out.type())});
  std::map<std::string, int64_t> histogram;
  CountNodes(graph, histogram, s);
  s.op_histogram.assign(histogram.begin(), histogram.end());
  std::stable_sort(s.op_histogram.begin(), s.op_histogram.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return s;
}

absl::StatusOr<OnnxModelSummary> InspectOnnx(const std::string& path) {
  GE_ASSIGN_OR_RETURN(std::string bytes, ReadOnnxFile(path));
  GE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseOnnxModel(bytes, path));
  return InspectOnnxModel(model);
}

std::string OnnxModelSummary::ToString() const {
  std::string out = StrCat("ONNX model: graph '", graph_name, "', IR version ", ir_version);
  if (!producer_name.empty())
    StrAppend(&out, ", produced by ", producer_name, " ", producer_version);
  out += "\nopsets:";
  for (const auto& [domain, version] : opset_imports) StrAppend(&out, " ", domain, "=", version);
  out += "\ninputs:\n";
  for (const auto& v : inputs) {
    StrAppend(&out, "  ", v.name, ": ", v.type, v.has_default ? " (has default)" : "", "\n");
  }
  out += "outputs:\n";
  for (const auto& v : outputs) StrAppend(&out, "  ", v.name, ": ", v.type, "\n");
  StrAppend(&out, "nodes: ", num_nodes, " (", num_subgraphs, " subgraphs)\n");
  for (const auto& [op, count] : op_histogram) StrAppend(&out, "  ", op, ": ", count, "\n");
  StrAppend(&out, "initializers: ", num_initializers, " (", initializer_bytes, " bytes embedded, ",
            num_external_initializers, " external)\n");
  return out;
}

}  // namespace ge::frontend
