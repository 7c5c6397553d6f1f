// PostOpFusion: text in, text out. Each test gives a graph, runs the pass
// and compares the printed result with the expected graph.
#include "runtime/engines/cpu_dense/post_op_fusion.h"

#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

// Runs the pass on `input` and returns the printed graph and whether it changed.
std::pair<std::string, bool> Fuse(const std::string& input, const NodeFilter& filter = AnyNode) {
  auto g = Parse(input);
  auto changed = FusePostOps(*g, filter, DenseSupport());
  EXPECT_TRUE(changed.ok()) << changed.status();
  return {ir::PrintGraph(*g), changed.ok() && *changed};
}

TEST(PostOpFusionTest, ConvResidualAddRelu) {
  const auto [out, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[1,3,8,8])
    r = Data() {index = 1} -> (f32[1,4,8,8])
    w = Const() {value = tensor<f32[4,3,3,3]>splat(0.5)} -> (f32[4,3,3,3])
    b = Const() {value = tensor<f32[4]>splat(0.25)} -> (f32[4])
    conv = Conv(x, w, b) {pads = [1, 1, 1, 1]} -> (f32[1,4,8,8])
    add = Add(r, conv) -> (f32[1,4,8,8])
    relu = Relu(add) -> (f32[1,4,8,8] as "y")
    out = NetOutput(relu)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[1,3,8,8])
    r = Data() {index = 1} -> (f32[1,4,8,8])
    w = Const() {value = tensor<f32[4,3,3,3]>splat(0.5)} -> (f32[4,3,3,3])
    b = Const() {value = tensor<f32[4]>splat(0.25)} -> (f32[4])
    out = NetOutput(conv)
    conv = _DenseFused(x, w, b, r) {_inplace_inputs = [3], base = "Conv", pads = [1, 1, 1, 1],
                                    post_alpha = [0.0, 0.0], post_beta = [0.0, 0.0], post_ops = ["add", "relu"]}
           -> (f32[1,4,8,8] as "y")
  })"));
}

TEST(PostOpFusionTest, MatMulBiasAndGeluBecomeOneNode) {
  // PyTorch's GELU export: x * (1 + erf(x / sqrt 2)) * 0.5, after a Linear.
  const auto [out, changed] = Fuse(R"(graph main {
    a = Data() {index = 0} -> (f32[2,16,64])
    w = Const() {value = tensor<f32[64,32]>splat(0.125)} -> (f32[64,32])
    bias = Const() {value = tensor<f32[32]>splat(0.5)} -> (f32[32])
    sqrt2 = Const() {value = tensor<f32[]>[1.4142135]} -> (f32[])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    half = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    mm = MatMul(a, w) -> (f32[2,16,32])
    x = Add(mm, bias) -> (f32[2,16,32])
    d = Div(x, sqrt2) -> (f32[2,16,32])
    e = Erf(d) -> (f32[2,16,32])
    p = Add(e, one) -> (f32[2,16,32])
    m = Mul(x, p) -> (f32[2,16,32])
    g = Mul(m, half) -> (f32[2,16,32])
    out = NetOutput(g)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    a = Data() {index = 0} -> (f32[2,16,64])
    w = Const() {value = tensor<f32[64,32]>splat(0.125)} -> (f32[64,32])
    bias = Const() {value = tensor<f32[32]>splat(0.5)} -> (f32[32])
    out = NetOutput(mm)
    mm = _DenseFused(a, w, bias) {base = "MatMul", post_alpha = [0.0], post_beta = [0.0], post_ops = ["gelu_erf"]}
         -> (f32[2,16,32])
  })"));
}

