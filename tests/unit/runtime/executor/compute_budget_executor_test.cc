// The device's compute-thread budget through the executors (issue 20 item
// 4, the threading contract's rule 3): several workers, each running its own
// DynamicExecutor with inter-op parallelism, whose kernels open OpenMP teams
// of the device's `threads`, never compute on more threads at once than the
// budget holds (counted inside the kernels, independently of the budget's
// own counter); control-flow subgraphs run by inter-op helpers under a
// budget of one thread finish (no deadlock); and the reference and vector
// engines' parallel loops give bit-identical results at 1, 2 and 4 threads.
#include <omp.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "base/compute_budget.h"
#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/engines/sdk/parallel.h"
#include "runtime/executor/dynamic_executor.h"

namespace ge::runtime {
namespace {

// Threads inside the test kernels' compute now and at most.
std::atomic<int> g_inside{0};
std::atomic<int> g_max_inside{0};

void Enter() {
  const int now = ++g_inside;
  for (int seen = g_max_inside; now > seen && !g_max_inside.compare_exchange_weak(seen, now);) {
  }
}

// "test_budget" Identity: some serial work on the calling thread, then an
// OpenMP loop of ctx.num_threads() threads (sdk::OmpParallelRange), each
// body counted; forwards input 0.
class BudgetKernel final : public engine::Kernel {
 public:
  absl::Status Compute(engine::ExecuteContext& ctx) override {
    Enter();
    volatile int64_t serial = 0;
    for (int i = 0; i < 20000; ++i) serial = serial + i % 7;
    --g_inside;
    engine::sdk::OmpParallelRange(ctx.num_threads(), 32, 1, [&](int64_t b, int64_t e) {
      Enter();
      volatile int64_t sum = 0;
      for (int64_t i = b; i < e; ++i) {
        for (int k = 0; k < 2000; ++k) sum = sum + (i * k) % 5;
      }
      --g_inside;
    });
    return ctx.SetOutputValue(0, ctx.input_value(0));
  }
};

class BudgetEngine final : public engine::Engine {
 public:
  class Store final : public engine::OpsKernelInfoStore {
   public:
    absl::Status CheckSupported(const ir::Node&) const override { return absl::OkStatus(); }
    std::vector<std::string> SupportedOpTypes() const override { return {"Identity"}; }
  };
  class Factory final : public engine::KernelFactory {
   public:
    absl::StatusOr<std::unique_ptr<engine::Kernel>> CreateKernel(const ir::OpDesc&) const override {
      return std::unique_ptr<engine::Kernel>(new BudgetKernel());
    }
  };
  BudgetEngine() { attributes_.name = "test_budget"; }
  const engine::OpsKernelInfoStore& info_store() const override { return store_; }
  const engine::KernelFactory& kernel_factory() const override { return factory_; }

 private:
  Store store_;
  Factory factory_;
};

class ComputeBudgetExecutorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto registry = engine::CreateEngineRegistry({}, {});
    ASSERT_TRUE(registry.ok()) << registry.status();
    engines_ = registry->release();
    ASSERT_TRUE(engines_->AddEngine(std::make_unique<BudgetEngine>(), {}).ok());
  }
  static void TearDownTestSuite() { delete engines_; }

  static engine::EngineRegistry* engines_;
};

engine::EngineRegistry* ComputeBudgetExecutorTest::engines_ = nullptr;

// Two branches of test_budget nodes (they may run at once on inter-op
// workers), host_cpu and cpu_vector element-wise ops on a tensor big enough
// for their parallel loops, and a PartitionedCall whose subgraph holds more
// of both.
constexpr char kGraph[] = R"(graph main {
    x = Data() {index = 0} -> (f32[-1])
    a0 = Identity(x) {_engine_name = "test_budget"}
    a1 = Relu(a0) {_engine_name = "host_cpu"}
    a2 = Identity(a1) {_engine_name = "test_budget"}
    b0 = Identity(x) {_engine_name = "test_budget"}
    b1 = Neg(b0) {_engine_name = "cpu_vector"}
    b2 = Identity(b1) {_engine_name = "test_budget"}
    c = PartitionedCall(a2) {_engine_name = "control_flow"} subgraphs(s) -> (f32[-1])
    y = Add(c, b2) {_engine_name = "host_cpu"}
    out = NetOutput(y)
  }
  graph s parent(main, c) {
    d = Data() {index = 0} -> (f32[-1])
    e = Identity(d) {_engine_name = "test_budget"}
    f = Abs(e) {_engine_name = "cpu_vector"}
    g = Identity(f) {_engine_name = "test_budget"}
    h = Sigmoid(g) {_engine_name = "host_cpu"}
    o = NetOutput(h)
  })";

Tensor Input(int64_t n) {
  std::vector<float> v(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-3, 3);
  for (float& f : v) f = dist(rng);
  return Tensor::FromVector<float>(v, Shape{n});
}

