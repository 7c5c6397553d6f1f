// `_ChannelSoftmax` (channel_softmax.h): FuseChannelSoftmaxes on attention
// over branches (selective-kernel units with Gathers, Slices or Splits,
// ResNeSt's split attention through a Transpose) optimized, placed and laid
// out computes what the original computes on host_cpu, keeps the whole
// block on cpu_dense and the branches' layout (the layout test of the
// class); the kernel with NaN and one-value groups; what the pass leaves.
#include "runtime/engines/cpu_dense/channel_softmax.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/ir/op_types.h"
#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/graph_optimizer.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/placed_graph_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

class ChannelSoftmaxTest : public PlacedGraphTest {
 protected:
  static void FillWeights(ir::Graph& g) { FillConsts(g, "w", 500, -0.5, 1.0); }

  // Optimizes, places and lays out `text`; checks the class's layout
  // (every compute node of the block on cpu_dense, the branch products
  // reading the convolutions' layout) and the values against host_cpu.
  void Check(const std::string& text, const Shape& input) {
    auto original = Parse(text);
    FillWeights(*original);
    auto optimized = original->Clone();
    auto& optimizer = *PassTestEngine().graph_optimizers()[0];
    ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
    EXPECT_EQ(Count(*optimized, std::string(kChannelSoftmaxOp)), 1) << text;
    for (const char* gone : {"Softmax", "Reshape", "Gather", "Transpose", "Split", "Slice"}) {
      EXPECT_EQ(Count(*optimized, gone), 0) << gone;
    }
    Place(*original, /*dense=*/false);
    Place(*optimized, /*dense=*/true);
    ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
    // No node of another engine inside the block: the engine partition
    // cuts nothing between the branches and their weighting.
    optimized->ForEachNode([](ir::Node* n) {
      const std::string& t = n->type();
      if (t == ir::kConst || t == ir::kData || t == ir::kNetOutput) return;
      EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << n->name() << " " << t;
    });
    const ir::Node* a = optimized->FindNode("a");
    ASSERT_NE(a, nullptr);
    const ir::Format f = a->op_desc().output(0).type.tensor().format;
    for (const ir::InPort& use : a->consumers(0)) {
      if (use.node->type() != "Mul") continue;
      EXPECT_EQ(use.node->op_desc().input(use.index).type.tensor().format, f) << use.node->name();
      EXPECT_EQ(use.node->op_desc().output(0).type.tensor().format, f) << use.node->name();
    }
    if (f != ir::Format::kND) {
      EXPECT_EQ(Count(*optimized, std::string(ir::kTransData)), 1) << ir::PrintGraph(*optimized);
    }
    for (uint64_t seed : {1, 2}) {
      const Tensor in = test::RandomTensor(DataType::kFloat, input, seed, -2.0, 2.0);
      const Tensor want = Run(*original, in);
      const Tensor got = Run(*optimized, in);
      EXPECT_TRUE(test::TensorNear(got, want, {1e-5, 1e-4})) << text;
    }
  }
};