// Before placement (no residual adds): the bias and GELU join the MatMul,
// the residual Add stays for cpu_fused's add + layer norm, and SiLU waits
// for the engine partition.
TEST(PostOpFusionTest, BeforePlacementBiasAndGeluFuseButNotResiduals) {
  auto g = Parse(R"(graph main {
    a = Data() {index = 0} -> (f32[2,16,64])
    w = Const() {value = tensor<f32[64,32]>splat(0.125)} -> (f32[64,32])
    w2 = Const() {value = tensor<f32[32,64]>splat(0.125)} -> (f32[32,64])
    w3 = Const() {value = tensor<f32[64,64]>splat(0.125)} -> (f32[64,64])
    bias = Const() {value = tensor<f32[32]>splat(0.5)} -> (f32[32])
    bias2 = Const() {value = tensor<f32[64]>splat(0.5)} -> (f32[64])
    sqrt2 = Const() {value = tensor<f32[]>[1.4142135]} -> (f32[])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    half = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    mm = MatMul(a, w) -> (f32[2,16,32])
    x = Add(mm, bias) -> (f32[2,16,32])
    d = Div(x, sqrt2) -> (f32[2,16,32])
    e = Erf(d) -> (f32[2,16,32])
    p = Add(e, one) -> (f32[2,16,32])
    m = Mul(x, p) -> (f32[2,16,32])
    gl = Mul(m, half) -> (f32[2,16,32])
    mm2 = MatMul(gl, w2) -> (f32[2,16,64])
    y = Add(mm2, bias2) -> (f32[2,16,64])
    r = Add(y, a) -> (f32[2,16,64])
    mm3 = MatMul(r, w3) -> (f32[2,16,64])
    s = Sigmoid(mm3) -> (f32[2,16,64])
    silu = Mul(mm3, s) -> (f32[2,16,64])
    out = NetOutput(silu)
  })");
  auto changed = FusePostOps(*g, AnyNode, DenseSupport(), /*residual_adds=*/false);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    a = Data() {index = 0} -> (f32[2,16,64])
    w = Const() {value = tensor<f32[64,32]>splat(0.125)} -> (f32[64,32])
    w2 = Const() {value = tensor<f32[32,64]>splat(0.125)} -> (f32[32,64])
    w3 = Const() {value = tensor<f32[64,64]>splat(0.125)} -> (f32[64,64])
    bias = Const() {value = tensor<f32[32]>splat(0.5)} -> (f32[32])
    bias2 = Const() {value = tensor<f32[64]>splat(0.5)} -> (f32[64])
    r = Add(mm2, a) -> (f32[2,16,64])
    mm3 = MatMul(r, w3) -> (f32[2,16,64])
    s = Sigmoid(mm3) -> (f32[2,16,64])
    silu = Mul(mm3, s) -> (f32[2,16,64])
    out = NetOutput(silu)
    mm = _DenseFused(a, w, bias) {base = "MatMul", post_alpha = [0.0], post_beta = [0.0], post_ops = ["gelu_erf"]}
         -> (f32[2,16,32])
    mm2 = _DenseFused(mm, w2, bias2) {base = "MatMul", post_alpha = floats[], post_beta = floats[],
                                      post_ops = strings[]} -> (f32[2,16,64])
  })"));
}

TEST(PostOpFusionTest, GeluWithTheHalfFirst) {
  // Hugging Face's form: x * 0.5 * (1 + erf(x / sqrt 2)).
  const auto [out, changed] = Fuse(R"(graph main {
    a = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.125)} -> (f32[8,8])
    sqrt2 = Const() {value = tensor<f32[1]>[1.4142135]} -> (f32[1])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    half = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    x = MatMul(a, w) -> (f32[4,8])
    d = Div(x, sqrt2) -> (f32[4,8])
    e = Erf(d) -> (f32[4,8])
    p = Add(one, e) -> (f32[4,8])
    h = Mul(half, x) -> (f32[4,8])
    g = Mul(h, p) -> (f32[4,8])
    out = NetOutput(g)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    a = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.125)} -> (f32[8,8])
    out = NetOutput(x)
    x = _DenseFused(a, w) {base = "MatMul", post_alpha = [0.0], post_beta = [0.0], post_ops = ["gelu_erf"]} -> (f32[4,8])
  })"));
}

