// DynamicExecutor with inter-op parallelism: the same outputs as the
// sequential order on random DAGs (data and control edges), branches of a
// diamond that provably overlap (each waits at a barrier the other must
// reach), errors and cancellation that stop the run, subgraphs on the same
// pool, independent engines on their own streams, and values released only
// after their last consumer.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "absl/container/flat_hash_map.h"

#include "base/ir/text_format.h"
#include "base/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/executor/dynamic_executor.h"
#include "tests/unit/compiler/partition/exec_test_util.h"

namespace ge::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<float> Floats(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

// A barrier for `parties` threads. Wait fails (instead of hanging) when the
// others do not arrive within a generous bound: only a broken scheduler,
// which never lets the branches overlap, gets there.
class Barrier;
Barrier* g_barrier = nullptr;

// The barrier the test kernels' `_barrier` nodes wait at while it is in scope
// (also when an assertion returns early).
class Barrier {
 public:
  explicit Barrier(int parties) : parties_(parties) { g_barrier = this; }
  ~Barrier() { g_barrier = nullptr; }
  Barrier(const Barrier&) = delete;
  Barrier& operator=(const Barrier&) = delete;
  absl::Status Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (++arrived_ == parties_) cv_.notify_all();
    if (!cv_.wait_for(lock, std::chrono::seconds(60), [&] { return arrived_ >= parties_; })) {
      return absl::DeadlineExceededError("the other branches never reached the barrier");
    }
    return absl::OkStatus();
  }

 private:
  const int parties_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
};

std::atomic<int> g_computed{0};
std::atomic<int> g_concurrent{0};
std::atomic<int> g_max_concurrent{0};
std::mutex g_threads_mu;
absl::flat_hash_map<std::string, std::thread::id> g_threads;  // node -> thread that computed it

// Kernels of the test engine "test_par" (Identity nodes): forward input 0;
// with `_barrier` first wait at g_barrier; with `_fail` fail instead. Each
// counts its computes and checks that no kernel object runs twice at once.
class TestKernel final : public engine::Kernel {
 public:
  explicit TestKernel(const ir::OpDesc& op)
      : name_(op.name()), barrier_(op.GetAttrOr<bool>("_barrier", false)), fail_(op.GetAttrOr<bool>("_fail", false)) {}
  absl::Status Compute(engine::ExecuteContext& ctx) override {
    if (busy_.exchange(true)) return absl::InternalError("kernel entered twice at once");
    {
      std::lock_guard<std::mutex> lock(g_threads_mu);
      g_threads[name_] = std::this_thread::get_id();
    }
    int now = ++g_concurrent;
    for (int seen = g_max_concurrent; now > seen && !g_max_concurrent.compare_exchange_weak(seen, now);) {
    }
    ++g_computed;
    absl::Status s = barrier_ ? g_barrier->Wait() : absl::OkStatus();
    if (s.ok() && fail_) s = absl::InternalError("failed on purpose");
    if (s.ok()) s = ctx.SetOutputValue(0, ctx.input_value(0));
    --g_concurrent;
    busy_ = false;
    return s;
  }

 private:
  std::string name_;
  bool barrier_;
  bool fail_;
  std::atomic<bool> busy_{false};
};

class TestParEngine final : public engine::Engine {
 public:
  class Store final : public engine::OpsKernelInfoStore {
   public:
    absl::Status CheckSupported(const ir::Node&) const override { return absl::OkStatus(); }
    std::vector<std::string> SupportedOpTypes() const override { return {"Identity"}; }
  };
  class Factory final : public engine::KernelFactory {
   public:
    absl::StatusOr<std::unique_ptr<engine::Kernel>> CreateKernel(const ir::OpDesc& op) const override {
      return std::unique_ptr<engine::Kernel>(new TestKernel(op));
    }
  };
  // "test_par", or with `independent` "test_indep" (its own stream).
  explicit TestParEngine(bool independent = false) {
    attributes_.name = independent ? "test_indep" : "test_par";
    attributes_.independent_stream = independent;
  }
  const engine::OpsKernelInfoStore& info_store() const override { return store_; }
  const engine::KernelFactory& kernel_factory() const override { return factory_; }

 private:
  Store store_;
  Factory factory_;
};

class ParallelExecutorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto registry = engine::CreateEngineRegistry({}, {});
    ASSERT_TRUE(registry.ok()) << registry.status();
    engines_ = registry->release();
    ASSERT_TRUE(engines_->AddEngine(std::make_unique<TestParEngine>(), {}).ok());
    ASSERT_TRUE(engines_->AddEngine(std::make_unique<TestParEngine>(/*independent=*/true), {}).ok());
  }
  static void TearDownTestSuite() { delete engines_; }
  void SetUp() override {
    g_computed = 0;
    g_concurrent = 0;
    g_max_concurrent = 0;
    std::lock_guard<std::mutex> lock(g_threads_mu);
    g_threads.clear();
  }
  static std::thread::id ThreadOf(const std::string& node) {
    std::lock_guard<std::mutex> lock(g_threads_mu);
    auto it = g_threads.find(node);
    return it == g_threads.end() ? std::thread::id() : it->second;
  }

  absl::StatusOr<std::unique_ptr<DynamicExecutor>> Load(const std::string& text, int threads) {
    auto graph = ir::ParseGraph(text);
    if (!graph.ok()) return graph.status();
    graph_ = std::move(*graph);
    ExecutorOptions options;
    options.inter_op_parallelism = threads;
    return DynamicExecutor::Create(*graph_, *engines_, options);
  }

  static engine::EngineRegistry* engines_;
  std::unique_ptr<ir::Graph> graph_;
};

