// DynamicExecutor on placed graphs written in the text form (no compiler):
// plain runs and their errors, the subgraph executors built at creation,
// the parent-index conventions of subgraph inputs, and the guards of
// RunSubgraph (ownership, re-entrancy, missing inputs).
#include "runtime/executor/dynamic_executor.h"

#include <atomic>
#include <future>
#include <map>
#include <string>
#include <thread>

#include "base/ir/text_format.h"
#include "base/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ge::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

std::vector<float> Floats(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

// Released by the test while a RunSubgraph call is inside subgraph "slow".
struct Latch {
  std::atomic<bool> entered{false};
  std::promise<void> release;
  std::shared_future<void> released{release.get_future().share()};
};
Latch* g_latch = nullptr;

// Kernels of the test engine "test_calls". On a PartitionedCall node it runs
// the subgraph named by `_call` on the node's inputs, minus the last
// `_drop` of them; with `_twice` it runs it from a second thread at the same
// time. On an Identity node it waits for g_latch.
class CallKernel final : public engine::Kernel {
 public:
  explicit CallKernel(const ir::OpDesc& op)
      : target_(op.GetAttrOr<std::string>("_call", "")), drop_(op.GetAttrOr<int64_t>("_drop", 0)),
        twice_(op.GetAttrOr<bool>("_twice", false)) {}
  absl::Status Compute(engine::ExecuteContext& ctx) override {
    std::vector<Value> inputs;
    for (int i = 0; i + drop_ < ctx.num_inputs(); ++i) inputs.push_back(ctx.input_value(i));
    if (!twice_) return Forward(ctx, ctx.RunSubgraph(target_, inputs));
    auto first = std::async(std::launch::async, [&] { return ctx.RunSubgraph(target_, inputs); });
    while (!g_latch->entered) std::this_thread::yield();
    absl::StatusOr<std::vector<Value>> second = ctx.RunSubgraph(target_, inputs);
    g_latch->release.set_value();
    absl::StatusOr<std::vector<Value>> first_result = first.get();
    GE_RETURN_IF_ERROR(first_result.status());
    return second.status();
  }

 private:
  static absl::Status Forward(engine::ExecuteContext& ctx, absl::StatusOr<std::vector<Value>> results) {
    GE_RETURN_IF_ERROR(results.status());
    for (int i = 0; i < ctx.num_outputs(); ++i) GE_RETURN_IF_ERROR(ctx.SetOutputValue(i, (*results)[i]));
    return absl::OkStatus();
  }
  std::string target_;
  int64_t drop_;
  bool twice_;
};

// Whether each probed node (by name) was handed its input 0 (owned_input).
std::map<std::string, bool>* g_owned = nullptr;

class ProbeKernel final : public engine::Kernel {
 public:
  explicit ProbeKernel(std::string name) : name_(std::move(name)) {}
  absl::Status Compute(engine::ExecuteContext& ctx) override {
    Value* owned = ctx.owned_input(0);
    (*g_owned)[name_] = owned != nullptr;
    return ctx.SetOutputValue(0, owned != nullptr ? std::move(*owned) : ctx.input_value(0));
  }

 private:
  std::string name_;
};

class WaitKernel final : public engine::Kernel {
 public:
  absl::Status Compute(engine::ExecuteContext& ctx) override {
    g_latch->entered = true;
    g_latch->released.wait();
    return ctx.SetOutputValue(0, ctx.input_value(0));
  }
};

class TestCallsEngine final : public engine::Engine {
 public:
  class Store final : public engine::OpsKernelInfoStore {
   public:
    absl::Status CheckSupported(const ir::Node&) const override { return absl::OkStatus(); }
    std::vector<std::string> SupportedOpTypes() const override { return {"PartitionedCall", "Identity"}; }
  };
  class Factory final : public engine::KernelFactory {
   public:
    absl::StatusOr<std::unique_ptr<engine::Kernel>> CreateKernel(const ir::OpDesc& op) const override {
      if (op.type() == "Identity" && op.GetAttrOr<bool>("_probe", false)) {
        return std::unique_ptr<engine::Kernel>(new ProbeKernel(op.name()));
      }
      if (op.type() == "Identity") return std::unique_ptr<engine::Kernel>(new WaitKernel());
      return std::unique_ptr<engine::Kernel>(new CallKernel(op));
    }
  };
  TestCallsEngine() { attributes_.name = "test_calls"; }
  const engine::OpsKernelInfoStore& info_store() const override { return store_; }
  const engine::KernelFactory& kernel_factory() const override { return factory_; }

 private:
  Store store_;
  Factory factory_;
};

class DynamicExecutorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto registry = engine::CreateEngineRegistry({}, {});
    ASSERT_TRUE(registry.ok()) << registry.status();
    engines_ = registry->release();
    ASSERT_TRUE(engines_->AddEngine(std::make_unique<TestCallsEngine>(), {}).ok());
  }
  static void TearDownTestSuite() { delete engines_; }

  // Parses `text` into graph_ and creates an executor for it.
  absl::StatusOr<std::unique_ptr<DynamicExecutor>> Load(const std::string& text) {
    auto graph = ir::ParseGraph(text);
    if (!graph.ok()) return graph.status();
    graph_ = std::move(*graph);
    return DynamicExecutor::Create(*graph_, *engines_, {});
  }

  static engine::EngineRegistry* engines_;
  std::unique_ptr<ir::Graph> graph_;
};

