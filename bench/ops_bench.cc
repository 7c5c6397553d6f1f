// ops_bench: per-op micro-benchmarks of cpu_dense (Conv and MatMul of
// several sizes) reporting achieved GFLOP/s beside a plain oneDNN GEMM
// (f32 matmul with packed weights), which measures this machine's peak.
//
// Kernels run as an executor runs them: created from an OpDesc through the
// engine's KernelFactory, prepared once with their shapes and constant
// weights, then computed repeatedly. Every benchmark uses the same thread
// budget (--threads, default: every processor OpenMP sees).
//
//   ops_bench [--threads=N] [google benchmark flags]
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_kernel.h"
#include "benchmark/benchmark.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "runtime/engines/cpu_dense/dnnl_util.h"
#include "runtime/engines/cpu_dense/packed_matmul.h"

namespace ge::bench {
namespace {

int g_threads = 0;  // 0: every processor

int Threads() { return g_threads > 0 ? g_threads : engine::cpu_dense::DnnlMaxProcessors(); }

engine::CpuDenseEngine& Dense() {
  static engine::CpuDenseEngine* e = [] {
    auto* engine = new engine::CpuDenseEngine();
    static const engine::HostCpuEngine* host = new engine::HostCpuEngine();
    engine->SetReferenceEngine(host);  // shapes oneDNN cannot run, as in a registry
    if (!engine->Initialize({}).ok()) std::abort();
    return engine;
  }();
  return *e;
}

// Runs `op` on cpu_dense in the benchmark loop; input 1 is constant.
void RunKernel(benchmark::State& state, ir::OpDesc op, std::vector<Value> inputs, double flops) {
  auto prepared = PrepareKernel(Dense(), std::move(op), std::move(inputs), {1}, nullptr, Threads());
  if (!prepared.ok()) return state.SkipWithError(std::string(prepared.status().message()).c_str());
  for (auto _ : state) {
    if (absl::Status s = prepared->Run(); !s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = Threads();
}

// ---- The peak: oneDNN's own f32 GEMM (matmul, weights packed once) ----

void BM_OneDnnGemmPeak(benchmark::State& state) {
  const int64_t n = state.range(0);
  engine::cpu_dense::SetDnnlThreads(Threads());
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  using tag = dnnl::memory::format_tag;
  const auto f32 = dnnl::memory::data_type::f32;
  dnnl::memory::desc a({n, n}, f32, tag::ab), b_any({n, n}, f32, tag::any), c({n, n}, f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b_any, c), eng);
  dnnl::memory ma(a, eng), mb(pd.weights_desc(), eng), mc(c, eng);
  std::memset(ma.get_data_handle(), 0, a.get_size());
  std::memset(mb.get_data_handle(), 0, pd.weights_desc().get_size());
  dnnl::matmul mm(pd);
  for (auto _ : state) {
    mm.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    stream.wait();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = Threads();
  state.SetLabel(pd.impl_info_str());
}
BENCHMARK(BM_OneDnnGemmPeak)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- cpu_dense MatMul: [M, K] x [K, N] ----

void BM_DenseMatMul(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  RunKernel(state, ir::OpDesc("mm", "MatMul"), {RandomFloats(Shape{m, k}, 1), RandomFloats(Shape{k, n}, 2)}, 2.0 * m * n * k);
}
BENCHMARK(BM_DenseMatMul)
    ->Args({1024, 1024, 1024})
    ->Args({2048, 2048, 2048})
    ->Args({128, 768, 768})     // BERT-base projection, batch 1 x 128 tokens
    ->Args({128, 768, 3072})    // BERT-base FFN up
    ->Args({1024, 768, 3072})   // the same at batch 8
    ->Args({1, 512, 1000})      // a classifier at batch 1
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---- cpu_dense MatMul with constant weights: the packed path against oneDNN ----
// Args: M, K, N, path (1: packed panels whatever M, 0: oneDNN's matmul).

void BM_DenseMatMulPath(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int64_t saved = engine::cpu_dense::PackedGemmMaxRows();
  engine::cpu_dense::SetPackedGemmMaxRows(state.range(3) != 0 ? int64_t{1} << 40 : 0);
  RunKernel(state, ir::OpDesc("mm", "MatMul"), {RandomFloats(Shape{m, k}, 1), RandomFloats(Shape{k, n}, 2)},
            2.0 * m * n * k);
  engine::cpu_dense::SetPackedGemmMaxRows(saved);
  state.SetLabel(state.range(3) != 0 ? "packed" : "onednn");
}
BENCHMARK(BM_DenseMatMulPath)
    ->ArgsProduct({{1, 4, 16}, {2048}, {2048}, {0, 1}})      // mlp_wide's hidden layer
    ->ArgsProduct({{32, 64, 128}, {256}, {1024}, {0, 1}})    // bert_mini's FFN up, b1 / b2 / b4
    ->ArgsProduct({{128}, {256}, {768}, {0, 1}})             // bert_mini's QKV at b4
    ->ArgsProduct({{128, 256, 512}, {1024}, {256}, {0, 1}})  // bert_mini's FFN down, b4 / b8 / b16
    ->ArgsProduct({{197, 788}, {192}, {576}, {0, 1}})        // deit_tiny's QKV, b1 / b4
    ->ArgsProduct({{197}, {768}, {192}, {0, 1}})             // deit_tiny's FFN down
    ->ArgsProduct({{128}, {768}, {768}, {0, 1}})             // BERT-base projections
    ->ArgsProduct({{128}, {768}, {3072}, {0, 1}})            // BERT-base FFN up
    ->ArgsProduct({{128}, {3072}, {768}, {0, 1}})            // BERT-base FFN down
    // The larger batch: rows past the packed path's bounds.
    ->ArgsProduct({{256}, {64}, {64, 192, 256}, {0, 1}})     // encoder_tiny at b8
    ->ArgsProduct({{256}, {256}, {64}, {0, 1}})              // encoder_tiny's FFN down at b8
    ->ArgsProduct({{1576}, {192}, {192, 576, 768}, {0, 1}})  // deit_tiny at b8
    ->ArgsProduct({{1576}, {768}, {192}, {0, 1}})            // deit_tiny's FFN down at b8
    ->ArgsProduct({{1024}, {768}, {768, 3072}, {0, 1}})      // BERT-base at b8
    ->ArgsProduct({{1024}, {3072}, {768}, {0, 1}})           // BERT-base's FFN down at b8
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// ---- cpu_dense Conv: NCHW, square images and kernels ----

void BM_DenseConv(benchmark::State& state) {
  const int64_t n = state.range(0), c = state.range(1), m = state.range(2), hw = state.range(3);
  const int64_t k = state.range(4), stride = state.range(5), pad = k / 2;
  const int64_t out = (hw + 2 * pad - k) / stride + 1;
  ir::OpDesc op("conv", "Conv");
  op.SetAttr("pads", ir::AttrValue(std::vector<int64_t>{pad, pad, pad, pad}));
  op.SetAttr("strides", ir::AttrValue(std::vector<int64_t>{stride, stride}));
  RunKernel(state, op, {RandomFloats(Shape{n, c, hw, hw}, 3), RandomFloats(Shape{m, c, k, k}, 4), RandomFloats(Shape{m}, 5)},
            2.0 * n * m * out * out * c * k * k);
}
BENCHMARK(BM_DenseConv)
    ->Args({1, 3, 64, 224, 7, 2})     // ResNet stem
    ->Args({1, 64, 64, 56, 3, 1})     // ResNet conv2_x
    ->Args({1, 128, 128, 28, 3, 1})   // conv3_x
    ->Args({1, 256, 256, 14, 3, 1})   // conv4_x
    ->Args({1, 512, 512, 7, 3, 1})    // conv5_x
    ->Args({1, 256, 64, 56, 1, 1})    // ResNet-50 bottleneck 1x1
    ->Args({8, 64, 64, 56, 3, 1})     // conv2_x at batch 8
    ->Args({8, 256, 256, 14, 3, 1})   // conv4_x at batch 8
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int FusedBenchThreads() { return Threads(); }

}  // namespace ge::bench

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) ge::bench::g_threads = std::atoi(argv[i] + 10);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
