// Constant GEMM weights stored in panel order (weight_panels.h): the pass
// rewrites exactly the Consts whose every reader takes the packed path and
// leaves the rest alone; a rewritten graph computes bit for bit what the
// original computes (the same panels, made at compile time instead of at
// the first run), also when its products leave the packed path at run time
// and unpack the panels; the packing round-trips for every width.
#include "runtime/engines/cpu_dense/weight_panels.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/ir/op_types.h"
#include "runtime/engines/cpu_dense/gemm_loops.h"
#include "runtime/engines/cpu_dense/packed_matmul.h"
#include "runtime/engines/cpu_dense/post_ops.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/placed_graph_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

// x [rows, k] -> MatMul(x, w [k, n]) -> Relu -> Gemm(., v [n2, n] as
// transB, bias [n2]) -> y. `a_rows` is x's declared row dim (-1: unknown).
std::string TwoProducts(int64_t a_rows, int64_t k, int64_t n, int64_t n2) {
  const std::string r = absl::StrCat(a_rows);
  return absl::StrCat(R"(graph main {
  x = Data() {index = 0} -> (f32[)",
                      r, ",", k, R"(])
  w = Const() {value = tensor<f32[)",
                      k, ",", n, R"(]>splat(0.0)} -> (f32[)", k, ",", n, R"(])
  mm = MatMul(x, w) -> (f32[)",
                      r, ",", n, R"(])
  act = Relu(mm) -> (f32[)",
                      r, ",", n, R"(])
  v = Const() {value = tensor<f32[)",
                      n2, ",", n, R"(]>splat(0.0)} -> (f32[)", n2, ",", n, R"(])
  c = Const() {value = tensor<f32[)",
                      n2, R"(]>splat(0.0)} -> (f32[)", n2, R"(])
  gemm = Gemm(act, v, c) {transB = 1} -> (f32[)",
                      r, ",", n2, R"(])
  out = NetOutput(gemm)
})");
}

class WeightPanelsTest : public PlacedGraphTest {
 protected:
  void SetUp() override {
    if (PackedGemmMaxRows() == 0) GTEST_SKIP() << "no AVX2 and FMA, or GED_CPU_DENSE_GEMM=onednn";
  }
  void TearDown() override { SetPackedGemmMaxRows(kPackedGemmMaxRows); }

  static std::unique_ptr<ir::Graph> Placed(const std::string& text) {
    auto g = Parse(text);
    FillConsts(*g, "", 40, -0.5, 0.5);
    Place(*g, /*dense=*/true);
    return g;
  }

  static bool Panelled(const ir::Graph& g, const std::string& node) {
    return g.FindNode(node)->op_desc().GetAttrOr<bool>(kAttrGemmPanels, false);
  }
};

TEST_F(WeightPanelsTest, PackedPathWeightsBecomePanelsAndComputeTheSame) {
  // 48 rows (the packed path), k = 256, n = 512, n2 = 272: 512 KiB and
  // 544 KiB of weights, one read plain, one transposed.
  const auto original = Placed(TwoProducts(48, 256, 512, 272));
  auto rewritten = original->Clone();
  auto changed = LayOutWeightPanels(*rewritten, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  for (const char* name : {"w", "mm", "v", "gemm"}) EXPECT_TRUE(Panelled(*rewritten, name)) << name;
  EXPECT_FALSE(Panelled(*rewritten, "c"));
  // The Const holds the panels: the same values in another order.
  const Tensor* before = original->FindNode("w")->op_desc().FindAttr(ir::kAttrValue)->get<Tensor>();
  const Tensor* after = rewritten->FindNode("w")->op_desc().FindAttr(ir::kAttrValue)->get<Tensor>();
  EXPECT_EQ(after->shape(), before->shape());
  // Panel 0 holds columns 0-15 row after row: its 17th value is row 1's first.
  EXPECT_EQ(after->data<float>()[1], before->data<float>()[1]);
  EXPECT_NE(after->data<float>()[16], before->data<float>()[16]);
  EXPECT_EQ(after->data<float>()[16], before->data<float>()[512]);
  EXPECT_EQ(after->data<float>()[256 * 16], before->data<float>()[16]);  // panel 1, row 0, column 16
  // A second pass changes nothing.
  auto again = LayOutWeightPanels(*rewritten, AnyNode);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  // Another copy of the original (a JIT's per-shape graph) shares the panels.
  auto copy = original->Clone();
  ASSERT_TRUE(LayOutWeightPanels(*copy, AnyNode).ok());
  EXPECT_EQ(copy->FindNode("w")->op_desc().FindAttr(ir::kAttrValue)->get<Tensor>()->buffer(), after->buffer());
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{48, 256}, 7);
  const Tensor expected = Run(*original, x);
  EXPECT_TRUE(test::TensorNear(Run(*rewritten, x), expected, {0.0, 0.0}));
  // Off the packed path at run time: the panels are unpacked, and oneDNN
  // computes what it computes from the plain weights.
  SetPackedGemmMaxRows(0);
  const Tensor onednn = Run(*original, x);
  EXPECT_TRUE(test::TensorNear(Run(*rewritten, x), onednn, {0.0, 0.0}));
  EXPECT_TRUE(test::TensorNear(onednn, expected, {1e-4, 1e-4}));
}

TEST_F(WeightPanelsTest, TheOptimizerLaysOutTheWeightsOfFusedProducts) {
  // Through the engine's optimizer: MatMul + Relu and the Gemm become
  // `_DenseFused` nodes, whose weights are laid out last.
  const auto original = Placed(TwoProducts(48, 256, 512, 272));
  auto optimized = original->Clone();
  auto& optimizer = *PassTestEngine().graph_optimizers()[0];
  ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
  Place(*optimized, /*dense=*/true);
  ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
  ASSERT_TRUE(optimizer.OptimizeGraphBeforeBuild(*optimized).ok());
  int fused_with_panels = 0;
  optimized->ForEachNode([&](ir::Node* n) {
    if (n->type() == kDenseFusedOp && n->op_desc().GetAttrOr<bool>(kAttrGemmPanels, false)) ++fused_with_panels;
  });
  EXPECT_EQ(fused_with_panels, 1);  // mm + relu; the Gemm with its bias stays a Gemm or fuses alone
  EXPECT_TRUE(Panelled(*optimized, "w"));
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{48, 256}, 8);
  EXPECT_TRUE(test::TensorNear(Run(*optimized, x), Run(*original, x), {1e-5, 1e-5}));
}

TEST_F(WeightPanelsTest, WeightsOffThePackedPathStayPlain) {
  struct Case {
    const char* why;
    int64_t a_rows, k, n, n2;
  };
  const std::vector<Case> cases = {
      {"rows unknown at compile time", -1, 256, 512, 272},
      {"more rows than the packed path takes", 2048, 256, 512, 272},
      {"widths that are not whole panels", 48, 256, 520, 270},
      {"weights below the size bound", 48, 64, 128, 96},
  };
  for (const Case& c : cases) {
    auto g = Placed(TwoProducts(c.a_rows, c.k, c.n, c.n2));
    auto changed = LayOutWeightPanels(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << c.why;
    EXPECT_FALSE(Panelled(*g, "w")) << c.why;
  }
}

TEST_F(WeightPanelsTest, AConstWithAnotherReaderStaysPlain) {
  // w is also a graph output: its plain values must stay.
  std::string text = TwoProducts(48, 256, 512, 272);
  text.replace(text.find("out = NetOutput(gemm)"), 21, "out = NetOutput(gemm, w)");
  auto g = Placed(text);
  auto changed = LayOutWeightPanels(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(Panelled(*g, "w"));
  EXPECT_FALSE(Panelled(*g, "mm"));
  EXPECT_TRUE(Panelled(*g, "v"));  // its own readers all qualify
}

TEST(WeightPanelsPackingTest, PanelsRoundTripForEveryWidth) {
  for (bool transposed : {false, true}) {
    for (int64_t n : {1, 15, 16, 17, 48, 50}) {
      const int64_t k = 7;
      const Tensor b = test::RandomTensor(DataType::kFloat, transposed ? Shape{n, k} : Shape{k, n}, 3 + n);
      std::vector<float> panels(static_cast<size_t>(GemmPanels(n) * k * kGemmPanel), -1.0f);
      PackPanels(b.data<float>(), k, n, transposed, panels.data());
      // Padding past n is zero; column j of row i is at panel j / 16.
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < GemmPanels(n) * kGemmPanel; ++j) {
          const float got = panels[static_cast<size_t>(((j / kGemmPanel) * k + i) * kGemmPanel + j % kGemmPanel)];
          const float want = j >= n ? 0.0f : b.data<float>()[transposed ? j * k + i : i * n + j];
          ASSERT_EQ(got, want) << "n " << n << " row " << i << " column " << j << (transposed ? " transposed" : "");
        }
      }
      std::vector<float> back(static_cast<size_t>(k * n), -1.0f);
      UnpackPanels(panels.data(), k, n, transposed, back.data());
      for (int64_t i = 0; i < k * n; ++i) ASSERT_EQ(back[static_cast<size_t>(i)], b.data<float>()[i]) << n;
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
