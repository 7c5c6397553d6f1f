// The subgraph API: breadth-first growth with ContainOpSelector (text in,
// text out), a cycle-forming candidate set split into valid pieces, a
// stateful selector with Filter and Reset, CreateSubgraphNode
// customization, and the backend registry with several backends in one run.
#include "compiler/partition/subgraph_partitioner.h"

#include "base/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/partition_test_util.h"

namespace ge::partition {
namespace {

using testing::Dedent;
using testing::MustParse;

std::string Select(std::string_view text, const SubgraphProperty& property, int* splits = nullptr) {
  auto g = MustParse(text);
  SubgraphPartitioner partitioner(property);
  auto made = partitioner.Partition(*g);
  EXPECT_TRUE(made.ok()) << made.status();
  EXPECT_TRUE(ir::VerifyGraph(*g).ok()) << ir::VerifyGraph(*g);
  if (splits != nullptr) *splits = partitioner.split_sets();
  return ir::PrintGraph(*g);
}

TEST(SubgraphPartitionerTest, GrowsRegionsOfSelectedOps) {
  ContainOpProperty property("act", {"Relu", "Neg"});
  EXPECT_EQ(Select(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) -> (f32[2])
      b = Neg(a:0) -> (f32[2])
      c = Exp(b:0) -> (f32[2])
      d = Relu(c:0) -> (f32[2])
      out = NetOutput(d:0)
    }
  )",
                property),
            Dedent(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      c = Exp(act_0:0) -> (f32[2])
      out = NetOutput(act_1:0)
      act_0 = PartitionedCall(x:0) {_partitioned_by = "SubgraphPartitioner"} subgraphs(main_act_0) -> (f32[2])
      act_1 = PartitionedCall(c:0) {_partitioned_by = "SubgraphPartitioner"} subgraphs(main_act_1) -> (f32[2])
    }

    graph main_act_0 parent(main, act_0) {
      a = Relu(act_0/in0:0) -> (f32[2])
      b = Neg(a:0) -> (f32[2])
      act_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      act_0/out = InnerNetOutput(b:0)
    }

    graph main_act_1 parent(main, act_1) {
      d = Relu(act_1/in0:0) -> (f32[2])
      act_1/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      act_1/out = InnerNetOutput(d:0)
    }
  )"));
}

TEST(SubgraphPartitionerTest, SplitsACycleFormingSetIntoValidPieces) {
  // {a, c} are adjacent, but a -> b -> c leaves the set and comes back:
  // contracting {a, c} would close a cycle through b. They become two
  // subgraphs instead of a retry.
  ContainOpProperty property("act", {"Relu"});
  int splits = 0;
  EXPECT_EQ(Select(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) -> (f32[2])
      b = Exp(a:0) -> (f32[2])
      c = Relu(a:0, b:0) -> (f32[2])
      out = NetOutput(c:0)
    }
  )",
                property, &splits),
            Dedent(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      b = Exp(act_0:0) -> (f32[2])
      out = NetOutput(act_1:0)
      act_0 = PartitionedCall(x:0) {_partitioned_by = "SubgraphPartitioner"} subgraphs(main_act_0) -> (f32[2])
      act_1 = PartitionedCall(act_0:0, b:0) {_partitioned_by = "SubgraphPartitioner"} subgraphs(main_act_1) -> (f32[2])
    }

    graph main_act_0 parent(main, act_0) {
      a = Relu(act_0/in0:0) -> (f32[2])
      act_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      act_0/out = InnerNetOutput(a:0)
    }

    graph main_act_1 parent(main, act_1) {
      c = Relu(act_1/in0:0, act_1/in1:0) -> (f32[2])
      act_1/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      act_1/in1 = InnerData() {_parent_index = 1} -> (f32[2])
      act_1/out = InnerNetOutput(c:0)
    }
  )"));
  EXPECT_EQ(splits, 1);
}

// At most `limit` nodes per subgraph: state kept across one growth, reset
// for the next; Filter drops Exp nodes the growth let in.
class CountingSelector final : public SubgraphSelector {
 public:
  explicit CountingSelector(int limit) : limit_(limit) {}
  bool Select(const ir::Node& node) override { return Take(node); }
  bool SelectInput(const ir::Node&, const ir::Node& input) override { return Take(input); }
  bool SelectOutput(const ir::Node&, const ir::Node& output) override { return Take(output); }
  std::vector<ir::Node*> Filter(const std::vector<ir::Node*>& candidates) override {
    std::vector<ir::Node*> kept;
    for (ir::Node* n : candidates) {
      if (n->type() != "Exp") kept.push_back(n);
    }
    return kept;
  }
  void Reset() override {
    taken_ = 0;
    ++resets_;
  }
  int resets() const { return resets_; }

