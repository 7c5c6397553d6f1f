// AttentionFusion: text in, text out. Each test gives a graph, runs the
// pass and compares the printed result with the expected graph.
#include "runtime/engines/cpu_fused/attention_fusion.h"

#include "tests/unit/runtime/engines/cpu_fused/fusion_test_util.h"

namespace ge::engine::cpu_fused {
namespace {

std::pair<std::string, bool> Fuse(const std::string& input) { return RunPass(input, FuseAttention); }

// torch's nn.MultiheadAttention export: Q divided before the MatMul, K
// transposed by a Transpose of its own (kept: it is no last-two swap).
TEST(AttentionFusionTest, TorchMultiheadAttention) {
  const auto [out, changed] = Fuse(R"(graph main {
    q = Data() {index = 0} -> (f32[8,16,16])
    k = Data() {index = 1} -> (f32[16,8,16])
    v = Data() {index = 2} -> (f32[8,16,16])
    c = Const() {value = tensor<f32[]>[4.0]} -> (f32[])
    qs = Div(q, c) {_engine_name = "cpu_dense"} -> (f32[8,16,16])
    kt = Transpose(k) {_engine_name = "cpu_vector", perm = [1, 2, 0]} -> (f32[8,16,16])
    s = MatMul(qs, kt) {_engine_name = "cpu_dense"} -> (f32[8,16,16])
    p = Softmax(s) {_engine_name = "cpu_dense", axis = -1} -> (f32[8,16,16])
    y = MatMul(p, v) {_engine_name = "cpu_dense"} -> (f32[8,16,16] as "attn")
    out = NetOutput(y)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    q = Data() {index = 0} -> (f32[8,16,16])
    k = Data() {index = 1} -> (f32[16,8,16])
    v = Data() {index = 2} -> (f32[8,16,16])
    c = Const() {value = tensor<f32[]>[4.0]} -> (f32[])
    kt = Transpose(k) {_engine_name = "cpu_vector", perm = [1, 2, 0]} -> (f32[8,16,16])
    out = NetOutput(y)
    y = _FusedAttention(q, kt, v, c) {_engine_name = "cpu_fused", k_transposed = 1, scale_divides = 1}
        -> (f32[8,16,16] as "attn")
  })"));
}

// BERT-style self-attention: scores divided, then masked; K^T by a swap of
// the last two axes, which the fused node absorbs.
TEST(AttentionFusionTest, BertSelfAttentionWithMask) {
  const auto [out, changed] = Fuse(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,16,8])
    k = Data() {index = 1} -> (f32[2,4,16,8])
    v = Data() {index = 2} -> (f32[2,4,16,8])
    mask = Data() {index = 3} -> (f32[2,1,1,16])
    c = Const() {value = tensor<f32[]>[2.828427]} -> (f32[])
    kt = Transpose(k) {perm = [0, 1, 3, 2]} -> (f32[2,4,8,16])
    s = MatMul(q, kt) -> (f32[2,4,16,16])
    d = Div(s, c) -> (f32[2,4,16,16])
    a = Add(d, mask) -> (f32[2,4,16,16])
    p = Softmax(a) {axis = 3} -> (f32[2,4,16,16])
    y = MatMul(p, v) -> (f32[2,4,16,8])
    out = NetOutput(y)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,16,8])
    k = Data() {index = 1} -> (f32[2,4,16,8])
    v = Data() {index = 2} -> (f32[2,4,16,8])
    mask = Data() {index = 3} -> (f32[2,1,1,16])
    c = Const() {value = tensor<f32[]>[2.828427]} -> (f32[])
    out = NetOutput(y)
    y = _FusedAttention(q, k, v, c, mask) {_engine_name = "cpu_fused", k_transposed = 0, scale_divides = 1}
        -> (f32[2,4,16,8])
  })"));
}

