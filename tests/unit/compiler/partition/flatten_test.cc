// ir::FlattenPartitionedCall(s): text in, text out for the plain case,
// control edges through the NoOps, pass-through and absent inputs, nested
// calls, renaming, and refusals that leave the graph unchanged.
#include "base/ir/flatten.h"

#include "base/ir/graph_equal.h"
#include "base/ir/op_types.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/partition_test_util.h"

namespace ge::ir {
namespace {

using partition::testing::Dedent;
using partition::testing::MustParse;

constexpr const char* kSimple = R"(
graph main {
  x = Data() {index = 0} -> (f32[2])
  c = PartitionedCall(x:0) subgraphs(body) -> (f32[2], f32[2])
  out = NetOutput(c:0, c:1)
}
graph body parent(main, c) {
  in0 = InnerData() {_parent_index = 0} -> (f32[2])
  r = Relu(in0:0) -> (f32[2])
  n = Neg(r:0) -> (f32[2])
  o = InnerNetOutput(n:0, in0:0)
}
)";

TEST(FlattenTest, MovesNodesAndRewiresBoundaries) {
  auto g = MustParse(kSimple);
  ASSERT_TRUE(FlattenPartitionedCall(*g, g->FindNode("c")).ok());
  EXPECT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  EXPECT_EQ(PrintGraph(*g), Dedent(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      out = NetOutput(n:0, x:0)
      r = Relu(x:0) -> (f32[2])
      n = Neg(r:0) -> (f32[2])
    }
  )"));
  EXPECT_TRUE(g->subgraphs().empty());
}

TEST(FlattenTest, ControlEdgesGoThroughNoOps) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      pre = Relu(x:0) -> (f32[2])
      c = PartitionedCall(x:0) ^pre subgraphs(body) -> (f32[2])
      post = Neg(x:0) ^c -> (f32[2])
      out = NetOutput(c:0, post:0)
    }
    graph body parent(main, c) {
      in0 = InnerData() {_parent_index = 0} -> (f32[2])
      k = Const() {value = tensor<f32[2]>[1.0, 2.0]} -> (f32[2])
      a = Add(in0:0, k:0) -> (f32[2])
      side = Sigmoid(in0:0) -> (f32[2])
      o = InnerNetOutput(a:0)
    }
  )");
  FlattenOptions options;
  options.noop_attrs["_engine_name"] = std::string("ge_local");
  ASSERT_TRUE(FlattenPartitionedCall(*g, g->FindNode("c"), options).ok());
  ASSERT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  // before: after `pre`, before the body's entry nodes (k, a, side: a reads
  // only the InnerData and k); after: behind the exits (a feeds the
  // InnerNetOutput, side is a sink), before `post`.
  EXPECT_EQ(PrintGraph(*g), Dedent(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      pre = Relu(x:0) -> (f32[2])
      post = Neg(x:0) ^c/after -> (f32[2])
      out = NetOutput(a:0, post:0)
      c/before = NoOp() ^pre {_engine_name = "ge_local"}
      c/after = NoOp() ^a ^side ^c/before {_engine_name = "ge_local"}
      k = Const() ^c/before {value = tensor<f32[2]>[1, 2]} -> (f32[2])
      a = Add(x:0, k:0) -> (f32[2])
      side = Sigmoid(x:0) ^c/before -> (f32[2])
    }
  )"));
}

TEST(FlattenTest, AlwaysInsertNoOpsAndPassThrough) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      y = Data() {index = 1} -> (f32[2])
      c = PartitionedCall(x:0, y:0, _) subgraphs(body) -> (f32[2], f32[2])
      out = NetOutput(c:0, c:1)
    }
    graph body parent(main, c) {
      in0 = InnerData() {_parent_index = 0} -> (f32[2])
      in1 = InnerData() {_parent_index = 1} -> (f32[2])
      in2 = InnerData() {_parent_index = 2} -> (f32[2])
      e = Exp(in1:0) -> (f32[2])
      o = InnerNetOutput(in0:0, e:0)
    }
  )");
  FlattenOptions options;
  options.always_insert_noops = true;
  ASSERT_TRUE(FlattenPartitionedCall(*g, g->FindNode("c"), options).ok());
  ASSERT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  // x only passes through: it must still be ready before the call's end.
  EXPECT_EQ(PrintGraph(*g), Dedent(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      y = Data() {index = 1} -> (f32[2])
      out = NetOutput(x:0, e:0)
      c/before = NoOp()
      c/after = NoOp() ^x ^e ^c/before
      e = Exp(y:0) ^c/before -> (f32[2])
    }
  )"));
}

