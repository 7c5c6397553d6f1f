// MultiBatchClonePass, text in and text out: the root with max-shape Data,
// GearIndex and Case, one static clone per gear, PruneDirectOutput, the
// hybrid branch, input shapes alone, and shape inference over the result.
#include "compiler/passes/multi_batch_clone_pass.h"

#include <memory>
#include <string>

#include "base/ir/text_format.h"
#include "base/ir/verifier.h"
#include "base/ops/gear_index.h"
#include "compiler/passes/infer_shapes_pass.h"
#include "gtest/gtest.h"

namespace ge::compiler {
namespace {

std::unique_ptr<ir::Graph> Parse(const std::string& text) {
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : std::make_unique<ir::Graph>("invalid");
}

GearOptions Gears(const OptionMap& options) {
  auto parsed = ParseGearOptions(options);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : GearOptions();
}

// x passes through to the second output: PruneDirectOutput keeps it off the Case.
constexpr const char* kGraph = R"(graph g {
  x = Data() {index = 0} -> (f32[-1,2] as "x")
  c = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
  a = Relu(x:0) -> (f32[-1,2])
  b = Add(a:0, c:0) -> (f32[-1,2])
  out = NetOutput(b:0 as "y", x:0 as "x_out")
}
)";

TEST(MultiBatchClonePassTest, ClonesOneStaticBranchPerGear) {
  auto g = Parse(kGraph);
  MultiBatchClonePass pass(Gears({{"ge.dynamicBatchSize", "1,4"}}));
  auto changed = pass.Run(*g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(ir::VerifyGraph(*g).ok()) << ir::VerifyGraph(*g);
  EXPECT_EQ(ir::PrintGraph(*g), ir::PrintGraph(*Parse(R"txt(
graph g {
  x = Data() {_user_shape = shape[-1,2], index = 0} -> (f32[4,2] as "x")
  out = NetOutput(gear_case:0 : f32[-1,2] as "y", x:0 : f32[-1,2] as "x_out")
  gear_index = GearIndex(x:0) {_force_unknown_shape = true, fallback_branch = -1,
      gear_labels = ["1", "4"], gear_option = "--dynamic_batch_size (ge.dynamicBatchSize)",
      gear_shapes = [shape[1,2], shape[4,2]]} -> (i32[])
  gear_case = Case(gear_index:0 as "branch_index", x:0) {_force_unknown_shape = true,
      _multi_batch_case = true, branches = [@g_gear_0, @g_gear_1]} subgraphs(g_gear_0, g_gear_1) -> (? as "y")
}
graph g_gear_0 parent(g, gear_case) {
  x = Data() {index = 0} -> (f32[1,2] as "x")
  c = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
  a = Relu(x:0 : f32[-1,2]) -> (f32[-1,2])
  b = Add(a:0, c:0) -> (f32[-1,2])
  out = NetOutput(b:0 as "y")
}
graph g_gear_1 parent(g, gear_case) {
  x = Data() {index = 0} -> (f32[4,2] as "x")
  c = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
  a = Relu(x:0 : f32[-1,2]) -> (f32[-1,2])
  b = Add(a:0, c:0) -> (f32[-1,2])
  out = NetOutput(b:0 as "y")
}
)txt")));
  // Inference types every branch by its gear, and the Case by all of them.
  InferShapesPass infer;
  ASSERT_TRUE(infer.Run(*g).ok());
  EXPECT_EQ(g->FindSubgraph("g_gear_1")->FindNode("b")->op_desc().output(0).type.ToString(), "f32[4,2]");
  EXPECT_EQ(g->FindSubgraph("g_gear_0")->FindNode("b")->op_desc().output(0).type.ToString(), "f32[1,2]");
  EXPECT_EQ(g->FindNode("gear_case")->op_desc().output(0).type.ToString(), "f32[-1,2]");
}

TEST(MultiBatchClonePassTest, HybridModeAddsTheDynamicGraphAsTheLastBranch) {
  auto g = Parse(kGraph);
  MultiBatchClonePass pass(Gears({{"ge.dynamicBatchSize", "2,8"}, {"ge.compileHybridMode", "1"}}));
  ASSERT_TRUE(pass.Run(*g).ok());
  const ir::Node* index = g->FindNode("gear_index");
  ASSERT_NE(index, nullptr);
  auto table = ops::GearTable::FromOpDesc(index->op_desc());
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->fallback_branch, 2);
  EXPECT_EQ(g->FindNode("gear_case")->op_desc().subgraph_names(),
            (std::vector<std::string>{"g_gear_0", "g_gear_1", "g_dynamic"}));
  EXPECT_EQ(g->FindSubgraph("g_dynamic")->FindNode("x")->op_desc().output(0).type.ToString(), "f32[-1,2]");
  EXPECT_EQ(g->FindNode("x")->op_desc().output(0).type.ToString(), "f32[8,2]");
}

TEST(MultiBatchClonePassTest, InputShapesAloneSetTheDataTypes) {
  auto g = Parse(kGraph);
  MultiBatchClonePass pass(Gears({{"ge.inputShape", "x:3,2"}}));
  auto changed = pass.Run(*g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(g->subgraphs().empty());
  EXPECT_EQ(g->FindNode("x")->op_desc().output(0).type.ToString(), "f32[3,2]");
}

TEST(MultiBatchClonePassTest, WithoutGearsNothingChanges) {
  auto g = Parse(kGraph);
  MultiBatchClonePass pass(GearOptions{});
  auto changed = pass.Run(*g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), ir::PrintGraph(*Parse(kGraph)));
}

TEST(MultiBatchClonePassTest, RefusesGraphsWithSubgraphs) {
  auto g = Parse(R"(graph g {
  x = Data() {index = 0} -> (f32[-1])
  p = Data() {index = 1} -> (bool[])
  c = If(p:0, x:0) subgraphs(t, e) -> (f32[-1])
  out = NetOutput(c:0)
}
graph t parent(g, c) {
  i = Data() {index = 0} -> (f32[-1])
  o = NetOutput(i:0)
}
graph e parent(g, c) {
  i = Data() {index = 0} -> (f32[-1])
  n = Neg(i:0) -> (f32[-1])
  o = NetOutput(n:0)
}
)");
  MultiBatchClonePass pass(Gears({{"ge.dynamicBatchSize", "1,2"}}));
  auto r = pass.Run(*g);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(r.status().message()).find("node 'c' (If) owns subgraphs"), std::string::npos) << r.status();
}

TEST(MultiBatchClonePassTest, GearErrorsNameTheInput) {
  auto g = Parse(kGraph);
  MultiBatchClonePass pass(Gears({{"ge.dynamicDims", "1,2,3"}}));
  auto r = pass.Run(*g);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("more than the rank 2 of input 'x'"), std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace ge::compiler
