// ops_bench, cpu_fused part: BERT-base attention (12 heads, head size 64)
// as one `_FusedAttention` kernel against the chain it replaces on
// cpu_dense (MatMul, Div, Softmax, MatMul, the placement BERT-base gets
// without cpu_fused), and `_FusedAddLayerNorm` against cpu_dense's Add +
// LayerNormalization. Kernels are created and prepared once and computed
// in the loop, each with the thread budget of `--threads` (cpu_fused
// through a pool of threads-1 workers, cpu_dense through OpenMP), so the
// difference is the kernels' alone. Linked into ops_bench.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/ops/op_registry.h"
#include "benchmark/benchmark.h"
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"
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
    if (!engine->Initialize({}).ok()) std::abort();
    return engine;
  }();
  return *e;
}

ThreadPool* Pool() {
  static ThreadPool* pool = new ThreadPool(std::max(0, bench::FusedBenchThreads() - 1), "bench-fused");
  return pool;
}

Tensor Random(const Shape& shape, uint32_t seed) {
  Tensor t = *Tensor::Allocate(DataType::kFloat, shape);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(s >> 9) / static_cast<float>(1u << 23) - 1.0f;
  }
  return t;
}

// One prepared kernel with its inputs bound and its output allocated.
class Step final : public engine::ExecuteContext {
 public:
  static std::unique_ptr<Step> Make(engine::Engine& engine, const std::string& type, std::vector<Value> inputs,
                                    ir::AttrMap attrs = {}) {
    auto step = std::unique_ptr<Step>(new Step());
    step->inputs_ = std::move(inputs);
    ir::OpDesc op("n", type);
    for (auto& [k, v] : attrs) op.SetAttr(k, v);
    std::vector<ir::ValueType> types;
    for (const Value& v : step->inputs_) types.push_back(ir::ValueType::Tensor(v.tensor().dtype(), v.tensor().shape()));
    std::vector<const ir::ValueType*> ptrs;
    for (const auto& t : types) ptrs.push_back(&t);
    for (const auto& t : types) op.AddInput({"", t});
    op.AddOutput({});
    auto out = ops::InferOutputTypes(op, ptrs, {});
    if (!out.ok()) return nullptr;
    op.mutable_output(0).type = (*out)[0];
    step->out_type_ = (*out)[0];
    step->output_ = *Tensor::Allocate(step->out_type_.dtype(), step->out_type_.shape());
    auto kernel = engine.kernel_factory().CreateKernel(op);
    if (!kernel.ok()) return nullptr;
    step->kernel_ = std::move(*kernel);
    engine::PrepareContext prepare;
    prepare.op = &op;
    prepare.input_types = types;
    prepare.output_types = *out;
    prepare.num_threads = bench::FusedBenchThreads();
    if (!step->kernel_->Prepare(prepare).ok()) return nullptr;
    step->workspace_.resize(prepare.workspace_bytes + 64);
    return step;
  }

  absl::Status Run() { return kernel_->Compute(*this); }
  const Tensor& output() const { return output_; }

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  int num_outputs() const override { return 1; }
  const Value& input_value(int i) const override { return inputs_[i]; }
  const ir::ValueType& output_type(int) const override { return out_type_; }
  using engine::ExecuteContext::Output;
  absl::StatusOr<Tensor> Output(int, const Shape&) override { return output_; }
  absl::Status SetOutputValue(int, Value) override { return absl::OkStatus(); }
  void* workspace() override { return workspace_.data(); }
  ThreadPool* thread_pool() override { return Pool(); }
  int num_threads() const override { return bench::FusedBenchThreads(); }

 private:
  Step() = default;
  std::vector<Value> inputs_;
  ir::ValueType out_type_;
  Tensor output_;
  std::vector<char> workspace_;
  std::unique_ptr<engine::Kernel> kernel_;
};

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
  Tensor q, kt, v, scale;
};
AttentionInputs MakeAttentionInputs(benchmark::State& state) {
  const int64_t h = state.range(0), s = state.range(1);
  return {Random(Shape{h, s, 64}, 1), Random(Shape{h, 64, s}, 2), Random(Shape{h, s, 64}, 3),
          Tensor::FromVector<float>({8.0f}, Shape{})};
}

void BM_FusedAttention(benchmark::State& state) {
  const AttentionInputs in = MakeAttentionInputs(state);
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(Step::Make(Fused(), "_FusedAttention", {in.q, in.kt, in.v, in.scale}, {{"scale_divides", int64_t{1}}}));
  RunSteps(state, steps);
}
BENCHMARK(BM_FusedAttention)->Args({12, 128})->Args({12, 384})->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_DenseAttentionChain(benchmark::State& state) {
  const AttentionInputs in = MakeAttentionInputs(state);
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(Step::Make(Dense(), "MatMul", {in.q, in.kt}));
  if (steps.back()) steps.push_back(Step::Make(Dense(), "Div", {steps.back()->output(), in.scale}));
  if (steps.back()) steps.push_back(Step::Make(Dense(), "Softmax", {steps.back()->output()}, {{"axis", int64_t{-1}}}));
  if (steps.back()) steps.push_back(Step::Make(Dense(), "MatMul", {steps.back()->output(), in.v}));
  RunSteps(state, steps);
}
BENCHMARK(BM_DenseAttentionChain)->Args({12, 128})->Args({12, 384})->Unit(benchmark::kMicrosecond)->UseRealTime();

// state.range(0): rows of 768 (BERT-base tokens).
void BM_FusedAddLayerNorm(benchmark::State& state) {
  const Shape shape{state.range(0), 768};
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(Step::Make(Fused(), "_FusedAddLayerNorm",
                             {Random(shape, 1), Random(Shape{768}, 2), Random(Shape{768}, 3), Random(shape, 4)}));
  RunSteps(state, steps);
}
BENCHMARK(BM_FusedAddLayerNorm)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_DenseAddLayerNorm(benchmark::State& state) {
  const Shape shape{state.range(0), 768};
  std::vector<std::unique_ptr<Step>> steps;
  steps.push_back(Step::Make(Dense(), "Add", {Random(shape, 1), Random(shape, 4)}));
  if (steps.back()) {
    steps.push_back(Step::Make(Dense(), "LayerNormalization",
                               {steps.back()->output(), Random(Shape{768}, 2), Random(Shape{768}, 3)}));
  }
  RunSteps(state, steps);
}
BENCHMARK(BM_DenseAddLayerNorm)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace ge
