// Graphviz DOT output of a graph, for dumps and reports (the engine
// placement report colours nodes by engine).
//
// Nodes are boxes labelled "name\nType"; data edges are solid arrows
// labelled with the producer port's type (optional), control edges dashed.
// Subgraphs can be drawn inside the graph as clusters: the owning node stays
// a box, the subgraph's nodes sit in a labelled cluster, and a dotted arrow
// runs from the owner to the cluster. Output is deterministic (graphs and
// nodes in their stored order, ids assigned in that order) and every name
// is escaped, so any node or graph name is safe.
#pragma once

#include <functional>
#include <string>

#include "base/ir/graph.h"

namespace ge::ir {

struct DotOptions {
  enum class Subgraphs {
    kNone,              // draw only the given graph
    kPartitionedCalls,  // expand the bodies of PartitionedCall nodes
    kAll,               // expand every subgraph of every node
  };

  // Fill colour of a node (any Graphviz colour: "lightblue", "#ffcc00");
  // empty for none. Unset means no fill.
  std::function<std::string(const Node&)> fill_color;
  Subgraphs subgraphs = Subgraphs::kAll;
  // Label data edges with the producer output's type.
  bool show_types = true;
  bool show_control_edges = true;
  // Graph-level label (defaults to the graph's name when empty).
  std::string title;
};

std::string ToDot(const Graph& graph, const DotOptions& options);

}  // namespace ge::ir