 private:
  bool Take(const ir::Node&) { return taken_ < limit_ && ++taken_ > 0; }
  int limit_;
  int taken_ = 0;
  int resets_ = 0;
};

class CountingProperty final : public SubgraphProperty {
 public:
  std::string_view name() const override { return "pair"; }
  std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<CountingSelector>(2);
  }
  // Turns each subgraph into a "FusedPair" node placed on a made-up engine.
  absl::Status CreateSubgraphNode(ir::Graph&, ir::Node& call, ir::Graph& subgraph, int id) const override {
    call.mutable_op_desc().set_type("FusedPair");
    call.mutable_op_desc().SetAttr("_engine_name", std::string("fuser"));
    call.mutable_op_desc().SetAttr("pair_id", static_cast<int64_t>(id));
    subgraph.mutable_attrs()["fused"] = true;
    return absl::OkStatus();
  }
};

TEST(SubgraphPartitionerTest, StatefulSelectorFilterAndCustomNode) {
  // From a: {a, b} (the count stops growth), Filter drops b. From b:
  // {b, c}, Filter drops b again, so b never joins a subgraph. From d: {d}.
  CountingProperty property;
  EXPECT_EQ(Select(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) -> (f32[2])
      b = Exp(a:0) -> (f32[2])
      c = Neg(b:0) -> (f32[2])
      d = Sigmoid(c:0) -> (f32[2])
      out = NetOutput(d:0)
    }
  )",
                property),
            Dedent(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      b = Exp(pair_0:0) -> (f32[2])
      out = NetOutput(pair_2:0)
      pair_0 = FusedPair(x:0) {_engine_name = "fuser", _partitioned_by = "SubgraphPartitioner", pair_id = 0} subgraphs(main_pair_0) -> (f32[2])
      pair_1 = FusedPair(b:0) {_engine_name = "fuser", _partitioned_by = "SubgraphPartitioner", pair_id = 1} subgraphs(main_pair_1) -> (f32[2])
      pair_2 = FusedPair(pair_1:0) {_engine_name = "fuser", _partitioned_by = "SubgraphPartitioner", pair_id = 2} subgraphs(main_pair_2) -> (f32[2])
    }

    graph main_pair_0 parent(main, pair_0) {
      attr fused = true
      a = Relu(pair_0/in0:0) -> (f32[2])
      pair_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      pair_0/out = InnerNetOutput(a:0)
    }

    graph main_pair_1 parent(main, pair_1) {
      attr fused = true
      c = Neg(pair_1/in0:0) -> (f32[2])
      pair_1/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      pair_1/out = InnerNetOutput(c:0)
    }

    graph main_pair_2 parent(main, pair_2) {
      attr fused = true
      d = Sigmoid(pair_2/in0:0) -> (f32[2])
      pair_2/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      pair_2/out = InnerNetOutput(d:0)
    }
  )"));
}

TEST(SubgraphPartitionerTest, RunsSeveralBackendsInOrder) {
  SubgraphBackendRegistry registry;
  ASSERT_TRUE(registry.Register("relu", {std::make_shared<ContainOpProperty>("relu", std::vector<std::string>{"Relu"})}).ok());
  ASSERT_TRUE(registry
                  .Register("math", {std::make_shared<ContainOpProperty>("exp", std::vector<std::string>{"Exp"}),
                                     std::make_shared<ContainOpProperty>("neg", std::vector<std::string>{"Neg"})})
                  .ok());
  EXPECT_EQ(registry.Register("relu", {std::make_shared<ContainOpProperty>("x", std::vector<std::string>{})}).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.Register("empty", {}).code(), absl::StatusCode::kInvalidArgument);
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) -> (f32[2])
      b = Exp(a:0) -> (f32[2])
      c = Neg(b:0) -> (f32[2])
      out = NetOutput(c:0)
    }
  )");
  auto made = ApplySubgraphBackends(*g, {"relu", "math"}, registry);
  ASSERT_TRUE(made.ok()) << made.status();
  ASSERT_EQ(made->size(), 3u);
  EXPECT_EQ((*made)[0].call->name(), "relu_0");
  EXPECT_EQ((*made)[1].call->name(), "exp_0");
  EXPECT_EQ((*made)[2].call->name(), "neg_0");
  EXPECT_TRUE(ir::VerifyGraph(*g).ok());
  auto unknown = ApplySubgraphBackends(*g, {"nope"}, registry);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(unknown.status().message()).find("unknown subgraph backend 'nope' (known: math, relu)"),
            std::string::npos)
      << unknown.status();
  EXPECT_NE(SubgraphBackendRegistry::Builtin().Find("elementwise"), nullptr);
}

}  // namespace
}  // namespace ge::partition
