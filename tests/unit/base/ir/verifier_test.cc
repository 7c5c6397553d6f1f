// One case per verifier check, each failing graph built explicitly. Edge
// tables that the Graph API never leaves inconsistent are corrupted through
// the node's private members, opened for this file only.
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/strings.h"
#include "gtest/gtest.h"

#define private public
#include "base/ir/graph.h"
#include "base/ir/node.h"
#undef private

#include "base/ir/op_types.h"
#include "base/ir/verifier.h"
#include "tests/unit/base/ir/ir_test_util.h"

namespace ge::ir {
namespace {

using testing::AddOp;
using testing::F32;
using testing::LeastThreadCpuNanos;
using testing::MustParse;

// Expects `status` to fail with `code` and a message containing `part`.
void ExpectError(const absl::Status& status, absl::StatusCode code, std::string_view part) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_NE(std::string(status.message()).find(part), std::string::npos)
      << "message: " << status.message() << "\nexpected to contain: " << part;
}

// x -> relu -> out, with a Data index and matching types.
std::unique_ptr<Graph> Chain() {
  return MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2,3])
      relu = Relu(x:0) -> (f32[2,3])
      out = NetOutput(relu:0)
    })");
}

TEST(VerifierTest, AcceptsAValidTree) {
  auto g = MustParse(R"(
    graph main {
      p = Data() {index = 1} -> (bool[])
      x = Data() {index = 0} -> (f32[-1,3])
      c = If(p:0, x:0) ^x {then_branch = @then_0} subgraphs(then_0, else_0) -> (f32[?])
      out = NetOutput(c:0)
    }
    graph then_0 parent(main, c) {
      a = Data() {index = 0} -> (f32[2,3])
      o = NetOutput(a:0)
    }
    graph else_0 parent(main, c) {
      a = Data() {index = 0} -> (f32[?])
      n = Neg(a:0) -> (?)
      o = NetOutput(n:0 : f32[4,3])
    })");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  EXPECT_TRUE(VerifyGraph(*g->FindSubgraph("else_0")).ok());
}

TEST(VerifierTest, EmptyNodeName) {
  auto g = Chain();
  g->FindNode("relu")->mutable_op_desc().set_name("");
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument, "empty name");
}

TEST(VerifierTest, DuplicateNodeNames) {
  auto g = Chain();
  g->FindNode("relu")->mutable_op_desc().set_name("x");
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument, "two nodes are named 'x'");
}

TEST(VerifierTest, RenameBehindTheGraphsBack) {
  auto g = Chain();
  g->FindNode("relu")->mutable_op_desc().set_name("r2");
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "'r2' was renamed without Graph::RenameNode");
}

TEST(VerifierTest, OpDescDisagreesWithEdgeTables) {
  auto g = Chain();
  g->FindNode("relu")->mutable_op_desc().AddOutput(IoDesc{"", F32({1})});
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "'relu' has 1 input and 1 output edge slots but its OpDesc describes 1 and 2");
}

TEST(VerifierTest, InputPortOutOfRange) {
  auto g = Chain();
  g->FindNode("out")->inputs_[0].index = 3;
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "input 0 of 'out' names port 'relu':3, but 'relu' has 1 outputs");
}

TEST(VerifierTest, ConsumerTableMissesAnInput) {
  auto g = Chain();
  g->FindNode("relu")->outputs_[0].clear();
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "input 0 of 'out' is fed by 'relu':0, whose consumer table does not list it");
}

TEST(VerifierTest, ConsumerListedTwice) {
  auto g = Chain();
  Node* relu = g->FindNode("relu");
  relu->outputs_[0].push_back(relu->outputs_[0][0]);
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "output 'relu':0 lists consumer 'out':0 twice");
}

TEST(VerifierTest, ConsumerNotFedByTheProducer) {
  auto g = Chain();
  Node* x = g->FindNode("x");
  x->outputs_[0].push_back(InPort{g->FindNode("out"), 0});
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "output 'x':0 lists consumer 'out':0, which is not fed by it");
  x->outputs_[0].back() = InPort{g->FindNode("out"), 7};
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "lists consumer 'out':7, which is not fed by it");
}

TEST(VerifierTest, DanglingInputFromAnotherGraph) {
  auto g = Chain();
  Graph other("other");
  ASSERT_TRUE(g->MoveNodeTo(g->FindNode("x"), &other).ok());
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "input 0 of 'relu' is fed by 'x' of graph 'other' (dangling cross-graph edge)");
}