TEST(FlattenTest, FlattensNestedCallsAndRenamesClashes) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      r = Relu(x:0) -> (f32[2])
      outer = PartitionedCall(r:0) {_is_unknown_shape = true} subgraphs(outer_body) -> (f32[2])
      out = NetOutput(outer:0)
    }
    graph outer_body parent(main, outer) {
      i = InnerData() {_parent_index = 0} -> (f32[2])
      inner = PartitionedCall(i:0) subgraphs(inner_body) -> (f32[2])
      o = InnerNetOutput(inner:0)
    }
    graph inner_body parent(outer_body, inner) {
      i = InnerData() {_parent_index = 0} -> (f32[2])
      r = Relu(i:0) -> (f32[2])
      o = InnerNetOutput(r:0)
    }
  )");
  FlattenOptions options;
  options.inherited_attrs = {"_is_unknown_shape"};
  auto expanded = FlattenPartitionedCalls(*g, options);
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ(*expanded, 2);
  ASSERT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  EXPECT_TRUE(g->subgraphs().empty());
  // The inner Relu clashes with the outer one and is renamed; the
  // attribute of the outer call flows down.
  EXPECT_EQ(PrintGraph(*g), Dedent(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      r = Relu(x:0) -> (f32[2])
      out = NetOutput(r_1:0)
      r_1 = Relu(r:0) {_is_unknown_shape = true} -> (f32[2])
    }
  )"));
}

TEST(FlattenTest, SelectsCalls) {
  auto g = MustParse(kSimple);
  auto expanded = FlattenPartitionedCalls(*g, {}, [](const Node& n) { return n.name() != "c"; });
  ASSERT_TRUE(expanded.ok());
  EXPECT_EQ(*expanded, 0);
  EXPECT_NE(g->FindNode("c"), nullptr);
}

TEST(FlattenTest, RefusesMalformedBodiesWithoutChanges) {
  struct Case {
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"in0 = InnerData() {_parent_index = 3} -> (f32[2])\n o = InnerNetOutput(in0:0, in0:0)",
       "InnerData 'in0' has _parent_index 3 but the call has 1 input(s)"},
      {"in0 = InnerData() -> (f32[2])\n o = InnerNetOutput(in0:0, in0:0)", "InnerData 'in0' has no _parent_index"},
      {"in0 = InnerData() {_parent_index = 0} -> (f32[2])\n o = InnerNetOutput(in0:0)",
       "has 2 output(s) but its subgraph 'body' returns 1"},
      {"in0 = InnerData() {_parent_index = 0} -> (f32[2])\n o = InnerNetOutput(in0:0, in0:0)\n"
       " p = InnerNetOutput(in0:0, in0:0)",
       "more than one InnerNetOutput"},
  };
  for (const Case& c : cases) {
    const std::string text = std::string(R"(
      graph main {
        x = Data() {index = 0} -> (f32[2])
        c = PartitionedCall(x:0) subgraphs(body) -> (f32[2], f32[2])
        out = NetOutput(c:0, c:1)
      }
      graph body parent(main, c) {
      )") + c.body + "\n}\n";
    auto g = MustParse(text);
    const std::string before = PrintGraph(*g);
    absl::Status s = FlattenPartitionedCall(*g, g->FindNode("c"));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos) << s;
    EXPECT_EQ(PrintGraph(*g), before);
  }
  auto g = MustParse(kSimple);
  EXPECT_EQ(FlattenPartitionedCall(*g, g->FindNode("x")).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ge::ir
