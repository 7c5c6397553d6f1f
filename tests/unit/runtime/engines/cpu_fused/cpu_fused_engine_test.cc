// The cpu_fused engine as the loader sees it (a composite engine that
// cpu_dense and cpu_vector name), what it accepts, and its optimizer's
// order on a graph with both patterns.
#include "runtime/engines/cpu_fused/cpu_fused_engine.h"

#include "runtime/engines/cpu_fused/fused_ops.h"
#include "tests/testing/engines_test.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_fused/fusion_test_util.h"

namespace ge::engine::cpu_fused {
namespace {

class CpuFusedPluginTest : public ge::testing::EnginesTest {};

TEST_F(CpuFusedPluginTest, IsTheCompositeEngineOfCpuDenseAndCpuVector) {
  const EngineAttributes* fused = engines_->FindAttributes("cpu_fused");
  ASSERT_NE(fused, nullptr) << "libge_engine_cpu_fused.so did not load";
  EXPECT_FALSE(fused->atomic);
  EXPECT_TRUE(fused->composite_engine.empty());
  for (const char* atomic : {"cpu_dense", "cpu_vector"}) {
    const EngineAttributes* a = engines_->FindAttributes(atomic);
    ASSERT_NE(a, nullptr) << atomic;
    EXPECT_TRUE(a->atomic) << atomic;
    EXPECT_EQ(a->composite_engine, "cpu_fused") << atomic;
  }
  Engine* engine = engines_->Find("cpu_fused");
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->graph_optimizers().size(), 1u);
}

TEST(CpuFusedEngineTest, SupportsOnlyItsOwnOpsInFloat32) {
  CpuFusedEngine& engine = TestEngine();
  EXPECT_EQ(engine.info_store().SupportedOpTypes(),
            (std::vector<std::string>{std::string(kFusedAddLayerNormOp), std::string(kFusedAttentionOp)}));
  const Tensor q = test::RandomTensor(DataType::kFloat, Shape{2, 4, 8}, 1);
  const Tensor kt = test::RandomTensor(DataType::kFloat, Shape{2, 8, 4}, 2);
  const Tensor v = test::RandomTensor(DataType::kFloat, Shape{2, 4, 8}, 3);
  ir::Graph g("g");
  auto attention = g.AddNode(test::OpBuilder(std::string(kFusedAttentionOp), "a").Inputs({q, kt, v}).Outputs(1).Build());
  ASSERT_TRUE(attention.ok());
  EXPECT_TRUE(engine.info_store().CheckSupported(**attention).ok());
  auto relu = g.AddNode(test::OpBuilder("Relu", "r").Inputs({q}).Outputs(1).Build());
  ASSERT_TRUE(relu.ok());
  EXPECT_EQ(engine.info_store().CheckSupported(**relu).code(), absl::StatusCode::kUnimplemented);
  const Tensor x64 = test::RandomTensor(DataType::kDouble, Shape{2, 8}, 4);
  const Tensor g64 = test::RandomTensor(DataType::kDouble, Shape{8}, 5);
  auto norm = g.AddNode(test::OpBuilder(std::string(kFusedAddLayerNormOp), "n").Inputs({x64, g64}).Outputs(1).Build());
  ASSERT_TRUE(norm.ok());
  const absl::Status s = engine.info_store().CheckSupported(**norm);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(s.message()).find("float32"), std::string::npos) << s;
  EXPECT_EQ(engine.kernel_factory().CreateKernel(ir::OpDesc("r", "Relu")).status().code(),
            absl::StatusCode::kUnimplemented);
}

// Both fusions in one region, as a torch post-norm encoder layer has them.
TEST(CpuFusedEngineTest, OptimizerFusesAttentionThenNorms) {
  const auto [out, changed] = RunPass(R"(graph main {
    q = Data() {index = 0} -> (f32[4,16,16])
    kt = Data() {index = 1} -> (f32[4,16,16])
    v = Data() {index = 2} -> (f32[4,16,16])
    x = Data() {index = 3} -> (f32[4,16,16])
    c = Const() {value = tensor<f32[]>[4.0]} -> (f32[])
    g = Const() {value = tensor<f32[16]>splat(1.0)} -> (f32[16])
    qs = Div(q, c) -> (f32[4,16,16])
    s = MatMul(qs, kt) -> (f32[4,16,16])
    p = Softmax(s) -> (f32[4,16,16])
    y = MatMul(p, v) -> (f32[4,16,16])
    r = Add(x, y) -> (f32[4,16,16])
    n = LayerNormalization(r, g) -> (f32[4,16,16])
    out = NetOutput(n)
  })",
                                      [](ir::Graph& graph) { return TestEngine().graph_optimizers()[0]->OptimizeFusedGraph(graph); });
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    q = Data() {index = 0} -> (f32[4,16,16])
    kt = Data() {index = 1} -> (f32[4,16,16])
    v = Data() {index = 2} -> (f32[4,16,16])
    x = Data() {index = 3} -> (f32[4,16,16])
    c = Const() {value = tensor<f32[]>[4.0]} -> (f32[])
    g = Const() {value = tensor<f32[16]>splat(1.0)} -> (f32[16])
    out = NetOutput(n)
    y = _FusedAttention(q, kt, v, c) {_engine_name = "cpu_fused", k_transposed = 1, scale_divides = 1}
        -> (f32[4,16,16])
    n = _FusedAddLayerNorm(x, g, _, y) {_engine_name = "cpu_fused", axis = -1, epsilon = 1e-05} -> (f32[4,16,16])
  })"));
  // A second run finds nothing left to fuse.
  const auto [again, changed_again] =
      RunPass(out, [](ir::Graph& graph) { return TestEngine().graph_optimizers()[0]->OptimizeFusedGraph(graph); });
  EXPECT_FALSE(changed_again);
  EXPECT_EQ(again, out);
}

}  // namespace
}  // namespace ge::engine::cpu_fused
