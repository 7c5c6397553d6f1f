// EnginePartitioner: the split (text out), stream labels, composite keys,
// the exact merge back, optimizers that change their subgraphs, refusals,
// and a property test on a thousand random graphs with random engine
// support placed by the real EnginePlacer and executed before and after.
#include "compiler/partition/engine_partitioner.h"

#include <random>
#include <set>

#include "absl/strings/str_replace.h"
#include "base/ir/graph_equal.h"
#include "base/ir/verifier.h"
#include "compiler/placement/engine_placer.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/exec_test_util.h"
#include "tests/unit/compiler/partition/partition_test_util.h"

namespace ge::partition {
namespace {

using testing::BuiltEngines;
using testing::DelegatingEngine;
using testing::Dedent;
using testing::MustParse;

bool Any(const ir::Node&) { return true; }

// Puts an Identity behind every Relu that has consumers.
class InsertIdentity final : public engine::GraphOptimizer {
 public:
  std::string_view name() const override { return "InsertIdentity"; }
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) override {
    bool changed = false;
    for (ir::Node* n : graph.nodes()) {
      if (n->type() != "Relu" || n->consumers(0).empty()) continue;
      ir::OpDesc op(graph.UniqueNodeName(n->name() + "/id"), "Identity");
      op.AddInput(n->op_desc().output(0));
      op.AddOutput(n->op_desc().output(0));
      op.SetAttr(ir::kAttrEngineName, n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""));
      GE_ASSIGN_OR_RETURN(ir::Node * id, graph.AddNode(std::move(op)));
      GE_RETURN_IF_ERROR(graph.ReplaceAllUses(n, 0, id, 0));
      GE_RETURN_IF_ERROR(graph.AddEdge(n, 0, id, 0));
      changed = true;
    }
    return changed;
  }
};

// Removes Identity nodes (but never the boundary nodes).
class RemoveIdentity final : public engine::GraphOptimizer {
 public:
  std::string_view name() const override { return "RemoveIdentity"; }
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) override {
    bool changed = false;
    for (ir::Node* n : graph.nodes()) {
      if (n->type() != "Identity" || !n->control_inputs().empty() || !n->control_outputs().empty()) continue;
      const ir::OutPort src = n->input(0);
      if (src.node == nullptr) continue;
      GE_RETURN_IF_ERROR(graph.ReplaceAllUses(n, 0, src.node, src.index));
      graph.RemoveNode(n);
      changed = true;
    }
    return changed;
  }
};

class DropPlaceHolders final : public engine::GraphOptimizer {
 public:
  std::string_view name() const override { return "DropPlaceHolders"; }
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) override {
    for (ir::Node* n : graph.nodes()) {
      if (n->type() == "PlaceHolder") graph.RemoveNode(n);
    }
    return true;
  }
};

// Fails like Failing, but only where a node of `anchor` type is: elsewhere
// it promises (MayOptimizeFused) to change nothing.
class FailingAt final : public engine::GraphOptimizer {
 public:
  explicit FailingAt(std::string anchor) : anchor_(std::move(anchor)) {}
  std::string_view name() const override { return "FailingAt"; }
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph&) override { return absl::InternalError("boom"); }
  bool MayOptimizeFused(const ir::Node& node) const override { return node.type() == anchor_; }

 private:
  std::string anchor_;
};

class Failing final : public engine::GraphOptimizer {
 public:
  std::string_view name() const override { return "Failing"; }
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph&) override { return absl::InternalError("boom"); }
};

constexpr const char* kThreeEngines = R"(
graph main {
  x = Data() {_engine_name = "ge_local", index = 0} -> (f32[2])
  a = Relu(x:0) {_engine_name = "A"} -> (f32[2])
  b = Neg(a:0) {_engine_name = "B"} -> (f32[2])
  c = Add(a:0, b:0) {_engine_name = "A"} -> (f32[2])
  d = Exp(c:0) ^b {_engine_name = "A"} -> (f32[2])
  out = NetOutput(d:0, a:0) {_engine_name = "ge_local"}
}
)";

std::string PrintPartition(const EnginePartition& part) {
  std::string out;
  for (const EngineSubgraph& s : part.subgraphs) out += ir::PrintGraph(*s.graph);
  return out;
}

