// Graph: a DAG of Nodes with named inputs (Data) and one NetOutput.
//
// The root graph owns every subgraph of the tree (If branches, While bodies,
// PartitionedCall bodies), keyed by a unique name; nodes name the subgraphs
// they own in OpDesc::subgraph_names(), and each subgraph records its parent
// node and graph. Nodes are kept in insertion order; node removal and moving
// nodes between graphs are O(1) plus the edges touched, so partitioning a
// million-node graph stays near-linear.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/ir/node.h"
#include "base/strings.h"

namespace ge::ir {

class Graph {
 public:
  explicit Graph(std::string name);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }

  // ---- Nodes ----
  // Adds a node with one unconnected input and output port per IoDesc.
  // InvalidArgument when the name is empty or already used in this graph.
  absl::StatusOr<Node*> AddNode(OpDesc op);
  // Removes `node` and every edge touching it.
  void RemoveNode(Node* node);
  Node* FindNode(std::string_view name) const;
  size_t num_nodes() const { return nodes_.size(); }
  // Nodes in insertion order. The returned vector is a snapshot.
  std::vector<Node*> nodes() const;
  // Calls `fn` on each node in insertion order without building a vector.
  template <typename Fn>
  void ForEachNode(Fn&& fn) const {
    for (const auto& n : nodes_) fn(n.get());
  }
  // A fresh node name with `prefix` that is unused in this graph.
  std::string UniqueNodeName(std::string_view prefix);
  // Renames a node (InvalidArgument if the new name is taken).
  absl::Status RenameNode(Node* node, std::string new_name);
  // Moves `node` with its edges into `dst`; edges to nodes that are not moved
  // along become dangling and must be rewired by the caller before the graph
  // is verified. The node's name must be unused in `dst`.
  absl::Status MoveNodeTo(Node* node, Graph* dst);
  // Moves each node to its destination graph, as MoveNodeTo does, but
  // updates this graph's name index once: when most of a large graph moves
  // (partitioning), erasing names one by one costs a cache miss each.
  // InvalidArgument, with nothing moved, when a node is not in this graph
  // or its name is taken in its destination.
  absl::Status MoveNodesTo(const std::vector<std::pair<Node*, Graph*>>& moves);

  // ---- Ports and edges ----
  absl::Status AddEdge(Node* src, int src_port, Node* dst, int dst_port);
  // Disconnects input `dst_port` of `dst` (no-op when unconnected).
  void RemoveInputEdge(Node* dst, int dst_port);
  // Moves every consumer of (from, from_port) to (to, to_port).
  absl::Status ReplaceAllUses(Node* from, int from_port, Node* to, int to_port);
  absl::Status AddControlEdge(Node* src, Node* dst);  // no-op if present
  void RemoveControlEdge(Node* src, Node* dst);
  // Appends a port to the node's OpDesc and edge tables.
  void AddInputPort(Node* node, IoDesc desc);
  void AddOutputPort(Node* node, IoDesc desc);
  // Removes the last input port (must be unconnected); for pruning
  // trailing absent optional inputs.
  void RemoveLastInputPort(Node* node);

  // ---- Order ----
  // Nodes in a topological order of data and control edges; ties are broken
  // by insertion order so the result is deterministic. FailedPrecondition
  // naming nodes on a cycle when there is one.
  absl::StatusOr<std::vector<Node*>> TopologicalOrder() const;

  // ---- Graph inputs and outputs ----
  // Data nodes sorted by their kAttrIndex attribute.
  std::vector<Node*> InputNodes() const;
  // The NetOutput node, or nullptr.
  Node* OutputNode() const;

  // ---- Subgraphs ----
  bool is_root() const { return parent_graph_ == nullptr; }
  Graph* root();
  const Graph* root() const;
  Graph* parent_graph() const { return parent_graph_; }
  Node* parent_node() const { return parent_node_; }
  // Adds `subgraph` to the root's table with `parent_node` (a node of this
  // graph) as its parent. Does not touch parent_node's subgraph_names.
  // InvalidArgument when the name is already used in the tree.
  absl::StatusOr<Graph*> AddSubgraph(std::unique_ptr<Graph> subgraph, Node* parent_node);
  // Looks a subgraph up by name anywhere in the tree.
  Graph* FindSubgraph(std::string_view name) const;
  // Removes a subgraph (and, recursively, the subgraphs its nodes own).
  void RemoveSubgraph(std::string_view name);
  // Removes the named subgraphs (and, recursively, the subgraphs their nodes
  // own) with one pass over the tree's subgraph order: removing k of n
  // subgraphs one by one would cost O(k * n). Unknown names are ignored.
  void RemoveSubgraphs(const std::vector<std::string>& names);
  // Every subgraph of the tree, in insertion order (root only; empty elsewhere).
  std::vector<Graph*> subgraphs() const;
  // Re-points a subgraph's parent (used when nodes move between graphs).
  void SetParent(Graph* parent_graph, Node* parent_node) {
    parent_graph_ = parent_graph;
    parent_node_ = parent_node;
  }

  // ---- Attributes ----
  const AttrMap& attrs() const { return attrs_; }
  AttrMap& mutable_attrs() { return attrs_; }

  // A deep copy of this graph and (for a root) its subgraphs.
  std::unique_ptr<Graph> Clone() const;

 private:
  std::unique_ptr<Graph> CloneInto(std::string name) const;

  std::string name_;
  std::list<std::unique_ptr<Node>> nodes_;
  StringMap<Node*> by_name_;
  int64_t next_id_ = 0;
  AttrMap attrs_;
  Graph* parent_graph_ = nullptr;
  Node* parent_node_ = nullptr;
  // Root only: every subgraph in the tree, by name, plus insertion order.
  std::map<std::string, std::unique_ptr<Graph>, std::less<>> subgraphs_;
  std::vector<Graph*> subgraph_order_;
};

}  // namespace ge::ir
