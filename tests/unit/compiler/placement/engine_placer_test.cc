// EnginePlacer: cost order, ties, exclusion, forcing, host execution,
// ge.engineType, placement by estimated cost (cost tables, boundaries,
// reasons), strict mode, the reference engine as an attribute, and
// determinism on a thread pool.
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
  FakeEngine(std::string name, int cost, SupportFn support, bool atomic = true, engine::CostTable table = {})
      : store_(name, std::move(support)) {
    attributes_.name = std::move(name);
    attributes_.compute_cost = cost;
    attributes_.atomic = atomic;
    attributes_.cost = std::move(table);
    // The tests' reference engine (host execution, strict mode), as
    // host_cpu.json declares for the real one.
    attributes_.reference = attributes_.name == "host_cpu";
  }
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
  Store store_;
};

SupportFn Types(std::vector<std::string> types) {
  return [types](const ir::Node& n) { return std::find(types.begin(), types.end(), n.type()) != types.end(); };
}

// The two-engine tables of the cost tests: "dense" pays 8 us a call and
// converts layouts at its boundaries, "vector" is cheap per call.
engine::CostTable Table(double call_ns, double element_ns, double boundary_call_ns, double boundary_element_ns) {
  engine::CostTable t;
  t.ops["*"] = {call_ns, element_ns};
  t.boundary = {boundary_call_ns, boundary_element_ns};
  return t;
}

// Data -> <op> ... -> NetOutput, one node per op type given, every tensor
// of `shape`.
std::unique_ptr<ir::Graph> Chain(const std::vector<std::string>& ops, const Shape& shape = Shape{2}) {
  auto g = std::make_unique<ir::Graph>("g");
  ir::OpDesc data("x", std::string(ir::kData));
  data.SetAttr(ir::kAttrIndex, int64_t{0});
  data.AddOutput({"x", ir::ValueType::Tensor(DataType::kFloat, shape)});
  ir::Node* prev = *g->AddNode(data);
  for (size_t i = 0; i < ops.size(); ++i) {
    ir::OpDesc op("n" + std::to_string(i), ops[i]);
    op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, shape)});
    op.AddOutput({"", ir::ValueType::Tensor(DataType::kFloat, shape)});
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
  void Add(std::string name, int cost, SupportFn support, bool atomic = true, engine::CostTable table = {}) {
    ASSERT_TRUE(
        registry_
            .AddEngine(
                std::make_unique<FakeEngine>(std::move(name), cost, std::move(support), atomic, std::move(table)), {})
            .ok());
  }
  // "dense" (priority 1) runs MatMul and Add, "vector" (2) Add and Relu.
  void AddCostedEngines() {
    Add("dense", 1, Types({"MatMul", "Add"}), true, Table(8000, 0.3, 300, 0.5));
    Add("vector", 2, Types({"Add", "Relu"}), true, Table(30, 0.4, 200, 0));
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

// A compiled graph placed again (a compiled model planned for known shapes):
// a node its composite engine made and placed stays there while that engine
// runs it and is not excluded; otherwise placement proceeds as usual.
TEST_F(EnginePlacerTest, NodesOfACompositeEngineStayOnIt) {
  Add("fused", 0, Types({"_Fused"}), /*atomic=*/false);
  auto g = Chain({"_Fused", "_Fused", "Relu"});
  g->FindNode("n0")->mutable_op_desc().SetAttr(ir::kAttrEngineName, std::string("fused"));
  g->FindNode("n1")->mutable_op_desc().SetAttr(ir::kAttrEngineName, std::string("host_cpu"));
  g->FindNode("n2")->mutable_op_desc().SetAttr(ir::kAttrEngineName, std::string("fused"));
  auto report = Place(*g);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(EngineOf(*g, "n0"), "fused");
  EXPECT_EQ(EngineOf(*g, "n1"), "host_cpu") << "placed on an atomic engine before: placed again";
  EXPECT_EQ(EngineOf(*g, "n2"), "host_cpu") << "the composite engine does not run it";
  options_.exclude_engines = {"fused"};
  g->FindNode("n0")->mutable_op_desc().SetAttr(ir::kAttrEngineName, std::string("fused"));
  ASSERT_TRUE(Place(*g).ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "host_cpu") << "an excluded composite engine keeps nothing";
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

TEST_F(EnginePlacerTest, EngineTypeNamesTheEngineThatWins) {
  Add("cpu_dense", 1, Types({"MatMul", "Add"}), true, Table(8000, 0.3, 300, 0.5));
  Add("cpu_vector", 2, Types({"Add", "Relu"}), true, Table(30, 0.4, 200, 0));
  auto g = Chain({"MatMul", "Add", "Relu"});
  options_.preferred_engine = "cpu_dense";
  auto report = Place(*g);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(EngineOf(*g, "n1"), "cpu_dense");
  EXPECT_EQ(report->Find("n1")->reason, PlacementReason::kPriority);
  options_.preferred_engine = "cpu_vector";
  report = Place(*g);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "cpu_dense");  // never excludes the other
  EXPECT_EQ(EngineOf(*g, "n1"), "cpu_vector");
  EXPECT_EQ(report->Find("n1")->reason, PlacementReason::kEngineType);
  EXPECT_EQ(EngineOf(*g, "n2"), "cpu_vector");
}

TEST_F(EnginePlacerTest, WithoutCostTablesThePriorityOrderDecides) {
  Add("dense", 1, Types({"Add"}));
  Add("vector", 2, Types({"Add"}));
  auto g = Chain({"Add"});
  auto report = Place(*g);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "dense");
  EXPECT_EQ(report->Find("n0")->reason, PlacementReason::kPriority);
  EXPECT_TRUE(report->Find("n0")->estimates.empty());
}

