// Group normalization between convolutions, end to end: torch's export of
// nn.GroupNorm (+ SiLU) optimized, placed and laid out computes what the
// original computes on host_cpu, and keeps the convolutions' layout (no
// TransData: the layout test of the class).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/ir/op_types.h"
#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/graph_optimizer.h"
#include "runtime/engines/cpu_dense/group_norm.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/placed_graph_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

class GroupNormGraphTest : public PlacedGraphTest {
 protected:
  static void FillWeights(ir::Graph& g) { FillConsts(g, "w", 300, -0.5, 1.0); }
};

// conv -> GroupNorm(G) [-> SiLU] -> conv, and a second GroupNorm without
// the affine map on the residual sum; channel counts C (16, 24: not a
// multiple of 16, 32), groups 1 to C, batches 1 and 3, H x W 1 x 1 too.
TEST_F(GroupNormGraphTest, ChannelsLastConvolutionsKeepTheirLayoutThroughGroupNorms) {
  struct Case {
    int64_t c, groups, batch, hw;
    bool silu;
  };
  for (const Case& cs : {Case{32, 8, 1, 6, true}, Case{24, 3, 3, 5, true}, Case{16, 16, 2, 4, false},
                         Case{32, 1, 2, 3, true}, Case{32, 4, 3, 1, true}}) {
    const int64_t c = cs.c, g = cs.groups, per = c / g;
    const std::string x = absl::StrCat("f32[", cs.batch, ",", c, ",", cs.hw, ",", cs.hw, "]");
    std::string text = R"(graph main {
      x = Data() {index = 0} -> (f32[B,8,H,H])
      w0 = Const() {value = tensor<f32[C,8,3,3]>splat(0)} -> (f32[C,8,3,3])
      conv0 = Conv(x, w0) {pads = [1, 1, 1, 1]} -> (X)
      shape = Const() {value = tensor<i64[3]>[0, G, -1]} -> (i64[3])
      r1 = Reshape(conv0, shape) -> (f32[B,G,R])
      ones = Const() {value = tensor<f32[G]>splat(1)} -> (f32[G])
      zeros = Const() {value = tensor<f32[G]>splat(0)} -> (f32[G])
      norm = InstanceNormalization(r1, ones, zeros) -> (f32[B,G,R])
      back = Const() {value = tensor<i64[4]>[B, C, H, H]} -> (i64[4])
      r2 = Reshape(norm, back) -> (X)
      wg = Const() {value = tensor<f32[C,1,1]>splat(0)} -> (f32[C,1,1])
      m = Mul(r2, wg) -> (X)
      wb = Const() {value = tensor<f32[C,1,1]>splat(0)} -> (f32[C,1,1])
      a = Add(m, wb) -> (X)
      ACT
      w1 = Const() {value = tensor<f32[C,C,3,3]>splat(0)} -> (f32[C,C,3,3])
      conv1 = Conv(h, w1) {pads = [1, 1, 1, 1]} -> (X)
      sum = Add(conv1, conv0) -> (X)
      r3 = Reshape(sum, shape) -> (f32[B,G,R])
      norm2 = InstanceNormalization(r3, ones, zeros) -> (f32[B,G,R])
      r4 = Reshape(norm2, back) -> (X)
      w2 = Const() {value = tensor<f32[C,C,1,1]>splat(0)} -> (f32[C,C,1,1])
      conv2 = Conv(r4, w2) -> (X)
      out = NetOutput(conv2)
    })";
    text = absl::StrReplaceAll(
        text, {{"ACT", cs.silu ? "s = Sigmoid(a) -> (X)\n      h = Mul(a, s) -> (X)" : "h = Relu(a) -> (X)"}});
    text = absl::StrReplaceAll(text, {{"(X)", absl::StrCat("(", x, ")")},
                                      {"B", absl::StrCat(cs.batch)},
                                      {"C,", absl::StrCat(c, ",")},
                                      {"C]", absl::StrCat(c, "]")},
                                      {"G,", absl::StrCat(g, ",")},
                                      {"G]", absl::StrCat(g, "]")},
                                      {"R]", absl::StrCat(per * cs.hw * cs.hw, "]")},
                                      {"H", absl::StrCat(cs.hw)}});
    auto original = Parse(text);
    FillWeights(*original);
    auto optimized = original->Clone();
    auto& optimizer = *PassTestEngine().graph_optimizers()[0];
    ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
    EXPECT_EQ(Count(*optimized, std::string(kGroupNormOp)), 2) << text;
    EXPECT_EQ(Count(*optimized, "InstanceNormalization") + Count(*optimized, "Reshape"), 0);
    Place(*original, /*dense=*/false);
    Place(*optimized, /*dense=*/true);
    ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
    const ir::Node* conv0 = optimized->FindNode("conv0");
    ASSERT_NE(conv0, nullptr);
    const ir::Format f = conv0->op_desc().output(0).type.tensor().format;
    optimized->ForEachNode([&](ir::Node* n) {
      if (n->type() != kGroupNormOp) return;
      EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << n->name();
      EXPECT_EQ(n->op_desc().input(0).type.tensor().format, f) << n->name();
      EXPECT_EQ(n->op_desc().output(0).type.tensor().format, f) << n->name();
    });
    // Where the convolutions write a laid-out tensor (NHWC on AVX-512,
    // nChw8c on AVX2 when the channels fill blocks), nothing converts it
    // between them.
    if (f != ir::Format::kND) {
      EXPECT_EQ(Count(*optimized, std::string(ir::kTransData)), 1) << ir::PrintGraph(*optimized);
    }
    for (uint64_t seed : {1, 2}) {
      const Tensor in = test::RandomTensor(DataType::kFloat, Shape{cs.batch, 8, cs.hw, cs.hw}, seed);
      const Tensor want = Run(*original, in);
      const Tensor got = Run(*optimized, in);
      EXPECT_TRUE(test::TensorNear(got, want, {2e-4, 2e-4})) << "c " << c << " groups " << g;
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
