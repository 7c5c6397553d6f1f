// The partition report: units of execution found in the partitioned tree,
// rendered as JSON, text and DOT.
#include "compiler/partition/partition_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_join.h"
#include "base/io/json_writer.h"
#include "base/ir/dot.h"
#include "base/ir/op_types.h"
#include "compiler/partition/base_partitioner.h"
#include "compiler/partition/partition_attrs.h"

namespace ge::partition {
namespace {

constexpr int kMaxBodyDepth = 64;

bool IsStructural(const ir::Node& n) {
  return IsGraphInput(n) || IsGraphOutput(n) || IsBoundaryNode(n) || IsPartitionCall(n);
}

// The node's engine without copying the attribute ("" when unplaced).
std::string_view EngineOf(const ir::Node& n) {
  const ir::AttrValue* v = n.op_desc().FindAttr(ir::kAttrEngineName);
  const std::string* s = v == nullptr ? nullptr : v->get<std::string>();
  return s == nullptr ? std::string_view() : std::string_view(*s);
}

// The unit's nodes: the graph's own, plus those of control-flow bodies its
// nodes own (recursively), never a partitioner's subgraph.
void CollectUnitNodes(const ir::Graph& g, std::vector<const ir::Node*>& out, int depth) {
  g.ForEachNode([&](ir::Node* n) {
    if (IsStructural(*n)) return;
    out.push_back(n);
    if (depth >= kMaxBodyDepth) return;
    for (const std::string& name : n->op_desc().subgraph_names()) {
      if (const ir::Graph* body = g.FindSubgraph(name)) CollectUnitNodes(*body, out, depth + 1);
    }
  });
}

bool IsDynamicUnit(const ir::Graph& g) {
  const ir::Graph* graph = &g;
  for (int depth = 0; depth < kMaxBodyDepth; ++depth) {
    const ir::Node* call = graph->parent_node();
    if (call == nullptr) {
      auto it = graph->attrs().find(ir::kAttrIsUnknownShape);
      const bool* v = it == graph->attrs().end() ? nullptr : it->second.get<bool>();
      return v != nullptr && *v;
    }
    if (auto unknown = call->op_desc().GetAttr<bool>(ir::kAttrIsUnknownShape)) return *unknown;
    if (call->op_desc().GetAttrOr<bool>(ir::kAttrForceUnknownShape, false)) return true;
    graph = call->owner_graph();
  }
  return false;
}

const char* const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

}  // namespace

bool IsPartitionCall(const ir::Node& node) {
  return node.type() == ir::kPartitionedCall && node.op_desc().HasAttr(kAttrPartitionedBy);
}

PartitionReport BuildPartitionReport(const ir::Graph& root, const RejectionMap& rejections) {
  PartitionReport report;
  std::vector<const ir::Graph*> graphs{&root};
  for (const ir::Graph* g : root.subgraphs()) graphs.push_back(g);
  size_t total = 0;
  for (const ir::Graph* g : graphs) total += g->num_nodes();
  report.nodes.reserve(total);
  for (const ir::Graph* g : graphs) {
    g->ForEachNode([&](ir::Node* n) {
      if (IsBoundaryNode(*n) || IsPartitionCall(*n)) return;
      ReportNode r{n->name(), n->type(), std::string(EngineOf(*n)), {}, "priority", {}};
      auto it = rejections.find(n->name());
      if (it != rejections.end()) r.rejected = it->second;
      report.nodes.push_back(std::move(r));
    });
  }
  for (const ir::Graph* g : graphs) {
    const bool unit_graph = g == &root || (g->parent_node() != nullptr && IsPartitionCall(*g->parent_node()));
    if (!unit_graph) continue;
    std::vector<const ir::Node*> nodes;
    CollectUnitNodes(*g, nodes, 0);
    if (nodes.empty()) continue;
    ReportSubgraph unit;
    unit.name = g->name();
    unit.kind = IsDynamicUnit(*g) ? "dynamic" : "static";
    std::set<std::string, std::less<>> engines;
    unit.nodes.reserve(nodes.size());
    for (const ir::Node* n : nodes) {
      unit.nodes.push_back(n->name());
      const std::string_view engine = EngineOf(*n);
      if (!engine.empty() && engines.find(engine) == engines.end()) engines.emplace(engine);
    }
    unit.engines.assign(engines.begin(), engines.end());
    report.subgraphs.push_back(std::move(unit));
  }
  return report;
}

std::string PartitionReportJson(const PartitionReport& report) {
  io::JsonWriter w;
  w.BeginObject().Key("nodes").BeginArray();
  for (const ReportNode& n : report.nodes) {
    w.BeginObject().Key("name").String(n.name).Key("op").String(n.op).Key("engine").String(n.engine);
    w.Key("rejected").BeginArray();
    for (const ReportRejection& r : n.rejected) {
      w.BeginObject().Key("engine").String(r.engine).Key("reason").String(r.reason).EndObject();
    }
    w.EndArray().Key("reason").String(n.reason).Key("estimates").BeginArray();
    for (const ReportEstimate& e : n.estimates) {
      w.BeginObject().Key("engine").String(e.engine).Key("ns").Double(e.ns).EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray().Key("subgraphs").BeginArray();
  for (const ReportSubgraph& s : report.subgraphs) {
    w.BeginObject().Key("name").String(s.name).Key("kind").String(s.kind);
    w.Key("engines").BeginArray();
    for (const std::string& e : s.engines) w.String(e);
    w.EndArray().Key("nodes").BeginArray();
    for (const std::string& n : s.nodes) w.String(n);
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
  return w.str();
}

std::string PartitionReportText(const PartitionReport& report) {
  std::string out = StrCat("nodes (", report.nodes.size(), "):\n");
  for (const ReportNode& n : report.nodes) {
    StrAppend(&out, "  ", n.name, " (", n.op, ") on ", n.engine.empty() ? "-" : n.engine, "\n");
    for (const ReportRejection& r : n.rejected) StrAppend(&out, "      rejected by ", r.engine, ": ", r.reason, "\n");
    if (!n.estimates.empty()) {
      StrAppend(&out, "      estimates:");
      for (const ReportEstimate& e : n.estimates)
        StrAppend(&out, " ", e.engine, " ", static_cast<int64_t>(e.ns + 0.5), " ns");
      StrAppend(&out, "\n");
    }
  }
  StrAppend(&out, "subgraphs (", report.subgraphs.size(), "):\n");
  for (const ReportSubgraph& s : report.subgraphs) {
    StrAppend(&out, "  ", s.name, ": ", s.kind, ", engines ", s.engines.empty() ? "-" : absl::StrJoin(s.engines, ", "),
              ", ", s.nodes.size(), " node(s): ", absl::StrJoin(s.nodes, ", "), "\n");
  }
  return out;
}

std::string PartitionDot(const ir::Graph& root) {
  std::set<std::string, std::less<>> engines;
  auto collect = [&](const ir::Graph& g) {
    g.ForEachNode([&](ir::Node* n) {
      const std::string_view e = EngineOf(*n);
      if (!e.empty() && engines.find(e) == engines.end()) engines.emplace(e);
    });
  };
  collect(root);
  for (const ir::Graph* g : root.subgraphs()) collect(*g);
  std::map<std::string, std::string, std::less<>> colour;
  std::vector<std::string> legend;
  size_t i = 0;
  for (const std::string& e : engines) {
    colour[e] = kPalette[i++ % (sizeof(kPalette) / sizeof(kPalette[0]))];
    legend.push_back(StrCat(e, " ", colour[e]));
  }
  ir::DotOptions options;
  options.subgraphs = ir::DotOptions::Subgraphs::kPartitionedCalls;
  options.show_types = false;
  options.title = StrCat(root.name(), " (engines: ", legend.empty() ? "none" : absl::StrJoin(legend, ", "), ")");
  options.fill_color = [&colour](const ir::Node& n) {
    auto it = colour.find(EngineOf(n));
    return it == colour.end() ? std::string() : it->second;
  };
  return ir::ToDot(root, options);
}

}  // namespace ge::partition