TEST_F(EnginePlacerTest, TinyOpsGoWhereTheCallIsCheap) {
  AddCostedEngines();
  auto g = Chain({"Add", "Add", "Relu", "Add"}, Shape{64});
  auto report = Place(*g);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const char* n : {"n0", "n1", "n2", "n3"}) EXPECT_EQ(EngineOf(*g, n), "vector") << n;
  const NodePlacement* add = report->Find("n0");
  EXPECT_EQ(add->reason, PlacementReason::kCost);
  ASSERT_EQ(add->estimates.size(), 2u);
  EXPECT_EQ(add->estimates[0].engine, "vector");  // cheapest first
  EXPECT_NEAR(add->estimates[0].ns, 30 + 0.4 * 64, 1e-9);
  // dense: its own cost plus the boundary to n1 on vector (Data's engine has no table)
  EXPECT_NEAR(add->estimates[1].ns, 8000 + 0.3 * 64 + (300 + 0.5 * 64 + 200), 1e-9);
  ASSERT_EQ(add->rejected.size(), 1u);
  EXPECT_EQ(add->rejected[0].engine, "dense");
  EXPECT_EQ(report->Find("n2")->reason, PlacementReason::kPriority);  // only vector runs Relu
}

TEST_F(EnginePlacerTest, LargeOpsStayWithTheirNeighbours) {
  AddCostedEngines();
  // Alone, an Add of 10,000 elements is cheaper on vector (4,030 ns against
  // 11,000 ns); between two MatMuls only dense runs, the two boundaries
  // (2 x 5,500 ns) make dense cheaper.
  auto g = Chain({"MatMul", "Add", "MatMul"}, Shape{10000});
  auto report = Place(*g);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(EngineOf(*g, "n1"), "dense");
  EXPECT_EQ(report->Find("n1")->reason, PlacementReason::kCost);
  EXPECT_EQ(report->Find("n1")->estimates[0].engine, "dense");
  // After a Relu (vector only) the same Add has one boundary either way.
  auto h = Chain({"MatMul", "Add", "Relu"}, Shape{10000});
  ASSERT_TRUE(Place(*h).ok());
  EXPECT_EQ(EngineOf(*h, "n1"), "vector");
}