TEST(VerifierTest, DanglingConsumerInAnotherGraph) {
  auto g = Chain();
  Graph other("other");
  ASSERT_TRUE(g->MoveNodeTo(g->FindNode("out"), &other).ok());
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "output 'relu':0 feeds 'out' of graph 'other' (dangling cross-graph edge)");
  ExpectError(VerifyGraph(other), absl::StatusCode::kFailedPrecondition,
              "graph 'other': input 0 of 'out' is fed by 'relu' of graph 'main'");
}

TEST(VerifierTest, ControlEdgeToAnotherGraph) {
  auto g = Chain();
  Node* keep = AddOp(*g, "keep", "NoOp", 0, {});
  ASSERT_TRUE(g->AddControlEdge(g->FindNode("relu"), keep).ok());
  Graph other("other");
  ASSERT_TRUE(g->MoveNodeTo(keep, &other).ok());
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "control output of 'relu' is 'keep' of graph 'other'");
}

TEST(VerifierTest, ControlEdgeRecordedOnOneSideOnly) {
  auto g = Chain();
  Node* x = g->FindNode("x");
  Node* out = g->FindNode("out");
  x->control_outputs_.push_back(out);
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "'x' lists control output 'out', whose control inputs do not list it");
  x->control_outputs_.clear();
  out->control_inputs_.push_back(x);
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "'out' lists control input 'x', whose control outputs do not list it");
  x->control_outputs_ = {out, out};
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "control edge 'x' -> 'out' is listed twice");
}

TEST(VerifierTest, CycleThroughDataEdgesNamesItsNodes) {
  Graph g("g");
  Node* t = AddOp(g, "t", "X", 0);
  Node* a = AddOp(g, "a", "Add", 2);
  Node* b = AddOp(g, "b", "Relu", 1);
  Node* c = AddOp(g, "c", "Relu", 1);
  Node* d = AddOp(g, "d", "Relu", 1);
  ASSERT_TRUE(g.AddEdge(t, 0, a, 0).ok());
  ASSERT_TRUE(g.AddEdge(a, 0, b, 0).ok());
  ASSERT_TRUE(g.AddEdge(b, 0, c, 0).ok());
  ASSERT_TRUE(g.AddEdge(c, 0, a, 1).ok());
  ASSERT_TRUE(g.AddEdge(c, 0, d, 0).ok());
  absl::Status s = VerifyGraph(g);
  ExpectError(s, absl::StatusCode::kFailedPrecondition,
              "graph 'g' has a cycle of 3 nodes: 'a' -> 'b' -> 'c' -> 'a'");
  EXPECT_EQ(std::string(s.message()).find("'t'"), std::string::npos);
  EXPECT_EQ(std::string(s.message()).find("'d'"), std::string::npos);
}

TEST(VerifierTest, CycleThroughAControlEdge) {
  auto g = Chain();
  ASSERT_TRUE(g->AddControlEdge(g->FindNode("out"), g->FindNode("x")).ok());
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "cycle of 3 nodes: 'x' -> 'relu' -> 'out' -> 'x'");
}

TEST(VerifierTest, SelfLoop) {
  Graph g("g");
  Node* a = AddOp(g, "a", "Relu", 1);
  ASSERT_TRUE(g.AddEdge(a, 0, a, 0).ok());
  ExpectError(VerifyGraph(g), absl::StatusCode::kFailedPrecondition,
              "cycle of 1 nodes: 'a' -> 'a'");
}

TEST(VerifierTest, LongCyclesAreShortened) {
  Graph g("g");
  std::vector<Node*> ring;
  for (int i = 0; i < 100; ++i) ring.push_back(AddOp(g, StrCat("n", i), "Relu", 1));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(g.AddEdge(ring[i], 0, ring[(i + 1) % 100], 0).ok());
  ExpectError(VerifyGraph(g), absl::StatusCode::kFailedPrecondition, "cycle of 100 nodes");
  ExpectError(VerifyGraph(g), absl::StatusCode::kFailedPrecondition, "-> ... -> ");
}

TEST(VerifierTest, TypeMismatchAlongAnEdge) {
  struct Case {
    const char* producer;
    const char* consumer;
    const char* why;
  };
  const Case cases[] = {
      {"f32[2,3]", "seq<f32[2,3]>", "kinds differ"},
      {"f32[2,3]", "i64[2,3]", "dtypes differ"},
      {"f32[2,3]", "f32[2,3,1]", "ranks differ"},
      {"f32[2,3]", "f32[2,4]", "dim 1 differs"},
      {"seq<f32[2]>", "seq<f16[2]>", "dtypes differ"},
      {"opt<f32[2]>", "seq<f32[2]>", "kinds differ"},
  };
  for (const Case& c : cases) {
    auto g = MustParse(StrCat("graph g {\n a = Data() {index = 0} -> (", c.producer,
                              ")\n out = NetOutput(a:0 : ", c.consumer, ")\n}"));
    ASSERT_NE(g, nullptr);
    ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument,
                StrCat("edge 'a':0 -> 'out':0 (NetOutput): producer type ", c.producer,
                       " does not match input type ", c.consumer, " (", c.why, ")"));
  }
}

