// The compiler driver on the built-in engines: one pipeline lists every
// step in order, ge.disable_passes switches optional passes off and refuses
// unknown and required names, the engines' original-graph optimizers run
// before placement (Conv + BatchNormalization folding), memory planning and
// task building are its last passes, and only_passes runs a subset.
#include "compiler/build/compile_pipeline.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "compiler/build/graph_compiler.h"
#include "gtest/gtest.h"
#include "tests/testing/engines_test.h"

namespace ge::compiler {
namespace {

constexpr char kConvBnRelu[] = R"(graph g {
  x = Data() {index = 0} -> (f32[1, 2, 4, 4])
  w = Const() {value = tensor<f32[2, 2, 1, 1]>[1.0, 2.0, 3.0, 4.0]} -> (f32[2, 2, 1, 1])
  c = Conv(x:0, w:0) {kernel_shape = [1, 1]} -> (f32[1, 2, 4, 4])
  scale = Const() {value = tensor<f32[2]>[2.0, 0.5]} -> (f32[2])
  bias = Const() {value = tensor<f32[2]>[1.0, -1.0]} -> (f32[2])
  mean = Const() {value = tensor<f32[2]>[0.5, 0.25]} -> (f32[2])
  var = Const() {value = tensor<f32[2]>[4.0, 1.0]} -> (f32[2])
  n = BatchNormalization(c:0, scale:0, bias:0, mean:0, var:0) {epsilon = 0.0} -> (f32[1, 2, 4, 4])
  r = Relu(n:0) -> (f32[1, 2, 4, 4])
  out = NetOutput(r:0)
})";

constexpr char kFoldable[] = R"(graph g {
  x = Data() {index = 0} -> (f32[2])
  a = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
  b = Const() {value = tensor<f32[2]>[10, 20]} -> (f32[2])
  c = Add(a:0, b:0) -> (f32[2])
  y = Add(x:0, c:0) -> (f32[2])
  out = NetOutput(y:0)
})";

class CompilePipelineTest : public testing::EnginesTest {
 protected:
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const char* text, const CompileOptions& options) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    if (!graph.ok()) return graph.status();
    GraphCompiler compiler(*engines_, nullptr);
    return compiler.Compile(*std::move(graph), options);
  }
  static int Count(const ir::Graph& g, std::string_view type) {
    int n = 0;
    g.ForEachNode([&](const ir::Node* node) { n += node->type() == type; });
    return n;
  }
  // The names of the optimizers the loaded engines declare.
  static std::vector<std::string> OptimizerNames() {
    std::vector<std::string> out;
    for (const std::string& name : engines_->Names()) {
      for (const engine::GraphOptimizer* o : engines_->Find(name)->graph_optimizers()) out.emplace_back(o->name());
    }
    return out;
  }
};

