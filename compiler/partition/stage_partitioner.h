// StagePartitioner: splits a graph into pipeline stages (seeds/01 §5.4,
// GE's StagePartitioner).
//
//   * SplitStageLevel: a node's `_stage_level` flows upstream: every
//     producer (data or control) without a level of its own takes the
//     smallest level among the nodes it feeds, stages taken in ascending
//     order, and the attribute is written onto it;
//   * SplitTailStage: nodes still without a level join the last stage;
//   * each stage becomes one PartitionedCall "stage_<level>" carrying
//     `_stage_level` and `_force_unknown_shape = true` (stages synchronize
//     at run time).
// Data / InnerData and NetOutput / InnerNetOutput stay outside. A graph
// without `_stage_level` is left alone. A stage that cannot be cut out
// without a cycle (a later stage feeds it and is fed by it) is an
// InvalidArgument naming both stages and a node of each.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/partition/base_partitioner.h"

namespace ge::partition {

class StagePartitioner final : public BasePartitioner {
 public:
  explicit StagePartitioner(const PartitionAttrRegistry* attrs = nullptr) : BasePartitioner(attrs) {}
  std::string_view name() const override { return "StagePartitioner"; }

 protected:
  absl::Status InitClusters() override;
  int ClassifyNode(const ir::Node& node) override;
  absl::StatusOr<bool> ShouldSplit() override;
  absl::Status MergeClusters() override;
  std::string CallName(const BaseCluster& cluster) const override;
  absl::Status DecorateCall(const BaseCluster& cluster, ir::Node& call, ir::Graph& subgraph) override;

 private:
  void SplitStageLevel();
  void SplitTailStage();

  std::vector<int64_t> stage_;  // by position; -1 for nodes that stay outside
  bool any_stage_ = false;
};

}  // namespace ge::partition