// A selective-kernel unit: two (or three) grouped 3x3 branches, the pooled
// sum through two 1x1 convolutions to K C logits, Reshape [N, K, C, 1, 1],
// Softmax over the branches, each branch's weights by a Gather (or a Slice
// and a Reshape, or a Split and a Reshape), the weighted sum.
TEST_F(ChannelSoftmaxTest, SelectiveKernelWeightsKeepTheBranchesOnDense) {
  struct Case {
    int64_t batch, c, hw;
    int pick;  // 0 Gather, 1 Slice, 2 Split
  };
  for (const Case& cs : {Case{1, 32, 6, 0}, Case{3, 12, 5, 1}, Case{2, 16, 4, 2}, Case{2, 24, 1, 0}}) {
    std::string pick;
    if (cs.pick == 0) {
      pick = R"(i0 = Const() {value = tensor<i64[]>[0]} -> (i64[])
        i1 = Const() {value = tensor<i64[]>[1]} -> (i64[])
        p0 = Gather(sm, i0) {axis = 1} -> (f32[B,C,1,1])
        p1 = Gather(sm, i1) {axis = 1} -> (f32[B,C,1,1]))";
    } else if (cs.pick == 1) {
      pick = R"(s0 = Const() {value = tensor<i64[1]>[0]} -> (i64[1])
        s1 = Const() {value = tensor<i64[1]>[1]} -> (i64[1])
        s2 = Const() {value = tensor<i64[1]>[2]} -> (i64[1])
        ax = Const() {value = tensor<i64[1]>[1]} -> (i64[1])
        q0 = Slice(sm, s0, s1, ax) -> (f32[B,1,C,1,1])
        q1 = Slice(sm, s1, s2, ax) -> (f32[B,1,C,1,1])
        sh = Const() {value = tensor<i64[4]>[B, C, 1, 1]} -> (i64[4])
        p0 = Reshape(q0, sh) -> (f32[B,C,1,1])
        p1 = Reshape(q1, sh) -> (f32[B,C,1,1]))";
    } else {
      pick = R"(q = Split(sm) {axis = 1} -> (f32[B,1,C,1,1], f32[B,1,C,1,1])
        sh = Const() {value = tensor<i64[4]>[B, C, 1, 1]} -> (i64[4])
        p0 = Reshape(q, sh) -> (f32[B,C,1,1])
        p1 = Reshape(q:1, sh) -> (f32[B,C,1,1]))";
    }
    std::string text = absl::StrCat(R"(graph main {
        x = Data() {index = 0} -> (f32[B,8,H,H])
        w0 = Const() {value = tensor<f32[C,8,1,1]>splat(0)} -> (f32[C,8,1,1])
        y = Conv(x, w0) -> (f32[B,C,H,H])
        w3 = Const() {value = tensor<f32[C,4,3,3]>splat(0)} -> (f32[C,4,3,3])
        a = Conv(y, w3) {group = G, pads = [1, 1, 1, 1]} -> (f32[B,C,H,H])
        w5 = Const() {value = tensor<f32[C,4,3,3]>splat(0)} -> (f32[C,4,3,3])
        b = Conv(y, w5) {group = G, pads = [2, 2, 2, 2], dilations = [2, 2]} -> (f32[B,C,H,H])
        u = Add(a, b) -> (f32[B,C,H,H])
        pool = GlobalAveragePool(u) -> (f32[B,C,1,1])
        wf = Const() {value = tensor<f32[8,C,1,1]>splat(0)} -> (f32[8,C,1,1])
        fc = Conv(pool, wf) -> (f32[B,8,1,1])
        r = Relu(fc) -> (f32[B,8,1,1])
        wa = Const() {value = tensor<f32[K,8,1,1]>splat(0)} -> (f32[K,8,1,1])
        z = Conv(r, wa) -> (f32[B,K,1,1])
        shape = Const() {value = tensor<i64[5]>[B, 2, -1, 1, 1]} -> (i64[5])
        zr = Reshape(z, shape) -> (f32[B,2,C,1,1])
        sm = Softmax(zr) {axis = 1} -> (f32[B,2,C,1,1])
        )",
                                    pick, R"(
        m0 = Mul(a, p0) -> (f32[B,C,H,H])
        m1 = Mul(b, p1) -> (f32[B,C,H,H])
        sum = Add(m0, m1) -> (f32[B,C,H,H])
        wo = Const() {value = tensor<f32[16,C,1,1]>splat(0)} -> (f32[16,C,1,1])
        o = Conv(sum, wo) -> (f32[B,16,H,H])
        out = NetOutput(o)
      })");
    text = absl::StrReplaceAll(text, {{"[B,", absl::StrCat("[", cs.batch, ",")},
                                      {"[B]", absl::StrCat("[", cs.batch, "]")},
                                      {"C,", absl::StrCat(cs.c, ",")},
                                      {"C]", absl::StrCat(cs.c, "]")},
                                      {"K,", absl::StrCat(2 * cs.c, ",")},
                                      {"K]", absl::StrCat(2 * cs.c, "]")},
                                      {"G,", absl::StrCat(cs.c / 4, ",")},
                                      {"H,H", absl::StrCat(cs.hw, ",", cs.hw)}});
    Check(text, Shape{cs.batch, 8, cs.hw, cs.hw});
  }
}