// A scale by Mul with the scalar first, and no mask.
TEST(AttentionFusionTest, ScaleByMulWithTheScalarFirst) {
  const auto [out, changed] = Fuse(R"(graph main {
    q = Data() {index = 0} -> (f32[3,1,8])
    kt = Data() {index = 1} -> (f32[3,8,5])
    v = Data() {index = 2} -> (f32[3,5,4])
    c = Const() {value = tensor<f32[1]>[0.25]} -> (f32[1])
    s = MatMul(q, kt) -> (f32[3,1,5])
    m = Mul(c, s) -> (f32[3,1,5])
    p = Softmax(m) -> (f32[3,1,5])
    y = MatMul(p, v) -> (f32[3,1,4])
    out = NetOutput(y)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    q = Data() {index = 0} -> (f32[3,1,8])
    kt = Data() {index = 1} -> (f32[3,8,5])
    v = Data() {index = 2} -> (f32[3,5,4])
    c = Const() {value = tensor<f32[1]>[0.25]} -> (f32[1])
    out = NetOutput(y)
    y = _FusedAttention(q, kt, v, c) {_engine_name = "cpu_fused", k_transposed = 1, scale_divides = 0}
        -> (f32[3,1,4])
  })"));
}

// Unscaled attention with a mask: the scale input is left empty.
TEST(AttentionFusionTest, MaskWithoutScale) {
  const auto [out, changed] = Fuse(R"(graph main {
    q = Data() {index = 0} -> (f32[4,8])
    kt = Data() {index = 1} -> (f32[8,6])
    v = Data() {index = 2} -> (f32[6,8])
    mask = Data() {index = 3} -> (f32[4,6])
    s = MatMul(q, kt) -> (f32[4,6])
    a = Add(mask, s) -> (f32[4,6])
    p = Softmax(a) -> (f32[4,6])
    y = MatMul(p, v) -> (f32[4,8])
    out = NetOutput(y)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    q = Data() {index = 0} -> (f32[4,8])
    kt = Data() {index = 1} -> (f32[8,6])
    v = Data() {index = 2} -> (f32[6,8])
    mask = Data() {index = 3} -> (f32[4,6])
    out = NetOutput(y)
    y = _FusedAttention(q, kt, v, _, mask) {_engine_name = "cpu_fused", k_transposed = 1, scale_divides = 0}
        -> (f32[4,8])
  })"));
}

// The graphs below must come out unchanged.
void ExpectUnchanged(const std::string& text) {
  const auto [out, changed] = Fuse(text);
  EXPECT_FALSE(changed);
  EXPECT_EQ(out, Canonical(text));
}

TEST(AttentionFusionTest, ScoresReadTwiceAreNotFused) {
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,8])
    kt = Data() {index = 1} -> (f32[2,8,4])
    v = Data() {index = 2} -> (f32[2,4,8])
    s = MatMul(q, kt) -> (f32[2,4,4])
    p = Softmax(s) -> (f32[2,4,4])
    y = MatMul(p, v) -> (f32[2,4,8])
    out = NetOutput(y, s)
  })");
}

TEST(AttentionFusionTest, ProbabilitiesReadTwiceAreNotFused) {
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,8])
    kt = Data() {index = 1} -> (f32[2,8,4])
    v = Data() {index = 2} -> (f32[2,4,8])
    s = MatMul(q, kt) -> (f32[2,4,4])
    p = Softmax(s) -> (f32[2,4,4])
    y = MatMul(p, v) -> (f32[2,4,8])
    out = NetOutput(y, p)
  })");
}

TEST(AttentionFusionTest, HalfPrecisionIsNotFused) {
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f16[2,4,8])
    kt = Data() {index = 1} -> (f16[2,8,4])
    v = Data() {index = 2} -> (f16[2,4,8])
    s = MatMul(q, kt) -> (f16[2,4,4])
    p = Softmax(s) -> (f16[2,4,4])
    y = MatMul(p, v) -> (f16[2,4,8])
    out = NetOutput(y)
  })");
}

