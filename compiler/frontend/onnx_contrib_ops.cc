// Lowering of ONNX Runtime's com.microsoft contrib ops into default-domain
// ONNX nodes (see onnx_contrib_ops.h). Each rewrite keeps the original
// node's output tensor names, so consumers need no rewiring; helper tensors
// get fresh names unused anywhere in the model.
#include "compiler/frontend/onnx_contrib_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "base/status.h"
#include "base/strings.h"
#include "compiler/frontend/onnx_contrib_lowering.h"

namespace ge::frontend {
namespace {

using contrib::LowerFn;
using contrib::Lowering;
using contrib::ModelFacts;
using contrib::NodeList;

const StringMap<LowerFn>& ContribRules() {
  static const auto* rules = [] {
    auto* r = new StringMap<LowerFn>;
    contrib::AddQuantizedRules(*r);
    contrib::AddTransformerRules(*r);
    return r;
  }();
  return *rules;
}

absl::Status LowerGraph(onnx::GraphProto& graph, int64_t opset, ModelFacts& facts) {
  bool any = false;
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) GE_RETURN_IF_ERROR(LowerGraph(*attr.mutable_g(), opset, facts));
      for (auto& sub : *attr.mutable_graphs()) GE_RETURN_IF_ERROR(LowerGraph(sub, opset, facts));
    }
    const std::string_view domain = NormalizeDomain(node.domain());
    if (domain == kMicrosoftDomain) {
      any = true;
    } else if (domain.empty() && ((node.op_type() == "LayerNormalization" && opset < 17) ||
                                  node.op_type() == "SimplifiedLayerNormalization")) {
      any = true;
    }
  }
  if (!any) return absl::OkStatus();
  NodeList out;
  for (const auto& node : graph.node()) {
    const std::string_view domain = NormalizeDomain(node.domain());
    const bool ms = domain == kMicrosoftDomain;
    const bool ort_norm = domain.empty() && ((node.op_type() == "LayerNormalization" && opset < 17) ||
                                             node.op_type() == "SimplifiedLayerNormalization");
    if (!ms && !ort_norm) {
      out.push_back(node);
      continue;
    }
    auto rule = ContribRules().find(node.op_type());
    if (rule == ContribRules().end()) {
      return InvalidArgument("node '", node.name(), "': op '", node.op_type(), "' (domain '", kMicrosoftDomain,
                             "', ONNX Runtime's contrib ops) is not supported by ged; ged lowers these ",
                             kMicrosoftDomain, " ops: ", absl::StrJoin(LoweredContribOps(), ", "));
    }
    if (opset < 11) {
      return InvalidArgument("node '", node.name(), "': ", DomainForMessages(domain), "::", node.op_type(),
                             " in a model of ai.onnx opset ", opset, "; ged lowers contrib ops from opset 11");
    }
    Lowering lowering(node, opset, facts, out);
    GE_RETURN_IF_ERROR(rule->second(lowering));
  }
  graph.clear_node();
  for (auto& n : out) *graph.add_node() = std::move(n);
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> LoweredContribOps() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : ContribRules()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status LowerContribOps(onnx::ModelProto& model, const OpsetMap& opsets) {
  auto onnx_opset = opsets.find("");
  if (onnx_opset == opsets.end()) return absl::OkStatus();
  ModelFacts facts(model);
  return LowerGraph(*model.mutable_graph(), onnx_opset->second, facts);
}

}  // namespace ge::frontend
