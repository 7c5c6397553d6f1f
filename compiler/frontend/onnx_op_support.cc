// The unsupported-op message. A user who sees "op 'Gelu' is not supported"
// wants to know what to do next: whether a neighbouring name exists
// ("did you mean"), which opsets ged accepts, and otherwise what it has.
#include "compiler/frontend/onnx_op_support.h"

#include <algorithm>
#include <cctype>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "compiler/frontend/onnx_model_check.h"
#include "onnx/defs/schema.h"

namespace ge::frontend {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

size_t CommonPrefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

std::vector<std::string> CloseMatches(std::string_view name,
                                      const std::vector<std::string>& candidates) {
  const std::string target = Lower(name);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    const std::string lc = Lower(c);
    const size_t distance = EditDistance(target, lc);
    const size_t prefix = CommonPrefix(target, lc);
    const bool prefix_match = prefix >= 3 && (prefix == lc.size() || prefix == target.size());
    if (distance <= 2 || prefix_match) scored.emplace_back(distance, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (auto& [distance, c] : scored) out.push_back(std::move(c));
  return out;
}

absl::Status UnsupportedOpError(const onnx::NodeProto& node, std::string_view node_label,
                                std::string_view domain, int64_t opset,
                                const ops::OpRegistry& registry) {
  std::vector<std::string> registered;
  for (const ops::OpSchema* schema : registry.All()) {
    if (schema->domain == domain) registered.push_back(schema->type);
  }
  std::string message =
      StrCat(node_label, ": op '", node.op_type(), "' (domain '", DomainForMessages(domain),
             "', opset ", opset, ") is not supported by ged. ged supports opsets ", kMinOnnxOpset,
             "..", kMaxOnnxOpset, " of the default domain (ai.onnx)");
  if (!domain.empty() && registered.empty()) {
    StrAppend(&message, " and registers no op in domain '", domain, "'");
    return InvalidArgument(message);
  }
  std::vector<std::string> close = CloseMatches(node.op_type(), registered);
  if (!close.empty()) {
    if (close.size() > 8) close.resize(8);
    StrAppend(&message, "; close matches: ", absl::StrJoin(close, ", "));
  } else {
    std::sort(registered.begin(), registered.end());
    StrAppend(&message, "; registered op types: ", absl::StrJoin(registered, ", "));
  }
  return InvalidArgument(message);
}

absl::Status CheckOpsSupported(const onnx::GraphProto& graph, const OpsetMap& opsets,
                               const ops::OpRegistry& registry, const OpsetAdapterTable& adapters) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    // Built for errors only: eagerly it is an allocation per node.
    auto label = [&] { return StrCat("graph '", graph.name(), "': ", NodeLabel(node, i)); };
    const std::string_view domain = NormalizeDomain(node.domain());
    auto opset = opsets.find(domain);
    if (opset == opsets.end()) {
      return InvalidArgument(label(), ": uses domain '", DomainForMessages(domain),
                             "', which the model does not import");
    }
    if (domain.empty()) {
      const onnx::OpSchema* schema =
          onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset->second), "");
      if (schema == nullptr)
        return UnsupportedOpError(node, label(), domain, opset->second, registry);
      if (node.op_type() == "Constant") continue;
      if (adapters.Find(node.op_type(), schema->since_version()) != nullptr) continue;
      if (opset->second < kMinCanonicalOnnxOpset) {
        const onnx::OpSchema* at7 =
            onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(kMinCanonicalOnnxOpset), "");
        if (at7 == nullptr || at7->since_version() != schema->since_version()) {
          return InvalidArgument(label(), ": the model's opset ", opset->second, " gives ", node.op_type(), "-",
                                 schema->since_version(), ", which changed by opset ", kMinCanonicalOnnxOpset,
                                 "; ged reads ops from before opset ", kMinCanonicalOnnxOpset,
                                 " only where they did not change (convert the model with "
                                 "onnx.version_converter)");
        }
      }
    }
    if (registry.Find(node.op_type(), domain) == nullptr) {
      return UnsupportedOpError(node, label(), domain, opset->second, registry);
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) GE_RETURN_IF_ERROR(CheckOpsSupported(attr.g(), opsets, registry, adapters));
      for (const auto& g : attr.graphs()) {
        GE_RETURN_IF_ERROR(CheckOpsSupported(g, opsets, registry, adapters));
      }
    }
  }
  return absl::OkStatus();
}

bool GedInferenceCoversGraph(const onnx::GraphProto& graph, const OpsetMap& opsets,
                             const ops::OpRegistry& registry, const OpsetAdapterTable& adapters) {
  auto opset = opsets.find("");
  if (opset == opsets.end()) return graph.node_size() == 0;
  // A model repeats a handful of op types: ask both registries once per type.
  absl::flat_hash_map<std::string_view, bool> covered_types;
  for (const onnx::NodeProto& node : graph.node()) {
    if (!NormalizeDomain(node.domain()).empty()) return false;
    for (const auto& attr : node.attribute()) {
      if (attr.type() == onnx::AttributeProto::GRAPH ||
          attr.type() == onnx::AttributeProto::GRAPHS) {
        return false;
      }
    }
    auto [it, inserted] = covered_types.try_emplace(node.op_type(), false);
    if (inserted) {
      const onnx::OpSchema* schema =
          onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset->second), "");
      const ops::OpSchema* ours = registry.Find(node.op_type(), "");
      it->second = node.op_type() == "Constant" ||
                   (schema != nullptr &&
                    adapters.Find(node.op_type(), schema->since_version()) == nullptr &&
                    ours != nullptr && ours->infer);
    }
    if (!it->second) return false;
  }
  return true;
}

}  // namespace ge::frontend