TEST(AttentionFusionTest, SoftmaxOverAnotherAxisIsNotFused) {
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,8])
    kt = Data() {index = 1} -> (f32[2,8,4])
    v = Data() {index = 2} -> (f32[2,4,8])
    s = MatMul(q, kt) -> (f32[2,4,4])
    p = Softmax(s) {axis = 1} -> (f32[2,4,4])
    y = MatMul(p, v) -> (f32[2,4,8])
    out = NetOutput(y)
  })");
}

TEST(AttentionFusionTest, OldSoftmaxDefaultAxisIsNotFused) {
  // Before opset 13 the default axis is 1: over [4, 4] of a rank-3 input.
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,8])
    kt = Data() {index = 1} -> (f32[2,8,4])
    v = Data() {index = 2} -> (f32[2,4,8])
    s = MatMul(q, kt) -> (f32[2,4,4])
    p = Softmax(s) {_onnx_opset = 11} -> (f32[2,4,4])
    y = MatMul(p, v) -> (f32[2,4,8])
    out = NetOutput(y)
  })");
}

TEST(AttentionFusionTest, BroadcastingMatMulsAreNotFused) {
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,8])
    kt = Data() {index = 1} -> (f32[1,8,4])
    v = Data() {index = 2} -> (f32[2,4,8])
    s = MatMul(q, kt) -> (f32[2,4,4])
    p = Softmax(s) -> (f32[2,4,4])
    y = MatMul(p, v) -> (f32[2,4,8])
    out = NetOutput(y)
  })");
}

TEST(AttentionFusionTest, UnknownDimsAreNotFused) {
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,-1,8])
    kt = Data() {index = 1} -> (f32[2,8,-1])
    v = Data() {index = 2} -> (f32[2,-1,8])
    s = MatMul(q, kt) -> (f32[2,-1,-1])
    p = Softmax(s) -> (f32[2,-1,-1])
    y = MatMul(p, v) -> (f32[2,-1,8])
    out = NetOutput(y)
  })");
}

TEST(AttentionFusionTest, ScaleByATensorIsNotFused) {
  // Div by a [4] tensor scales each key column differently.
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,8])
    kt = Data() {index = 1} -> (f32[2,8,4])
    v = Data() {index = 2} -> (f32[2,4,8])
    c = Const() {value = tensor<f32[4]>splat(2.0)} -> (f32[4])
    s = MatMul(q, kt) -> (f32[2,4,4])
    d = Div(s, c) -> (f32[2,4,4])
    p = Softmax(d) -> (f32[2,4,4])
    y = MatMul(p, v) -> (f32[2,4,8])
    out = NetOutput(y)
  })");
}

TEST(AttentionFusionTest, ScalarDividedByScoresIsNotFused) {
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,8])
    kt = Data() {index = 1} -> (f32[2,8,4])
    v = Data() {index = 2} -> (f32[2,4,8])
    c = Const() {value = tensor<f32[]>[2.0]} -> (f32[])
    s = MatMul(q, kt) -> (f32[2,4,4])
    d = Div(c, s) -> (f32[2,4,4])
    p = Softmax(d) -> (f32[2,4,4])
    y = MatMul(p, v) -> (f32[2,4,8])
    out = NetOutput(y)
  })");
}

TEST(AttentionFusionTest, NodesPinnedByTheUserAreNotFused) {
  ExpectUnchanged(R"(graph main {
    q = Data() {index = 0} -> (f32[2,4,8])
    kt = Data() {index = 1} -> (f32[2,8,4])
    v = Data() {index = 2} -> (f32[2,4,8])
    s = MatMul(q, kt) -> (f32[2,4,4])
    p = Softmax(s) {_ge_engine = "cpu_dense"} -> (f32[2,4,4])
    y = MatMul(p, v) -> (f32[2,4,8])
    out = NetOutput(y)
  })");
}

}  // namespace
}  // namespace ge::engine::cpu_fused