engine::EngineRegistry* ParallelExecutorTest::engines_ = nullptr;

// x -> {a, b} -> a + b, each branch two nodes deep.
std::string Diamond(const std::string& a_attrs, const std::string& b_attrs) {
  return R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      a0 = Relu(x) {_engine_name = "host_cpu"}
      a = Identity(a0) {_engine_name = "test_par")" + a_attrs + R"(}
      b0 = Neg(x) {_engine_name = "host_cpu"}
      b = Identity(b0) {_engine_name = "test_par")" + b_attrs + R"(}
      y = Add(a, b) {_engine_name = "host_cpu"}
      out = NetOutput(y, b)
    })";
}

TEST_F(ParallelExecutorTest, DiamondBranchesOverlap) {
  auto exec = Load(Diamond(", _barrier = true", ", _barrier = true"), 2);
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (int i = 0; i < 3; ++i) {
    Barrier barrier(2);  // each branch waits until the other has arrived
    auto out = (*exec)->Run({Tensor::FromVector<float>({-1, 2, 3}, Shape{3})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Floats((*out)[0]), ElementsAre(1, 0, 0));
    EXPECT_THAT(Floats((*out)[1]), ElementsAre(1, -2, -3));
  }
  EXPECT_EQ(g_max_concurrent, 2);
}

TEST_F(ParallelExecutorTest, TheFirstErrorStopsTheRunAndNamesTheNode) {
  auto exec = Load(Diamond(", _fail = true", ""), 4);
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (int i = 0; i < 2; ++i) {  // the executor stays usable after a failed run
    auto out = (*exec)->Run({Tensor::FromVector<float>({1, 2}, Shape{2})});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(std::string(out.status().message()), HasSubstr("node 'a' (Identity): failed on purpose"));
  }
  auto ok = Load(Diamond("", ""), 4);
  ASSERT_TRUE(ok.ok()) << ok.status();
  auto out = (*ok)->Run({Tensor::FromVector<float>({1, 2}, Shape{2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(0, 0));
}

TEST_F(ParallelExecutorTest, NothingStartsAfterTheFailedNode) {
  auto exec = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      bad = Identity(x) {_engine_name = "test_par", _fail = true}
      after = Identity(bad) {_engine_name = "test_par"}
      out = NetOutput(after)
    })", 3);
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run({Tensor::FromVector<float>({1}, Shape{1})});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("node 'bad'"));
  EXPECT_EQ(g_computed, 1);  // 'after' never started
}

TEST_F(ParallelExecutorTest, CancellationStopsBeforeTheNextNode) {
  auto exec = Load(Diamond("", ""), 4);
  ASSERT_TRUE(exec.ok()) << exec.status();
  std::atomic<int> checks{0};
  RunControl control;
  control.set_cancelled([&] { return ++checks > 2; });  // two nodes may start
  auto out = (*exec)->Run({Tensor::FromVector<float>({1, 2}, Shape{2})}, &control);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("before"));
  EXPECT_LE(g_computed, 2);
}

