// Kernel test harness: run one kernel of any engine on host values, and
// compare tensors with tolerances.
//
// RunKernel builds the kernel through the engine's KernelFactory, computes
// the output types with the op registry's shape inference (or takes them
// from RunOptions), calls Prepare and Compute with a host ExecuteContext and
// returns the outputs. It checks that every output was produced and that
// each output's dtype and shape agree with what inference said, so a kernel
// and its op's inference can never silently disagree. Nothing in it is
// specific to an engine: the conformance suite runs every engine's kernels
// through it and compares them with host_cpu's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/tensor.h"
#include "base/thread_pool.h"
#include "base/value.h"
#include "gtest/gtest.h"
#include "runtime/engines/api/engine.h"
#include "runtime/engines/api/kernel.h"

namespace ge::test {

// ---- Building ops and values ----

// The static type of a run-time value (an undefined tensor type for kNone).
ir::ValueType TypeOf(const Value& value);

// An OpDesc for a kernel test: named inputs and outputs, typed from values.
class OpBuilder {
 public:
  explicit OpBuilder(std::string type, std::string name = "");
  OpBuilder& Attr(std::string_view name, ir::AttrValue value);
  // One input per value, typed from the value (absent inputs stay untyped).
  OpBuilder& Inputs(const std::vector<Value>& values);
  OpBuilder& Input(ir::ValueType type);
  // `count` outputs with undefined types (filled in by inference).
  OpBuilder& Outputs(int count);
  OpBuilder& Output(ir::ValueType type);
  ir::OpDesc Build() const { return op_; }

 private:
  ir::OpDesc op_;
};

// A tensor of `dtype` holding `values` converted element-wise (numeric and
// bool dtypes; 16-bit floats round to nearest).
Tensor MakeTensor(DataType dtype, const std::vector<double>& values, const Shape& shape);
// Deterministic pseudo-random values uniform in [lo, hi] (integers: the
// integers of that range).
Tensor RandomTensor(DataType dtype, const Shape& shape, uint64_t seed, double lo = -1.0,
                    double hi = 1.0);

// ---- Running kernels ----

struct RunOptions {
  // Output types to use; when empty they are inferred with
  // ops::InferOutputTypes from the input values' types and values.
  std::vector<ir::ValueType> output_types;
  // The intra-op pool; null means a shared pool without workers.
  ThreadPool* thread_pool = nullptr;
  // Skip the check that outputs match the inferred types (for
  // value-dependent outputs and deliberately inconsistent tests).
  bool check_output_types = true;
  // Inputs whose values Prepare sees (as the static executor hands a
  // kernel its constant weights); the others are null there.
  std::vector<int> const_inputs;
};

// A pool with two workers shared by tests that exercise parallel paths.
ThreadPool* TestThreadPool();

// Output types of `op` for these inputs, through the op registry.
absl::StatusOr<std::vector<ir::ValueType>> InferOutputTypes(const ir::OpDesc& op,
                                                            const std::vector<Value>& inputs);

// An ExecuteContext over host values. Outputs are allocated on the host
// allocator when the kernel asks for them.
class TestExecuteContext final : public engine::ExecuteContext {
 public:
  TestExecuteContext(std::vector<Value> inputs, std::vector<ir::ValueType> output_types,
                     ThreadPool* pool, size_t workspace_bytes);

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  int num_outputs() const override { return static_cast<int>(output_types_.size()); }
  const Value& input_value(int i) const override { return inputs_[i]; }
  const ir::ValueType& output_type(int i) const override { return output_types_[i]; }
  using engine::ExecuteContext::Output;
  absl::StatusOr<Tensor> Output(int i, const Shape& shape) override;
  absl::Status SetOutputValue(int i, Value value) override;
  void* workspace() override { return workspace_.data(); }
  ThreadPool* thread_pool() override { return pool_; }
  int num_threads() const override { return pool_->num_threads() + 1; }

  const std::vector<Value>& outputs() const { return outputs_; }
  std::vector<bool> produced() const { return produced_; }

 private:
  std::vector<Value> inputs_;
  std::vector<ir::ValueType> output_types_;
  std::vector<Value> outputs_;
  std::vector<bool> produced_;
  ThreadPool* pool_;
  std::vector<char> workspace_;
};

// Creates the kernel of `op`, prepares and computes it on `inputs`.
absl::StatusOr<std::vector<Value>> RunKernel(const engine::KernelFactory& factory,
                                             const ir::OpDesc& op,
                                             const std::vector<Value>& inputs,
                                             const RunOptions& options = {});
absl::StatusOr<std::vector<Value>> RunKernel(const engine::Engine& engine, const ir::OpDesc& op,
                                             const std::vector<Value>& inputs,
                                             const RunOptions& options = {});
// Builds the OpDesc (type, attributes, inputs typed from `inputs`,
// `num_outputs` outputs) and runs it.
absl::StatusOr<std::vector<Value>> RunOp(const engine::Engine& engine, const std::string& type,
                                         const std::vector<Value>& inputs,
                                         const ir::AttrMap& attrs = {}, int num_outputs = 1,
                                         const RunOptions& options = {});
// RunOp for a single tensor output.
absl::StatusOr<Tensor> RunOp1(const engine::Engine& engine, const std::string& type,
                              const std::vector<Value>& inputs, const ir::AttrMap& attrs = {},
                              const RunOptions& options = {});

// ---- Comparing tensors ----

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};
// The tolerance the conformance suite uses for results of `dtype`: 1e-5
// relative and absolute for f32, 1e-12 for f64, 1e-2 for f16, 2e-2 for
// bf16, exact for integers, bool and strings.
Tolerance DefaultTolerance(DataType dtype);

// Same dtype and shape, and every element within atol + rtol * |expected|
// (NaN matches NaN, infinities match themselves). On failure the message
// gives the first mismatching index (flat and per dim), both values, the
// number of mismatches and the largest absolute error.
::testing::AssertionResult TensorNear(const Tensor& actual, const Tensor& expected,
                                       Tolerance tolerance);
::testing::AssertionResult TensorNear(const Tensor& actual, const Tensor& expected);
// Same dtype, shape and values exactly (NaN matches NaN).
::testing::AssertionResult TensorEq(const Tensor& actual, const Tensor& expected);

// ---- Engine conformance ----

// Runs `op` on `engine` and on `reference` (host_cpu) with the same inputs
// and compares every tensor output: within `tolerance` when given, else
// DefaultTolerance of the output's dtype. Fails when either run fails
// (naming which), when a sequence output differs in length, or when an
// output differs.
::testing::AssertionResult MatchesReference(const engine::Engine& engine,
                                            const engine::Engine& reference,
                                            const ir::OpDesc& op,
                                            const std::vector<Value>& inputs,
                                            std::optional<Tolerance> tolerance = std::nullopt,
                                            const RunOptions& options = {});

}  // namespace ge::test
