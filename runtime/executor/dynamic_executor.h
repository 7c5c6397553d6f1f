// DynamicExecutor: runs a placed graph whose shapes may be known only at run
// time (seeds/04's dynamic path; GE's TopologicalExecutor).
//
// At creation every node gets its kernel from the engine named in its
// `_engine_name` attribute, and the topological order, value slots and the
// point where each value dies are computed once. A run binds the inputs to
// the Data nodes, then for each node: infers output types from the actual
// inputs (skipped when the compiled types are concrete and the inputs match
// them, or when the input types and the values the op's inference reads
// are those of the node's previous run: a loop body's iterations infer once),
// re-prepares the kernel when its input shapes changed, computes (handing
// the kernel the values it is the last consumer of, owned_input), and drops
// every value whose last consumer has run. Runs of one executor are
// serialized (kernels keep prepared state); create one executor per
// concurrent stream of runs.
//
// Inter-op parallelism (ExecutorOptions::inter_op_parallelism > 1; GE's
// parallel executor beside the TopologicalExecutor): a run keeps a counter
// of unfinished predecessors (data and control) per node and starts every
// node whose counter reaches zero, on the calling thread and up to N - 1
// workers of the inter-op pool. A value dies when a per-value counter of
// its remaining consumers reaches zero. Each node runs at most once per run,
// so a kernel's prepared state is never used by two threads at once. The
// first error (or a RunControl stop) is the run's result: no node starts
// after it, and the run returns once the nodes already running are done.
// Subgraphs of the tree run the same way on the same pool; the thread that
// started a run always takes ready nodes itself, so nested runs cannot wait
// on a pool that is busy with their parents. Nodes of an independent engine
// (EngineAttributes::independent_stream), and PartitionedCalls whose
// subgraph runs wholly on one, run in order on that engine's own stream
// instead, so they overlap the rest even without inter-op threads.
//
// Pipeline stages (runtime/executor/pipeline_stages.h): when the graph's
// nodes carry two or more `_stage_level`s (the StagePartitioner's stage
// calls in a partitioned root, or their nodes in a flat graph), runs take
// the dependency-counting path even with one thread, stage k+1 starts only
// after stage k's last node has finished, and each boundary is a sync point:
// an event recorded on the stream (or host) that finished stage k and
// waited for by every node of stage k+1 before it starts. Create refuses a
// graph whose later stage feeds an earlier one.
//
// Subgraphs: creation also builds one child executor per subgraph that a
// node of the graph (or, recursively, of a subgraph) owns, so that every
// subgraph is checked at load and its kernels keep their prepared state
// across calls. Control-flow kernels run them through
// ExecuteContext::RunSubgraph, which binds the subgraph's input nodes to the
// values the kernel passes by the parent-index conventions of
// base/ops/graph_inference.cc (If / Case: Data index i <- input i + 1;
// other owners: Data index i <- input i; InnerData or Data with
// `_parent_index`: that input) and returns the values reaching its
// NetOutput (or InnerNetOutput). A subgraph runs only inside the run of its
// owner, so the root's run lock covers the tree; a kernel asking for a
// subgraph that is already running (re-entrancy, or concurrent calls from
// one kernel's threads) gets an error instead of a deadlock.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ops/op_schema.h"
#include "base/strings.h"
#include "base/compute_budget.h"
#include "base/thread_pool.h"
#include "base/value.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/stream.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/executor/pipeline_stages.h"
#include "runtime/executor/run_control.h"

