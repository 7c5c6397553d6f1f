// BaseCluster and ClusterSet: the clusters every partitioning strategy
// grows, and the merge operations they share (seeds/01 §5.1.2).
//
// A ClusterSet starts with one cluster per node of one graph, with a cluster
// edge for every data or control edge between nodes, and keeps the clusters
// in a ClusterDag so that every merge question ("would this close a
// cycle?") is answered by a search bounded to the clusters ranked between
// the two, not by a walk over the whole graph. Merges:
//
//   * Merge(into, from): unconditional; the caller guarantees that no path
//     of two or more cluster edges joins the two (a violation aborts).
//   * TryMerge(into, from): merges only when no such path exists.
//   * MergeAllPathFrom(into, from): merges every cluster on a path from
//     `from` to `into`; the union of all paths between two clusters never
//     closes a cycle.
//
// The surviving object is always `into`; the other cluster dies (alive()
// false) and its nodes move over. Node-to-cluster lookups go through a
// union-find, so they stay near O(1) however many merges happened.
//
// Cluster types are the strategy's business: DynamicShapePartitioner uses
// GE's type indexes below, EnginePartitioner a label (engine and stream).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/ir/graph.h"
#include "base/strings.h"
#include "compiler/partition/cluster_dag.h"

namespace ge::partition {

// GE's cluster type indexes (BaseCluster::type_index_).
inline constexpr int kClusterData = 0;          // Data / InnerData: stays in the parent
inline constexpr int kClusterNetOutput = 1;     // NetOutput / InnerNetOutput: stays in the parent
inline constexpr int kClusterInputNode = 2;     // sources that follow their consumers
inline constexpr int kClusterStage = 3;         // a pipeline stage
inline constexpr int kClusterKnownShape = 4;    // static
inline constexpr int kClusterUnknownShape = 5;  // dynamic

std::string_view ClusterTypeName(int type_index);

class ClusterSet;

class BaseCluster {
 public:
  int32_t id() const { return id_; }
  bool alive() const { return alive_; }
  int type_index() const { return type_index_; }
  void set_type_index(int type_index) { type_index_ = type_index; }
  // A strategy's label (engine and stream, stage level); interned by the
  // set, so comparing label_id()s compares labels.
  const std::string& label() const;
  int32_t label_id() const { return label_id_; }
  void set_label(std::string_view label);
  // Position in the topological order of clusters (changes as merges
  // re-rank clusters).
  int32_t rank() const;
  size_t size() const { return members_.size(); }
  // Positions of the member nodes in ClusterSet::node(); in topological
  // order after ClusterSet::SortMembers().
  const absl::InlinedVector<int32_t, 1>& members() const { return members_; }
  std::vector<ir::Node*> Nodes() const;

  // Neighbouring live clusters, sorted by rank.
  std::vector<BaseCluster*> Inputs() const;
  std::vector<BaseCluster*> Outputs() const;

  // GE's merge operations; see ClusterSet.
  void Merge(BaseCluster& other);
  bool TryMerge(BaseCluster& other);
  std::vector<BaseCluster*> MergeAllPathFrom(BaseCluster& other);

  // The cluster's number among the subgraphs made (ProcessUniqueClusters).
  int index = -1;

 private:
  friend class ClusterSet;
  ClusterSet* set_ = nullptr;
  int32_t id_ = -1;
  int32_t dag_id_ = -1;
  int32_t uf_root_ = -1;  // a member's union-find root
  bool alive_ = true;
  int type_index_ = 0;
  int32_t label_id_ = 0;  // 0 is the empty label
  absl::InlinedVector<int32_t, 1> members_;
};

class ClusterSet {
 public:
  ClusterSet() = default;
  ClusterSet(const ClusterSet&) = delete;
  ClusterSet& operator=(const ClusterSet&) = delete;

  // One cluster per node of `graph`, in a topological order of the data and
  // control edges inside `graph` (edges to other graphs are ignored), typed
  // by `type_of`, which is called once per node in that order. The order is
  // the insertion order when that is already topological (the usual case),
  // else Graph::TopologicalOrder(). Replaces any previous state.
  // FailedPrecondition when the graph has a cycle.
  absl::Status Init(const ir::Graph& graph, const std::function<int(const ir::Node&)>& type_of);

