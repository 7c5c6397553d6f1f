// Graph mutation, ordering and subgraph ownership.
#include "base/ir/graph.h"

#include <cstdint>
#include <utility>

#include "base/ir/graph_equal.h"
#include "base/ir/op_types.h"
#include "base/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/unit/base/ir/ir_test_util.h"

namespace ge::ir {
namespace {

using testing::AddOp;
using testing::F32;
using testing::LeastThreadCpuNanos;
using testing::MustParse;

std::vector<std::string> Names(const std::vector<Node*>& nodes) {
  std::vector<std::string> out;
  for (const Node* n : nodes) out.push_back(n->name());
  return out;
}

TEST(GraphTest, AddNodeRejectsEmptyAndDuplicateNames) {
  Graph g("g");
  ASSERT_NE(AddOp(g, "a", "Relu", 0), nullptr);
  EXPECT_FALSE(g.AddNode(OpDesc("a", "Relu")).ok());
  EXPECT_FALSE(g.AddNode(OpDesc("", "Relu")).ok());
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.FindNode("a")->type(), "Relu");
  EXPECT_EQ(g.FindNode("b"), nullptr);
}

TEST(GraphTest, IdsIncreaseInInsertionOrder) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0);
  Node* b = AddOp(g, "b", "X", 0);
  EXPECT_LT(a->id(), b->id());
  EXPECT_EQ(Names(g.nodes()), (std::vector<std::string>{"a", "b"}));
}

TEST(GraphTest, EdgesAreRecordedOnBothSides) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0, {F32({2}), F32({3})});
  Node* b = AddOp(g, "b", "Y", 2);
  ASSERT_TRUE(g.AddEdge(a, 1, b, 0).ok());
  ASSERT_TRUE(g.AddEdge(a, 1, b, 1).ok());
  EXPECT_EQ(b->input(0), (OutPort{a, 1}));
  EXPECT_EQ(a->consumers(1).size(), 2u);
  EXPECT_TRUE(a->consumers(0).empty());
  EXPECT_EQ(b->InNodes(), std::vector<Node*>{a});
  EXPECT_EQ(a->OutNodes(), std::vector<Node*>{b});
  EXPECT_TRUE(a->HasConsumers());
  EXPECT_FALSE(b->HasConsumers());
}

TEST(GraphTest, AddEdgeChecksPortsAndSingleProducer) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0);
  Node* b = AddOp(g, "b", "Y", 1);
  EXPECT_FALSE(g.AddEdge(a, 1, b, 0).ok());
  EXPECT_FALSE(g.AddEdge(a, -1, b, 0).ok());
  EXPECT_FALSE(g.AddEdge(a, 0, b, 1).ok());
  ASSERT_TRUE(g.AddEdge(a, 0, b, 0).ok());
  absl::Status again = g.AddEdge(a, 0, b, 0);
  EXPECT_FALSE(again.ok());
  EXPECT_NE(std::string(again.message()).find("already has producer"), std::string::npos);
}

TEST(GraphTest, RemoveInputEdgeAndRemoveNode) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0);
  Node* b = AddOp(g, "b", "Y", 1);
  Node* c = AddOp(g, "c", "Z", 1);
  ASSERT_TRUE(g.AddEdge(a, 0, b, 0).ok());
  ASSERT_TRUE(g.AddEdge(b, 0, c, 0).ok());
  ASSERT_TRUE(g.AddControlEdge(a, c).ok());
  g.RemoveInputEdge(b, 0);
  EXPECT_FALSE(b->input(0));
  EXPECT_TRUE(a->consumers(0).empty());
  g.RemoveInputEdge(b, 0);  // no-op when unconnected
  g.RemoveNode(b);
  EXPECT_EQ(g.FindNode("b"), nullptr);
  EXPECT_FALSE(c->input(0));
  g.RemoveNode(a);
  EXPECT_TRUE(c->control_inputs().empty());
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_TRUE(VerifyGraph(g).ok());
}