namespace ge::runtime {

class StaticBodies;
class StaticExecutor;

struct ExecutorOptions {
  // The kernels' thread count (ExecuteContext::num_threads; their parallel
  // loops and oneDNN's teams run on OpenMP, runtime/engines/sdk/parallel.h).
  int intra_op_threads = 1;
  // The device's budget of compute threads (base/compute_budget.h): every
  // kernel runs inside a ComputeScope of it, so that however many runs and
  // inter-op workers are busy, at most its capacity of threads compute.
  // Null: unlimited (tests, tools without a device). Must outlive the
  // executor.
  ComputeBudget* compute_budget = nullptr;
  // Mixed execution: loads a static executor for the subgraph of a
  // PartitionedCall whose `_is_unknown_shape` is false (a static unit of a
  // partitioned root). Unimplemented (or no loader) keeps the subgraph on
  // a DynamicExecutor; other errors fail creation.
  std::function<absl::StatusOr<std::unique_ptr<StaticExecutor>>(const ir::Graph&)> static_loader;
  // Loads the static plan of a control-flow subgraph (a While's body, an
  // If branch; runtime/executor/static_body.h) for one signature of its
  // inputs; runs with that signature take it. Unimplemented (or no loader)
  // keeps the subgraph dynamic.
  std::function<absl::StatusOr<std::unique_ptr<StaticExecutor>>(const ir::Graph&)> static_body_loader;
  // The session's variables and FileConstant weights (Variable, Assign*,
  // FileConstant kernels); null without a session. Must outlive the executor.
  engine::VariableStore* variables = nullptr;
  // Where kernel outputs are allocated (shared by the executor tree); null:
  // Create makes one over the host allocator and closes it (trims) when the
  // executor is destroyed. Output tensors keep it alive.
  std::shared_ptr<device::CachingAllocator> output_allocator;
  // Threads that run ready nodes at once (ge.exec.inter_op_parallelism);
  // 1 runs them one after another in topological order.
  int inter_op_parallelism = 1;
  // The workers of parallel runs (at most inter_op_parallelism - 1 are
  // used); null: Create makes one, shared by the executor tree.
  std::shared_ptr<ThreadPool> inter_op_pool;
  // Told about pipeline stage boundaries and sync points (may be null).
  // Must outlive the executor and be thread-safe.
  StageObserver* stage_observer = nullptr;
};

class DynamicExecutor {
 public:
  // `graph` (and its graph tree) must outlive the executor and stay
  // unchanged. Fails naming the node (and subgraph) that cannot run: not
  // placed, engine not loaded, no kernel, a subgraph name that does not
  // resolve.
  static absl::StatusOr<std::unique_ptr<DynamicExecutor>> Create(const ir::Graph& graph,
                                                                 const engine::EngineRegistry& engines,
                                                                 ExecutorOptions options);
  ~DynamicExecutor();
  // Subgraphs that run on a StaticExecutor (mixed execution).
  int num_static_subgraphs() const;
  // Control-flow subgraphs that may run static plans (static_body_loader),
  // and the plans made so far (one per input signature of each).
  int num_static_bodies() const;
  int num_static_plans() const;

  // `inputs` in Data index order; returns the NetOutput's inputs in order.
  // `control` (may be null) is checked before every node, in subgraphs too.
  absl::StatusOr<std::vector<Value>> Run(std::vector<Value> inputs, const RunControl* control = nullptr);

  int num_inputs() const { return num_inputs_; }
  // The cache kernel outputs come from.
  device::CachingAllocator& output_allocator() const { return *options_.output_allocator; }

 private:
  struct Step;
  class StepContext;
  struct ParallelRun;
  // A subgraph input node's slot and the parent input it takes.
  struct ParentBinding {
    int slot;
    int64_t index;
    const ir::Node* node;
    bool move = false;  // the only input node taking `index`: the value moves in
  };
  using SubgraphTable = StringMap<std::unique_ptr<DynamicExecutor>>;