engine::EngineRegistry* DynamicExecutorTest::engines_ = nullptr;

TEST_F(DynamicExecutorTest, RunsAPlacedGraph) {
  auto exec = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      r = Relu(x) {_engine_name = "host_cpu"}
      y = Add(r, x) {_engine_name = "host_cpu"}
      out = NetOutput(y)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ((*exec)->num_inputs(), 1);
  auto out = (*exec)->Run({Tensor::FromVector<float>({-1, 2, 3}, Shape{3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(-1, 4, 6));
  auto wrong = (*exec)->Run({});
  EXPECT_THAT(Message(wrong.status()), HasSubstr("graph 'main' takes 1 inputs, got 0"));
}

TEST_F(DynamicExecutorTest, CreationChecksEveryGraphOfTheTree) {
  auto unplaced = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[2])
      r = Relu(x)
      out = NetOutput(r)
    })");
  EXPECT_THAT(Message(unplaced.status()), HasSubstr("node 'r' was not placed on an engine"));
  auto in_subgraph = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[2])
      call = PartitionedCall(x) {_engine_name = "control_flow"} subgraphs(f) -> (f32[2])
      out = NetOutput(call)
    }
    graph f parent(main, call) {
      a = Data() {index = 0} -> (f32[2])
      r = Relu(a) {_engine_name = "nowhere"} -> (f32[2])
      out = NetOutput(r)
    })");
  EXPECT_THAT(Message(in_subgraph.status()),
              HasSubstr("subgraph 'f' of node 'call': node 'r' is placed on engine 'nowhere', which is not loaded"));
  auto missing = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[2])
      call = PartitionedCall(x) {_engine_name = "control_flow"} subgraphs(f) -> (f32[2])
      out = NetOutput(call)
    }
    graph f parent(main, call) {
      a = Data() {index = 0} -> (f32[2])
      out = NetOutput(a)
    })");
  ASSERT_TRUE(missing.ok()) << missing.status();
  graph_->FindNode("call")->mutable_op_desc().mutable_subgraph_names() = {"g"};
  auto created = DynamicExecutor::Create(*graph_, *engines_, {});
  EXPECT_THAT(Message(created.status()), HasSubstr("node 'call' (PartitionedCall) names subgraph 'g', which is not in"));
}