// The graph's output for `x` from one sequential run without a budget.
std::vector<float> Expected(const ir::Graph& graph, const engine::EngineRegistry& engines, const Tensor& x) {
  auto exec = DynamicExecutor::Create(graph, engines, ExecutorOptions());
  EXPECT_TRUE(exec.ok()) << exec.status();
  if (!exec.ok()) return {};
  auto out = (*exec)->Run({x});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  const Tensor& t = (*out)[0].tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

TEST_F(ComputeBudgetExecutorTest, WorkersNeverComputeOnMoreThreadsThanTheBudget) {
  auto graph = ir::ParseGraph(kGraph);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Tensor x = Input(1 << 18);
  const std::vector<float> expected = Expected(**graph, *engines_, x);
  ASSERT_EQ(expected.size(), static_cast<size_t>(x.NumElements()));
  for (int capacity : {1, 2}) {
    ComputeBudget budget(capacity);
    g_inside = 0;
    g_max_inside = 0;
    constexpr int kWorkers = 3;
    std::vector<std::unique_ptr<DynamicExecutor>> execs;
    for (int w = 0; w < kWorkers; ++w) {
      ExecutorOptions options;
      options.intra_op_threads = 2;      // teams ask for two threads...
      options.inter_op_parallelism = 3;  // ...on up to three inter-op threads per run
      options.compute_budget = &budget;
      auto exec = DynamicExecutor::Create(**graph, *engines_, options);
      ASSERT_TRUE(exec.ok()) << exec.status();
      execs.push_back(*std::move(exec));
    }
    std::atomic<int> failures{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&, w] {
        for (int rep = 0; rep < 4; ++rep) {
          auto out = execs[w]->Run({x});
          if (!out.ok() ||
              std::memcmp((*out)[0].tensor().data<float>(), expected.data(), expected.size() * sizeof(float)) != 0) {
            ++failures;
          }
        }
      });
    }
    for (std::thread& t : workers) t.join();
    EXPECT_EQ(failures.load(), 0) << "capacity " << capacity;
    EXPECT_LE(g_max_inside.load(), capacity) << "capacity " << capacity;
    EXPECT_LE(budget.peak(), capacity);
    EXPECT_EQ(budget.busy(), 0);
  }
}

// Ops whose parallel loops split differently by thread count: reductions,
// a matrix product, softmax, a strided transpose and broadcasting.
constexpr char kNumerics[] = R"(graph main {
    x = Data() {index = 0} -> (f32[256, 512])
    w = Data() {index = 1} -> (f32[512, 128])
    m = MatMul(x, w) {_engine_name = "host_cpu"} -> (f32[256, 128])
    s = Softmax(x) {axis = 1, _engine_name = "host_cpu"} -> (f32[256, 512])
    r = ReduceSumSquare(x) {axes = [1], keepdims = 0, _engine_name = "host_cpu"} -> (f32[256])
    e = Exp(x) {_engine_name = "cpu_vector"} -> (f32[256, 512])
    t = Transpose(e) {perm = [1, 0], _engine_name = "cpu_vector"} -> (f32[512, 256])
    v = ReduceMax(t) {axes = [1], keepdims = 1, _engine_name = "cpu_vector"} -> (f32[512, 1])
    b = Mul(t, v) {_engine_name = "cpu_vector"} -> (f32[512, 256])
    out = NetOutput(m, s, r, b)
  })";

TEST_F(ComputeBudgetExecutorTest, ParallelLoopsGiveIdenticalResultsAtAnyThreadCount) {
  auto graph = ir::ParseGraph(kNumerics);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<Value> inputs;
  {
    std::mt19937 rng(11);
    std::normal_distribution<float> dist(0, 1);
    std::vector<float> xv(256 * 512), wv(512 * 128);
    for (float& f : xv) f = dist(rng);
    for (float& f : wv) f = dist(rng);
    inputs.emplace_back(Tensor::FromVector<float>(xv, Shape{256, 512}));
    inputs.emplace_back(Tensor::FromVector<float>(wv, Shape{512, 128}));
  }
  std::vector<std::vector<float>> reference;
  for (int threads : {1, 2, 4}) {
    ComputeBudget budget(threads);
    ExecutorOptions options;
    options.intra_op_threads = threads;
    options.compute_budget = &budget;
    auto exec = DynamicExecutor::Create(**graph, *engines_, options);
    ASSERT_TRUE(exec.ok()) << exec.status();
    auto out = (*exec)->Run(inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    for (size_t i = 0; i < out->size(); ++i) {
      const Tensor& t = (*out)[i].tensor();
      std::vector<float> got(t.data<float>(), t.data<float>() + t.NumElements());
      if (threads == 1) {
        reference.push_back(std::move(got));
      } else {
        ASSERT_EQ(got.size(), reference[i].size());
        EXPECT_EQ(std::memcmp(got.data(), reference[i].data(), got.size() * sizeof(float)), 0)
            << "output " << i << " differs at " << threads << " threads";
      }
    }
  }
}

// A kernel called from inside an OpenMP region (a control-flow subgraph run
// by one thread of another kernel's team would be one) runs its loops on
// the calling thread and still gives the right result.
TEST_F(ComputeBudgetExecutorTest, AGraphRunFromInsideAnOpenMpRegionIsCorrect) {
  auto graph = ir::ParseGraph(kGraph);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Tensor x = Input(1 << 16);
  const std::vector<float> expected = Expected(**graph, *engines_, x);
  ASSERT_EQ(expected.size(), static_cast<size_t>(x.NumElements()));
  ComputeBudget budget(2);
  std::vector<std::unique_ptr<DynamicExecutor>> execs;
  for (int i = 0; i < 2; ++i) {
    ExecutorOptions options;
    options.intra_op_threads = 2;
    options.compute_budget = &budget;
    auto exec = DynamicExecutor::Create(**graph, *engines_, options);
    ASSERT_TRUE(exec.ok()) << exec.status();
    execs.push_back(*std::move(exec));
  }
  std::atomic<int> failures{0};
#pragma omp parallel for num_threads(2)
  for (int i = 0; i < 2; ++i) {
    auto out = execs[i]->Run({x});
    if (!out.ok() ||
        std::memcmp((*out)[0].tensor().data<float>(), expected.data(), expected.size() * sizeof(float)) != 0) {
      ++failures;
    }
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(budget.busy(), 0);
}

}  // namespace
}  // namespace ge::runtime
