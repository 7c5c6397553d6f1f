// BinaryPartitioner and ExecutionOrder: the two graphs and their linkage
// (text out), refusal of a set that depends on the remaining part, and
// slices added one by one that execute to the original graph's outputs.
#include "compiler/partition/binary_partitioner.h"

#include <random>

#include "base/ir/verifier.h"
#include "compiler/partition/execution_order.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/exec_test_util.h"
#include "tests/unit/compiler/partition/partition_test_util.h"

namespace ge::partition {
namespace {

using testing::Dedent;
using testing::MustParse;

constexpr const char* kGraph = R"(
graph main {
  x = Data() {index = 0} -> (f32[2])
  y = Data() {index = 1} -> (f32[2])
  a = Relu(x:0) -> (f32[2])
  b = Neg(a:0) -> (f32[2])
  c = Add(b:0, y:0) -> (f32[2])
  out = NetOutput(c:0, a:0)
}
)";

std::vector<const ir::Node*> Nodes(const ir::Graph& g, std::vector<std::string> names) {
  std::vector<const ir::Node*> out;
  for (const std::string& n : names) out.push_back(g.FindNode(n));
  return out;
}

TEST(BinaryPartitionerTest, SplitsIntoSliceAndRemainder) {
  auto g = MustParse(kGraph);
  auto split = BinaryPartitioner::Partition(*g, Nodes(*g, {"x", "a", "b"}));
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_TRUE(ir::VerifyGraph(*split->sliced).ok()) << ir::VerifyGraph(*split->sliced);
  EXPECT_TRUE(ir::VerifyGraph(*split->remaining).ok()) << ir::VerifyGraph(*split->remaining);
  EXPECT_EQ(ir::PrintGraph(*split->sliced), Dedent(R"(
    graph main_slice {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) -> (f32[2])
      b = Neg(a:0) -> (f32[2])
      slice_output = NetOutput(a:0, b:0)
    }
  )"));
  EXPECT_EQ(ir::PrintGraph(*split->remaining), Dedent(R"(
    graph main {
      y = Data() {index = 0} -> (f32[2])
      a_0 = Data() {index = 1} -> (f32[2])
      b_0 = Data() {index = 2} -> (f32[2])
      c = Add(b_0:0, y:0) -> (f32[2])
      out = NetOutput(c:0, a_0:0)
    }
  )"));
  EXPECT_EQ(split->linkage.sliced_inputs, std::vector<int>{0});
  ASSERT_EQ(split->linkage.remaining_inputs.size(), 3u);
  EXPECT_EQ(split->linkage.remaining_inputs[0], (ValueSource{ValueSource::Kind::kGraphInput, -1, 1}));
  EXPECT_EQ(split->linkage.remaining_inputs[1], (ValueSource{ValueSource::Kind::kSliceOutput, -1, 0}));
  EXPECT_EQ(split->linkage.remaining_inputs[2], (ValueSource{ValueSource::Kind::kSliceOutput, -1, 1}));
  EXPECT_EQ(split->linkage.sliced_outputs,
            (std::vector<std::pair<std::string, int>>{{"a", 0}, {"b", 0}}));
}

// A known Const that remaining nodes read is copied into the remaining
// graph, sharing its tensor, instead of crossing as a sliced output (the
// next slice sees constant weights); it stays in the slice only when a
// sliced node reads it too.
TEST(BinaryPartitionerTest, ConstantsReadByTheRestAreCopiedNotCrossed) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      w = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
      v = Const() {value = tensor<f32[2]>[3, 4]} -> (f32[2])
      a = Mul(x:0, w:0) -> (f32[2])
      n = NonZero(a:0) -> (i64[1,-1])
      c = Add(a:0, w:0) -> (f32[2])
      d = Mul(c:0, v:0) -> (f32[2])
      out = NetOutput(d:0, n:0, v:0)
    }
  )");
  auto split = BinaryPartitioner::Partition(*g, Nodes(*g, {"x", "w", "v", "a"}));
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_TRUE(ir::VerifyGraph(*split->sliced).ok()) << ir::VerifyGraph(*split->sliced);
  EXPECT_TRUE(ir::VerifyGraph(*split->remaining).ok()) << ir::VerifyGraph(*split->remaining);
  EXPECT_EQ(ir::PrintGraph(*split->sliced), Dedent(R"(
    graph main_slice {
      x = Data() {index = 0} -> (f32[2])
      w = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
      a = Mul(x:0, w:0) -> (f32[2])
      slice_output = NetOutput(a:0)
    }
  )"));
  EXPECT_EQ(ir::PrintGraph(*split->remaining), Dedent(R"(
    graph main {
      a_0 = Data() {index = 0} -> (f32[2])
      w = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
      v = Const() {value = tensor<f32[2]>[3, 4]} -> (f32[2])
      n = NonZero(a_0:0) -> (i64[1,-1])
      c = Add(a_0:0, w:0) -> (f32[2])
      d = Mul(c:0, v:0) -> (f32[2])
      out = NetOutput(d:0, n:0, v:0)
    }
  )"));
  ASSERT_EQ(split->linkage.remaining_inputs.size(), 1u);
  EXPECT_EQ(split->linkage.remaining_inputs[0], (ValueSource{ValueSource::Kind::kSliceOutput, -1, 0}));
  // The copies share the weights' storage.
  const Tensor& original = g->FindNode("w")->op_desc().GetAttrOr<Tensor>(ir::kAttrValue, Tensor());
  const Tensor& copy = split->remaining->FindNode("w")->op_desc().GetAttrOr<Tensor>(ir::kAttrValue, Tensor());
  EXPECT_EQ(original.buffer(), copy.buffer());
}

TEST(BinaryPartitionerTest, RefusesSetsThatDependOnTheRest) {
  auto g = MustParse(kGraph);
  auto split = BinaryPartitioner::Partition(*g, Nodes(*g, {"a", "c"}));
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(split.status().message()).find("known node 'c' reads 'b', which is not known"),
            std::string::npos)
      << split.status();
  EXPECT_EQ(BinaryPartitioner::Partition(*g, Nodes(*g, {"x", "out"})).status().code(),
            absl::StatusCode::kInvalidArgument);  // nothing to compute
}

