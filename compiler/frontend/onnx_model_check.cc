// ged's own structural checks on ONNX models. libonnx's checker reports an
// unsorted graph, a cycle and a dangling edge with one message ("is not
// output of any previous nodes"); these checks tell them apart and name the
// node and the tensor, and they run even when the checker is switched off.
#include "compiler/frontend/onnx_model_check.h"

#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "compiler/frontend/onnx_tensor.h"

namespace ge::frontend {
namespace {

constexpr int kNoProducer = -1;
constexpr int kOuterOrInput = -2;

template <typename Fn>
void ForEachSubgraph(const onnx::NodeProto& node, Fn&& fn) {
  for (const auto& attr : node.attribute()) {
    if (attr.type() == onnx::AttributeProto::GRAPH && attr.has_g()) fn(attr.g());
    if (attr.type() == onnx::AttributeProto::GRAPHS) {
      for (const auto& g : attr.graphs()) fn(g);
    }
  }
}

// Which node produces each tensor of one graph, with the graph's inputs and
// initializers marked as kOuterOrInput.
struct ProducerTable {
  StringMap<int> producer;
};

absl::StatusOr<ProducerTable> BuildProducers(const onnx::GraphProto& graph) {
  ProducerTable t;
  t.producer.reserve(static_cast<size_t>(graph.input_size() + graph.initializer_size() + graph.node_size()));
  for (const auto& in : graph.input()) t.producer.emplace(in.name(), kOuterOrInput);
  for (const auto& init : graph.initializer()) t.producer.emplace(init.name(), kOuterOrInput);
  for (const auto& sparse : graph.sparse_initializer()) {
    t.producer.emplace(sparse.values().name(), kOuterOrInput);
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      auto [it, inserted] = t.producer.emplace(out, i);
      if (inserted) continue;
      if (it->second == kOuterOrInput) {
        return InvalidArgument("graph '", graph.name(), "': ", NodeLabel(node, i),
                               " writes tensor '", out,
                               "', which is already a graph input or initializer");
      }
      return InvalidArgument("graph '", graph.name(), "': tensor '", out, "' is produced by both ",
                             NodeLabel(graph.node(it->second), it->second), " and ",
                             NodeLabel(node, i));
    }
  }
  return t;
}

// Calls fn(tensor) for every tensor `node` reads: its inputs, then its
// subgraphs' captures; stops early when fn returns true.
template <typename Fn>
void ForEachRead(const onnx::NodeProto& node, CaptureAnalysis& captures, Fn&& fn) {
  for (const std::string& in : node.input()) {
    if (!in.empty() && fn(in)) return;
  }
  for (const std::string& c : captures.NodeCaptures(node)) {
    if (fn(c)) return;
  }
}

// Describes one cycle among `stuck` nodes (each has a stuck producer).
std::string DescribeCycle(const onnx::GraphProto& graph, const ProducerTable& t,
                          const std::vector<bool>& stuck, CaptureAnalysis& captures) {
  int start = 0;
  while (!stuck[start]) ++start;
  std::vector<std::pair<int, std::string>> path;  // (consumer, tensor it reads)
  absl::flat_hash_map<int, size_t> seen;
  int current = start;
  while (!seen.contains(current)) {
    seen[current] = path.size();
    const int from = current;
    ForEachRead(graph.node(from), captures, [&](const std::string& tensor) {
      auto it = t.producer.find(tensor);
      if (it == t.producer.end() || it->second < 0 || !stuck[it->second]) return false;
      path.emplace_back(from, tensor);
      current = it->second;
      return true;
    });
  }
  std::string out;
  for (size_t i = seen[current]; i < path.size(); ++i) {
    const auto& [consumer, tensor] = path[i];
    StrAppend(&out, NodeLabel(graph.node(consumer), consumer), " reads '", tensor, "' from ");
  }
  StrAppend(&out, NodeLabel(graph.node(current), current));
  return out;
}

absl::Status CheckAcyclic(const onnx::GraphProto& graph, const ProducerTable& t,
                          CaptureAnalysis& captures) {
  const int n = graph.node_size();
  // Edges producer -> consumer in one flat table grouped by producer
  // (counting sort), not a vector per node.
  std::vector<int> pending(n, 0);
  std::vector<std::pair<int, int>> edges;  // (producer, consumer)
  edges.reserve(static_cast<size_t>(n) * 2);
  for (int i = 0; i < n; ++i) {
    ForEachRead(graph.node(i), captures, [&](const std::string& tensor) {
      auto it = t.producer.find(tensor);
      if (it == t.producer.end() || it->second < 0) return false;
      ++pending[i];
      edges.emplace_back(it->second, i);
      return false;
    });
  }
  std::vector<int> first(static_cast<size_t>(n) + 1, 0);
  for (const auto& e : edges) ++first[e.first + 1];
  for (int i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<int> consumer_of(edges.size());
  {
    std::vector<int> fill(first.begin(), first.end() - 1);
    for (const auto& e : edges) consumer_of[fill[e.first]++] = e.second;
  }
  std::queue<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  int done = 0;
  while (!ready.empty()) {
    int i = ready.front();
    ready.pop();
    ++done;
    for (int k = first[i]; k < first[i + 1]; ++k) {
      const int c = consumer_of[k];
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (done == n) return absl::OkStatus();
  std::vector<bool> stuck(n);
  for (int i = 0; i < n; ++i) stuck[i] = pending[i] > 0;
  return InvalidArgument("graph '", graph.name(),
                         "' has a cycle: ", DescribeCycle(graph, t, stuck, captures));
}

}  // namespace

std::string_view NormalizeDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

std::string_view DomainForMessages(std::string_view domain) {
  return domain.empty() ? std::string_view("ai.onnx") : domain;
}

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  if (node.name().empty()) return StrCat("node #", index, " (", node.op_type(), ")");
  return StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

absl::Status CheckModelBasics(const onnx::ModelProto& model) {
  if (!model.has_ir_version() || model.ir_version() <= 0) return InvalidArgument("no ir_version");
  if (!model.has_graph()) return InvalidArgument("no graph");
  if (model.opset_import_size() == 0) return InvalidArgument("no opset_import");
  return absl::OkStatus();
}

absl::StatusOr<OpsetMap> CheckOpsets(const onnx::ModelProto& model) {
  OpsetMap opsets;
  for (const auto& imp : model.opset_import()) {
    const std::string_view domain = NormalizeDomain(imp.domain());
    if (!opsets.emplace(std::string(domain), imp.version()).second) {
      return InvalidArgument("the model imports domain '", DomainForMessages(domain), "' twice");
    }
    if (domain.empty() && (imp.version() < kMinOnnxOpset || imp.version() > kMaxOnnxOpset)) {
      return InvalidArgument("the model uses opset ", imp.version(),
                             " of the default ONNX domain (ai.onnx); ged supports opsets ",
                             kMinOnnxOpset, "..", kMaxOnnxOpset,
                             " (convert the model with onnx.version_converter)");
    }
  }
  return opsets;
}

const std::vector<std::string>& CaptureAnalysis::FreeVariables(const onnx::GraphProto& graph) {
  if (auto it = memo_.find(&graph); it != memo_.end()) return it->second;
  StringSet defined;
  for (const auto& in : graph.input()) defined.insert(in.name());
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  for (const auto& sparse : graph.sparse_initializer()) defined.insert(sparse.values().name());
  for (const auto& node : graph.node()) {
    for (const std::string& out : node.output()) defined.insert(out);
  }
  std::vector<std::string> free;
  StringSet seen;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.contains(name) && seen.insert(name).second) free.push_back(name);
  };
  for (const auto& node : graph.node()) {
    for (const std::string& in : node.input()) use(in);
    for (const std::string& c : NodeCaptures(node)) use(c);
  }
  for (const auto& out : graph.output()) use(out.name());
  return memo_[&graph] = std::move(free);
}

const std::vector<std::string>& CaptureAnalysis::NodeCaptures(const onnx::NodeProto& node) {
  // Most nodes own no subgraph: answer without a memo entry (a node of the
  // memo map per ONNX node would cost an allocation each).
  static const std::vector<std::string>* const kNone = new std::vector<std::string>();
  bool has_subgraph = false;
  ForEachSubgraph(node, [&](const onnx::GraphProto&) { has_subgraph = true; });
  if (!has_subgraph) return *kNone;
  if (auto it = memo_.find(&node); it != memo_.end()) return it->second;
  std::vector<std::string> captures;
  StringSet seen;
  ForEachSubgraph(node, [&](const onnx::GraphProto& g) {
    for (const std::string& name : FreeVariables(g)) {
      if (seen.insert(name).second) captures.push_back(name);
    }
  });
  return memo_[&node] = std::move(captures);
}

absl::Status CheckGraphStructure(const onnx::GraphProto& graph, const StringSet& outer,
                                 CaptureAnalysis& captures) {
  GE_ASSIGN_OR_RETURN(ProducerTable table, BuildProducers(graph));
  auto defined = [&](const std::string& name) {
    return table.producer.contains(name) || outer.contains(name);
  };
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string& in = node.input(k);
      if (in.empty() || defined(in)) continue;
      return InvalidArgument("graph '", graph.name(), "': ", NodeLabel(node, i), " input ", k,
                             " reads tensor '", in,
                             "', which no node, initializer or graph input produces");
    }
    for (const std::string& c : captures.NodeCaptures(node)) {
      if (defined(c)) continue;
      return InvalidArgument("graph '", graph.name(), "': a subgraph of ", NodeLabel(node, i),
                             " reads tensor '", c,
                             "', which no node, initializer or graph input produces");
    }
  }
  for (const auto& out : graph.output()) {
    if (!defined(out.name())) {
      return InvalidArgument("graph '", graph.name(), "': graph output '", out.name(),
                             "' is not produced by any node, initializer or graph input");
    }
  }
  GE_RETURN_IF_ERROR(CheckAcyclic(graph, table, captures));
  // Subgraphs see everything this graph and its ancestors define (built
  // when the first subgraph shows up: most graphs have none).
  StringSet visible;
  bool visible_built = false;
  for (int i = 0; i < graph.node_size(); ++i) {
    bool has_subgraph = false;
    ForEachSubgraph(graph.node(i), [&](const onnx::GraphProto&) { has_subgraph = true; });
    if (!has_subgraph) continue;
    if (!visible_built) {
      visible = outer;
      for (const auto& [name, producer] : table.producer) visible.insert(name);
      visible_built = true;
    }
    absl::Status status;
    ForEachSubgraph(graph.node(i), [&](const onnx::GraphProto& g) {
      if (status.ok()) status = CheckGraphStructure(g, visible, captures);
    });
    if (!status.ok())
      return Annotate(status, StrCat("in a subgraph of ", NodeLabel(graph.node(i), i)));
  }
  return absl::OkStatus();
}