// ResNeSt's split attention (radix 2, cardinality 2): the logits viewed
// as [N, card, radix, C / card], the two axes swapped, Softmax over the
// radix, Reshapes back to [N, radix C, 1, 1], a Split into the radix
// parts, each weighting its part of one convolution's output.
TEST_F(ChannelSoftmaxTest, SplitAttentionThroughATransposeKeepsTheSplitsOnDense) {
  for (int64_t batch : {1, 2}) {
    const std::string text = absl::StrReplaceAll(R"(graph main {
        x = Data() {index = 0} -> (f32[B,8,5,5])
        w0 = Const() {value = tensor<f32[32,8,3,3]>splat(0)} -> (f32[32,8,3,3])
        c = Conv(x, w0) {pads = [1, 1, 1, 1]} -> (f32[B,32,5,5])
        a = Relu(c) -> (f32[B,32,5,5])
        h = Split(a) {axis = 1} -> (f32[B,16,5,5], f32[B,16,5,5])
        u = Add(h, h:1) -> (f32[B,16,5,5])
        pool = GlobalAveragePool(u) -> (f32[B,16,1,1])
        wf = Const() {value = tensor<f32[8,16,1,1]>splat(0)} -> (f32[8,16,1,1])
        fc = Conv(pool, wf) -> (f32[B,8,1,1])
        r = Relu(fc) -> (f32[B,8,1,1])
        wa = Const() {value = tensor<f32[32,8,1,1]>splat(0)} -> (f32[32,8,1,1])
        z = Conv(r, wa) -> (f32[B,32,1,1])
        s1 = Const() {value = tensor<i64[4]>[B, 2, 2, -1]} -> (i64[4])
        v = Reshape(z, s1) -> (f32[B,2,2,8])
        t = Transpose(v) {perm = [0, 2, 1, 3]} -> (f32[B,2,2,8])
        sm = Softmax(t) {axis = 1} -> (f32[B,2,2,8])
        s2 = Const() {value = tensor<i64[2]>[B, -1]} -> (i64[2])
        flat = Reshape(sm, s2) -> (f32[B,32])
        s3 = Const() {value = tensor<i64[4]>[B, -1, 1, 1]} -> (i64[4])
        att = Reshape(flat, s3) -> (f32[B,32,1,1])
        p = Split(att) {axis = 1} -> (f32[B,16,1,1], f32[B,16,1,1])
        m0 = Mul(p, h) -> (f32[B,16,5,5])
        m1 = Mul(p:1, h:1) -> (f32[B,16,5,5])
        sum = Add(m0, m1) -> (f32[B,16,5,5])
        wo = Const() {value = tensor<f32[16,16,1,1]>splat(0)} -> (f32[16,16,1,1])
        o = Conv(sum, wo) -> (f32[B,16,5,5])
        out = NetOutput(o)
      })",
                                                 {{"[B,", absl::StrCat("[", batch, ",")}});
    auto original = Parse(text);
    FillWeights(*original);
    auto optimized = original->Clone();
    auto& optimizer = *PassTestEngine().graph_optimizers()[0];
    ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
    EXPECT_EQ(Count(*optimized, std::string(kChannelSoftmaxOp)), 1);
    // The radix Split of the convolution's activated output: channel
    // shuffles once the ReLU has fused.
    for (const char* gone : {"Softmax", "Reshape", "Transpose", "Split"}) EXPECT_EQ(Count(*optimized, gone), 0) << gone;
    Place(*original, /*dense=*/false);
    Place(*optimized, /*dense=*/true);
    ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
    optimized->ForEachNode([](ir::Node* n) {
      const std::string& t = n->type();
      if (t == ir::kConst || t == ir::kData || t == ir::kNetOutput) return;
      EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << n->name() << " " << t;
    });
    // Only the output converts (the logits' layout, channels-last or
    // channel blocks of one position, is read in place).
    if (optimized->FindNode("c")->op_desc().output(0).type.tensor().format != ir::Format::kND) {
      EXPECT_EQ(Count(*optimized, std::string(ir::kTransData)), 1) << ir::PrintGraph(*optimized);
    }
    for (uint64_t seed : {3, 4}) {
      const Tensor in = test::RandomTensor(DataType::kFloat, Shape{batch, 8, 5, 5}, seed, -2.0, 2.0);
      EXPECT_TRUE(test::TensorNear(Run(*optimized, in), Run(*original, in), {1e-5, 1e-4}));
    }
  }
}

