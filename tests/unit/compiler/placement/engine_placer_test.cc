// EnginePlacer: cost order, ties, exclusion, forcing, host execution,
// ge.engineType, strict mode, and determinism on a thread pool.
#include "compiler/placement/engine_placer.h"

#include <functional>
#include <random>

#include "base/ir/op_types.h"
#include "gtest/gtest.h"

namespace ge::compiler {
namespace {

using SupportFn = std::function<bool(const ir::Node&)>;

class FakeEngine final : public engine::Engine {
 public:
  FakeEngine(std::string name, int cost, SupportFn support, bool atomic = true)
      : store_(name, std::move(support)) {
    attributes_.name = std::move(name);
    attributes_.compute_cost = cost;
    attributes_.atomic = atomic;
  }
  const engine::EngineAttributes& attributes() const override { return attributes_; }
  const engine::OpsKernelInfoStore& info_store() const override { return store_; }
  const engine::KernelFactory& kernel_factory() const override { std::abort(); }

 private:
  class Store final : public engine::OpsKernelInfoStore {
   public:
    Store(std::string name, SupportFn support) : name_(std::move(name)), support_(std::move(support)) {}
    absl::Status CheckSupported(const ir::Node& node) const override {
      if (support_(node)) return absl::OkStatus();
      return absl::UnimplementedError(name_ + " does not run " + node.type());
    }
    std::vector<std::string> SupportedOpTypes() const override { return {}; }

   private:
    std::string name_;
    SupportFn support_;
  };
  engine::EngineAttributes attributes_;
  Store store_;
};

SupportFn Types(std::vector<std::string> types) {
  return [types](const ir::Node& n) { return std::find(types.begin(), types.end(), n.type()) != types.end(); };
}

// Data -> <op> ... -> NetOutput, one node per op type given.
std::unique_ptr<ir::Graph> Chain(const std::vector<std::string>& ops) {
  auto g = std::make_unique<ir::Graph>("g");
  ir::OpDesc data("x", std::string(ir::kData));
  data.SetAttr(ir::kAttrIndex, int64_t{0});
  data.AddOutput({"x", ir::ValueType::Tensor(DataType::kFloat, Shape{2})});
  ir::Node* prev = *g->AddNode(data);
  for (size_t i = 0; i < ops.size(); ++i) {
    ir::OpDesc op("n" + std::to_string(i), ops[i]);
    op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape{2})});
    op.AddOutput({"", ir::ValueType::Tensor(DataType::kFloat, Shape{2})});
    ir::Node* n = *g->AddNode(op);
    EXPECT_TRUE(g->AddEdge(prev, 0, n, 0).ok());
    prev = n;
  }
  ir::OpDesc out("out", std::string(ir::kNetOutput));
  out.AddInput({"y", ir::ValueType::Tensor(DataType::kFloat, Shape{2})});
  EXPECT_TRUE(g->AddEdge(prev, 0, *g->AddNode(out), 0).ok());
  return g;
}

class EnginePlacerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Add("ge_local", 9, Types({"Data", "NetOutput", "Const", "Identity"}));
    Add("host_cpu", 10, [](const ir::Node&) { return true; });
  }
  void Add(std::string name, int cost, SupportFn support, bool atomic = true) {
    ASSERT_TRUE(registry_.AddEngine(std::make_unique<FakeEngine>(std::move(name), cost, std::move(support), atomic), {}).ok());
  }
  absl::StatusOr<PlacementReport> Place(ir::Graph& g, ThreadPool* pool = nullptr) {
    EnginePlacer placer(registry_, options_, pool);
    return placer.Run(g);
  }
  static std::string EngineOf(const ir::Graph& g, const std::string& node) {
    return g.FindNode(node)->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, "");
  }

  engine::EngineRegistry registry_;
  CompileOptions options_;
};

TEST_F(EnginePlacerTest, CheapestSupportingEngineWins) {
  Add("fast", 1, Types({"Relu"}));
  auto g = Chain({"Relu", "Sigmoid", "Identity"});
  auto report = Place(*g);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(EngineOf(*g, "x"), "ge_local");
  EXPECT_EQ(EngineOf(*g, "n0"), "fast");
  EXPECT_EQ(EngineOf(*g, "n1"), "host_cpu");
  EXPECT_EQ(EngineOf(*g, "n2"), "ge_local");
  const NodePlacement* sigmoid = report->Find("n1");
  ASSERT_EQ(sigmoid->rejected.size(), 2u);
  EXPECT_EQ(sigmoid->rejected[0].engine, "fast");
  EXPECT_EQ(sigmoid->rejected[0].reason, "fast does not run Sigmoid");
}

TEST_F(EnginePlacerTest, TiesAreBrokenByName) {
  Add("b_engine", 3, Types({"Relu"}));
  Add("a_engine", 3, Types({"Relu"}));
  auto g = Chain({"Relu"});
  ASSERT_TRUE(Place(*g).ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "a_engine");
}

TEST_F(EnginePlacerTest, ExcludedEnginesAreSkippedAndUnknownNamesWarn) {
  Add("fast", 1, Types({"Relu"}));
  options_.exclude_engines = {"fast", "no_such_engine"};
  auto g = Chain({"Relu"});
  auto report = Place(*g);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "host_cpu");
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_NE(report->warnings[0].find("no_such_engine"), std::string::npos);
}