TEST(GraphTest, ControlEdges) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0);
  Node* b = AddOp(g, "b", "X", 0);
  ASSERT_TRUE(g.AddControlEdge(a, b).ok());
  ASSERT_TRUE(g.AddControlEdge(a, b).ok());  // already present: no-op
  EXPECT_EQ(a->control_outputs().size(), 1u);
  EXPECT_EQ(b->control_inputs(), std::vector<Node*>{a});
  EXPECT_FALSE(g.AddControlEdge(a, a).ok());
  EXPECT_EQ(b->InNodes(), std::vector<Node*>{a});
  g.RemoveControlEdge(a, b);
  EXPECT_TRUE(a->control_outputs().empty());
  EXPECT_TRUE(b->control_inputs().empty());
}

TEST(GraphTest, ReplaceAllUsesMovesEveryConsumer) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0);
  Node* a2 = AddOp(g, "a2", "X", 0, {ValueType(), ValueType()});
  Node* b = AddOp(g, "b", "Y", 2);
  Node* c = AddOp(g, "c", "Y", 1);
  ASSERT_TRUE(g.AddEdge(a, 0, b, 0).ok());
  ASSERT_TRUE(g.AddEdge(a, 0, b, 1).ok());
  ASSERT_TRUE(g.AddEdge(a, 0, c, 0).ok());
  ASSERT_TRUE(g.ReplaceAllUses(a, 0, a2, 1).ok());
  EXPECT_TRUE(a->consumers(0).empty());
  EXPECT_EQ(a2->consumers(1).size(), 3u);
  EXPECT_EQ(b->input(1), (OutPort{a2, 1}));
  EXPECT_EQ(c->input(0), (OutPort{a2, 1}));
  EXPECT_TRUE(VerifyGraph(g).ok());
  // Bad ports change nothing.
  EXPECT_FALSE(g.ReplaceAllUses(a2, 1, a, 3).ok());
  EXPECT_FALSE(g.ReplaceAllUses(a2, 5, a, 0).ok());
  EXPECT_EQ(a2->consumers(1).size(), 3u);
  // Onto itself: nothing changes.
  ASSERT_TRUE(g.ReplaceAllUses(a2, 1, a2, 1).ok());
  EXPECT_EQ(a2->consumers(1).size(), 3u);
}

// CPU time of moving every use of a node with `fan_out` consumers (back and
// forth between two nodes, the least of four moves).
int64_t ReplaceAllUsesCpuNanos(int fan_out) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0);
  Node* b = AddOp(g, "b", "X", 0);
  for (int i = 0; i < fan_out; ++i) {
    Node* c = AddOp(g, StrCat("c", i), "Y", 1);
    EXPECT_TRUE(g.AddEdge(a, 0, c, 0).ok());
  }
  Node* from = a;
  Node* to = b;
  const int64_t nanos = LeastThreadCpuNanos(4, [&] {
    EXPECT_TRUE(g.ReplaceAllUses(from, 0, to, 0).ok());
    EXPECT_EQ(to->consumers(0).size(), static_cast<size_t>(fan_out));
    EXPECT_TRUE(from->consumers(0).empty());
    std::swap(from, to);
  });
  return nanos;
}

TEST(GraphTest, ReplaceAllUsesIsLinearInFanOut) {
  // 4x the consumers: about 4x the work when linear, 16x when quadratic. A
  // move touches every consumer node, so both sizes are chosen beyond a
  // last-level cache (tens of MiB of nodes): with 50k consumers in cache and
  // 200k out of it, a linear move measured 17x on a 32 MiB L3 host.
  const int64_t t_small = ReplaceAllUsesCpuNanos(200000);
  const int64_t t_big = ReplaceAllUsesCpuNanos(800000);
  EXPECT_LT(t_big, 9 * t_small + 2000000)
      << "200k uses: " << t_small / 1000 << " us, 800k uses: " << t_big / 1000 << " us";
}

TEST(GraphTest, RenameAndUniqueNames) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0);
  AddOp(g, "b", "X", 0);
  EXPECT_EQ(g.UniqueNodeName("c"), "c");
  EXPECT_EQ(g.UniqueNodeName("a"), "a_1");
  EXPECT_FALSE(g.RenameNode(a, "b").ok());
  EXPECT_FALSE(g.RenameNode(a, "").ok());
  ASSERT_TRUE(g.RenameNode(a, "z").ok());
  EXPECT_EQ(g.FindNode("z"), a);
  EXPECT_EQ(g.FindNode("a"), nullptr);
}

