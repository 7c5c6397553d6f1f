// BasePartitioner: the partitioning pipeline every strategy shares
// (seeds/01 §5.1.1, GE's BasePartitioner::PartitionImpl).
//
//   1. InitClusters          one cluster per node, typed by ClassifyNode
//   2. MergeClusters         the strategy's merge rules (ClusterSet merges)
//   3. ProcessUniqueClusters the surviving clusters that become subgraphs,
//                            numbered in topological order
//   4. BuildPartitionFrame   a PartitionedCall per cluster in the graph, its
//                            subgraph, and the cluster's nodes moved in
//   5. CombinePartitionFrame the calls' inputs and outputs and the edges
//                            between calls (and the nodes left outside)
//   6. BuildPartitionSubgraph InnerData (attr `_parent_index`) per call
//                            input, one InnerNetOutput per subgraph, the
//                            registered attributes propagated
//
// A call has one input per distinct value (producer and port) that its
// nodes read from outside, and one output per value its nodes produce that
// is read outside; inputs and outputs are numbered in the topological order
// of the reading / producing nodes. Control edges that cross clusters become
// control edges between the calls. Nodes of clusters that need no subgraph
// (by default Data / InnerData and NetOutput / InnerNetOutput) stay where
// they are. The graph may be a root or a subgraph; new subgraphs hang off
// it. Cost: linear in nodes and edges plus the strategy's merges, except
// that moving the consumers of one producer port between graphs costs
// O(fan-out) per consumer.
//
// An observer sees the graph (and the cluster state) before and after each
// step, for dumps.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "compiler/partition/base_cluster.h"
#include "compiler/partition/partition_attrs.h"

namespace ge::partition {

class PartitionObserver {
 public:
  virtual ~PartitionObserver() = default;
  // `clusters` is null before InitClusters has run.
  virtual void OnStep(std::string_view partitioner, std::string_view step, bool after, const ir::Graph& graph,
                      ClusterSet* clusters) = 0;
};

// One subgraph a partitioner produced.
struct PartitionedSubgraph {
  ir::Node* call = nullptr;  // the PartitionedCall (or the strategy's node)
  ir::Graph* subgraph = nullptr;
  int type_index = 0;
  std::string label;
};

class BasePartitioner {
 public:
  // `attrs` defaults to PartitionAttrRegistry::Builtin().
  explicit BasePartitioner(const PartitionAttrRegistry* attrs = nullptr);
  virtual ~BasePartitioner();
  BasePartitioner(const BasePartitioner&) = delete;
  BasePartitioner& operator=(const BasePartitioner&) = delete;

  virtual std::string_view name() const = 0;
  void set_observer(PartitionObserver* observer) { observer_ = observer; }

  // Runs the six steps on `graph`. Returns the subgraphs made, in
  // topological order; empty when the strategy decided not to split.
  absl::StatusOr<std::vector<PartitionedSubgraph>> Partition(ir::Graph& graph);

 protected:
  // Step 1. The default builds the ClusterSet with ClassifyNode.
  virtual absl::Status InitClusters();
  virtual int ClassifyNode(const ir::Node& node) = 0;
  // After step 1: false leaves the graph whole (a whole-graph decision).
  virtual absl::StatusOr<bool> ShouldSplit() { return true; }
  // Step 2.
  virtual absl::Status MergeClusters() = 0;
  // Step 3. The default keeps the live clusters NeedsSubgraph accepts.
  virtual absl::Status ProcessUniqueClusters();
  virtual bool NeedsSubgraph(const BaseCluster& cluster) const;
  // Name of the call node of a cluster (made unique in the graph); the
  // subgraph is named "<graph>_<call>". Default: "<type>_<index>".
  virtual std::string CallName(const BaseCluster& cluster) const;
  // Called at the end of step 6 for each subgraph, after the registered
  // attributes flowed to the call and before they flow into the nodes.
  virtual absl::Status DecorateCall(const BaseCluster& cluster, ir::Node& call, ir::Graph& subgraph);
  // Step 5: whether a Const (one output, not in `reader`) that nodes of
  // `reader` read is copied into `reader`'s subgraph, holding the same
  // tensor storage, instead of crossing as a call input. Default: yes.
  virtual bool CopiesConstInto(const ir::Node& konst, const BaseCluster& reader);

  ClusterSet& clusters() { return *clusters_; }
  const ClusterSet& clusters() const { return *clusters_; }
  ir::Graph& graph() { return *graph_; }
  // After step 3: the clusters that become subgraphs, in order.
  const std::vector<BaseCluster*>& partitioned_clusters() const { return partitioned_; }
  const PartitionAttrRegistry& attr_registry() const { return *attrs_; }

 private:
  struct Frame;
  absl::Status Step(std::string_view step, absl::Status (BasePartitioner::*fn)());
  absl::Status BuildPartitionFrame();
  absl::Status CombinePartitionFrame();
  absl::Status BuildPartitionSubgraph();

  const PartitionAttrRegistry* attrs_;
  PartitionObserver* observer_ = nullptr;
  ir::Graph* graph_ = nullptr;
  std::unique_ptr<ClusterSet> clusters_;
  std::vector<BaseCluster*> partitioned_;
  std::unique_ptr<Frame> frame_;
};

// True for the node types partitioning adds at subgraph boundaries
// (InnerData, InnerNetOutput, PlaceHolder, End).
bool IsBoundaryNode(const ir::Node& node);
// Data / InnerData, and NetOutput / InnerNetOutput.
bool IsGraphInput(const ir::Node& node);
bool IsGraphOutput(const ir::Node& node);

}  // namespace ge::partition
