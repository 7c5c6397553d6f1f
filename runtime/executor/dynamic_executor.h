// DynamicExecutor: runs a placed graph whose shapes may be known only at run
// time (seeds/04's dynamic path; GE's TopologicalExecutor).
//
// At creation every node gets its kernel from the engine named in its
// `_engine_name` attribute, and the topological order, value slots and the
// point where each value dies are computed once. A run binds the inputs to
// the Data nodes, then for each node: infers output types from the actual
// inputs (skipped when the compiled types are concrete and the inputs match
// them), re-prepares the kernel when its input shapes changed, computes, and
// drops every value whose last consumer has run. Runs of one executor are
// serialized (kernels keep prepared state); create one executor per
// concurrent stream of runs.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ops/op_schema.h"
#include "base/thread_pool.h"
#include "base/value.h"
#include "runtime/engines/engine_registry.h"

namespace ge::runtime {

struct ExecutorOptions {
  ThreadPool* intra_op_pool = nullptr;  // may be null: kernels run single-threaded
};

class DynamicExecutor {
 public:
  // `graph` must outlive the executor and stay unchanged.
  static absl::StatusOr<std::unique_ptr<DynamicExecutor>> Create(const ir::Graph& graph,
                                                                 const engine::EngineRegistry& engines,
                                                                 ExecutorOptions options);
  ~DynamicExecutor();

  // `inputs` in Data index order; returns the NetOutput's inputs in order.
  absl::StatusOr<std::vector<Value>> Run(std::vector<Value> inputs);

  int num_inputs() const { return num_inputs_; }

 private:
  struct Step;
  class StepContext;
  DynamicExecutor() = default;
  absl::Status Build(const ir::Graph& graph, const engine::EngineRegistry& engines);
  absl::Status RunStep(Step& step, std::vector<Value>& slots);

  const ir::Graph* graph_ = nullptr;
  ExecutorOptions options_;
  std::vector<Step> steps_;
  size_t num_slots_ = 0;
  int num_inputs_ = 0;
  std::vector<int> input_slots_;  // by Data index
  std::vector<int> output_slots_;  // NetOutput inputs, -1 when unconnected
  std::mutex run_mu_;
};

}  // namespace ge::runtime