TEST(PostOpFusionTest, GemmClipWithConstantBounds) {
  const auto [out, changed] = Fuse(R"(graph main {
    a = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[6,8]>splat(0.125)} -> (f32[6,8])
    c = Const() {value = tensor<f32[6]>splat(1.0)} -> (f32[6])
    lo = Const() {value = tensor<f32[]>[0.0]} -> (f32[])
    hi = Const() {value = tensor<f32[]>[6.0]} -> (f32[])
    gemm = Gemm(a, w, c) {transB = 1} -> (f32[4,6])
    clip = Clip(gemm, lo, hi) -> (f32[4,6])
    out = NetOutput(clip)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    a = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[6,8]>splat(0.125)} -> (f32[6,8])
    c = Const() {value = tensor<f32[6]>splat(1.0)} -> (f32[6])
    out = NetOutput(gemm)
    gemm = _DenseFused(a, w, c) {base = "Gemm", post_alpha = [0.0], post_beta = [6.0], post_ops = ["clip"],
                                 transB = 1} -> (f32[4,6])
  })"));
}

// What must stay as it is.
TEST(PostOpFusionTest, LeavesChainsItCannotFuse) {
  const std::string shared_output = R"(graph main {
    x = Data() {index = 0} -> (f32[1,3,8,8])
    w = Const() {value = tensor<f32[4,3,1,1]>splat(0.5)} -> (f32[4,3,1,1])
    conv = Conv(x, w) -> (f32[1,4,8,8])
    relu = Relu(conv) -> (f32[1,4,8,8])
    out = NetOutput(relu, conv)
  })";
  const std::string runtime_bounds = R"(graph main {
    x = Data() {index = 0} -> (f32[4,8])
    hi = Data() {index = 1} -> (f32[])
    w = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    mm = MatMul(x, w) -> (f32[4,8])
    clip = Clip(mm, _, hi) -> (f32[4,8])
    out = NetOutput(clip)
  })";
  const std::string broadcast_conv_add = R"(graph main {
    x = Data() {index = 0} -> (f32[1,3,8,8])
    r = Data() {index = 1} -> (f32[1,4,1,1])
    w = Const() {value = tensor<f32[4,3,1,1]>splat(0.5)} -> (f32[4,3,1,1])
    conv = Conv(x, w) -> (f32[1,4,8,8])
    add = Add(conv, r) -> (f32[1,4,8,8])
    out = NetOutput(add)
  })";
  const std::string growing_add = R"(graph main {
    x = Data() {index = 0} -> (f32[4,8])
    r = Data() {index = 1} -> (f32[2,4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    mm = MatMul(x, w) -> (f32[4,8])
    add = Add(mm, r) -> (f32[2,4,8])
    out = NetOutput(add)
  })";
  const std::string unknown_shape = R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    mm = MatMul(x, w) -> (f32[-1,8])
    relu = Relu(mm) -> (f32[-1,8])
    out = NetOutput(relu)
  })";
  const std::string f64 = R"(graph main {
    x = Data() {index = 0} -> (f64[4,8])
    w = Const() {value = tensor<f64[8,8]>splat(0.5)} -> (f64[8,8])
    mm = MatMul(x, w) -> (f64[4,8])
    relu = Relu(mm) -> (f64[4,8])
    out = NetOutput(relu)
  })";
  for (const std::string& text : {shared_output, runtime_bounds, broadcast_conv_add, growing_add, unknown_shape, f64}) {
    const auto [out, changed] = Fuse(text);
    EXPECT_FALSE(changed) << text;
    EXPECT_EQ(out, Canonical(text));
  }
}

TEST(PostOpFusionTest, RespectsTheFilter) {
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    mm = MatMul(x, w) {_engine_name = "cpu_dense"} -> (f32[4,8])
    relu = Relu(mm) {_engine_name = "host_cpu"} -> (f32[4,8])
    out = NetOutput(relu)
  })";
  const auto [out, changed] = Fuse(
      text, [](const ir::Node& n) { return n.op_desc().GetAttrOr<std::string>("_engine_name", "") == "cpu_dense"; });
  EXPECT_FALSE(changed);
  EXPECT_EQ(out, Canonical(text));
}

