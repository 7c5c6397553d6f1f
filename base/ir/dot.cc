// DOT writer. Nodes get ids n0, n1, ... in the order they are emitted
// (graph order, then expanded subgraphs depth first), so equal graphs give
// byte-identical output. All edges are written after all nodes, at the top
// level, because Graphviz places an edge by its endpoints' clusters anyway.
#include "base/ir/dot.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/ir/text_format.h"

namespace ge::ir {
namespace {

// Escapes for a double-quoted DOT string; a newline becomes DOT's "\n"
// line break and other control bytes are dropped.
std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      out += c;
    }
  }
  return out;
}

class DotWriter {
 public:
  explicit DotWriter(const DotOptions& options) : options_(options) {}

  std::string Write(const Graph& graph) {
    const std::string title = options_.title.empty() ? graph.name() : options_.title;
    StrAppend(&out_, "digraph \"", Escape(title), "\" {\n");
    StrAppend(&out_, "  graph [label=\"", Escape(title),
              "\", labelloc=t, compound=true, fontname=\"Helvetica\"];\n");
    out_ += "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
    out_ += "  edge [fontname=\"Helvetica\", fontsize=10];\n";
    visited_.insert(&graph);
    EmitNodes(graph, "  ");
    out_ += edges_;
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  bool Expands(const Node& node) const {
    switch (options_.subgraphs) {
      case DotOptions::Subgraphs::kNone:
        return false;
      case DotOptions::Subgraphs::kPartitionedCalls:
        return node.type() == kPartitionedCall;
      case DotOptions::Subgraphs::kAll:
        return true;
    }
    return false;
  }

  void EmitNode(const Node& node, const std::string& indent) {
    const std::string id = StrCat("n", ids_.size());
    ids_.emplace(&node, id);
    StrAppend(&out_, indent, id, " [label=\"", Escape(node.name()), "\\n", Escape(node.type()),
              "\"");
    const std::string color = options_.fill_color ? options_.fill_color(node) : std::string();
    if (!color.empty()) {
      StrAppend(&out_, ", style=\"rounded,filled\", fillcolor=\"", Escape(color), "\"");
    }
    out_ += "];\n";
  }

  void EmitNodes(const Graph& graph, const std::string& indent) {
    graph.ForEachNode([&](const Node* node) { EmitNode(*node, indent); });
    graph.ForEachNode([&](const Node* node) {
      if (!Expands(*node)) return;
      for (const std::string& name : node->op_desc().subgraph_names()) {
        const Graph* sub = graph.FindSubgraph(name);
        if (sub == nullptr || !visited_.insert(sub).second) continue;
        EmitCluster(*node, *sub, indent);
      }
    });
    graph.ForEachNode([&](const Node* node) { EmitEdges(*node); });
  }

  void EmitCluster(const Node& owner, const Graph& sub, const std::string& indent) {
    const std::string cluster = StrCat("cluster_", clusters_++);
    StrAppend(&out_, indent, "subgraph ", cluster, " {\n");
    const std::string inner = indent + "  ";
    StrAppend(&out_, inner, "label=\"", Escape(sub.name()), "\";\n");
    StrAppend(&out_, inner, "style=dashed; color=gray40;\n");
    std::string first;
    if (sub.num_nodes() == 0) {
      first = StrCat(cluster, "_empty");
      StrAppend(&out_, inner, first, " [label=\"(empty)\", shape=plaintext];\n");
    } else {
      first = StrCat("n", ids_.size());
    }
    EmitNodes(sub, inner);
    StrAppend(&out_, indent, "}\n");
    StrAppend(&edges_, "  ", ids_.at(&owner), " -> ", first, " [style=dotted, lhead=", cluster,
              ", arrowhead=odot];\n");
  }

  void EmitEdges(const Node& node) {
    const std::string& id = ids_.at(&node);
    for (int i = 0; i < node.num_inputs(); ++i) {
      const OutPort src = node.input(i);
      auto it = src.node ? ids_.find(src.node) : ids_.end();
      if (it == ids_.end()) continue;  // absent, or a dangling cross-graph edge
      StrAppend(&edges_, "  ", it->second, " -> ", id);
      std::string label;
      if (src.node->num_outputs() > 1 || node.num_inputs() > 1) {
        label = StrCat(src.index, "\u2192", i);
      }
      if (options_.show_types && src.index >= 0 && src.index < src.node->num_outputs()) {
        StrAppend(&label, label.empty() ? "" : " ",
                  PrintValueType(src.node->op_desc().output(src.index).type));
      }
      if (!label.empty()) StrAppend(&edges_, " [label=\"", Escape(label), "\"]");
      edges_ += ";\n";
    }
    if (!options_.show_control_edges) return;
    for (const Node* c : node.control_inputs()) {
      auto it = ids_.find(c);
      if (it == ids_.end()) continue;
      StrAppend(&edges_, "  ", it->second, " -> ", id, " [style=dashed, color=gray50];\n");
    }
  }

  const DotOptions& options_;
  std::string out_;
  std::string edges_;
  absl::flat_hash_map<const Node*, std::string> ids_;
  absl::flat_hash_set<const Graph*> visited_;
  int clusters_ = 0;
};

}  // namespace

std::string ToDot(const Graph& graph, const DotOptions& options) {
  return DotWriter(options).Write(graph);
}

}  // namespace ge::ir
