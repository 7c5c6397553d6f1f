// PipelineStages: the run-time order of a graph's pipeline stages (GE's
// pipeline stages; compiler/partition/stage_partitioner.h cuts them and
// marks every stage node, or the stage's PartitionedCall, with
// `_stage_level`).
//
// When the nodes of one graph carry two or more distinct levels, stage k+1
// starts only after stage k is complete, whether or not data flows between
// them: every node of the next level waits for the last node of the
// previous level on top of its data and control edges. Each stage has a
// sync point, a device::Event recorded when its last node finishes: on the
// stream that node ran on (the event completes once the stage's outputs
// are complete on that stream), or on the host. Every node of the next
// stage waits for it before it starts: a host node synchronizes the event,
// a node of an independent engine has its stream wait for it
// (Stream::WaitEvent) ahead of its task. Nodes without a level (inputs,
// outputs, nodes added after partitioning) follow their edges only.
//
// The executor (DynamicExecutor's dependency-counting runs, taken whenever
// a graph has stages, with inter_op_parallelism 1 too) owns one
// PipelineStages per graph; the per-run counters live in the run.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device/stream.h"

namespace ge::runtime {

// Hooks at the stages' boundaries and sync points, for tracing and tests.
// Called from whichever thread reaches them (the caller's, an inter-op
// worker, a stream's): implementations must be thread-safe. `stream` is
// the stream's name, or "host".
class StageObserver {
 public:
  virtual ~StageObserver() = default;
  // The first node of stage `level` is about to compute.
  virtual void StageStarted(int64_t level) { (void)level; }
  // The last node of stage `level` has finished.
  virtual void StageFinished(int64_t level) { (void)level; }
  // The sync point of stage `level` was recorded on `stream`.
  virtual void SyncRecorded(int64_t level, std::string_view stream) {
    (void)level;
    (void)stream;
  }
  // A node of the next stage waits for stage `level`'s sync point on `stream`.
  virtual void SyncWaited(int64_t level, std::string_view stream) {
    (void)level;
    (void)stream;
  }
};

class PipelineStages {
 public:
  PipelineStages() = default;
  // `levels[s]`: the `_stage_level` of step s, or -1 for none.
  explicit PipelineStages(const std::vector<int64_t>& levels);
  PipelineStages(PipelineStages&&) = default;
  PipelineStages& operator=(PipelineStages&&) = default;

  // Whether the graph has two or more stages to order.
  bool active() const { return members_.size() >= 2; }
  int num_stages() const { return static_cast<int>(members_.size()); }
  // The stage (0-based, ascending levels) of step `s`, or -1.
  int stage_of(int s) const { return stage_of_.empty() ? -1 : stage_of_[s]; }
  int64_t level(int stage) const { return levels_[stage]; }
  const std::vector<int>& members(int stage) const { return members_[stage]; }
  // The sync point of `stage`, recorded when its last node finishes.
  device::Event& done(int stage) const { return *events_[stage]; }

  // OK when the stages can run in ascending order given `successors` (the
  // steps' data and control edges): no later stage feeds an earlier one,
  // directly or through nodes without a level. `name(s)` names step s in
  // the error.
  template <typename NameFn>
  absl::Status CheckOrder(const std::vector<std::vector<int>>& successors, const std::vector<int>& compute_steps,
                          NameFn name) const;

 private:
  // The first step (of `compute_steps`) that an ascending stage order can
  // never start, or -1.
  int FirstBlocked(const std::vector<std::vector<int>>& successors, const std::vector<int>& compute_steps) const;

  std::vector<int> stage_of_;
  std::vector<int64_t> levels_;
  std::vector<std::vector<int>> members_;
  std::vector<std::unique_ptr<device::Event>> events_;
};

template <typename NameFn>
absl::Status PipelineStages::CheckOrder(const std::vector<std::vector<int>>& successors,
                                        const std::vector<int>& compute_steps, NameFn name) const {
  if (!active()) return absl::OkStatus();
  const int blocked = FirstBlocked(successors, compute_steps);
  if (blocked < 0) return absl::OkStatus();
  const int stage = stage_of(blocked);
  return absl::InvalidArgumentError(
      std::string("pipeline stages cannot run in ascending order: node '") + name(blocked) + "'" +
      (stage >= 0 ? " of stage " + std::to_string(levels_[stage]) : std::string(" (no stage)")) +
      " depends on a later stage");
}

}  // namespace ge::runtime