// The kernel: a NaN poisons its group only; a group of one value is 1; a
// channels-last input of one position reads as plain.
TEST_F(ChannelSoftmaxTest, KernelGroupsNanAndOneValueGroups) {
  for (ir::Format f : {ir::Format::kND, ir::Format::kNHWC}) {
    ir::OpDesc op("cs", std::string(kChannelSoftmaxOp));
    const Shape x{2, 5, 1, 1};
    op.AddInput({"", ir::ValueType(ir::TensorDesc(DataType::kFloat, x, f))});
    op.AddOutput({"", ir::ValueType::Tensor(DataType::kFloat, Shape{2, 3})});
    op.AddOutput({"", ir::ValueType::Tensor(DataType::kFloat, Shape{2, 2, 1})});
    op.SetAttr("groups", ir::AttrValue(std::vector<int64_t>{0, 1, 0, 2, 1}));
    op.SetAttr("sources", ir::AttrValue(std::vector<int64_t>{0, 2, 3, 1, 4}));
    op.SetAttr("ranks", ir::AttrValue(std::vector<int64_t>{1, 2}));
    op.SetAttr("dims", ir::AttrValue(std::vector<int64_t>{3, 2, 1}));
    ASSERT_TRUE(PassTestEngine().dense_info_store().CheckSupportedOp(op).ok());
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Tensor in = test::MakeTensor(DataType::kFloat, {1, 2, 3, 4, 5, 0, nan, 0, 7, 1}, x);
    test::RunOptions options;
    options.output_types = {op.output(0).type, op.output(1).type};
    auto got = test::RunKernel(PassTestEngine(), op, {Value(in)}, options);
    ASSERT_TRUE(got.ok()) << got.status();
    const float* y0 = (*got)[0].tensor().data<float>();
    const float* y1 = (*got)[1].tensor().data<float>();
    const double e = std::exp(2.0);
    EXPECT_NEAR(y0[0], 1 / (1 + e), 1e-6);  // x0 in {x0, x2}
    EXPECT_NEAR(y0[1], e / (1 + e), 1e-6);  // x2
    EXPECT_NEAR(y0[2], 1.0, 1e-6);          // x3 alone
    EXPECT_NEAR(y1[0], 1 / (1 + std::exp(3.0)), 1e-6);
    EXPECT_NEAR(y1[1], std::exp(3.0) / (1 + std::exp(3.0)), 1e-6);
    // Sample 1: x1 = NaN and x4 = 1 share a group; the others are finite.
    EXPECT_NEAR(y0[3], 0.5, 1e-6);
    EXPECT_NEAR(y0[4], 0.5, 1e-6);
    EXPECT_NEAR(y0[5], 1.0, 1e-6);
    EXPECT_TRUE(std::isnan(y1[2]) && std::isnan(y1[3]));
  }
}

TEST_F(ChannelSoftmaxTest, LeavesSoftmaxesWithoutMovementOrOverTheBatch) {
  const char* cases[] = {
      // no movement around it (a classifier's, an attention's)
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,10])
        sm = Softmax(x) {axis = 1} -> (f32[2,10])
        out = NetOutput(sm)
      })",
      // a Reshape that mixes the batch into the values
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,10])
        s = Const() {value = tensor<i64[2]>[4, 5]} -> (i64[2])
        r = Reshape(x, s) -> (f32[4,5])
        sm = Softmax(r) {axis = 1} -> (f32[4,5])
        out = NetOutput(sm)
      })",
      // over the batch
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,10])
        s = Const() {value = tensor<i64[3]>[2, 2, 5]} -> (i64[3])
        r = Reshape(x, s) -> (f32[2,2,5])
        sm = Softmax(r) {axis = 0} -> (f32[2,2,5])
        out = NetOutput(sm)
      })",
      // an attention's scores (a map per sample, cpu_fused's), through an Identity
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,4,8,8])
        sm = Softmax(x) {axis = -1} -> (f32[2,4,8,8])
        d = Identity(sm) -> (f32[2,4,8,8])
        v = Data() {index = 1} -> (f32[2,4,8,16])
        y = MatMul(d, v) -> (f32[2,4,8,16])
        out = NetOutput(y)
      })",
      // too many values a sample
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,40000])
        s = Const() {value = tensor<i64[3]>[1, 2, 20000]} -> (i64[3])
        r = Reshape(x, s) -> (f32[1,2,20000])
        sm = Softmax(r) {axis = 1} -> (f32[1,2,20000])
        out = NetOutput(sm)
      })",
  };
  for (const char* text : cases) {
    auto g = Parse(text);
    const std::string before = ir::PrintGraph(*g);
    auto changed = FuseChannelSoftmaxes(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
    EXPECT_EQ(ir::PrintGraph(*g), before);
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