TEST_F(EnginePlacerTest, UnknownDimsCountAsOne) {
  AddCostedEngines();
  auto g = Chain({"Add"}, Shape{-1, 1000000});
  ASSERT_TRUE(Place(*g).ok());
  EXPECT_EQ(EngineOf(*g, "n0"), "dense");  // 1,000,000 elements: dense's per-element cost is lower
  auto h = Chain({"Add"}, Shape{-1, 8});
  ASSERT_TRUE(Place(*h).ok());
  EXPECT_EQ(EngineOf(*h, "n0"), "vector");
}

TEST_F(EnginePlacerTest, CostPlacementIsDeterministicOnAPool) {
  AddCostedEngines();
  std::mt19937 rng(7);
  std::vector<std::string> ops;
  for (int i = 0; i < 3000; ++i) ops.push_back(std::vector<std::string>{"MatMul", "Add", "Relu"}[rng() % 3]);
  auto serial = Chain(ops, Shape{5000});
  auto parallel = Chain(ops, Shape{5000});
  ThreadPool pool(3, "placer-test");
  ASSERT_TRUE(Place(*serial).ok());
  ASSERT_TRUE(Place(*parallel, &pool).ok());
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string name = "n" + std::to_string(i);
    ASSERT_EQ(EngineOf(*serial, name), EngineOf(*parallel, name)) << name;
  }
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

// Host execution and strict mode follow the reference attribute, not a
// name: with the reference engine called "oracle" (and an ordinary engine
// called host_cpu), flagged nodes go to oracle and only oracle's nodes are
// fallbacks; without a reference engine, host execution fails naming why.
TEST(EnginePlacerReferenceTest, TheReferenceEngineIsAnAttribute) {
  auto make = [](std::string name, int cost, SupportFn support, bool reference) {
    auto e = std::make_unique<FakeEngine>(std::move(name), cost, std::move(support));
    engine::EngineAttributes a = e->attributes();
    a.reference = reference;
    e->set_attributes(std::move(a));
    return e;
  };
  auto all = [](const ir::Node&) { return true; };
  engine::EngineRegistry registry;
  ASSERT_TRUE(registry.AddEngine(make("ge_local", 9, Types({"Data", "NetOutput"}), false), {}).ok());
  ASSERT_TRUE(registry.AddEngine(make("host_cpu", 3, Types({"Relu"}), false), {}).ok());
  ASSERT_TRUE(registry.AddEngine(make("oracle", 10, all, true), {}).ok());
  CompileOptions options;
  options.host_exec_ops = {"Relu"};
  auto g = Chain({"Relu", "Tanh"});
  auto report = EnginePlacer(registry, options, nullptr).Run(*g);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(g->FindNode("n0")->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "oracle");
  EXPECT_EQ(report->Find("n0")->reason, PlacementReason::kHostExec);
  EXPECT_EQ(report->Find("n0")->rejected.back().reason, "moved to oracle by host execution request");

  CompileOptions strict;
  strict.disable_host_cpu_fallback = true;
  auto h = Chain({"Relu", "Tanh"});
  report = EnginePlacer(registry, strict, nullptr).Run(*h);
  ASSERT_FALSE(report.ok());
  const std::string message(report.status().message());
  EXPECT_NE(message.find("1 node(s) would fall back to oracle: 'n1' (Tanh)"), std::string::npos) << message;

  engine::EngineRegistry no_reference;
  ASSERT_TRUE(no_reference.AddEngine(make("host_cpu", 10, all, false), {}).ok());
  auto k = Chain({"Relu"});
  report = EnginePlacer(no_reference, options, nullptr).Run(*k);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(
      std::string(report.status().message()).find("flagged for host execution but the reference engine is not loaded"),
      std::string::npos)
      << report.status();
  EXPECT_TRUE(EnginePlacer(no_reference, strict, nullptr).Run(*Chain({"Relu"})).ok());  // no fallback to count
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