class EnginePartitionerTest : public ::testing::Test {
 protected:
  void Add(std::string name, bool atomic = true, std::string composite = "",
           std::unique_ptr<engine::GraphOptimizer> optimizer = nullptr) {
    auto e = std::make_unique<DelegatingEngine>(std::move(name), 1, Any, BuiltEngines().Find("host_cpu"), atomic,
                                                std::move(composite));
    if (optimizer) e->AddOptimizer(std::move(optimizer));
    ASSERT_TRUE(registry_.AddEngine(std::move(e), {}).ok());
  }
  engine::EngineRegistry registry_;
  ThreadPool pool_{2, "engine-partition-test"};
};

TEST_F(EnginePartitionerTest, SplitsByEngineWithPairs) {
  auto g = MustParse(kThreeEngines);
  EnginePartitioner partitioner(registry_, nullptr);
  auto part = partitioner.Split(*g, EnginePartitionMode::kAtomic);
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_EQ(g->num_nodes(), 0u);
  // a and c share engine A but b lies on a second path between them; d
  // joins c. Every crossing value gets one pair per reading subgraph.
  EXPECT_EQ(PrintPartition(*part), Dedent(R"(
    graph main/ge_local_0 {
      x = Data() {_engine_name = "ge_local", index = 0} -> (f32[2])
      end_0 = End(x:0) {_engine_name = "ge_local", _peer_node = "x", _peer_port = 0, peer_index = 0}
    }
    graph main/A_1 {
      a = Relu(placeholder_0:0) {_engine_name = "A"} -> (f32[2])
      placeholder_0 = PlaceHolder() {_engine_name = "A", _peer_node = "x", _peer_port = 0, peer_index = 0} -> (f32[2])
      end_1 = End(a:0) {_engine_name = "A", _peer_node = "a", _peer_port = 0, peer_index = 1}
      end_2 = End(a:0) {_engine_name = "A", _peer_node = "a", _peer_port = 0, peer_index = 2}
      end_6 = End(a:0) {_engine_name = "A", _peer_node = "a", _peer_port = 0, peer_index = 6}
    }
    graph main/B_2 {
      b = Neg(placeholder_1:0) {_engine_name = "B"} -> (f32[2])
      placeholder_1 = PlaceHolder() {_engine_name = "B", _peer_node = "a", _peer_port = 0, peer_index = 1} -> (f32[2])
      end_3 = End(b:0) {_engine_name = "B", _peer_node = "b", _peer_port = 0, peer_index = 3}
      end_4 = End() ^b {_control = true, _engine_name = "B", _peer_node = "b", _peer_port = -1, peer_index = 4}
    }
    graph main/A_3 {
      c = Add(placeholder_2:0, placeholder_3:0) {_engine_name = "A"} -> (f32[2])
      d = Exp(c:0) ^placeholder_4 {_engine_name = "A"} -> (f32[2])
      placeholder_2 = PlaceHolder() {_engine_name = "A", _peer_node = "a", _peer_port = 0, peer_index = 2} -> (f32[2])
      placeholder_3 = PlaceHolder() {_engine_name = "A", _peer_node = "b", _peer_port = 0, peer_index = 3} -> (f32[2])
      placeholder_4 = PlaceHolder() {_control = true, _engine_name = "A", _peer_node = "b", _peer_port = -1, peer_index = 4}
      end_5 = End(d:0) {_engine_name = "A", _peer_node = "d", _peer_port = 0, peer_index = 5}
    }
    graph main/ge_local_4 {
      out = NetOutput(placeholder_5:0, placeholder_6:0) {_engine_name = "ge_local"}
      placeholder_5 = PlaceHolder() {_engine_name = "ge_local", _peer_node = "d", _peer_port = 0, peer_index = 5} -> (f32[2])
      placeholder_6 = PlaceHolder() {_engine_name = "ge_local", _peer_node = "a", _peer_port = 0, peer_index = 6} -> (f32[2])
    }
  )"));
  // Merging back without optimizers gives the original graph exactly.
  ASSERT_TRUE(partitioner.MergeAfterSubGraphOptimization(*part).ok());
  std::string diff;
  EXPECT_TRUE(ir::GraphsEqual(*g, *MustParse(kThreeEngines), &diff)) << diff << ir::PrintGraph(*g);
  EXPECT_TRUE(ir::VerifyGraph(*g).ok());
}

TEST_F(EnginePartitionerTest, StreamLabelsKeepClustersApart) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {_engine_name = "A", index = 0} -> (f32[2])
      a = Relu(x:0) {_engine_name = "A"} -> (f32[2])
      b = Neg(a:0) {_engine_name = "A", _stream_label = "s1"} -> (f32[2])
      c = Exp(b:0) {_engine_name = "A", _stream_label = "s1"} -> (f32[2])
      out = NetOutput(c:0) {_engine_name = "A"}
    }
  )");
  EnginePartitioner partitioner(registry_, nullptr);
  auto part = partitioner.Split(*g, EnginePartitionMode::kAtomic);
  ASSERT_TRUE(part.ok());
  ASSERT_EQ(part->subgraphs.size(), 3u);
  EXPECT_EQ(part->subgraphs[0].stream_label, "");
  EXPECT_EQ(part->subgraphs[1].stream_label, "s1");
  EXPECT_EQ(part->subgraphs[1].graph->num_nodes(), 4u);  // b, c, a PlaceHolder and an End
  ASSERT_TRUE(partitioner.MergeAfterSubGraphOptimization(*part).ok());
}

