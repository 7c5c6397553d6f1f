// SubgraphPartitioner: runs one SubgraphProperty over a graph (the
// breadth-first growth of seeds/02, on BasePartitioner's pipeline), and
// ApplySubgraphBackends, which runs named backends in order.
//
// Growth follows data edges only; Data / InnerData, NetOutput /
// InnerNetOutput and nodes already in a subgraph never join. A candidate
// set that cannot be contracted as a whole is split into valid pieces
// (see subgraph_property.h); every piece is convex, and the pieces of one
// set never form a cycle among themselves, so all of them are kept.
#pragma once

#include <string>
#include <vector>

#include "compiler/partition/base_partitioner.h"
#include "compiler/partition/subgraph_property.h"

namespace ge::partition {

class SubgraphPartitioner final : public BasePartitioner {
 public:
  explicit SubgraphPartitioner(const SubgraphProperty& property, const PartitionAttrRegistry* attrs = nullptr)
      : BasePartitioner(attrs), property_(property) {}
  std::string_view name() const override { return "SubgraphPartitioner"; }

  // How many candidate sets had to be split into pieces in the last run.
  int split_sets() const { return split_sets_; }

 protected:
  int ClassifyNode(const ir::Node& node) override;
  absl::Status MergeClusters() override;
  bool NeedsSubgraph(const BaseCluster& cluster) const override;
  std::string CallName(const BaseCluster& cluster) const override;
  absl::Status DecorateCall(const BaseCluster& cluster, ir::Node& call, ir::Graph& subgraph) override;
  // Never: a backend's subgraph holds the nodes its selector chose.
  bool CopiesConstInto(const ir::Node&, const BaseCluster&) override { return false; }

 private:
  bool Selectable(int32_t position) const;
  std::vector<int32_t> Grow(int32_t start, SubgraphSelector& selector);
  // Splits the candidate positions into convex, connected pieces.
  std::vector<std::vector<int32_t>> SplitIntoValidPieces(const std::vector<int32_t>& candidates);

  const SubgraphProperty& property_;
  std::vector<bool> selected_;
  int split_sets_ = 0;
};

// Runs every property of every named backend, in order, on `graph`.
// InvalidArgument naming the unknown backend and the known ones.
absl::StatusOr<std::vector<PartitionedSubgraph>> ApplySubgraphBackends(
    ir::Graph& graph, const std::vector<std::string>& backends,
    const SubgraphBackendRegistry& registry = SubgraphBackendRegistry::Builtin(),
    PartitionObserver* observer = nullptr);

}  // namespace ge::partition