TEST(PostOpFusionTest, MatMulAddBiasThenResidual) {
  // A Linear layer's bias, then the residual connection, then Relu.
  const auto [out, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,16,64])
    w = Const() {value = tensor<f32[64,64]>splat(0.125)} -> (f32[64,64])
    bias = Const() {value = tensor<f32[64]>splat(0.5)} -> (f32[64])
    mm = MatMul(x, w) {_engine_name = "cpu_dense"} -> (f32[2,16,64])
    b = Add(mm, bias) {_engine_name = "cpu_dense"} -> (f32[2,16,64])
    res = Add(x, b) {_engine_name = "cpu_dense"} -> (f32[2,16,64])
    relu = Relu(res) {_engine_name = "cpu_dense"} -> (f32[2,16,64])
    out = NetOutput(relu)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[2,16,64])
    w = Const() {value = tensor<f32[64,64]>splat(0.125)} -> (f32[64,64])
    bias = Const() {value = tensor<f32[64]>splat(0.5)} -> (f32[64])
    out = NetOutput(mm)
    mm = _DenseFused(x, w, bias, x) {_engine_name = "cpu_dense", base = "MatMul", post_alpha = [0.0, 0.0],
                                     post_beta = [0.0, 0.0], post_ops = ["add", "relu"]} -> (f32[2,16,64])
  })"));
}

}  // namespace
}  // namespace ge::engine::cpu_dense

namespace ge::engine::cpu_dense {
namespace {

// x * Sigmoid(x) (SiLU) and HardSwish after a Conv become post-ops;
// HardSigmoid becomes linear + clip to [0, 1].
TEST(PostOpFusionTest, SwishHardSwishAndHardSigmoid) {
  const auto [out, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[1,4,8,8])
    w = Const() {value = tensor<f32[4,4,1,1]>splat(0.5)} -> (f32[4,4,1,1])
    c1 = Conv(x, w) -> (f32[1,4,8,8])
    s = Sigmoid(c1) -> (f32[1,4,8,8])
    m = Mul(c1, s) -> (f32[1,4,8,8])
    c2 = Conv(m, w) -> (f32[1,4,8,8])
    h = HardSwish(c2) -> (f32[1,4,8,8])
    c3 = Conv(h, w) -> (f32[1,4,8,8])
    g = HardSigmoid(c3) {alpha = 0.25, beta = 0.5} -> (f32[1,4,8,8])
    out = NetOutput(g)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[1,4,8,8])
    w = Const() {value = tensor<f32[4,4,1,1]>splat(0.5)} -> (f32[4,4,1,1])
    out = NetOutput(c3)
    c1 = _DenseFused(x, w) {base = "Conv", post_alpha = [1.0], post_beta = [0.0], post_ops = ["swish"]}
         -> (f32[1,4,8,8])
    c2 = _DenseFused(c1, w) {base = "Conv", post_alpha = [0.0], post_beta = [0.0], post_ops = ["hardswish"]}
         -> (f32[1,4,8,8])
    c3 = _DenseFused(c2, w) {base = "Conv", post_alpha = [0.25, 0.0], post_beta = [0.5, 1.0],
                             post_ops = ["linear", "clip"]} -> (f32[1,4,8,8])
  })"));
}

// A Sigmoid * x whose Mul reads another tensor is no swish.
TEST(PostOpFusionTest, SigmoidTimesSomethingElseIsNoSwish) {
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (f32[1,4,8,8])
    y = Data() {index = 1} -> (f32[1,4,8,8])
    w = Const() {value = tensor<f32[4,4,1,1]>splat(0.5)} -> (f32[4,4,1,1])
    c1 = Conv(x, w) -> (f32[1,4,8,8])
    s = Sigmoid(c1) -> (f32[1,4,8,8])
    m = Mul(y, s) -> (f32[1,4,8,8])
    out = NetOutput(m, c1)
  })";
  const auto [out, changed] = Fuse(text);
  EXPECT_FALSE(changed);
  EXPECT_EQ(out, Canonical(text));
}