TEST_F(DynamicExecutorTest, SubgraphInputsFollowTheParentIndexConventions) {
  // If: Data index i takes input i + 1, `_parent_index` names the input.
  auto exec = Load(R"(graph main {
      p = Data() {index = 0} -> (bool[])
      x = Data() {index = 1} -> (f32[2])
      y = Data() {index = 2} -> (f32[2])
      c = If(p, x, y) {_engine_name = "control_flow"} subgraphs(t, e) -> (f32[2])
      call = PartitionedCall(x, y) {_engine_name = "control_flow"} subgraphs(f) -> (f32[2])
      out = NetOutput(c, call)
    }
    graph t parent(main, c) {
      a = Data() {index = 0} -> (f32[2])
      b = Data() {index = 1} -> (f32[2])
      s = Sub(a, b) {_engine_name = "host_cpu"} -> (f32[2])
      out = NetOutput(s)
    }
    graph e parent(main, c) {
      b = Data() {index = 0, _parent_index = 2} -> (f32[2])
      a = Data() {index = 1, _parent_index = 1} -> (f32[2])
      s = Sub(b, a) {_engine_name = "host_cpu"} -> (f32[2])
      out = NetOutput(s)
    }
    graph f parent(main, call) {
      b = InnerData() {_parent_index = 1} -> (f32[2])
      a = InnerData() {_parent_index = 0} -> (f32[2])
      m = Mul(a, b) {_engine_name = "host_cpu"} -> (f32[2])
      out = InnerNetOutput(m)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  const Tensor x = Tensor::FromVector<float>({5, 7}, Shape{2});
  const Tensor y = Tensor::FromVector<float>({1, 2}, Shape{2});
  auto then_out = (*exec)->Run({Tensor::Scalar(true), x, y});
  ASSERT_TRUE(then_out.ok()) << then_out.status();
  EXPECT_THAT(Floats((*then_out)[0]), ElementsAre(4, 5));
  EXPECT_THAT(Floats((*then_out)[1]), ElementsAre(5, 14));
  auto else_out = (*exec)->Run({Tensor::Scalar(false), x, y});
  ASSERT_TRUE(else_out.ok()) << else_out.status();
  EXPECT_THAT(Floats((*else_out)[0]), ElementsAre(-4, -5));
}

constexpr char kCallGraph[] = R"(graph main {
  x = Data() {index = 0} -> (f32[2])
  y = Data() {index = 1} -> (f32[2])
  call = PartitionedCall(x, y) {ATTRS, _engine_name = "test_calls"} subgraphs(f) -> (f32[2])
  other = PartitionedCall(x) {_engine_name = "control_flow"} subgraphs(g) -> (f32[2])
  out = NetOutput(call, other)
}
graph f parent(main, call) {
  a = Data() {index = 0} -> (f32[2])
  b = Data() {index = 1} -> (f32[2])
  w = Identity(a) {_engine_name = "WAIT"} -> (f32[2])
  s = Add(w, b) {_engine_name = "host_cpu"} -> (f32[2])
  out = NetOutput(s)
}
graph g parent(main, other) {
  a = Data() {index = 0} -> (f32[2])
  out = NetOutput(a)
})";

std::string CallGraph(const std::string& attrs, const std::string& wait_engine = "ge_local") {
  std::string text = kCallGraph;
  text.replace(text.find("ATTRS"), 5, attrs);
  text.replace(text.find("WAIT"), 4, wait_engine);
  return text;
}

std::vector<Value> TwoInputs() {
  return {Tensor::FromVector<float>({1, 2}, Shape{2}), Tensor::FromVector<float>({10, 20}, Shape{2})};
}

TEST_F(DynamicExecutorTest, RunSubgraphServesOnlyTheNodesOwnSubgraphs) {
  auto own = Load(CallGraph("_call = \"f\""));
  ASSERT_TRUE(own.ok()) << own.status();
  auto out = (*own)->Run(TwoInputs());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(11, 22));
  auto foreign = Load(CallGraph("_call = \"g\""));
  ASSERT_TRUE(foreign.ok()) << foreign.status();
  EXPECT_THAT(Message((*foreign)->Run(TwoInputs()).status()),
              HasSubstr("node 'call' (PartitionedCall): asked to run subgraph 'g', which the node does not own"));
}

TEST_F(DynamicExecutorTest, RunSubgraphNeedsEveryBoundInput) {
  auto exec = Load(CallGraph("_call = \"f\", _drop = 1"));
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_THAT(Message((*exec)->Run(TwoInputs()).status()),
              HasSubstr("subgraph 'f': input node 'b' takes parent input 1 but only 1 value(s) were passed"));
}