TEST(ExecutionOrderTest, SlicesRunToTheOriginalOutputs) {
  std::mt19937 rng(99);
  const auto& engines = testing::BuiltEngines();
  auto run = [&](const ir::Graph& graph, std::vector<Value> inputs) {
    return testing::Execute(graph, engines, std::move(inputs));
  };
  for (int trial = 0; trial < 200; ++trial) {
    testing::RandomGraphSpec spec;
    spec.dynamic_probability = 0;
    auto original = testing::RandomGraph(rng, spec);
    ExecutionOrder order(original->Clone());
    // Peel the graph in topological layers of random thickness.
    auto topo = original->TopologicalOrder();
    ASSERT_TRUE(topo.ok());
    StringSet known;
    size_t next = 0;
    while (next < topo->size()) {
      const size_t take = 1 + rng() % 6;
      for (size_t i = 0; i < take && next < topo->size(); ++i) known.insert((*topo)[next++]->name());
      auto point = order.AddNewSlice([&](const ir::Node& n) { return known.contains(n.name()); });
      if (!point.ok()) {
        // Only Data / NetOutput newly known: nothing to slice.
        ASSERT_EQ(point.status().code(), absl::StatusCode::kInvalidArgument) << point.status();
        continue;
      }
      ASSERT_TRUE(ir::VerifyGraph(*(*point)->graph).ok()) << ir::VerifyGraph(*(*point)->graph);
      ASSERT_TRUE(ir::VerifyGraph(order.remaining()).ok()) << ir::VerifyGraph(order.remaining());
    }
    std::vector<Value> inputs = testing::RandomInputs(*original, rng);
    auto expected = run(*original, inputs);
    auto actual = order.Run(inputs, run);
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_TRUE(actual.ok()) << actual.status();
    std::string why;
    ASSERT_TRUE(testing::SameOutputs(*expected, *actual, &why)) << "trial " << trial << ": " << why;
  }
}

}  // namespace
}  // namespace ge::partition
