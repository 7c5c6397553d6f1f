// PipelineStages: stage membership by ascending level, one sync-point event
// per stage, and the check that the stages can run in that order.
#include "runtime/executor/pipeline_stages.h"

#include <algorithm>

namespace ge::runtime {

PipelineStages::PipelineStages(const std::vector<int64_t>& levels) {
  for (int64_t level : levels) {
    if (level >= 0) levels_.push_back(level);
  }
  std::sort(levels_.begin(), levels_.end());
  levels_.erase(std::unique(levels_.begin(), levels_.end()), levels_.end());
  if (levels_.size() < 2) {
    levels_.clear();
    return;
  }
  stage_of_.assign(levels.size(), -1);
  members_.resize(levels_.size());
  for (size_t s = 0; s < levels.size(); ++s) {
    if (levels[s] < 0) continue;
    const int stage = static_cast<int>(std::lower_bound(levels_.begin(), levels_.end(), levels[s]) - levels_.begin());
    stage_of_[s] = stage;
    members_[stage].push_back(static_cast<int>(s));
  }
  for (size_t k = 0; k < levels_.size(); ++k) events_.push_back(std::make_unique<device::Event>());
}

// Runs the schedule without computing: steps start when their edges and
// the previous stage allow; whatever never starts is blocked.
int PipelineStages::FirstBlocked(const std::vector<std::vector<int>>& successors,
                                 const std::vector<int>& compute_steps) const {
  std::vector<int> pending(successors.size(), 0);
  std::vector<bool> is_compute(successors.size(), false);
  for (int s : compute_steps) is_compute[s] = true;
  for (int s : compute_steps) {
    for (int next : successors[s]) ++pending[next];
    if (stage_of(s) > 0) ++pending[s];  // the previous stage's barrier
  }
  std::vector<int> ready;
  for (int s : compute_steps) {
    if (pending[s] == 0) ready.push_back(s);
  }
  std::vector<size_t> remaining(members_.size());
  for (size_t k = 0; k < members_.size(); ++k) remaining[k] = members_[k].size();
  std::vector<bool> done(successors.size(), false);
  while (!ready.empty()) {
    const int s = ready.back();
    ready.pop_back();
    done[s] = true;
    for (int next : successors[s]) {
      if (--pending[next] == 0) ready.push_back(next);
    }
    const int stage = stage_of(s);
    if (stage >= 0 && --remaining[stage] == 0 && stage + 1 < num_stages()) {
      for (int next : members_[stage + 1]) {
        if (--pending[next] == 0) ready.push_back(next);
      }
    }
  }
  for (int s : compute_steps) {
    if (!done[s]) return s;
  }
  return -1;
}

}  // namespace ge::runtime