TEST(GraphTest, PortsCanBeAddedAndTrimmed) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 0);
  g.AddInputPort(a, IoDesc{"in", F32({1})});
  g.AddOutputPort(a, IoDesc{"out", F32({1})});
  EXPECT_EQ(a->num_inputs(), 1);
  EXPECT_EQ(a->num_outputs(), 2);
  EXPECT_EQ(a->op_desc().input(0).name, "in");
  g.RemoveLastInputPort(a);
  EXPECT_EQ(a->num_inputs(), 0);
  EXPECT_TRUE(VerifyGraph(g).ok());
}

TEST(GraphTest, InputAndOutputNodes) {
  auto g = MustParse(R"(
    graph main {
      b = Data() {index = 1} -> (f32[1])
      a = Data() {index = 0} -> (f32[1])
      s = Add(a:0, b:0) -> (f32[1])
      out = NetOutput(s:0)
    })");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(Names(g->InputNodes()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(g->OutputNode()->name(), "out");
}

TEST(GraphTest, TopologicalOrderFollowsInsertionOrderWhereEdgesAllow) {
  Graph g("g");
  Node* c = AddOp(g, "c", "X", 1);
  Node* a = AddOp(g, "a", "X", 0);
  Node* b = AddOp(g, "b", "X", 0);
  Node* d = AddOp(g, "d", "X", 0);
  ASSERT_TRUE(g.AddEdge(b, 0, c, 0).ok());
  ASSERT_TRUE(g.AddControlEdge(d, a).ok());
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(Names(*order), (std::vector<std::string>{"b", "c", "d", "a"}));
  // Deterministic across calls and across a clone.
  auto copy = g.Clone();
  auto again = copy->TopologicalOrder();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Names(*again), Names(*order));
}

