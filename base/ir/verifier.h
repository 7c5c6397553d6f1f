// The graph verifier: checks the invariants every pass may assume and must
// keep.
//
// VerifyGraph(graph) checks `graph` and, when it is a root, every subgraph of
// its tree:
//   * node names are non-empty and unique, and the graph's name table agrees
//     with the nodes' names;
//   * every node's edge tables match its OpDesc (one slot per described input
//     and output); every data edge has its ports in range and is recorded on
//     both sides (the producer lists the consumer exactly once, the consumer's
//     input names the producer); the same for control edges;
//   * every producer and consumer lives in the same graph as the node (no
//     dangling edges left behind by Graph::MoveNodeTo);
//   * the graph is acyclic over data and control edges (the error names the
//     nodes of one cycle, in edge order);
//   * subgraph references resolve: every name in OpDesc::subgraph_names() is
//     a subgraph of the tree whose parent_node / parent_graph point back to
//     that node; no subgraph is owned twice; every subgraph of the tree is
//     owned by a node and reachable from the root; GraphRef attributes name
//     subgraphs of the tree;
//   * types agree along every data edge (producer output type vs consumer
//     input type): same kind (tensor / seq / opt), same dtype, same rank and
//     equal dims where both are known. A tensor type whose dtype is undefined
//     is "not inferred yet" and matches anything. Formats are not compared;
//   * at most one NetOutput per graph; Data nodes carry integer `index`
//     attributes that are unique and cover 0..n-1 (n = number of Data nodes).
//
// The first violation found is returned, in a deterministic order (graphs
// root first then subgraphs in order, nodes in insertion order).
// FailedPrecondition for broken structure (edge tables, dangling edges,
// cycles, the subgraph tree); InvalidArgument for content (names, types,
// NetOutput and Data nodes). Messages name the graph, node and port.
//
// Cost is linear in nodes + edges (hash lookups only), so graphs of millions
// of nodes verify in about a second.
#pragma once

#include "absl/status/status.h"
#include "base/ir/graph.h"

namespace ge::ir {

absl::Status VerifyGraph(const Graph& graph);

// True when a value of type `produced` may feed an input declared as
// `consumed` under the rules above; otherwise false with the reason in
// `*why` (when not null).
bool TypesCompatible(const ValueType& produced, const ValueType& consumed, std::string* why);

}  // namespace ge::ir