TEST(VerifierTest, TypesCompatibleWhereUnknown) {
  const std::pair<const char*, const char*> ok[] = {
      {"f32[2,3]", "f32[-1,3]"},     {"f32[-1,-1]", "f32[2,3]"},
      {"f32[2,3]", "f32[?]"},        {"f32[?]", "f32[]"},
      {"?", "seq<i64[1]>"},          {"?[5]", "f32[2]"},
      {"f32[1,3]@NCHW", "f32[1,3]"}, {"opt<seq<f32[-1]>>", "opt<seq<f32[4]>>"}};
  for (const auto& [a, b] : ok) {
    auto ta = ParseValueType(a);
    auto tb = ParseValueType(b);
    ASSERT_TRUE(ta.ok() && tb.ok()) << a << " " << b;
    std::string why;
    EXPECT_TRUE(TypesCompatible(*ta, *tb, &why)) << a << " vs " << b << ": " << why;
  }
}

TEST(VerifierTest, TwoNetOutputs) {
  auto g = Chain();
  AddOp(*g, "out2", "NetOutput", 0, {});
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument,
              "graph 'main' has two NetOutput nodes: 'out' and 'out2'");
}

TEST(VerifierTest, DataIndicesMustBeUniqueAndDense) {
  auto g = Chain();
  Node* y = AddOp(*g, "y", "Data", 0, {F32({1})});
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument,
              "Data node 'y' has no integer 'index' attribute");
  y->mutable_op_desc().SetAttr(kAttrIndex, AttrValue(1.0f));
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument,
              "Data node 'y' has no integer 'index' attribute");
  y->mutable_op_desc().SetAttr(kAttrIndex, AttrValue(int64_t{2}));
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument,
              "Data node 'y' has index 2, outside 0..1");
  y->mutable_op_desc().SetAttr(kAttrIndex, AttrValue(int64_t{-1}));
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument, "has index -1");
  y->mutable_op_desc().SetAttr(kAttrIndex, AttrValue(int64_t{0}));
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument,
              "Data nodes 'x' and 'y' both have index 0");
  y->mutable_op_desc().SetAttr(kAttrIndex, AttrValue(int64_t{1}));
  EXPECT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
}

// main has node c owning sub; sub is otherwise empty.
std::unique_ptr<Graph> OwnerAndSub() {
  return MustParse(R"(
    graph main {
      c = PartitionedCall() subgraphs(sub)
      d = PartitionedCall()
    }
    graph sub parent(main, c) {
    })");
}

TEST(VerifierTest, SubgraphNameMustResolve) {
  auto g = OwnerAndSub();
  g->FindNode("d")->mutable_op_desc().mutable_subgraph_names().push_back("nowhere");
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "node 'd' in graph 'main' names subgraph 'nowhere', which is not in the tree");
}

TEST(VerifierTest, SubgraphParentMustPointBack) {
  auto g = OwnerAndSub();
  Graph* sub = g->FindSubgraph("sub");
  sub->SetParent(g.get(), g->FindNode("d"));
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "subgraph 'sub' is owned by 'c' in graph 'main' but records parent node 'd'");
}

TEST(VerifierTest, SubgraphOwnedTwice) {
  auto g = OwnerAndSub();
  g->FindNode("d")->mutable_op_desc().mutable_subgraph_names().push_back("sub");
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "subgraph 'sub' is owned by both 'c' in graph 'main' and 'd' in graph 'main'");
}

TEST(VerifierTest, SubgraphOwnedByNobody) {
  auto g = OwnerAndSub();
  g->FindNode("c")->mutable_op_desc().mutable_subgraph_names().clear();
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "subgraph 'sub' of 'main' is not owned by any node");
}

TEST(VerifierTest, SubgraphsOwningEachOtherAreUnreachable) {
  auto g = MustParse(R"(
    graph main {
    }
    graph a parent(b, nb) {
      na = PartitionedCall() subgraphs(b)
    }
    graph b parent(main, _) {
      nb = PartitionedCall() subgraphs(a)
    })");
  ASSERT_NE(g, nullptr);
  // b claims main as parent graph; point it at a to close the loop.
  Graph* a = g->FindSubgraph("a");
  g->FindSubgraph("b")->SetParent(a, a->FindNode("na"));
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "is not reachable from the root graph (ownership loop)");
}

