// JitGraph: incremental (JIT) compilation of a graph with unknown dims in
// the session layer (seeds/01 §2.4 and §5.7, GE's jit_execution with the
// BinaryPartitioner and ExecutionOrder). Option `ge.jitCompile=1`.
//
// A run peels the graph like an onion. A *stage* is a graph still to run
// (first the whole graph, then what a slice leaves). For its actual inputs
// the stage is planned: its Data nodes take the inputs' types; small
// integer inputs that a node reads as a value (a Reshape's shape, a Slice's
// starts, ...) become Consts holding the actual value; shape inference
// runs; the nodes whose output types are all known (and whose producers
// are) form the slice. When none is, the slice is the frontier: the nodes
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
// a slice is a recompilation, and a graph stops at `ge.jitMaxRecompiles`
// of them with RESOURCE_EXHAUSTED naming the failed guard.
//
// Runs of one JitGraph are serialized. Graphs whose nodes own subgraphs
// cannot be sliced (the session compiles them as usual instead).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
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
#include "runtime/engines/engine_registry.h"
#include "runtime/executor/run_control.h"

namespace ge::session {

class Session;

struct JitStats {
  int64_t compilations = 0;    // slices compiled
  int64_t recompilations = 0;  // of them, for a stage that already had a slice
  int64_t last_run_slices = 0; // slices the last run executed
  std::string last_guard_failure;  // the last recompilation's reason ("" for none)
};

class JitGraph {
 public:
  // `options` are the graph's options without the JIT keys (the slices
  // compile with them). `engines`, `pool` and `device` must outlive this.
  JitGraph(uint32_t graph_id, std::unique_ptr<ir::Graph> graph, OptionMap options, int64_t max_recompiles,
           const engine::EngineRegistry& engines, ThreadPool* pool, device::Device* device);
  ~JitGraph();

  // Whether `graph` can run this way (no node owns subgraphs).
  static bool CanSlice(const ir::Graph& graph);

  absl::StatusOr<std::vector<Value>> Run(std::vector<Value> inputs, const runtime::RunControl* control);
  JitStats stats() const;
  // The slices run under the owning session's compute-thread budget.
  void set_compute_budget(ComputeBudget* budget);

 private:
  struct GuardEntry;
  struct Step;
  struct Stage;

  absl::StatusOr<Step*> Plan(Stage& stage, std::vector<GuardEntry> guard);
  std::vector<GuardEntry> MakeGuard(const Stage& stage, const std::vector<Value>& inputs) const;
  std::string DescribeFailure(const Stage& stage, const std::vector<GuardEntry>& guard) const;

  const uint32_t graph_id_;
  const OptionMap options_;
  const int64_t max_recompiles_;
  std::unique_ptr<Session> slices_;  // compiles and runs the slices
  std::unique_ptr<Stage> root_;
  uint32_t next_slice_id_ = 1;
  mutable std::mutex mu_;
  JitStats stats_;
};

}  // namespace ge::session