TEST_F(ParallelExecutorTest, SubgraphsRunOnTheSamePool) {
  // Both branches of the root are PartitionedCalls whose subgraphs hold a
  // barrier node each: they can only finish if the subgraph runs overlap.
  auto exec = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      c1 = PartitionedCall(x) {_engine_name = "control_flow"} subgraphs(s1) -> (f32[-1])
      c2 = PartitionedCall(x) {_engine_name = "control_flow"} subgraphs(s2) -> (f32[-1])
      y = Add(c1, c2) {_engine_name = "host_cpu"}
      out = NetOutput(y)
    }
    graph s1 parent(main, c1) {
      a = Data() {index = 0} -> (f32[-1])
      w = Identity(a) {_engine_name = "test_par", _barrier = true}
      r = Relu(w) {_engine_name = "host_cpu"}
      o = NetOutput(r)
    }
    graph s2 parent(main, c2) {
      a = Data() {index = 0} -> (f32[-1])
      w = Identity(a) {_engine_name = "test_par", _barrier = true}
      n = Neg(w) {_engine_name = "host_cpu"}
      o = NetOutput(n)
    })", 2);
  ASSERT_TRUE(exec.ok()) << exec.status();
  Barrier barrier(2);
  auto out = (*exec)->Run({Tensor::FromVector<float>({-1, 2}, Shape{2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(1, 0));
}

// Independent engines: with inter_op_parallelism 1 the only other thread is
// the engine's stream, so the barrier proves the overlap.
TEST_F(ParallelExecutorTest, IndependentEnginesRunOnTheirOwnStream) {
  auto exec = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      a = Identity(x) {_engine_name = "test_indep", _barrier = true}
      a2 = Identity(a) {_engine_name = "test_indep"}
      b0 = Neg(x) {_engine_name = "host_cpu"}
      b = Identity(b0) {_engine_name = "test_par", _barrier = true}
      y = Add(a2, b) {_engine_name = "host_cpu"}
      out = NetOutput(y)
    })", 1);
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (int i = 0; i < 2; ++i) {
    Barrier barrier(2);
    auto out = (*exec)->Run({Tensor::FromVector<float>({-1, 2}, Shape{2})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Floats((*out)[0]), ElementsAre(0, 0));
    EXPECT_EQ(ThreadOf("a"), ThreadOf("a2"));  // one stream, in order
    EXPECT_EQ(ThreadOf("b"), std::this_thread::get_id());
    EXPECT_NE(ThreadOf("a"), std::this_thread::get_id());
  }
}

TEST_F(ParallelExecutorTest, ACallOfAnIndependentEngineSubgraphRunsOnItsStream) {
  auto exec = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      c1 = PartitionedCall(x) {_engine_name = "control_flow"} subgraphs(s1) -> (f32[-1])
      c2 = PartitionedCall(x) {_engine_name = "control_flow"} subgraphs(s2) -> (f32[-1])
      y = Add(c1, c2) {_engine_name = "host_cpu"}
      out = NetOutput(y)
    }
    graph s1 parent(main, c1) {
      a = Data() {index = 0} -> (f32[-1])
      w = Identity(a) {_engine_name = "test_indep", _barrier = true}
      o = NetOutput(w)
    }
    graph s2 parent(main, c2) {
      a = Data() {index = 0} -> (f32[-1])
      w = Identity(a) {_engine_name = "test_par", _barrier = true}
      n = Neg(w) {_engine_name = "host_cpu"}
      o = NetOutput(n)
    })", 1);
  ASSERT_TRUE(exec.ok()) << exec.status();
  Barrier barrier(2);
  auto out = (*exec)->Run({Tensor::FromVector<float>({-1, 2}, Shape{2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(0, 0));
}

TEST_F(ParallelExecutorTest, AnErrorOnAStreamIsTheRunsError) {
  auto exec = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      a = Identity(x) {_engine_name = "test_indep", _fail = true}
      a2 = Identity(a) {_engine_name = "test_indep"}
      b = Relu(x) {_engine_name = "host_cpu"}
      y = Add(a2, b) {_engine_name = "host_cpu"}
      out = NetOutput(y)
    })", 2);
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (int i = 0; i < 2; ++i) {
    auto out = (*exec)->Run({Tensor::FromVector<float>({1, 2}, Shape{2})});
    EXPECT_THAT(std::string(out.status().message()), HasSubstr("node 'a' (Identity): failed on purpose"));
    EXPECT_EQ(ThreadOf("a2"), std::thread::id());  // never started
  }
}

TEST_F(ParallelExecutorTest, RandomDagsGiveTheSequentialOutputs) {
  std::mt19937 rng(20261125);
  partition::testing::RandomGraphSpec spec;
  spec.max_nodes = 60;
  spec.control_probability = 0.1;
  const engine::EngineRegistry& engines = partition::testing::BuiltEngines();
  for (int i = 0; i < 60; ++i) {
    std::unique_ptr<ir::Graph> g = partition::testing::RandomGraph(rng, spec);
    std::vector<Value> inputs = partition::testing::RandomInputs(*g, rng);
    auto sequential = DynamicExecutor::Create(*g, engines, {});
    ASSERT_TRUE(sequential.ok()) << sequential.status();
    auto expected = (*sequential)->Run(inputs);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (int threads : {2, 4}) {
      ExecutorOptions options;
      options.inter_op_parallelism = threads;
      auto parallel = DynamicExecutor::Create(*g, engines, options);
      ASSERT_TRUE(parallel.ok()) << parallel.status();
      for (int repeat = 0; repeat < 3; ++repeat) {
        auto actual = (*parallel)->Run(inputs);
        ASSERT_TRUE(actual.ok()) << actual.status();
        std::string why;
        ASSERT_TRUE(partition::testing::SameOutputs(*expected, *actual, &why))
            << "graph " << i << ", " << threads << " threads: " << why << "\n" << ir::PrintGraph(*g);
      }
      // Every intermediate went back to the cache; only the outputs are held.
      const device::CachingAllocatorStats stats = (*parallel)->output_allocator().stats();
      int64_t held = 0;
      for (const Value& v : *expected) held += static_cast<int64_t>(device::CachingAllocator::ClassSize(v.tensor().SizeInBytes()));
      EXPECT_LE(stats.bytes_in_use, held) << "graph " << i;
    }
  }
}

}  // namespace
}  // namespace ge::runtime