TEST(VerifierTest, GraphRefAttributesMustResolve) {
  auto g = OwnerAndSub();
  g->FindNode("d")->mutable_op_desc().SetAttr("body", AttrValue(GraphRef{"gone"}));
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition,
              "attribute 'body' of node 'd' in graph 'main' refers to graph 'gone'");
  g->FindNode("d")->mutable_op_desc().SetAttr(
      "body", AttrValue(std::vector<GraphRef>{GraphRef{"sub"}, GraphRef{"gone2"}}));
  ExpectError(VerifyGraph(*g), absl::StatusCode::kFailedPrecondition, "graph 'gone2'");
}

TEST(VerifierTest, SubgraphsAreCheckedToo) {
  auto g = OwnerAndSub();
  Graph* sub = g->FindSubgraph("sub");
  AddOp(*sub, "o1", "NetOutput", 0, {});
  AddOp(*sub, "o2", "NetOutput", 0, {});
  ExpectError(VerifyGraph(*g), absl::StatusCode::kInvalidArgument,
              "graph 'sub' has two NetOutput nodes");
  ExpectError(VerifyGraph(*sub), absl::StatusCode::kInvalidArgument,
              "graph 'sub' has two NetOutput nodes");
}

TEST(VerifierTest, ANonRootGraphChecksItsOwnReferences) {
  auto g = OwnerAndSub();
  Graph* sub = g->FindSubgraph("sub");
  AddOp(*sub, "n", "If", 0, {})->mutable_op_desc().mutable_subgraph_names().push_back("x");
  ExpectError(VerifyGraph(*sub), absl::StatusCode::kFailedPrecondition,
              "names subgraph 'x', which is not in the tree of 'main'");
}

TEST(VerifierTest, GraphsWithSparseIdsAreIndexedToo) {
  // After many removals the ids are far apart; the verifier hashes them.
  Graph g("g");
  std::vector<Node*> nodes;
  for (int i = 0; i < 5000; ++i) nodes.push_back(AddOp(g, StrCat("n", i), "Relu", 1));
  for (int i = 1; i < 4999; ++i) g.RemoveNode(nodes[i]);
  ASSERT_TRUE(g.AddEdge(nodes[0], 0, nodes[4999], 0).ok());
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  // Moved out, n0 gets id 4999 in `other`, the id n4999 has here: the
  // lookup by id must still see that it is foreign.
  Graph other("other");
  for (int i = 0; i < 4999; ++i) AddOp(other, StrCat("o", i), "X", 0);
  ASSERT_TRUE(g.MoveNodeTo(nodes[0], &other).ok());
  ASSERT_EQ(nodes[0]->id(), nodes[4999]->id());
  ExpectError(VerifyGraph(g), absl::StatusCode::kFailedPrecondition,
              "input 0 of 'n4999' is fed by 'n0' of graph 'other'");
}

// A chain of `nodes` Adds fed by one hub, with control edges from it.
void BuildHubChain(Graph& g, int nodes) {
  Node* hub = AddOp(g, "hub", "Const", 0, {F32({4})});
  Node* prev = hub;
  for (int i = 0; i < nodes; ++i) {
    Node* n = AddOp(g, StrCat("n", i), "Add", 2, {F32({4})}, {F32({4}), F32({4})});
    ASSERT_TRUE(g.AddEdge(prev, 0, n, 0).ok());
    ASSERT_TRUE(g.AddEdge(hub, 0, n, 1).ok());
    if (i % 7 == 0) {
      ASSERT_TRUE(g.AddControlEdge(hub, n).ok());
    }
    prev = n;
  }
}

// This thread's CPU time for one VerifyGraph, the least of three.
int64_t VerifyCpuNanos(const Graph& g) {
  return LeastThreadCpuNanos(3, [&] {
    absl::Status s = VerifyGraph(g);
    EXPECT_TRUE(s.ok()) << s;
  });
}

TEST(VerifierTest, LargeGraphsVerifyInLinearTime) {
  // The hub fans out to every node: a verifier quadratic in fan-out or in
  // nodes takes 16x the time for 4x the nodes; a linear one about 4x.
  Graph small("small"), big("big");
  BuildHubChain(small, 50000);
  BuildHubChain(big, 200000);
  const int64_t t_small = VerifyCpuNanos(small);
  const int64_t t_big = VerifyCpuNanos(big);
  EXPECT_LT(t_big, 9 * t_small + 2000000)
      << "50k nodes: " << t_small / 1000 << " us, 200k nodes: " << t_big / 1000 << " us";
}

}  // namespace
}  // namespace ge::ir
