// StaticExecutor: runs a known-shape graph from its StaticProgram (seeds/04:
// GE's DavinciModel on the CPU).
//
// Load binds every kernel once (each engine's KernelBuilder::LoadKernel,
// prepared for the program's types, constant weights handed in), takes one
// block from the device for the planned arena plus the largest workspace
// and the staging area of inputs, and keeps nothing of the graph but the
// tasks' OpDescs (Shrink). A run walks the flat task array.
//
// Addresses: every value a task sees lives in an address-table entry — the
// arena, a weight, a graph input, or a graph output whose arena buffer
// holds nothing else. Before each run the input and output entries are
// refreshed: only entries whose address changed rebuild the tensors that
// point into them; frozen inputs (FreezeInputs) are bound on the first run
// and skipped afterwards (the caller promises the same buffer, whose
// contents it may change). A user input aligned to kStaticAlignment is
// read in place (zero copy); an unaligned one is copied into the input's
// staging area. A user output buffer of the right type, aligned, for an
// output with its own arena buffer is written in place; every other output
// is copied out after the run.
//
// Memory layout of the walk (what a run touches per task, in task order):
// the task records are one contiguous array of small hot records (kernel,
// the task's slice of the value pool, workspace); every task's input and
// output Values are one contiguous pool, in task order; small constant
// weights (at most kPackedWeightBytes each) are copied at load into one
// packed block in the order tasks first read them. A task's cold data (its
// OpDesc, TaskDef and value references) lives in a separate array that a
// run reads only for errors and RunControl checks.
//
// Runs are serialized; Load fails with the device's RESOURCE_EXHAUSTED
// (naming the device, the bytes asked and free) when the arena does not fit.
#pragma once

#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/value.h"
#include "runtime/device/device.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/executor/dynamic_executor.h"
#include "runtime/model/static_program.h"

namespace ge::runtime {

// What the last run did with its inputs and outputs (for tests and stats).
struct StaticRunStats {
  int refreshed_entries = 0;  // address-table entries rebound
  int zero_copy_inputs = 0;
  int copied_inputs = 0;
  int frozen_inputs_skipped = 0;
  int zero_copy_outputs = 0;
  int copied_outputs = 0;
};

class StaticExecutor {
 public:
  // `engines` and `device` must outlive the executor. Errors name the task's
  // node (kernel creation or preparation) or come from the device.
  static absl::StatusOr<std::unique_ptr<StaticExecutor>> Load(StaticProgram program,
                                                               const engine::EngineRegistry& engines,
                                                               device::Device& device, ExecutorOptions options);
  ~StaticExecutor();

  // Inputs in Data order; outputs are new tensors (written in place).
  // `control` (may be null) is checked before every task.
  absl::StatusOr<std::vector<Value>> Run(std::vector<Value> inputs, const RunControl* control = nullptr);
  // Writes the outputs into `outputs` (one tensor per output, of the
  // output's dtype and shape; undefined tensors are allocated here).
  // Outputs marked in `caller_filled` (null: none) are the caller's to fill:
  // neither checked, allocated, bound nor copied (a control-flow body's
  // outputs that are its inputs or constants, passed through unchanged).
  absl::Status RunWithOutputs(const std::vector<Value>& inputs, std::vector<Tensor>& outputs,
                              const RunControl* control = nullptr, const std::vector<bool>* caller_filled = nullptr);

  // Inputs whose buffer the caller keeps for every later run.
  absl::Status FreezeInputs(const std::vector<int>& indices);

  int num_inputs() const;
  int num_tasks() const;
  // Weights copied into the packed block at load, and its size in bytes.
  int packed_weights() const { return packed_weights_; }
  int64_t packed_weight_bytes() const { return packed_weight_bytes_; }
  int64_t arena_bytes() const { return arena_bytes_; }
  const StaticRunStats& last_run_stats() const { return stats_; }

 private:
  class TaskContext;
  struct TaskCold;
  // What every task context shares (one cache line for the whole walk).
  struct Shared {
    void* workspace = nullptr;
    int threads = 1;
    engine::VariableStore* variables = nullptr;
  };
  struct Entry;
  struct Site;
  struct InputState;

  StaticExecutor() = default;
  absl::Status AllocateMemory(const StaticProgram& program);
  // Copies the small weights into one block, in the order tasks read them.
  absl::Status PackWeights(const StaticProgram& program);
  absl::Status BindTasks(StaticProgram& program, const engine::EngineRegistry& engines);
  // Resolves every Variable / FileConstant through options_.variables.
  absl::Status ResolveVariables(const StaticProgram& program);
  // Entry of `ref` (its address table row) and the offset inside it.
  std::pair<int, int64_t> EntryOf(const ValueRef& ref) const;
  void Refresh(int entry, std::shared_ptr<Buffer> buffer, size_t offset);
  absl::Status BindInputs(const std::vector<Value>& inputs);
  absl::Status BindOutputs(std::vector<Tensor>& outputs, const std::vector<bool>* caller_filled);
  absl::Status CopyOutputs(std::vector<Tensor>& outputs, const std::vector<bool>* caller_filled);
  Tensor TensorAt(const ValueRef& ref) const;

  device::Device* device_ = nullptr;
  ExecutorOptions options_;
  std::string graph_name_;
  void* block_ = nullptr;  // arena + workspace + staging, from the device
  int64_t arena_bytes_ = 0;
  std::shared_ptr<Buffer> block_buffer_;
  void* workspace_ = nullptr;
  Shared shared_;
  std::vector<TaskCold> cold_;             // per task, in task order
  std::vector<Value> values_;             // every task's inputs then outputs, in task order
  std::vector<TaskContext> tasks_;        // the hot records the run walks
  std::vector<std::unique_ptr<engine::Kernel>> kernels_;
  std::vector<Entry> entries_;
  std::vector<InputState> inputs_;
  std::vector<StaticIo> outputs_;
  std::vector<ValueRef> output_values_;
  std::vector<int> output_entry_;  // -1 unless the output can be written in place
  std::vector<Tensor> weights_;  // small ones point into the packed block
  int packed_weights_ = 0;
  int64_t packed_weight_bytes_ = 0;
  // Session memory of each StaticProgram::variables entry, its address-table
  // row, and whether it is a (read-only) FileConstant.
  std::vector<Tensor> variables_;
  std::vector<int> variable_entry_;
  std::vector<bool> variable_is_constant_;
  StaticRunStats stats_;
  std::mutex run_mu_;
};

// `s` with "node 'NAME' (TYPE): " in front, unless a kernel or shape
// inference already named the node (both executors report kernel errors so).
absl::Status WithNodePrefix(const absl::Status& s, std::string_view name, std::string_view type);

}  // namespace ge::runtime
