// The kernel interface every engine implements.
//
// A kernel is created once per node from its OpDesc (attributes validated
// there), prepared whenever its input shapes become known (running
// parameters, workspace size), and computed any number of times. Output
// shapes come from the op registry's shape inference (base/ops), run by the
// compiler for static subgraphs and by the dynamic executor otherwise, so a
// kernel does not re-derive them. Prepare may
// be called at compile time for static subgraphs (GE's
// OpsKernelBuilder::CalcOpRunningParam) or at run time by the dynamic
// executor; Compute never allocates what Prepare could have planned.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/thread_pool.h"
#include "base/value.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::engine {

// Shapes and constant values a kernel is prepared for.
struct PrepareContext {
  const ir::OpDesc* op = nullptr;
  std::vector<ir::ValueType> input_types;   // concrete when shapes are known
  std::vector<ir::ValueType> output_types;  // as inferred
  std::vector<const Tensor*> const_inputs;  // values known at prepare time, else null
  int num_threads = 1;
  // Outputs of Prepare.
  size_t workspace_bytes = 0;
};

// What a running kernel sees. Implemented by the executors.
class ExecuteContext {
 public:
  virtual ~ExecuteContext() = default;

  virtual int num_inputs() const = 0;
  virtual int num_outputs() const = 0;
  // The value of input `i`; kNone for an absent optional input.
  virtual const Value& input_value(int i) const = 0;
  bool has_input(int i) const { return i < num_inputs() && !input_value(i).is_none(); }
  // The tensor of input `i` (an undefined Tensor when absent or not a tensor).
  // Inline and free of virtual calls when the executor keeps its inputs in
  // one array (set_dense_inputs): the static path's per-op cost.
  const Tensor& input(int i) const {
    if (num_dense_inputs_ < 0) return InputThroughValue(i);
    return i < num_dense_inputs_ && dense_inputs_[i].is_tensor() ? dense_inputs_[i].tensor() : UndefinedTensor();
  }

  // The type shape inference gave output `i` for the current inputs. Shapes
  // are concrete except for value-dependent outputs (NonZero, Unique), whose
  // kernels compute the shape and pass it to Output(i, shape).
  virtual const ir::ValueType& output_type(int i) const = 0;
  DataType output_dtype(int i) const { return output_type(i).dtype(); }
  // Storage for output `i` with its inferred shape.
  absl::StatusOr<Tensor> Output(int i) { return Output(i, output_type(i).shape()); }
  // Storage for output `i` with `shape`: the planned buffer when one exists
  // and fits, else a new allocation; the dtype is output_dtype(i).
  virtual absl::StatusOr<Tensor> Output(int i, const Shape& shape) = 0;
  // Sets output `i` to an existing value (sequences, optionals, or an
  // output that forwards an input without copying).
  virtual absl::Status SetOutputValue(int i, Value value) = 0;

  // Scratch memory of at least PrepareContext::workspace_bytes.
  virtual void* workspace() = 0;
  // The device's intra-op pool (may have zero workers) and thread budget.
  virtual ThreadPool* thread_pool() = 0;
  virtual int num_threads() const = 0;

  // Runs subgraph `name`, which must be one the running node owns (listed in
  // its OpDesc::subgraph_names()), and returns the values of its output node
  // in order, with their actual shapes. `inputs` are indexed like the
  // node's inputs: the subgraph's input nodes take them by the parent-index
  // conventions of base/ops/graph_inference.cc (If, Case: Data index i takes
  // inputs[i + 1]; While, PartitionedCall and other owners: inputs[i];
  // InnerData, or a Data with `_parent_index`: inputs[_parent_index]).
  // Control-flow kernels call it any number of times per Compute (a While
  // body once per iteration); nested control flow nests these calls. Errors
  // name the subgraph and its failing node. The default, for executors that
  // cannot run subgraphs (kernel test harnesses), is Unimplemented.
  virtual absl::StatusOr<std::vector<Value>> RunSubgraph(std::string_view name,
                                                         std::vector<Value> inputs);

  // The session's variables and FileConstant weights; null when the
  // executor runs without a session (kernel test harnesses).
  virtual VariableStore* variables() { return nullptr; }

  // The storage of output `i` when the executor planned it before the run
  // (the static path: a tensor of output_type(i) in the arena, valid until
  // Compute returns), else null and the kernel calls Output(i). Kernels on
  // hot paths take it to skip Output's checks and the tensor copy. Appended
  // last so that existing plugins' vtable slots keep their places.
  virtual Tensor* planned_output(int i) {
    (void)i;
    return nullptr;
  }
  // Input `i` for the kernel to take (move from) rather than copy: non-null
  // only when the executor holds the run's last reference to it (this node
  // is its last consumer, reads it through no other input, and it is no
  // graph output). A sequence taken so and appended to grows in place
  // (base/value.h). A taken tensor's buffer may still be shared with other
  // values (a constant, a sequence element): pass it on, never write into
  // it. What the kernel leaves in it is dropped after Compute. Appended
  // last, like planned_output.
  virtual Value* owned_input(int i) {
    (void)i;
    return nullptr;
  }

 protected:
  // An executor whose inputs are `count` Values at `values` (input_value(i)
  // returns values[i]) says so once; input() then reads them directly.
  void set_dense_inputs(const Value* values, int count) {
    dense_inputs_ = values;
    num_dense_inputs_ = count;
  }
  const Value* dense_inputs() const { return dense_inputs_; }
  int num_dense_inputs() const { return num_dense_inputs_; }

 private:
  const Tensor& InputThroughValue(int i) const;
  static const Tensor& UndefinedTensor();

  const Value* dense_inputs_ = nullptr;
  int num_dense_inputs_ = -1;  // < 0: input() goes through input_value()
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Called when input shapes are known, before Compute with those shapes.
  virtual absl::Status Prepare(PrepareContext& ctx) {
    (void)ctx;
    return absl::OkStatus();
  }
  virtual absl::Status Compute(ExecuteContext& ctx) = 0;
};

// Creates the kernels of one engine.
class KernelFactory {
 public:
  virtual ~KernelFactory() = default;
  // InvalidArgument (naming the node) for bad attributes; Unimplemented when
  // the engine has no kernel for the op.
  virtual absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc& op) const = 0;
};

}  // namespace ge::engine