  DynamicExecutor() = default;
  absl::Status Build(const ir::Graph& graph, const engine::EngineRegistry& engines, bool is_subgraph);
  absl::Status BindInputNode(const ir::Node& node, int slot, bool is_subgraph);
  // Loads this (subgraph) executor as a static one when `owner` is a static
  // PartitionedCall and the options' loader accepts `sub`.
  absl::StatusOr<bool> TryLoadStatic(const ir::Node& owner, const ir::Graph& sub);
  void ComputeReleases(const std::vector<std::pair<int, size_t>>& last_use);
  // Points each step at the executors of the subgraphs its node owns.
  void ResolveSubgraphs();
  // Creates the executors of the subgraphs `graph`'s nodes own, recursively,
  // into `table`.
  static absl::Status BuildSubgraphs(const ir::Graph& graph, const engine::EngineRegistry& engines,
                                     const ExecutorOptions& options, SubgraphTable& table);
  // `uses` (parallel runs: the remaining consumers per slot; null for
  // sequential runs) tells which inputs the kernel may take (owned_input).
  absl::Status RunStep(Step& step, std::vector<Value>& slots, const std::atomic<int>* uses = nullptr);
  // Runs every step over `slots` (inputs already bound) and collects the outputs.
  absl::StatusOr<std::vector<Value>> Execute(std::vector<Value>& slots);
  // Execute with inter-op parallelism, and the loop every thread of such a
  // run takes ready steps in (`caller`: the thread that started the run,
  // which returns only when the run is over).
  absl::StatusOr<std::vector<Value>> ExecuteParallel(std::vector<Value>& slots);
  static void Drain(const std::shared_ptr<ParallelRun>& run, bool caller);
  // With the run's mutex held: puts ready step `s` on its engine's stream,
  // or on the ready list; and records that `s` finished with `status`.
  static void MakeReadyLocked(const std::shared_ptr<ParallelRun>& run, int s);
  static void FinishLocked(const std::shared_ptr<ParallelRun>& run, int s, absl::Status status);
  // Computes step `s` of a parallel run and releases the inputs it was the
  // last consumer of.
  static absl::Status RunOne(ParallelRun& run, int s);
  // The NetOutput's inputs, moved out of `slots` (which die with the run).
  std::vector<Value> CollectOutputs(std::vector<Value>& slots) const;
  // The dependency counts of parallel runs, from the built steps, and the
  // pipeline stages' order (an error when it contradicts the edges).
  absl::Status ComputeDependencies();
  // Whether runs take the dependency-counting path.
  bool CountsDependencies() const {
    return options_.inter_op_parallelism > 1 || !streams_.empty() || stages_.active();
  }
  // Pipeline stages, with the run's mutex held: stage bookkeeping when step
  // `s` finished; and, without it, the sync point step `s` of a later stage
  // waits for on the host before computing.
  static void FinishStageLocked(const std::shared_ptr<ParallelRun>& run, int s);
  static void EnterStage(ParallelRun& run, int s);
  std::string_view StreamName(int stream) const;
  // A subgraph's run: `parent_inputs` indexed like the owner node's inputs.
  absl::StatusOr<std::vector<Value>> RunAsSubgraph(std::vector<Value> parent_inputs, const RunControl* control);
  // ExecuteContext::RunSubgraph for the kernel of `step`.
  absl::StatusOr<std::vector<Value>> RunSubgraphOf(const Step& step, std::string_view name,
                                                   std::vector<Value> inputs);

  const ir::Graph* graph_ = nullptr;
  ExecutorOptions options_;
  std::vector<Step> steps_;
  size_t num_slots_ = 0;
  int num_inputs_ = 0;
  std::vector<int> input_slots_;   // root: by Data index
  std::vector<ParentBinding> parent_bindings_;  // subgraph only
  int64_t max_parent_index_ = -1;               // subgraph only
  // A subgraph run's slots, kept between runs (guarded by run_mu_): every
  // slot is empty between runs, so a loop body's iterations allocate none.
  std::vector<Value> subgraph_slots_;
  std::vector<int> output_slots_;  // NetOutput inputs, -1 when unconnected
  std::mutex run_mu_;
  const RunControl* control_ = nullptr;  // of the run in progress; guarded by run_mu_
  // Every subgraph executor of the tree, owned by the executor Create made;
  // its children point at the same table.
  std::unique_ptr<SubgraphTable> owned_subgraphs_;
  const SubgraphTable* subgraphs_ = nullptr;
  // A static PartitionedCall subgraph runs here instead (see
  // ExecutorOptions::static_loader); its inputs by Data index take these
  // parent inputs.
  std::unique_ptr<StaticExecutor> static_;
  std::vector<int64_t> static_parent_index_;
  // A control-flow subgraph's static plans by input signature, taken by the
  // runs they exist for (the steps above run the others).
  std::unique_ptr<StaticBodies> static_bodies_;
  bool owns_output_allocator_ = false;  // Create made it: closed on destruction
  // Parallel runs: per step, the steps waiting for it and the number it
  // waits for; per slot, its consumers (never reaching zero for outputs);
  // the steps ready at the start.
  std::vector<std::vector<int>> successors_;
  std::vector<int> num_predecessors_;
  std::vector<int> slot_uses_;
  std::vector<int> initial_ready_;
  size_t num_compute_steps_ = 0;
  PipelineStages stages_;
  // One stream per independent engine the graph's steps use (Step::stream);
  // any makes runs take the parallel path, the pool or not. Declared last:
  // destroyed (drained) first.
  std::vector<std::string> stream_engines_;
  std::vector<std::unique_ptr<device::Stream>> streams_;
};

}  // namespace ge::runtime
