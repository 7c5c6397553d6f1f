// What ops_bench's three parts share: a kernel created from an OpDesc
// through an engine's KernelFactory and prepared once, as an executor would,
// and the ExecuteContext the benchmark loop computes it with (inputs bound
// once, the output preallocated, a workspace of the prepared size, a fixed
// thread budget).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/thread_pool.h"
#include "base/value.h"
#include "runtime/engines/api/engine.h"

namespace ge::bench {

// Deterministic floats in [-1, 1) from `seed`.
Tensor RandomFloats(const Shape& shape, uint32_t seed);

class BenchContext final : public engine::ExecuteContext {
 public:
  // `pool` may be null (the kernel's own threading, or none).
  BenchContext(std::vector<Value> inputs, ir::ValueType out_type, size_t workspace_bytes, ThreadPool* pool,
               int num_threads);
  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  int num_outputs() const override { return 1; }
  const Value& input_value(int i) const override { return inputs_[i]; }
  const ir::ValueType& output_type(int) const override { return out_type_; }
  using engine::ExecuteContext::Output;
  absl::StatusOr<Tensor> Output(int, const Shape&) override { return output_; }
  absl::Status SetOutputValue(int, Value) override { return absl::OkStatus(); }
  void* workspace() override { return workspace_.data(); }
  ThreadPool* thread_pool() override { return pool_; }
  int num_threads() const override { return num_threads_; }
  const Tensor& output() const { return output_; }
  void ResizeWorkspace(size_t bytes) { workspace_.resize(bytes + 64); }

 private:
  std::vector<Value> inputs_;
  ir::ValueType out_type_;
  Tensor output_;
  std::vector<char> workspace_;
  ThreadPool* pool_;
  int num_threads_;
};

// A kernel of `engine` for `op` (its inputs and output typed here from
// `inputs` and shape inference), prepared for `num_threads` with the inputs
// `const_inputs` names (by index) as constant weights; its context holds
// `inputs` and runs on `pool`.
struct PreparedKernel {
  std::unique_ptr<engine::Kernel> kernel;
  std::unique_ptr<BenchContext> context;
  absl::Status Run() { return kernel->Compute(*context); }
};
absl::StatusOr<PreparedKernel> PrepareKernel(engine::Engine& engine, ir::OpDesc op, std::vector<Value> inputs,
                                             const std::vector<int>& const_inputs, ThreadPool* pool,
                                             int num_threads);

}  // namespace ge::bench
