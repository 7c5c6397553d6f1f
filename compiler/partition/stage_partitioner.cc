// StagePartitioner: stage levels flow upstream, the rest joins the last
// stage, and each stage is merged into one cluster.
#include "compiler/partition/stage_partitioner.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::partition {

absl::Status StagePartitioner::InitClusters() {
  GE_RETURN_IF_ERROR(BasePartitioner::InitClusters());
  const size_t n = clusters().num_nodes();
  stage_.assign(n, -1);
  any_stage_ = false;
  for (size_t p = 0; p < n; ++p) {
    const ir::Node& node = *clusters().node(static_cast<int32_t>(p));
    if (IsGraphInput(node) || IsGraphOutput(node)) continue;
    if (auto level = node.op_desc().GetAttr<int64_t>(ir::kAttrStageLevel)) {
      if (*level < 0) {
        return InvalidArgument("node '", node.name(), "' has negative ", ir::kAttrStageLevel, " ", *level);
      }
      stage_[p] = *level;
      any_stage_ = true;
    }
  }
  if (!any_stage_) return absl::OkStatus();
  SplitStageLevel();
  SplitTailStage();
  for (size_t p = 0; p < n; ++p) {
    if (stage_[p] < 0) continue;
    BaseCluster& c = clusters().ClusterOf(static_cast<int32_t>(p));
    c.set_label(StrCat(stage_[p]));
  }
  return absl::OkStatus();
}

int StagePartitioner::ClassifyNode(const ir::Node& node) {
  if (IsGraphInput(node)) return kClusterData;
  if (IsGraphOutput(node)) return kClusterNetOutput;
  return kClusterStage;
}

void StagePartitioner::SplitStageLevel() {
  // Levels in ascending order, so that a producer shared by two stages
  // joins the earlier one.
  std::vector<int32_t> seeds;
  for (int32_t p = 0; p < static_cast<int32_t>(stage_.size()); ++p) {
    if (stage_[p] >= 0) seeds.push_back(p);
  }
  std::stable_sort(seeds.begin(), seeds.end(), [this](int32_t a, int32_t b) { return stage_[a] < stage_[b]; });
  std::vector<int32_t> stack;
  for (int32_t seed : seeds) {
    const int64_t level = stage_[seed];
    stack.assign(1, seed);
    while (!stack.empty()) {
      const ir::Node* n = clusters().node(stack.back());
      stack.pop_back();
      auto visit = [&](const ir::Node* producer) {
        const int32_t q = clusters().PositionOf(producer);
        if (q < 0 || stage_[q] >= 0 || IsGraphInput(*producer) || IsGraphOutput(*producer)) return;
        stage_[q] = level;
        clusters().node(q)->mutable_op_desc().SetAttr(ir::kAttrStageLevel, level);
        stack.push_back(q);
      };
      for (const ir::OutPort& in : n->inputs()) {
        if (in.node != nullptr) visit(in.node);
      }
      for (const ir::Node* c : n->control_inputs()) visit(c);
    }
  }
}

void StagePartitioner::SplitTailStage() {
  const int64_t last = *std::max_element(stage_.begin(), stage_.end());
  for (int32_t p = 0; p < static_cast<int32_t>(stage_.size()); ++p) {
    ir::Node* n = clusters().node(p);
    if (stage_[p] >= 0 || IsGraphInput(*n) || IsGraphOutput(*n)) continue;
    stage_[p] = last;
    n->mutable_op_desc().SetAttr(ir::kAttrStageLevel, last);
  }
}

absl::StatusOr<bool> StagePartitioner::ShouldSplit() { return any_stage_; }

absl::Status StagePartitioner::MergeClusters() {
  std::map<int64_t, std::vector<int32_t>> stages;  // positions in topological order
  for (int32_t p = 0; p < static_cast<int32_t>(stage_.size()); ++p) {
    if (stage_[p] >= 0) stages[stage_[p]].push_back(p);
  }
  for (const auto& [level, positions] : stages) {
    BaseCluster& into = clusters().ClusterOf(positions.front());
    for (size_t i = 1; i < positions.size(); ++i) {
      BaseCluster& from = clusters().ClusterOf(positions[i]);
      if (&from == &into || into.TryMerge(from)) continue;
      // Some other stage lies on a path between two nodes of this one.
      const ir::Node* a = clusters().node(positions.front());
      const ir::Node* b = clusters().node(positions[i]);
      int64_t between = -1;
      for (const auto& [other, other_positions] : stages) {
        if (other == level) continue;
        // Bounded: this only improves the message.
        for (size_t k = 0; k < other_positions.size() && k < 64; ++k) {
          BaseCluster& c = clusters().ClusterOf(other_positions[k]);
          if (clusters().IsReachable(into, c) && clusters().IsReachable(c, from)) between = other;
        }
        if (between >= 0) break;
      }
      return InvalidArgument("stage ", level, " cannot be cut out: nodes '", a->name(), "' and '", b->name(),
                             "' are joined through ",
                             between >= 0 ? StrCat("stage ", between) : std::string("another stage"));
    }
  }
  return absl::OkStatus();
}

std::string StagePartitioner::CallName(const BaseCluster& cluster) const {
  return StrCat("stage_", cluster.label());
}

absl::Status StagePartitioner::DecorateCall(const BaseCluster& cluster, ir::Node& call, ir::Graph&) {
  int64_t level = 0;
  if (!absl::SimpleAtoi(AbslView(cluster.label()), &level)) return Internal("stage label '", cluster.label(), "'");
  call.mutable_op_desc().SetAttr(ir::kAttrStageLevel, level);
  call.mutable_op_desc().SetAttr(ir::kAttrForceUnknownShape, true);
  return absl::OkStatus();
}

}  // namespace ge::partition