TEST_F(EnginePlacerTest, CompositeEnginesAreNotPlacedOn) {
  Add("fused", 0, [](const ir::Node&) { return true; }, /*atomic=*/false);
  auto g = Chain({"Relu"});
  ASSERT_TRUE(Place(*g).ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "host_cpu");
}

TEST_F(EnginePlacerTest, ForcedEngineWinsAndIsChecked) {
  Add("fast", 1, Types({"Relu"}));
  auto g = Chain({"Relu", "Relu"});
  g->FindNode("n0")->mutable_op_desc().SetAttr(ir::kAttrEngine, std::string("host_cpu"));
  g->FindNode("n1")->mutable_op_desc().SetAttr(ir::kAttrEngine, std::string("ge_local"));
  auto report = Place(*g);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(std::string(report.status().message()).find("'n1' (Relu) [ge_local: ge_local does not run Relu]"),
            std::string::npos)
      << report.status();
  g->FindNode("n1")->mutable_op_desc().RemoveAttr(ir::kAttrEngine);
  ASSERT_TRUE(Place(*g).ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "host_cpu");
  EXPECT_EQ(EngineOf(*g, "n1"), "fast");
}

TEST_F(EnginePlacerTest, HostExecutionMovesNodesToHostCpu) {
  Add("fast", 1, Types({"Relu", "Tanh"}));
  options_.host_exec_ops = {"Tanh"};
  auto g = Chain({"Relu", "Tanh", "Relu"});
  g->FindNode("n2")->mutable_op_desc().SetAttr(ir::kAttrHostExec, true);
  auto report = Place(*g);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(EngineOf(*g, "n0"), "fast");
  EXPECT_EQ(EngineOf(*g, "n1"), "host_cpu");
  EXPECT_EQ(EngineOf(*g, "n2"), "host_cpu");
  EXPECT_TRUE(report->Find("n1")->host_exec);
}

TEST_F(EnginePlacerTest, EngineTypeChoosesBetweenCoreEngines) {
  Add("cpu_dense", 1, Types({"MatMul", "Add"}));
  Add("cpu_vector", 2, Types({"Add", "Relu"}));
  auto g = Chain({"MatMul", "Add", "Relu"});
  ASSERT_TRUE(Place(*g).ok());
  EXPECT_EQ(EngineOf(*g, "n1"), "cpu_dense");
  options_.preferred_core_engine = "cpu_vector";
  ASSERT_TRUE(Place(*g).ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "cpu_dense");  // never excludes the other
  EXPECT_EQ(EngineOf(*g, "n1"), "cpu_vector");
  EXPECT_EQ(EngineOf(*g, "n2"), "cpu_vector");
}

TEST_F(EnginePlacerTest, StrictModeNamesEveryFallback) {
  Add("fast", 1, Types({"Relu"}));
  options_.disable_host_cpu_fallback = true;
  auto g = Chain({"Relu", "Sigmoid", "Tanh"});
  auto report = Place(*g);
  ASSERT_FALSE(report.ok());
  const std::string message(report.status().message());
  EXPECT_NE(message.find("2 node(s) would fall back to host_cpu"), std::string::npos) << message;
  EXPECT_NE(message.find("'n1' (Sigmoid) [fast: fast does not run Sigmoid; ge_local: ge_local does not run Sigmoid]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("'n2' (Tanh)"), std::string::npos);
  // Requested host execution is not a fallback.
  options_.host_exec_ops = {"Sigmoid", "Tanh"};
  EXPECT_TRUE(Place(*g).ok());
}

TEST_F(EnginePlacerTest, NodeNoEngineRunsIsAnError) {
  options_.exclude_engines = {"host_cpu"};
  auto g = Chain({"Relu"});
  auto report = Place(*g);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(std::string(report.status().message()).find("no engine can run 1 node(s): 'n0' (Relu)"), std::string::npos)
      << report.status();
}

TEST_F(EnginePlacerTest, ParallelPlacementIsDeterministic) {
  std::mt19937 rng(42);
  std::vector<std::string> kinds = {"A", "B", "C", "D", "E"};
  for (int e = 0; e < 6; ++e) {
    std::vector<std::string> supported;
    for (const auto& k : kinds) {
      if (rng() % 2) supported.push_back(k);
    }
    Add("e" + std::to_string(e), static_cast<int>(rng() % 4), Types(supported));
  }
  std::vector<std::string> ops;
  for (int i = 0; i < 5000; ++i) ops.push_back(kinds[rng() % kinds.size()]);
  auto serial = Chain(ops);
  auto parallel = Chain(ops);
  ThreadPool pool(3, "placer-test");
  ASSERT_TRUE(Place(*serial).ok());
  ASSERT_TRUE(Place(*parallel, &pool).ok());
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string name = "n" + std::to_string(i);
    ASSERT_EQ(EngineOf(*serial, name), EngineOf(*parallel, name)) << name;
  }
}

}  // namespace
}  // namespace ge::compiler