TEST_F(EnginePartitionerTest, CompositeModeGroupsAtomicEnginesOfOneComposite) {
  Add("FUSED", /*atomic=*/false);
  Add("A", true, "FUSED");
  Add("B", true, "FUSED");
  auto g = MustParse(kThreeEngines);
  EnginePartitioner partitioner(registry_, nullptr);
  EXPECT_EQ(partitioner.EngineKey(*g->FindNode("a"), EnginePartitionMode::kComposite), "FUSED");
  EXPECT_EQ(partitioner.EngineKey(*g->FindNode("a"), EnginePartitionMode::kAtomic), "A");
  EXPECT_EQ(partitioner.EngineKey(*g->FindNode("x"), EnginePartitionMode::kComposite), "ge_local");
  auto part = partitioner.Split(*g, EnginePartitionMode::kComposite);
  ASSERT_TRUE(part.ok());
  // a, b, c, d all belong to FUSED and merge into one subgraph.
  ASSERT_EQ(part->subgraphs.size(), 3u);
  EXPECT_EQ(part->subgraphs[1].engine, "FUSED");
  ASSERT_TRUE(partitioner.MergeAfterSubGraphOptimization(*part).ok());
  // An excluded composite is not used as a key.
  EnginePartitioner excluding(registry_, nullptr, {"FUSED"});
  EXPECT_EQ(excluding.EngineKey(*g->FindNode("a"), EnginePartitionMode::kComposite), "A");
}

TEST_F(EnginePartitionerTest, RunsOptimizersAndMergesTheirChanges) {
  Add("FUSED", /*atomic=*/false, "", std::make_unique<RemoveIdentity>());
  Add("A", true, "FUSED", std::make_unique<InsertIdentity>());
  Add("B", true, "FUSED");
  auto g = MustParse(kThreeEngines);
  EnginePartitioner partitioner(registry_, &pool_);
  EXPECT_TRUE(partitioner.HasWork(*g, EnginePartitionMode::kAtomic));
  auto changed = partitioner.Run(*g, EnginePartitionMode::kAtomic);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(ir::VerifyGraph(*g).ok()) << ir::VerifyGraph(*g);
  // Inside A's subgraph a fed only End nodes; they now read the Identity,
  // and after the merge so do a's consumers in the other subgraphs.
  EXPECT_NE(g->FindNode("a/id"), nullptr) << ir::PrintGraph(*g);
  EXPECT_EQ(g->FindNode("b")->input(0).node->name(), "a/id");
  EXPECT_EQ(g->FindNode("out")->input(1).node->name(), "a/id");
  // The composite pass removes the Identity again.
  auto removed = partitioner.Run(*g, EnginePartitionMode::kComposite);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_TRUE(*removed);
  EXPECT_EQ(g->FindNode("a/id"), nullptr);
  std::string diff;
  EXPECT_TRUE(ir::GraphsEqual(*g, *MustParse(kThreeEngines), &diff)) << diff << ir::PrintGraph(*g);
}

