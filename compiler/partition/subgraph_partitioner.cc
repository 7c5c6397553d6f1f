// SubgraphPartitioner: breadth-first growth from every unselected node in
// topological order, filtering, splitting of cycle-forming candidate sets
// into valid pieces, and contraction of each piece into one cluster.
#include "compiler/partition/subgraph_partitioner.h"

#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "base/status.h"

namespace ge::partition {
namespace {

constexpr int kClusterSelected = 6;
constexpr int kClusterUnselected = kClusterInputNode;

}  // namespace

int SubgraphPartitioner::ClassifyNode(const ir::Node& node) {
  if (IsGraphInput(node)) return kClusterData;
  if (IsGraphOutput(node)) return kClusterNetOutput;
  return kClusterUnselected;
}

bool SubgraphPartitioner::NeedsSubgraph(const BaseCluster& cluster) const {
  return cluster.type_index() == kClusterSelected;
}

std::string SubgraphPartitioner::CallName(const BaseCluster& cluster) const {
  return StrCat(property_.name(), "_", cluster.index);
}

absl::Status SubgraphPartitioner::DecorateCall(const BaseCluster& cluster, ir::Node& call, ir::Graph& subgraph) {
  return Annotate(property_.CreateSubgraphNode(graph(), call, subgraph, cluster.index),
                  StrCat("subgraph property '", property_.name(), "'"));
}

bool SubgraphPartitioner::Selectable(int32_t position) const {
  if (position < 0 || selected_[position]) return false;
  const ir::Node& n = *clusters().node(position);
  return !IsGraphInput(n) && !IsGraphOutput(n) && !IsBoundaryNode(n);
}

std::vector<int32_t> SubgraphPartitioner::Grow(int32_t start, SubgraphSelector& selector) {
  std::vector<int32_t> candidates{start};
  absl::flat_hash_set<int32_t> in_set{start};
  std::deque<int32_t> queue{start};
  while (!queue.empty()) {
    const int32_t p = queue.front();
    queue.pop_front();
    const ir::Node& current = *clusters().node(p);
    auto consider = [&](const ir::Node* neighbour, bool is_input) {
      const int32_t q = clusters().PositionOf(neighbour);
      if (!Selectable(q) || in_set.contains(q)) return;
      const bool take = is_input ? selector.SelectInput(current, *neighbour) : selector.SelectOutput(current, *neighbour);
      if (!take) return;
      in_set.insert(q);
      candidates.push_back(q);
      queue.push_back(q);
    };
    for (const ir::OutPort& in : current.inputs()) {
      if (in.node != nullptr) consider(in.node, /*is_input=*/true);
    }
    for (const auto& port : current.outputs()) {
      for (const ir::InPort& c : port) consider(c.node, /*is_input=*/false);
    }
  }
  return candidates;
}

std::vector<std::vector<int32_t>> SubgraphPartitioner::SplitIntoValidPieces(const std::vector<int32_t>& candidates) {
  // Candidates are still single-node clusters, so clusters map back to
  // positions one to one.
  std::vector<BaseCluster*> set;
  absl::flat_hash_map<const BaseCluster*, int32_t> position_of;
  for (int32_t p : candidates) {
    BaseCluster* c = &clusters().ClusterOf(p);
    set.push_back(c);
    position_of.emplace(c, p);
  }
  std::vector<std::vector<int32_t>> pieces;
  for (const std::vector<BaseCluster*>& piece : clusters().ConvexPieces(set)) {
    pieces.emplace_back();
    for (const BaseCluster* c : piece) pieces.back().push_back(position_of.at(c));
  }
  return pieces;
}

absl::Status SubgraphPartitioner::MergeClusters() {
  selected_.assign(clusters().num_nodes(), false);
  split_sets_ = 0;
  std::unique_ptr<SubgraphSelector> selector = property_.CreateSubgraphSelector();
  if (selector == nullptr) return Internal("subgraph property '", property_.name(), "' created no selector");
  for (int32_t p = 0; p < static_cast<int32_t>(clusters().num_nodes()); ++p) {
    if (!Selectable(p)) continue;
    selector->Reset();
    if (!selector->Select(*clusters().node(p))) continue;
    const std::vector<int32_t> grown = Grow(p, *selector);
    std::vector<ir::Node*> nodes;
    nodes.reserve(grown.size());
    for (int32_t q : grown) nodes.push_back(clusters().node(q));
    const absl::flat_hash_set<int32_t> grown_set(grown.begin(), grown.end());
    std::vector<int32_t> kept;
    for (ir::Node* n : selector->Filter(nodes)) {
      const int32_t q = clusters().PositionOf(n);
      if (q >= 0 && grown_set.contains(q) && std::find(kept.begin(), kept.end(), q) == kept.end()) kept.push_back(q);
    }
    if (kept.empty()) continue;
    std::vector<std::vector<int32_t>> pieces = SplitIntoValidPieces(kept);
    if (pieces.size() > 1) ++split_sets_;
    for (std::vector<int32_t>& piece : pieces) {
      std::sort(piece.begin(), piece.end(), [this](int32_t a, int32_t b) {
        return clusters().ClusterOf(a).rank() < clusters().ClusterOf(b).rank();
      });
      BaseCluster& into = clusters().ClusterOf(piece.front());
      for (size_t i = 1; i < piece.size(); ++i) into.Merge(clusters().ClusterOf(piece[i]));
      into.set_type_index(kClusterSelected);
      for (int32_t q : piece) selected_[q] = true;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PartitionedSubgraph>> ApplySubgraphBackends(ir::Graph& graph,
                                                                       const std::vector<std::string>& backends,
                                                                       const SubgraphBackendRegistry& registry,
                                                                       PartitionObserver* observer) {
  std::vector<PartitionedSubgraph> all;
  for (const std::string& name : backends) {
    const SubgraphBackend* backend = registry.Find(name);
    if (backend == nullptr) {
      return InvalidArgument("unknown subgraph backend '", name, "' (known: ", absl::StrJoin(registry.Names(), ", "),
                             ")");
    }
    for (const auto& property : *backend) {
      SubgraphPartitioner partitioner(*property);
      partitioner.set_observer(observer);
      GE_ASSIGN_OR_RETURN(std::vector<PartitionedSubgraph> made, partitioner.Partition(graph));
      all.insert(all.end(), made.begin(), made.end());
    }
  }
  return all;
}

}  // namespace ge::partition