TEST(GraphTest, TopologicalOrderReportsCycles) {
  Graph g("g");
  Node* a = AddOp(g, "a", "X", 1);
  Node* b = AddOp(g, "b", "X", 1);
  AddOp(g, "free", "X", 0);
  ASSERT_TRUE(g.AddEdge(a, 0, b, 0).ok());
  ASSERT_TRUE(g.AddEdge(b, 0, a, 0).ok());
  auto order = g.TopologicalOrder();
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string msg(order.status().message());
  EXPECT_NE(msg.find("a, b"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("free"), std::string::npos) << msg;
}

// A root with an If whose then-branch holds another If.
std::unique_ptr<Graph> NestedIf() {
  return MustParse(R"(
    graph main {
      p = Data() {index = 0} -> (bool[])
      c = If(p:0) subgraphs(then_0, else_0) -> (f32[1])
      out = NetOutput(c:0)
    }
    graph then_0 parent(main, c) {
      q = Const() {value = tensor<bool[]>[true]} -> (bool[])
      inner = If(q:0) subgraphs(deep) -> (f32[1])
      o = NetOutput(inner:0)
    }
    graph else_0 parent(main, c) {
      o = NetOutput()
    }
    graph deep parent(then_0, inner) {
      o = NetOutput()
    })");
}

TEST(GraphTest, SubgraphsAddFindRemove) {
  auto g = NestedIf();
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  EXPECT_EQ(g->subgraphs().size(), 3u);
  Graph* then_0 = g->FindSubgraph("then_0");
  ASSERT_NE(then_0, nullptr);
  EXPECT_FALSE(then_0->is_root());
  EXPECT_EQ(then_0->root(), g.get());
  EXPECT_EQ(then_0->FindSubgraph("deep")->parent_node(), then_0->FindNode("inner"));
  EXPECT_TRUE(then_0->subgraphs().empty());  // the root holds the table

  // Names are unique across the tree.
  Node* c = g->FindNode("c");
  EXPECT_FALSE(g->AddSubgraph(std::make_unique<Graph>("deep"), c).ok());
  EXPECT_FALSE(g->AddSubgraph(std::make_unique<Graph>("main"), c).ok());

  // Removing then_0 removes deep, which its node owns.
  g->RemoveSubgraph("then_0");
  EXPECT_EQ(g->FindSubgraph("then_0"), nullptr);
  EXPECT_EQ(g->FindSubgraph("deep"), nullptr);
  EXPECT_EQ(g->subgraphs().size(), 1u);
  g->RemoveSubgraph("missing");  // no-op
}

TEST(GraphTest, AddSubgraphWithNestedSubgraphsHandsThemToTheRoot) {
  Graph root("root");
  Node* call = AddOp(root, "call", "PartitionedCall", 0, {});
  auto body = std::make_unique<Graph>("body");
  Node* inner = AddOp(*body, "inner", "If", 0, {});
  ASSERT_TRUE(body->AddSubgraph(std::make_unique<Graph>("nested"), inner).ok());
  ASSERT_TRUE(root.AddSubgraph(std::move(body), call).ok());
  EXPECT_EQ(root.subgraphs().size(), 2u);
  Graph* nested = root.FindSubgraph("nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->parent_graph(), root.FindSubgraph("body"));
  EXPECT_EQ(nested->root(), &root);
}

TEST(GraphTest, CloneIsDeepAndEqual) {
  auto g = NestedIf();
  ASSERT_NE(g, nullptr);
  auto copy = g->Clone();
  std::string diff;
  EXPECT_TRUE(GraphsEqual(*g, *copy, &diff)) << diff;
  EXPECT_TRUE(VerifyGraph(*copy).ok()) << VerifyGraph(*copy);
  EXPECT_NE(copy->FindSubgraph("deep"), g->FindSubgraph("deep"));
  copy->FindNode("p")->mutable_op_desc().SetAttr("index", AttrValue(int64_t{5}));
  EXPECT_FALSE(GraphsEqual(*g, *copy, &diff));
  EXPECT_NE(diff.find("index"), std::string::npos) << diff;
}

TEST(GraphTest, MoveNodeToCarriesSubgraphOwnership) {
  auto g = NestedIf();
  ASSERT_NE(g, nullptr);
  Graph* else_0 = g->FindSubgraph("else_0");
  Graph* then_0 = g->FindSubgraph("then_0");
  Node* inner = then_0->FindNode("inner");
  Node* q = then_0->FindNode("q");
  const int64_t old_id = inner->id();
  // The name is taken in the destination.
  Node* o = then_0->FindNode("o");
  EXPECT_FALSE(then_0->MoveNodeTo(o, else_0).ok());
  // q and inner move together; NetOutput 'o' of then_0 now dangles.
  ASSERT_TRUE(then_0->MoveNodeTo(q, else_0).ok());
  ASSERT_TRUE(then_0->MoveNodeTo(inner, else_0).ok());
  EXPECT_EQ(inner->owner_graph(), else_0);
  EXPECT_EQ(then_0->FindNode("inner"), nullptr);
  EXPECT_EQ(else_0->FindNode("inner"), inner);
  EXPECT_NE(inner->id(), old_id);
  EXPECT_EQ(g->FindSubgraph("deep")->parent_graph(), else_0);
  EXPECT_EQ(inner->input(0).node, q);  // moved along: still valid
  absl::Status s = VerifyGraph(*g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("dangling"), std::string::npos) << s;
  then_0->RemoveNode(o);
  EXPECT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
}

TEST(GraphTest, CloneWorksWhenASubgraphPrecedesItsParent) {
  // c's subgraph (sub_c) is created before d's (sub_d); moving c into sub_d
  // makes sub_c a child of a later subgraph.
  auto g = MustParse(R"(
    graph main {
      c = Case() subgraphs(sub_c)
      d = PartitionedCall() subgraphs(sub_d)
    }
    graph sub_c parent(main, c) {
    }
    graph sub_d parent(main, d) {
    })");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->MoveNodeTo(g->FindNode("c"), g->FindSubgraph("sub_d")).ok());
  ASSERT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  auto copy = g->Clone();
  std::string diff;
  EXPECT_TRUE(GraphsEqual(*g, *copy, &diff)) << diff;
  EXPECT_TRUE(VerifyGraph(*copy).ok()) << VerifyGraph(*copy);
  // The text form also reads back a subgraph printed before its parent.
  auto reparsed = ParseGraph(PrintGraph(*g));
  ASSERT_TRUE(reparsed.ok()) << reparsed.status();
  EXPECT_TRUE(GraphsEqual(*g, **reparsed, &diff)) << diff;
}

}  // namespace
}  // namespace ge::ir