TEST_F(EnginePartitionerTest, SkipsGraphsWithoutOptimizers) {
  Add("A");
  Add("B");
  auto g = MustParse(kThreeEngines);
  EnginePartitioner partitioner(registry_, nullptr);
  EXPECT_FALSE(partitioner.HasWork(*g, EnginePartitionMode::kAtomic));
  auto changed = partitioner.Run(*g, EnginePartitionMode::kAtomic);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

// A graph where no node of the engine is one its optimizer may rewrite is
// not split at all (the optimizer, which would fail, is never called); one
// such node is enough to split it.
TEST_F(EnginePartitionerTest, SkipsGraphsNoOptimizerMayChange) {
  Add("A", true, "", std::make_unique<FailingAt>("Sigmoid"));
  Add("B", true, "", std::make_unique<FailingAt>("Relu"));  // A's Relu is not B's
  auto g = MustParse(kThreeEngines);
  EnginePartitioner partitioner(registry_, &pool_);
  EXPECT_FALSE(partitioner.HasWork(*g, EnginePartitionMode::kAtomic));
  auto changed = partitioner.Run(*g, EnginePartitionMode::kAtomic);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  std::string diff;
  EXPECT_TRUE(ir::GraphsEqual(*g, *MustParse(kThreeEngines), &diff)) << diff;
  auto with_anchor = MustParse(absl::StrReplaceAll(kThreeEngines, {{"Exp(c:0)", "Sigmoid(c:0)"}}));
  EXPECT_TRUE(partitioner.HasWork(*with_anchor, EnginePartitionMode::kAtomic));
  EXPECT_FALSE(partitioner.Run(*with_anchor, EnginePartitionMode::kAtomic).ok());
}

TEST_F(EnginePartitionerTest, ReportsOptimizerErrorsAndLostPairs) {
  Add("A", true, "", std::make_unique<Failing>());
  Add("B");
  auto g = MustParse(kThreeEngines);
  EnginePartitioner partitioner(registry_, &pool_);
  auto failed = partitioner.Run(*g, EnginePartitionMode::kAtomic);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(std::string(failed.status().message()).find("engine 'A' optimizer 'Failing' on subgraph 'main/A_1': boom"),
            std::string::npos)
      << failed.status();
  // The graph was merged back all the same.
  EXPECT_TRUE(ir::VerifyGraph(*g).ok());
  EXPECT_EQ(g->num_nodes(), 6u);

  engine::EngineRegistry dropping;
  auto e = std::make_unique<DelegatingEngine>("B", 1, Any, BuiltEngines().Find("host_cpu"));
  e->AddOptimizer(std::make_unique<DropPlaceHolders>());
  ASSERT_TRUE(dropping.AddEngine(std::move(e), {}).ok());
  auto h = MustParse(kThreeEngines);
  auto lost = EnginePartitioner(dropping, nullptr).Run(*h, EnginePartitionMode::kAtomic);
  ASSERT_FALSE(lost.ok());
  EXPECT_NE(std::string(lost.status().message()).find("removed the PlaceHolder of boundary pair 1"), std::string::npos)
      << lost.status();
}

// ---- Property test ----

// Whether the subgraphs of `part`, linked End -> PlaceHolder, form a DAG.
bool SubgraphsAcyclic(const EnginePartition& part) {
  const int n = static_cast<int>(part.subgraphs.size());
  std::vector<int> end_sub(part.num_pairs, -1);
  std::vector<int> ph_sub(part.num_pairs, -1);
  for (int i = 0; i < n; ++i) {
    part.subgraphs[i].graph->ForEachNode([&](ir::Node* node) {
      const int64_t id = node->op_desc().GetAttrOr<int64_t>("peer_index", -1);
      if (node->type() == "End") end_sub[id] = i;
      if (node->type() == "PlaceHolder") ph_sub[id] = i;
    });
  }
  std::vector<std::set<int>> out(n);
  std::vector<int> indegree(n, 0);
  for (int p = 0; p < part.num_pairs; ++p) {
    if (end_sub[p] < 0 || ph_sub[p] < 0) return false;
    if (out[end_sub[p]].insert(ph_sub[p]).second) ++indegree[ph_sub[p]];
  }
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push_back(i);
  }
  int seen = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    ++seen;
    for (int j : out[i]) {
      if (--indegree[j] == 0) ready.push_back(j);
    }
  }
  return seen == n;
}