TEST_F(DynamicExecutorTest, ASubgraphRunsOnceAtATime) {
  Latch latch;
  g_latch = &latch;
  auto exec = Load(CallGraph("_call = \"f\", _twice = true", "test_calls"));
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run(TwoInputs());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << out.status();
  EXPECT_THAT(Message(out.status()), HasSubstr("subgraph 'f': already running"));
  g_latch = nullptr;
}

TEST_F(DynamicExecutorTest, KernelOutputsComeFromTheCachingAllocator) {
  auto exec = Load(R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      r = Relu(x) {_engine_name = "host_cpu"}
      y = Add(r, x) {_engine_name = "host_cpu"}
      out = NetOutput(y)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  std::shared_ptr<device::CachingAllocator> cache = (*exec)->output_allocator().shared_from_this();
  auto first = (*exec)->Run({Tensor::FromVector<float>({-1, 2, 3}, Shape{3})});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(cache->stats().misses, 2);  // r and y
  EXPECT_EQ(cache->stats().bytes_cached, 64);  // r died after y
  first->clear();
  auto second = (*exec)->Run({Tensor::FromVector<float>({4, -5, 6}, Shape{3})});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(cache->stats().hits, 2);
  EXPECT_EQ(cache->stats().misses, 2);
  exec->reset();  // closes the cache; the output keeps its memory
  EXPECT_EQ(cache->stats().bytes_cached, 0);
  EXPECT_THAT(Floats((*second)[0]), ElementsAre(8, -5, 12));
  second->clear();
  EXPECT_EQ(cache->stats().bytes_in_use, 0);
  EXPECT_EQ(cache->stats().bytes_cached, 0);
}

}  // namespace
}  // namespace ge::runtime

namespace ge::runtime {
namespace {

// A kernel may take (owned_input) the values it is the last reader of, and
// no others: not one a later node reads, nor a graph output.
TEST_F(DynamicExecutorTest, KernelsTakeOnlyTheValuesTheyReadLast) {
  const std::string text = R"(graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Identity(x) {_engine_name = "test_calls", _probe = true} -> (f32[2])
      b = Identity(x) {_engine_name = "test_calls", _probe = true} -> (f32[2])
      c = Identity(a) {_engine_name = "test_calls", _probe = true} -> (f32[2])
      d = Identity(b) {_engine_name = "test_calls", _probe = true} -> (f32[2])
      out = NetOutput(c, d, b)
    })";
  std::map<std::string, bool> owned;
  g_owned = &owned;
  auto exec = Load(text);
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run({Tensor::FromVector<float>({1, 2}, Shape{2})});
  ASSERT_TRUE(out.ok()) << out.status();
  // x is read by a and b; b's value is an output, which d may not take.
  EXPECT_EQ(owned.size(), 4u);
  EXPECT_NE(owned["a"], owned["b"]);  // whichever of a and b runs last takes x
  EXPECT_TRUE(owned["c"]);
  EXPECT_FALSE(owned["d"]);
  for (const Value& v : *out) EXPECT_THAT(Floats(v), ElementsAre(1, 2));

  // Parallel runs hand over a value once its other readers are done.
  owned.clear();
  auto graph = ir::ParseGraph(text);
  ASSERT_TRUE(graph.ok()) << graph.status();
  ExecutorOptions options;
  options.inter_op_parallelism = 2;
  auto parallel = DynamicExecutor::Create(**graph, *engines_, options);
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  auto out2 = (*parallel)->Run({Tensor::FromVector<float>({1, 2}, Shape{2})});
  ASSERT_TRUE(out2.ok()) << out2.status();
  EXPECT_FALSE(owned["a"] && owned["b"]);
  EXPECT_TRUE(owned["c"]);
  EXPECT_FALSE(owned["d"]);
  for (const Value& v : *out2) EXPECT_THAT(Floats(v), ElementsAre(1, 2));
  g_owned = nullptr;
}

}  // namespace
}  // namespace ge::runtime
