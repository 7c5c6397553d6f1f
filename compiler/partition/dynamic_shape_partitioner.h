// DynamicShapePartitioner: splits a graph into static (known-shape) and
// dynamic (unknown-shape) subgraphs, each wrapped in a PartitionedCall
// (seeds/01 §5.2, GE's DynamicShapePartitioner).
//
// A node is dynamic when (MarkUnknownShapeNodes, first rule that applies):
//   1. an input or output has an unknown dim (-1) or rank, or is a sequence
//      or optional (their length is known only at run time);
//   2. it carries `_force_unknown_shape = true`;
//   3. it has a tiling dependency (the schema reads an input's value, or
//      `_tiling_depend = true`) on a value that is not a Const, and tiling
//      cannot be offloaded (ge.tiling_schedule_optimize off, or the node
//      says `_support_tiling_offload = false`);
//   4. it carries `_is_support_addr_refresh = false`;
//   5. it is placed on the host CPU engine (`_engine_name`);
//   6. it owns subgraphs (If, Case, While, ...) containing a dynamic node.
// Data / InnerData and NetOutput / InnerNetOutput stay in the graph.
//
// Merges (MergeClusters), in this order:
//   1. dynamic path absorption: for each dynamic cluster (topological
//      order) and each dynamic cluster feeding it directly, every cluster on
//      a path between the two joins it and becomes dynamic;
//   2. static single-path merge: each static cluster absorbs each static
//      cluster feeding it when no other path joins them;
//   3. small-cluster downgrade: a static cluster with fewer than
//      ge.exec.static_model_ops_lower_limit ops (nodes other than Const,
//      FileConstant, Variable) becomes dynamic, then step 1 runs again so
//      the downgraded clusters join their dynamic neighbours;
//   4. control-flow groups: clusters of nodes sharing `_control_flow_group`
//      merge (with every cluster on a path between them);
//   5. RefVariable: a node marked `_ref_variable` joins the first cluster
//      that consumes it.
// A merged cluster is dynamic when any part was. With the lower limit -1
// every cluster merges into one dynamic subgraph.
//
// Whole-graph decisions: a graph without dynamic nodes is not split
// (`_dynamic_shape_partitioned = false`, `_is_unknown_shape = false` on the
// graph) unless it has fewer ops than ge.host_scheduling_max_threshold, in
// which case it becomes one dynamic subgraph, or wrap_static_graph is set,
// in which case it becomes one static subgraph. A split graph gets
// `_dynamic_shape_partitioned = true`.
//
// Data-flow re-split: when the data-flow ops of one stack (Stack and the
// StackPush / StackPop / StackClose reading its handle, through Identity)
// end up in both static and dynamic clusters, they are all marked
// `_force_unknown_shape = true` and the clusters are rebuilt from scratch;
// this repeats until no stack straddles.
//
// Each PartitionedCall is named "static_<i>" or "dynamic_<i>" and carries
// `_is_unknown_shape`, which also flows onto every node inside.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/ops/op_schema.h"
#include "compiler/partition/base_partitioner.h"

namespace ge::partition {

struct DynamicShapeOptions {
  // ge.exec.static_model_ops_lower_limit: static clusters with fewer ops
  // become dynamic; -1 merges everything into one dynamic subgraph.
  int64_t static_model_ops_lower_limit = 4;
  // ge.host_scheduling_max_threshold: an all-static graph with fewer ops
  // runs dynamically as a whole (0: never).
  int64_t host_scheduling_max_threshold = 0;
  // ge.tiling_schedule_optimize: tiling can be offloaded to run time.
  bool tiling_offload = false;
  // Rule 5: nodes on this engine run dynamically (GE's host CPU engine).
  // The compiler passes the reference engine's name; empty: rule 5 is off.
  std::string reference_engine;
  // A graph without dynamic nodes still becomes one static subgraph, so
  // that it runs on a StaticExecutor when its owner runs dynamically (the
  // gear branches of a multi-batch Case).
  bool wrap_static_graph = false;
};

// Why a node is dynamic.
enum class UnknownRule : uint8_t {
  kNone = 0,
  kUnknownShape,     // 1
  kForceUnknown,     // 2
  kTilingDepend,     // 3
  kNoAddrRefresh,    // 4
  kHostCpuEngine,    // 5
  kDynamicSubgraph,  // 6
  kHostScheduling,   // whole graph below ge.host_scheduling_max_threshold
};
std::string_view UnknownRuleName(UnknownRule rule);

// Whether the node counts towards the op thresholds.
bool CountsAsOp(const ir::Node& node);
// Stack, StackPush, StackPop, StackClose.
bool IsDataFlowOp(const ir::Node& node);

class DynamicShapePartitioner final : public BasePartitioner {
 public:
  explicit DynamicShapePartitioner(DynamicShapeOptions options = {}, const PartitionAttrRegistry* attrs = nullptr)
      : BasePartitioner(attrs), options_(std::move(options)) {}

  std::string_view name() const override { return "DynamicShapePartitioner"; }

  // The rule that made `node` dynamic in the last Partition (kNone for
  // static nodes and nodes of other graphs).
  UnknownRule RuleOf(const ir::Node* node);
  // How many times the data-flow check rebuilt the clusters.
  int resplits() const { return resplits_; }

 protected:
  absl::Status InitClusters() override;
  int ClassifyNode(const ir::Node& node) override;
  absl::StatusOr<bool> ShouldSplit() override;
  absl::Status MergeClusters() override;
  std::string CallName(const BaseCluster& cluster) const override;
  absl::Status DecorateCall(const BaseCluster& cluster, ir::Node& call, ir::Graph& subgraph) override;
  // Into any unit, except a dynamic Const (`_force_unknown_shape`, ...) into
  // a static one.
  bool CopiesConstInto(const ir::Node& konst, const BaseCluster& reader) override;

 private:
  // `depth` counts the subgraph levels walked by rule 6 (bounded).
  UnknownRule Classify(const ir::Node& node, int depth);
  bool SubgraphIsDynamic(const ir::Graph& graph, int depth);
  bool HasTilingDependency(const ir::Node& node);

  void MergeClustersNormal();
  void MergeUnknownPaths();
  void MergeKnownSinglePaths();
  void DowngradeSmallClusters();
  void MergeControlFlowGroups();
  void MergeRefVariables();
  void MergeEverything();
  // Marks the data-flow ops of stacks that straddle static and dynamic
  // clusters; true when any was newly marked.
  bool MarkStraddlingDataFlow();

  DynamicShapeOptions options_;
  std::vector<UnknownRule> rules_;  // by cluster-set position
  absl::flat_hash_map<const ir::Graph*, bool> dynamic_subgraphs_;
  StringMap<const ops::OpSchema*> schemas_;  // by op type
  bool merge_all_ = false;
  bool whole_static_ = false;  // wrap_static_graph applied: the one cluster stays known
  int resplits_ = 0;
};

}  // namespace ge::partition
