// ops_bench, cpu_vector part: element-wise and reduction throughput (GB/s
// of tensor bytes read and written) on the engine's kernels, run through
// Prepare once and Compute in the loop, with the device-style intra-op pool
// of `--threads`-1 workers (docs/perf.md). Linked into ops_bench.
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_kernel.h"
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

// state.range(0): elements of input 0; range(1): 1 to use the pool.
void RunVector(benchmark::State& state, const std::string& type, std::vector<Tensor> in, ir::AttrMap attrs = {}) {
  ir::OpDesc op("n", type);
  for (auto& [k, v] : attrs) op.SetAttr(k, v);
  std::vector<Value> values;
  size_t bytes = 0;
  for (const Tensor& t : in) {
    values.emplace_back(t);
    bytes += t.SizeInBytes();
  }
  const bool threads = state.range(1) != 0;
  auto prepared =
      bench::PrepareKernel(Vector(), std::move(op), std::move(values), {}, threads ? Pool() : nullptr, threads ? 2 : 1);
  if (!prepared.ok()) return state.SkipWithError(std::string(prepared.status().message()).c_str());
  bytes += prepared->context->output().SizeInBytes();
  for (auto _ : state) {
    if (absl::Status s = prepared->Run(); !s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
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