// A dynamic batch: a Conv's residual Add and Relu still fuse when every
// other dim is known; a MatMul's chain does not, nor a Conv whose channels
// are unknown.
TEST(PostOpFusionTest, ConvWithADynamicBatch) {
  const auto [out, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,4,8,8])
    w = Const() {value = tensor<f32[4,4,3,3]>splat(0.5)} -> (f32[4,4,3,3])
    conv = Conv(x, w) {pads = [1, 1, 1, 1]} -> (f32[-1,4,8,8])
    add = Add(conv, x) -> (f32[-1,4,8,8])
    relu = Relu(add) -> (f32[-1,4,8,8])
    out = NetOutput(relu)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,4,8,8])
    w = Const() {value = tensor<f32[4,4,3,3]>splat(0.5)} -> (f32[4,4,3,3])
    out = NetOutput(conv)
    conv = _DenseFused(x, w, _, x) {_inplace_inputs = [3], base = "Conv", pads = [1, 1, 1, 1],
                                    post_alpha = [0.0, 0.0], post_beta = [0.0, 0.0], post_ops = ["add", "relu"]}
           -> (f32[-1,4,8,8])
  })"));
  const std::string unknown = R"(graph main {
    x = Data() {index = 0} -> (f32[-1,4,-1,8])
    w = Const() {value = tensor<f32[4,4,3,3]>splat(0.5)} -> (f32[4,4,3,3])
    conv = Conv(x, w) {pads = [1, 1, 1, 1]} -> (f32[-1,4,-1,8])
    relu = Relu(conv) -> (f32[-1,4,-1,8])
    a = Data() {index = 1} -> (f32[-1,8])
    b = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    mm = MatMul(a, b) -> (f32[-1,8])
    r2 = Relu(mm) -> (f32[-1,8])
    out = NetOutput(relu, r2)
  })";
  const auto [left, left_changed] = Fuse(unknown);
  EXPECT_FALSE(left_changed);
  EXPECT_EQ(left, Canonical(unknown));
}

// oneDNN's JIT convolutions take a sum only as the first post-op: after an
// activation the chain stops before the residual Add (fused, the reference
// convolution ran: a TCN's conv + GELU + residual, 300x slower).
TEST(PostOpFusionTest, ConvAddAfterAnActivationEndsTheChain) {
  const auto [out, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,40])
    w = Const() {value = tensor<f32[16,16,3]>splat(0.5)} -> (f32[16,16,3])
    sqrt2 = Const() {value = tensor<f32[]>[1.4142135]} -> (f32[])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    half = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    conv = Conv(x, w) {dilations = [4], pads = [4, 4]} -> (f32[-1,16,40])
    d = Div(conv, sqrt2) -> (f32[-1,16,40])
    e = Erf(d) -> (f32[-1,16,40])
    p = Add(e, one) -> (f32[-1,16,40])
    m = Mul(conv, p) -> (f32[-1,16,40])
    g = Mul(m, half) -> (f32[-1,16,40])
    res = Add(x, g) -> (f32[-1,16,40])
    out = NetOutput(res)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,40])
    w = Const() {value = tensor<f32[16,16,3]>splat(0.5)} -> (f32[16,16,3])
    res = Add(x, conv) -> (f32[-1,16,40])
    out = NetOutput(res)
    conv = _DenseFused(x, w) {base = "Conv", dilations = [4], pads = [4, 4], post_alpha = [0.0], post_beta = [0.0],
                              post_ops = ["gelu_erf"]}
           -> (f32[-1,16,40])
  })"));
}

}  // namespace
}  // namespace ge::engine::cpu_dense