namespace {

absl::Status FindLocalFunctionCall(const onnx::GraphProto& graph, const StringSet& functions) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (functions.contains(StrCat(node.domain(), ":", node.op_type()))) {
      return InvalidArgument("graph '", graph.name(), "': ", NodeLabel(node, i),
                             " calls the model-local function '", node.domain(), ":",
                             node.op_type(), "'; ged does not inline functions (export the model ",
                             "with its functions inlined)");
    }
    absl::Status status;
    ForEachSubgraph(node, [&](const onnx::GraphProto& g) {
      if (status.ok()) status = FindLocalFunctionCall(g, functions);
    });
    GE_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckNoLocalFunctionCalls(const onnx::ModelProto& model) {
  if (model.functions_size() == 0) return absl::OkStatus();
  StringSet functions;
  for (const auto& f : model.functions()) functions.insert(StrCat(f.domain(), ":", f.name()));
  return FindLocalFunctionCall(model.graph(), functions);
}

absl::Status CheckExternalInitializers(const onnx::GraphProto& graph,
                                       const std::string& model_dir) {
  for (const auto& init : graph.initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
    GE_ASSIGN_OR_RETURN(ExternalDataRef ref, ExternalDataRefFromProto(init, model_dir));
    GE_RETURN_IF_ERROR(CheckExternalData(ref));
  }
  for (const auto& node : graph.node()) {
    absl::Status status;
    ForEachSubgraph(node, [&](const onnx::GraphProto& g) {
      if (status.ok()) status = CheckExternalInitializers(g, model_dir);
    });
    GE_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

}  // namespace ge::frontend
