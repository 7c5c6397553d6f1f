// JitGraph: incremental (JIT) compilation of a graph with unknown dims in
// the session layer (seeds/01 §2.4 and §5.7, GE's jit_execution with the
// BinaryPartitioner and ExecutionOrder). Option `ge.jitCompile=1`.
//
// A run peels the graph like an onion. A *stage* is a graph still to run
// (first the whole graph, then what a slice leaves). For its actual inputs
// the stage is planned: its Data nodes take the inputs' types; small
// integer inputs that a node reads as a value (a Reshape's shape, a Slice's
// starts, ...) become Consts holding the actual value; shape inference
// runs, then QdqFusionPass (before folding, as in the compile pipeline:
// folding would turn DQ(weights) into floats), then constant folding
// (Shape of a now known tensor and what is
// computed from it); the nodes whose output types are all known (and whose
// producers are) form the slice. When none is, the slice is the frontier: the nodes
// that read only inputs and constants, run to learn their outputs (NonZero
// and other value-dependent shapes). BinaryPartitioner cuts the slice off;
// it is compiled through a session of its own (a static slice gets a
// StaticProgram) and run, and its outputs feed the next stage, so what
// was inferred from real values lets the next stage know more.
//
// Each compiled slice is cached per stage behind its *guard*: the dtype and
// shape of every stage input, and the value of those made constants. A
// later run whose inputs pass a stage's guard reuses its slice (and the
// stages after it); one that fails every guard compiles again, logging
// (info) which guard failed and how; a compile of a stage that already has
// a slice is a recompilation. The plans (slices) are bounded per graph by
// count (`ge.jitMaxPlans`) and by their arenas' bytes
// (`ge.jitPlanMemoryBytes`). At the bound, a stage's least recently used
// plan gives way to a new shape only when the new shape has been seen at
// least 2 more times than that plan has run (counts halved every 16 x
// ge.jitMaxPlans lookups of the stage, so the set follows a workload that
// shifts); until
// then, and always when a cycle of shapes is wider than the bound, the
// run takes the dynamic form (Run returns no outputs, telling the session
// to run it), so plans never thrash. `ge.jitMaxRecompiles` (>= 0) still
// bounds recompilations outright, with no replacement past it. A stage
// that cannot be planned (a shape inference or compile error for these
// inputs) disables planning for the whole graph, logged as a warning with
// the error. A replaced plan is freed when the last run using it ends.
//
// Concurrency: looking a guard up and planning hold the graph's lock;
// slices run outside it, each on its own executor (which serializes its
// own runs), so runs of different shapes proceed at once. Graphs whose
// nodes own subgraphs cannot be sliced (the session compiles them as usual
// instead).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "base/compute_budget.h"
#include "base/thread_pool.h"
#include "base/value.h"
#include "compiler/partition/binary_partitioner.h"
#include "runtime/device/device.h"
#include "runtime/device/memory_quota.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/executor/run_control.h"

namespace ge::session {

class Session;

struct JitStats {
  int64_t compilations = 0;    // slices compiled
  int64_t recompilations = 0;  // of them, for a stage that already had a slice
  int64_t last_run_slices = 0; // slices the last run executed
  std::string last_guard_failure;  // the last recompilation's reason ("" for none)
  int64_t planned_runs = 0;        // runs that ran on slices
  int64_t fallback_runs = 0;       // runs handed back to the dynamic form (bound reached, or not plannable)
  std::string fallback_reason;     // why the last fallback happened ("" for none)
  int64_t evictions = 0;           // plans replaced by a more frequent shape
  int64_t live_plans = 0;          // plans held now
  int64_t plan_bytes = 0;          // their arenas' bytes
};

// The bounds on a graph's plans (ge.jitMaxPlans, ge.jitPlanMemoryBytes,
// ge.jitMaxRecompiles; docs/options.md).
struct JitLimits {
  int64_t max_plans = 64;
  int64_t max_plan_bytes = int64_t{128} << 20;  // 0: no memory bound
  int64_t max_recompiles = -1;                  // -1: no bound
};

class JitGraph {
 public:
  // `options` are the graph's options without the JIT keys (the slices
  // compile with them). `engines`, `pool` and `device` must outlive this.
  JitGraph(uint32_t graph_id, std::unique_ptr<ir::Graph> graph, OptionMap options, JitLimits limits,
           const engine::EngineRegistry& engines, ThreadPool* pool, device::Device* device);
  ~JitGraph();

  // Whether `graph` can run this way (no node owns subgraphs).
  static bool CanSlice(const ir::Graph& graph);

  // The outputs; std::nullopt when the inputs get no plan (the bound is
  // reached, or planning failed): the caller runs its dynamic form with
  // the same inputs. Slices that ran before that are simply discarded.
  absl::StatusOr<std::optional<std::vector<Value>>> Run(const std::vector<Value>& inputs,
                                                        const runtime::RunControl* control);
  JitStats stats() const;
  // A copy of the graph as given (to compile it as a whole).
  std::unique_ptr<ir::Graph> CloneGraph() const;
  // Trims the slices' output cache when idle (Session::TrimIdleCaches).
  size_t TrimIdleCaches();
  // The slices run under the owning session's compute-thread budget.
  void set_compute_budget(ComputeBudget* budget);
  // Bounds each plan's compile (Session::set_compile_timeout): a plan that
  // takes longer fails planning, so the graph falls back to its dynamic form.
  void set_compile_timeout(double seconds, std::string setting);
  // The slices' host memory counts against `quota` (Session::set_memory_quota).
  void set_memory_quota(std::shared_ptr<device::MemoryQuota> quota, int64_t max_tensor_bytes);

 private:
  struct GuardEntry;
  struct Step;
  struct Stage;

  absl::StatusOr<std::shared_ptr<Step>> Plan(Stage& stage, std::vector<GuardEntry> guard);
  // The step of `stage` for `inputs`, planning it when allowed; null when
  // the run falls back. Called with mu_ held.
  std::shared_ptr<Step> FindOrPlan(Stage& stage, const std::vector<Value>& inputs);
  // At the bound: whether the shape `guard` may replace `stage`'s least
  // recently used plans (evicting them); false sends the run to the
  // dynamic form. Called with mu_ held.
  bool MakeRoom(Stage& stage, const std::vector<GuardEntry>& guard, std::string* reason);
  bool AtBound() const;
  // Drops `step` and the stages behind it from the accounting (the plans
  // go when their last run ends).
  void Forget(const Step& step);
  std::vector<GuardEntry> MakeGuard(const Stage& stage, const std::vector<Value>& inputs) const;
  std::string DescribeFailure(const Stage& stage, const std::vector<GuardEntry>& guard) const;

  const uint32_t graph_id_;
  const OptionMap options_;
  const JitLimits limits_;
  const engine::EngineRegistry& engines_;
  const bool fold_constants_;        // ge.oo.constantFolding: fold what planning made constant
  const bool fuse_qdq_;              // QdqFusionPass not in ge.disable_passes: fuse before folding
  std::unique_ptr<Session> slices_;  // compiles and runs the slices
  std::unique_ptr<Stage> root_;
  uint32_t next_slice_id_ = 1;
  uint64_t tick_ = 0;      // lookups, for least recently used
  bool disabled_ = false;  // planning failed once: every run falls back
  mutable std::mutex mu_;
  JitStats stats_;
};

}  // namespace ge::session