  size_t num_nodes() const { return nodes_.size(); }
  // Nodes in the topological order Init computed.
  ir::Node* node(int32_t position) const { return nodes_[position]; }
  const std::vector<ir::Node*>& nodes() const { return nodes_; }
  // The node's position, or -1 for a node that never was in the graph.
  // Constant time while the node is in the graph (an index by node id);
  // nodes moved out since are found through a map built on first need.
  int32_t PositionOf(const ir::Node* node) const;
  // Per data input of the node at `position`: the producer's position, or
  // -1 for an absent input or a producer of another graph.
  absl::Span<const int32_t> InputPositions(int32_t position) const {
    return absl::MakeConstSpan(input_positions_).subspan(input_offsets_[position],
                                                         input_offsets_[position + 1] - input_offsets_[position]);
  }
  absl::Span<const int32_t> ControlInputPositions(int32_t position) const {
    return absl::MakeConstSpan(control_positions_)
        .subspan(control_offsets_[position], control_offsets_[position + 1] - control_offsets_[position]);
  }

  BaseCluster& ClusterOf(int32_t position);
  BaseCluster* ClusterOf(const ir::Node* node);  // null for another graph's node
  BaseCluster& cluster(int32_t id) { return clusters_[id]; }
  size_t num_clusters() const { return clusters_.size(); }
  // Live clusters sorted by rank (a topological order of clusters).
  std::vector<BaseCluster*> OrderedClusters();

  void Merge(BaseCluster& into, BaseCluster& from);
  bool TryMerge(BaseCluster& into, BaseCluster& from);
  // Merges every cluster on a path from `from` to `into` into `into` and
  // returns the clusters that died; empty when `from` does not reach `into`.
  std::vector<BaseCluster*> MergeAllPathFrom(BaseCluster& into, BaseCluster& from);
  bool IsReachable(const BaseCluster& from, const BaseCluster& to);
  // Splits `set` (distinct live clusters) into pieces that can each be
  // merged into one cluster, and all of them together, without closing a
  // cycle: clusters are layered by the largest number of times a path from
  // the set leaves it and re-enters before reaching them, and each layer's
  // weakly connected parts (through edges inside the layer) form the
  // pieces. Each piece is convex; paths between pieces only climb layers.
  // Pieces are ordered by layer then rank, members by rank. One piece
  // (the whole set) when the set is convex and connected. Cost: linear in
  // the clusters reachable from the set up to its highest rank.
  std::vector<std::vector<BaseCluster*>> ConvexPieces(const std::vector<BaseCluster*>& set);

  std::vector<BaseCluster*> Inputs(const BaseCluster& cluster);
  std::vector<BaseCluster*> Outputs(const BaseCluster& cluster);
  int32_t RankOf(const BaseCluster& cluster) const { return dag_.rank(cluster.dag_id_); }

  // Sorts every live cluster's members by topological position.
  void SortMembers();
  // "type label: a, b, c" per live cluster in rank order, for dumps and
  // tests; at most `max_nodes` names per cluster.
  std::string Summary(size_t max_nodes = 16);
  ClusterDag& dag() { return dag_; }

 private:
  int32_t Find(int32_t position);
  void Absorb(BaseCluster& into, BaseCluster& from, int32_t surviving_dag_id);
  std::vector<BaseCluster*> ClustersOfDag(const IdSet& ids);

  int32_t Locate(const ir::Node* node) const;
  friend class BaseCluster;
  int32_t InternLabel(std::string_view label);

  std::vector<std::string> labels_{""};
  StringMap<int32_t> label_ids_;

  const ir::Graph* graph_ = nullptr;
  std::vector<ir::Node*> nodes_;
  std::vector<int32_t> position_by_id_;  // node id -> position while in graph_
  mutable absl::flat_hash_map<const ir::Node*, int32_t> moved_;  // built on first need
  std::vector<int32_t> input_offsets_;
  std::vector<int32_t> input_positions_;
  std::vector<int32_t> control_offsets_;
  std::vector<int32_t> control_positions_;
  std::vector<BaseCluster> clusters_;
  std::vector<int32_t> cluster_of_dag_;
  std::vector<int32_t> uf_parent_;
  std::vector<int32_t> uf_size_;
  std::vector<int32_t> cluster_of_root_;
  ClusterDag dag_;
};

}  // namespace ge::partition
