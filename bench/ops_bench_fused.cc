// ops_bench, cpu_fused part: BERT-base attention (12 heads, head size 64)
// as one `_FusedAttention` kernel against the chain it replaces on
// cpu_dense (MatMul, Div, Softmax, MatMul, the placement BERT-base gets
// without cpu_fused), and `_FusedAddLayerNorm` against cpu_dense's Add +
// LayerNormalization. Kernels are created and prepared once and computed
// in the loop, each with the thread budget of `--threads` (both through
// OpenMP, as in the engines), so the difference is the kernels' alone.
// Linked into ops_bench.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_kernel.h"
#include "benchmark/benchmark.h"
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "runtime/engines/cpu_dense/dnnl_util.h"
#include "runtime/engines/cpu_fused/cpu_fused_engine.h"

namespace ge::bench {
int FusedBenchThreads();  // ops_bench.cc's --threads
}  // namespace ge::bench

namespace ge {
namespace {

engine::Engine& Fused() {
  static engine::CpuFusedEngine* e = [] {
    auto* engine = new engine::CpuFusedEngine();
    if (!engine->Initialize({}).ok()) std::abort();
    return engine;
  }();
  return *e;
}

engine::Engine& Dense() {
  static engine::CpuDenseEngine* e = [] {
    auto* engine = new engine::CpuDenseEngine();
    static const engine::HostCpuEngine* host = new engine::HostCpuEngine();
    engine->SetReferenceEngine(host);  // shapes oneDNN cannot run, as in a registry
    if (!engine->Initialize({}).ok()) std::abort();
    return engine;
  }();
  return *e;
}

// One prepared kernel; inputs[i] of a later step may be an earlier one's output.
using Step = bench::PreparedKernel;

std::unique_ptr<Step> MakeStep(engine::Engine& engine, const std::string& type, std::vector<Value> inputs,
                               ir::AttrMap attrs = {}) {
  ir::OpDesc op("n", type);
  for (auto& [k, v] : attrs) op.SetAttr(k, v);
  auto prepared =
      bench::PrepareKernel(engine, std::move(op), std::move(inputs), {}, nullptr, bench::FusedBenchThreads());
  return prepared.ok() ? std::make_unique<Step>(*std::move(prepared)) : nullptr;
}

void RunSteps(benchmark::State& state, const std::vector<std::unique_ptr<Step>>& steps) {
  for (const auto& s : steps) {
    if (s == nullptr) return state.SkipWithError("a kernel could not be prepared");
  }
  engine::cpu_dense::SetDnnlThreads(bench::FusedBenchThreads());
  for (auto _ : state) {
    for (const auto& s : steps) {
      if (!s->Run().ok()) return state.SkipWithError("a kernel failed");
    }
  }
  state.counters["threads"] = bench::FusedBenchThreads();
}

// state.range: heads, sequence length (head size 64, batch 1).
struct AttentionInputs {
  Tensor q, kt, v, scale, k;
};
AttentionInputs MakeAttentionInputs(benchmark::State& state) {
  const int64_t h = state.range(0), s = state.range(1);
  return {bench::RandomFloats(Shape{h, s, 64}, 1), bench::RandomFloats(Shape{h, 64, s}, 2),
          bench::RandomFloats(Shape{h, s, 64}, 3), Tensor::FromVector<float>({8.0f}, Shape{}),
          bench::RandomFloats(Shape{h, s, 64}, 4)};
}

void BM_FusedAttention(benchmark::State& state) {
  const AttentionInputs in = MakeAttentionInputs(state);
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(MakeStep(Fused(), "_FusedAttention", {in.q, in.kt, in.v, in.scale}, {{"scale_divides", int64_t{1}}}));
  RunSteps(state, steps);
}
BENCHMARK(BM_FusedAttention)
    ->Args({12, 128})
    ->Args({12, 384})
    ->Args({3, 197})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// K as the exports store it ([heads, s, 64], the Transpose absorbed): the
// kernel transposes it per head.
void BM_FusedAttentionKRows(benchmark::State& state) {
  const AttentionInputs in = MakeAttentionInputs(state);
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(MakeStep(Fused(), "_FusedAttention", {in.q, in.k, in.v, in.scale},
                           {{"scale_divides", int64_t{1}}, {"k_transposed", int64_t{0}}}));
  RunSteps(state, steps);
}
BENCHMARK(BM_FusedAttentionKRows)->Args({12, 128})->Args({3, 197})->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_DenseAttentionChain(benchmark::State& state) {
  const AttentionInputs in = MakeAttentionInputs(state);
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(MakeStep(Dense(), "MatMul", {in.q, in.kt}));
  if (steps.back()) steps.push_back(MakeStep(Dense(), "Div", {steps.back()->context->output(), in.scale}));
  if (steps.back()) steps.push_back(MakeStep(Dense(), "Softmax", {steps.back()->context->output()}, {{"axis", int64_t{-1}}}));
  if (steps.back()) steps.push_back(MakeStep(Dense(), "MatMul", {steps.back()->context->output(), in.v}));
  RunSteps(state, steps);
}
BENCHMARK(BM_DenseAttentionChain)
    ->Args({12, 128})
    ->Args({12, 384})
    ->Args({3, 197})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// state.range(0): rows of 768 (BERT-base tokens).
void BM_FusedAddLayerNorm(benchmark::State& state) {
  const Shape shape{state.range(0), 768};
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(MakeStep(Fused(), "_FusedAddLayerNorm",
                             {bench::RandomFloats(shape, 1), bench::RandomFloats(Shape{768}, 2), bench::RandomFloats(Shape{768}, 3), bench::RandomFloats(shape, 4)}));
  RunSteps(state, steps);
}
BENCHMARK(BM_FusedAddLayerNorm)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_DenseAddLayerNorm(benchmark::State& state) {
  const Shape shape{state.range(0), 768};
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(MakeStep(Dense(), "Add", {bench::RandomFloats(shape, 1), bench::RandomFloats(shape, 4)}));
  if (steps.back()) {
    steps.push_back(MakeStep(Dense(), "LayerNormalization",
                               {steps.back()->context->output(), bench::RandomFloats(Shape{768}, 2), bench::RandomFloats(Shape{768}, 3)}));
  }
  RunSteps(state, steps);
}
BENCHMARK(BM_DenseAddLayerNorm)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace ge
