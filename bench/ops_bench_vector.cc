// ops_bench, cpu_vector part: element-wise and reduction throughput (GB/s
// of tensor bytes read and written) on the engine's kernels, run through
// Prepare once and Compute in the loop, with the device-style intra-op pool
// of `--threads`-1 workers (docs/perf.md). Linked into ops_bench.
#include <memory>
#include <string>
#include <vector>

#include "base/ops/op_registry.h"
#include "benchmark/benchmark.h"
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"

namespace ge {
namespace {

engine::CpuVectorEngine& Vector() {
  static engine::CpuVectorEngine* e = [] {
    auto* engine = new engine::CpuVectorEngine();
    if (!engine->Initialize({}).ok()) std::abort();
    return engine;
  }();
  return *e;
}

ThreadPool* Pool() {
  static ThreadPool* pool = new ThreadPool(1, "bench-vector");  // two threads with the caller
  return pool;
}

class VectorContext final : public engine::ExecuteContext {
 public:
  VectorContext(std::vector<Value> inputs, ir::ValueType out_type, size_t workspace, bool threads)
      : inputs_(std::move(inputs)), out_type_(std::move(out_type)), workspace_(workspace + 64), threads_(threads) {
    output_ = *Tensor::Allocate(out_type_.dtype(), out_type_.shape());
  }
  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  int num_outputs() const override { return 1; }
  const Value& input_value(int i) const override { return inputs_[i]; }
  const ir::ValueType& output_type(int) const override { return out_type_; }
  using engine::ExecuteContext::Output;
  absl::StatusOr<Tensor> Output(int, const Shape&) override { return output_; }
  absl::Status SetOutputValue(int, Value) override { return absl::OkStatus(); }
  void* workspace() override { return workspace_.data(); }
  ThreadPool* thread_pool() override { return threads_ ? Pool() : nullptr; }
  int num_threads() const override { return threads_ ? 2 : 1; }

 private:
  std::vector<Value> inputs_;
  ir::ValueType out_type_;
  Tensor output_;
  std::vector<char> workspace_;
  bool threads_;
};

// state.range(0): elements of input 0; range(1): 1 to use the pool.
void RunVector(benchmark::State& state, const std::string& type, std::vector<Tensor> in, ir::AttrMap attrs = {}) {
  ir::OpDesc op("n", type);
  for (auto& [k, v] : attrs) op.SetAttr(k, v);
  std::vector<ir::ValueType> types;
  std::vector<Value> values;
  size_t bytes = 0;
  for (const Tensor& t : in) {
    types.push_back(ir::ValueType::Tensor(t.dtype(), t.shape()));
    values.emplace_back(t);
    bytes += t.SizeInBytes();
  }
  std::vector<const ir::ValueType*> ptrs;
  for (const auto& t : types) {
    ptrs.push_back(&t);
    op.AddInput({"x", t});
  }
  op.AddOutput({});
  auto out = ops::InferOutputTypes(op, ptrs, {});
  if (!out.ok()) return state.SkipWithError(std::string(out.status().message()).c_str());
  op.mutable_output(0).type = (*out)[0];
  auto kernel = Vector().kernel_factory().CreateKernel(op);
  if (!kernel.ok()) return state.SkipWithError(std::string(kernel.status().message()).c_str());
  engine::PrepareContext prepare;
  prepare.op = &op;
  prepare.input_types = types;
  prepare.output_types = *out;
  prepare.const_inputs.assign(types.size(), nullptr);
  if (absl::Status s = (*kernel)->Prepare(prepare); !s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  VectorContext ctx(values, (*out)[0], prepare.workspace_bytes, state.range(1) != 0);
  bytes += ByteSizeOf((*out)[0].dtype(), (*out)[0].shape().NumElementsUnchecked()).value();
  for (auto _ : state) {
    if (absl::Status s = (*kernel)->Compute(ctx); !s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  state.SetLabel(engine::cpu_vector::Kernels().name);
}

Tensor Filled(DataType dtype, const Shape& shape) {
  Tensor t = *Tensor::Allocate(dtype, shape);
  if (dtype == DataType::kFloat) {
    for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = 0.001f * static_cast<float>(i % 1000) - 0.5f;
  }
  return t;
}

void BM_VectorRelu(benchmark::State& s) { RunVector(s, "Relu", {Filled(DataType::kFloat, Shape{s.range(0)})}); }
void BM_VectorTanh(benchmark::State& s) { RunVector(s, "Tanh", {Filled(DataType::kFloat, Shape{s.range(0)})}); }
void BM_VectorAdd(benchmark::State& s) {
  RunVector(s, "Add", {Filled(DataType::kFloat, Shape{s.range(0)}), Filled(DataType::kFloat, Shape{s.range(0)})});
}
void BM_VectorAddRowBroadcast(benchmark::State& s) {
  RunVector(s, "Add", {Filled(DataType::kFloat, Shape{s.range(0) / 1024, 1024}), Filled(DataType::kFloat, Shape{1024})});
}
void BM_VectorReduceSumRows(benchmark::State& s) {
  RunVector(s, "ReduceSum", {Filled(DataType::kFloat, Shape{s.range(0) / 1024, 1024}), Tensor::FromVector<int64_t>({1}, Shape{1})});
}
void BM_VectorReduceMaxCols(benchmark::State& s) {
  RunVector(s, "ReduceMax", {Filled(DataType::kFloat, Shape{s.range(0) / 1024, 1024})},
            {{"axes", ir::AttrValue(std::vector<int64_t>{0})}});
}

#define GE_VECTOR_BENCH(fn) \
  BENCHMARK(fn)->ArgsProduct({{1, 1 << 20}, {0, 1}})->ArgNames({"n", "pool"})->UseRealTime()
GE_VECTOR_BENCH(BM_VectorRelu);
GE_VECTOR_BENCH(BM_VectorTanh);
GE_VECTOR_BENCH(BM_VectorAdd);
BENCHMARK(BM_VectorAddRowBroadcast)->ArgsProduct({{1 << 20}, {0, 1}})->ArgNames({"n", "pool"})->UseRealTime();
BENCHMARK(BM_VectorReduceSumRows)->ArgsProduct({{1 << 20}, {0, 1}})->ArgNames({"n", "pool"})->UseRealTime();
BENCHMARK(BM_VectorReduceMaxCols)->ArgsProduct({{1 << 20}, {0, 1}})->ArgNames({"n", "pool"})->UseRealTime();

}  // namespace
}  // namespace ge