TEST(EnginePartitionPropertyTest, RandomEngineSupportKeepsMeaning) {
  std::mt19937 rng(31337);
  const engine::Engine* host = BuiltEngines().Find("host_cpu");
  const engine::Engine* local = BuiltEngines().Find("ge_local");
  ASSERT_NE(host, nullptr);
  ASSERT_NE(local, nullptr);
  ThreadPool pool(2, "engine-property");
  const std::vector<std::string> ops = {"Relu", "Neg", "Sigmoid", "Tanh", "Abs", "Add", "Mul", "Sub"};
  int changed_graphs = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const std::string context = "trial " + std::to_string(trial);
    engine::EngineRegistry registry;
    auto structural = [](const ir::Node& n) {
      return n.type() == "Data" || n.type() == "NetOutput" || n.type() == "Const" || n.type() == "NoOp";
    };
    ASSERT_TRUE(registry.AddEngine(std::make_unique<DelegatingEngine>("ge_local", 9, structural, local), {}).ok());
    ASSERT_TRUE(registry.AddEngine(std::make_unique<DelegatingEngine>("host_cpu", 10, Any, host), {}).ok());
    auto fused = std::make_unique<DelegatingEngine>("FUSED", 0, Any, host, /*atomic=*/false);
    fused->AddOptimizer(std::make_unique<RemoveIdentity>());
    ASSERT_TRUE(registry.AddEngine(std::move(fused), {}).ok());
    for (const char* name : {"A", "B", "C"}) {
      auto supported = std::make_shared<std::set<std::string>>();
      for (const std::string& op : ops) {
        if (rng() % 2) supported->insert(op);
      }
      auto e = std::make_unique<DelegatingEngine>(
          name, 1 + static_cast<int>(rng() % 3), [supported](const ir::Node& n) { return supported->count(n.type()) > 0; },
          host, /*atomic=*/true, rng() % 2 ? "FUSED" : "");
      if (rng() % 2) e->AddOptimizer(std::make_unique<InsertIdentity>());
      ASSERT_TRUE(registry.AddEngine(std::move(e), {}).ok());
    }
    testing::RandomGraphSpec spec;
    spec.engine = "";
    spec.dynamic_probability = 0;
    spec.control_probability = 0.1;
    auto original = testing::RandomGraph(rng, spec);
    original->ForEachNode([&](ir::Node* n) {
      if (rng() % 8 == 0) n->mutable_op_desc().SetAttr("_stream_label", std::string(rng() % 2 ? "s1" : "s2"));
    });
    compiler::CompileOptions options;
    compiler::EnginePlacer placer(registry, options, nullptr);
    ASSERT_TRUE(placer.Run(*original).ok()) << context;
    auto g = original->Clone();
    EnginePartitioner partitioner(registry, &pool);
    bool changed = false;
    for (auto mode : {EnginePartitionMode::kComposite, EnginePartitionMode::kAtomic}) {
      const size_t before = g->num_nodes();
      auto part = partitioner.Split(*g, mode);
      ASSERT_TRUE(part.ok()) << context << ": " << part.status();
      ASSERT_EQ(g->num_nodes(), 0u) << context;
      // Every node lands in exactly one subgraph, and the subgraphs form a DAG.
      size_t placed = 0;
      StringSet names;
      for (const EngineSubgraph& sub : part->subgraphs) {
        sub.graph->ForEachNode([&](ir::Node* n) {
          if (n->type() == "End" || n->type() == "PlaceHolder") return;
          ++placed;
          EXPECT_TRUE(names.insert(n->name()).second) << context << ": " << n->name() << " twice";
          EXPECT_EQ(partitioner.EngineKey(*n, mode), sub.engine) << context << ": " << n->name();
        });
      }
      ASSERT_EQ(placed, before) << context;
      ASSERT_TRUE(SubgraphsAcyclic(*part)) << context;
      std::vector<EngineSubgraph*> optimizable;
      for (EngineSubgraph& sub : part->subgraphs) {
        const auto* attrs = registry.FindAttributes(sub.engine);
        if (attrs != nullptr && attrs->atomic == (mode == EnginePartitionMode::kAtomic)) optimizable.push_back(&sub);
      }
      auto opt = partitioner.OptimizeSubgraphs(optimizable);
      ASSERT_TRUE(opt.ok()) << context << ": " << opt.status();
      changed = changed || *opt;
      ASSERT_TRUE(partitioner.MergeAfterSubGraphOptimization(*part).ok()) << context;
      ASSERT_TRUE(ir::VerifyGraph(*g).ok()) << context << ": " << ir::VerifyGraph(*g);
    }
    changed_graphs += changed;
    std::vector<Value> inputs = testing::RandomInputs(*original, rng);
    auto expected = testing::Execute(*original, registry, inputs);
    ASSERT_TRUE(expected.ok()) << context << ": " << expected.status();
    auto actual = testing::Execute(*g, registry, inputs);
    ASSERT_TRUE(actual.ok()) << context << ": " << actual.status();
    std::string why;
    ASSERT_TRUE(testing::SameOutputs(*expected, *actual, &why)) << context << ": " << why;
  }
  EXPECT_GT(changed_graphs, 100);  // optimizers really rewrote graphs
}

}  // namespace
}  // namespace ge::partition