TEST_F(CompilePipelineTest, ListsEveryStepInOrder) {
  GraphCompiler compiler(*engines_, nullptr);
  auto list = compiler.ListPasses(CompileOptions());
  ASSERT_TRUE(list.ok()) << list.status();
  std::vector<std::string> names;
  for (const PassListing& p : *list) names.push_back(p.name);
  auto position = [&](const std::string& name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const std::vector<std::string> in_order = {"RandomSeedPass",
                                             "MultiBatchClonePass",
                                             "InferShapesPass",
                                             "QdqFusionPass",
                                             "VarIsInitializedOpPass",
                                             "VariableRefDeleteOpPass",
                                             "ConstantFoldingPass",
                                             "SplitConstIntoSubgraphPass",
                                             "StagePartition",
                                             "EnginePlacer",
                                             "SubgraphBackends",
                                             "DynamicShapePartition",
                                             "EnginePlacer2",
                                             "CompositeEnginePartition",
                                             "AtomicEnginePartition",
                                             "KeepPartitioned",
                                             "OnPartitioned",
                                             "Flatten",
                                             "VerifyFlat",
                                             "AssignVariableMemory",
                                             "MemoryPlanning",
                                             "TaskBuilding"};
  for (size_t i = 0; i < in_order.size(); ++i) {
    ASSERT_LT(position(in_order[i]), static_cast<int>(names.size())) << in_order[i];
    if (i > 0) {
      EXPECT_LT(position(in_order[i - 1]), position(in_order[i])) << in_order[i];
    }
  }
  // Every engine optimizer runs on the original graph between folding and
  // placement, and inside an engine partition pass.
  for (const std::string& o : OptimizerNames()) {
    const int original = position(o + ".OptimizeOriginalGraph");
    EXPECT_GT(original, position("ConstantFoldingPass")) << o;
    EXPECT_LT(original, position("StagePartition")) << o;
    EXPECT_GT(position(o + ".OptimizeFusedGraph"), position("EnginePlacer2")) << o;
    // And on the merged graph, before it is kept and flattened.
    const int before_build = position(o + ".OptimizeGraphBeforeBuild");
    EXPECT_GT(before_build, position("AtomicEnginePartition")) << o;
    EXPECT_LT(before_build, position("KeepPartitioned")) << o;
  }
  for (const PassListing& p : *list) {
    const bool optional = p.name == "ConstantFoldingPass" || p.name == "QdqFusionPass" ||
                          p.name == "SplitConstIntoSubgraphPass" || p.name.find(".Optimize") != std::string::npos ||
                          p.name == "CompositeEnginePartition" || p.name == "AtomicEnginePartition";
    EXPECT_EQ(p.required, !optional) << p.name;
  }
}

TEST_F(CompilePipelineTest, RefusesUnknownAndRequiredPassNames) {
  CompileOptions options;
  options.disabled_passes = {"NoSuchPass"};
  auto unknown = Compile(kFoldable, options);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'NoSuchPass'"), std::string_view::npos) << unknown.status();
  for (const char* required : {"EnginePlacer", "MemoryPlanning", "Flatten", "InferShapesPass"}) {
    options.disabled_passes = {"ConstantFoldingPass", required};
    auto refused = Compile(kFoldable, options);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << required;
    EXPECT_NE(refused.status().message().find(std::string("'") + required + "'"), std::string_view::npos)
        << refused.status();
  }
}

TEST_F(CompilePipelineTest, DisabledPassesDoNotRun) {
  auto folded = Compile(kFoldable, CompileOptions());
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(Count(*(*folded)->graph, "Add"), 1);
  CompileOptions options;
  options.disabled_passes = {"ConstantFoldingPass"};
  // cpu_vector's element-wise fusion would put the two Adds in one node.
  const std::vector<std::string> optimizers = OptimizerNames();
  const bool fuses = std::find(optimizers.begin(), optimizers.end(), "cpu_vector") != optimizers.end();
  if (fuses) options.disabled_passes.push_back("cpu_vector.OptimizeFusedGraph");
  auto kept = Compile(kFoldable, options);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(Count(*(*kept)->graph, "Add"), 2);
  if (!fuses) return;
  // With the fusion on, the same two Adds run as one program.
  options.disabled_passes = {"ConstantFoldingPass"};
  auto fused = Compile(kFoldable, options);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(Count(*(*fused)->graph, "Add"), 0);
  EXPECT_EQ(Count(*(*fused)->graph, "_FusedElementwise"), 1);
}

TEST_F(CompilePipelineTest, EngineOptimizersFoldBatchNormBeforePlacement) {
  const std::vector<std::string> optimizers = OptimizerNames();
  if (std::find(optimizers.begin(), optimizers.end(), "cpu_dense") == optimizers.end()) {
    GTEST_SKIP() << "cpu_dense is not loaded";
  }
  auto folded = Compile(kConvBnRelu, CompileOptions());
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(Count(*(*folded)->graph, "BatchNormalization"), 0) << ir::PrintGraph(*(*folded)->graph);
  EXPECT_EQ(Count(*(*folded)->graph, "Relu"), 0) << ir::PrintGraph(*(*folded)->graph);
  CompileOptions options;
  options.disabled_passes = {"cpu_dense.OptimizeOriginalGraph"};
  auto kept = Compile(kConvBnRelu, options);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(Count(*(*kept)->graph, "BatchNormalization"), 1) << ir::PrintGraph(*(*kept)->graph);
  // An excluded engine's optimizers do not run.
  CompileOptions excluded;
  excluded.exclude_engines = {"cpu_dense"};
  auto without = Compile(kConvBnRelu, excluded);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(Count(*(*without)->graph, "BatchNormalization"), 1);
}

TEST_F(CompilePipelineTest, MemoryPlanningAndTaskBuildingAreTheLastPasses) {
  CompileOptions options;
  auto no_program = Compile(kFoldable, options);
  ASSERT_TRUE(no_program.ok()) << no_program.status();
  EXPECT_FALSE((*no_program)->program.has_value());
  options.build_program = true;
  auto with_program = Compile(kFoldable, options);
  ASSERT_TRUE(with_program.ok()) << with_program.status();
  ASSERT_TRUE((*with_program)->program.has_value());
  EXPECT_EQ((*with_program)->program->inputs.size(), 1u);
  EXPECT_EQ((*with_program)->program->outputs.size(), 1u);
}

TEST_F(CompilePipelineTest, OnlyPassesRunsASubset) {
  CompileOptions options;
  options.only_passes = {"InferShapesPass", "ConstantFoldingPass"};
  auto compiled = Compile(kFoldable, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(Count(*(*compiled)->graph, "Add"), 1);
  // Nothing was placed.
  (*compiled)->graph->ForEachNode(
      [](const ir::Node* n) { EXPECT_EQ(n->op_desc().FindAttr(ir::kAttrEngineName), nullptr) << n->name(); });
  options.only_passes = {"NoSuchPass"};
  EXPECT_EQ(Compile(kFoldable, options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ge::compiler
