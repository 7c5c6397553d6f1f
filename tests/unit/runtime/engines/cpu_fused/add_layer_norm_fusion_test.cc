// AddLayerNormFusion: text in, text out.
#include "runtime/engines/cpu_fused/add_layer_norm_fusion.h"

#include "tests/unit/runtime/engines/cpu_fused/fusion_test_util.h"

namespace ge::engine::cpu_fused {
namespace {

std::pair<std::string, bool> Fuse(const std::string& input) { return RunPass(input, FuseAddLayerNorm); }

void ExpectUnchanged(const std::string& text) {
  const auto [out, changed] = Fuse(text);
  EXPECT_FALSE(changed);
  EXPECT_EQ(out, Canonical(text));
}

// Post-norm (torch's TransformerEncoderLayer, BERT): the residual Add feeds
// the norm.
TEST(AddLayerNormFusionTest, ResidualAddBeforeTheNorm) {
  const auto [out, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,16,64])
    r = Data() {index = 1} -> (f32[2,16,64])
    g = Const() {value = tensor<f32[64]>splat(1.0)} -> (f32[64])
    b = Const() {value = tensor<f32[64]>splat(0.0)} -> (f32[64])
    a = Add(x, r) {_engine_name = "cpu_dense"} -> (f32[2,16,64])
    n = LayerNormalization(a, g, b) {_engine_name = "cpu_dense", axis = -1, epsilon = 1e-05} -> (f32[2,16,64] as "y")
    out = NetOutput(n)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[2,16,64])
    r = Data() {index = 1} -> (f32[2,16,64])
    g = Const() {value = tensor<f32[64]>splat(1.0)} -> (f32[64])
    b = Const() {value = tensor<f32[64]>splat(0.0)} -> (f32[64])
    out = NetOutput(n)
    n = _FusedAddLayerNorm(x, g, b, r) {_engine_name = "cpu_fused", axis = -1, epsilon = 1e-05}
        -> (f32[2,16,64] as "y")
  })"));
}

// Pre-norm: the norm's output is added to the residual stream; the sum
// before the norm is read again (the next residual), so it stays.
TEST(AddLayerNormFusionTest, AddAfterTheNormOnly) {
  const auto [out, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[4,32])
    r = Data() {index = 1} -> (f32[4,32])
    p = Data() {index = 2} -> (f32[4,32])
    g = Const() {value = tensor<f32[32]>splat(2.0)} -> (f32[32])
    a = Add(x, r) -> (f32[4,32])
    n = LayerNormalization(a, g) {epsilon = 1e-06} -> (f32[4,32])
    y = Add(p, n) -> (f32[4,32])
    out = NetOutput(y, a)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[4,32])
    r = Data() {index = 1} -> (f32[4,32])
    p = Data() {index = 2} -> (f32[4,32])
    g = Const() {value = tensor<f32[32]>splat(2.0)} -> (f32[32])
    a = Add(x, r) -> (f32[4,32])
    out = NetOutput(y, a)
    y = _FusedAddLayerNorm(a, g, _, _, p) {_engine_name = "cpu_fused", axis = -1, epsilon = 1e-06} -> (f32[4,32])
  })"));
}

TEST(AddLayerNormFusionTest, BothAddsOverTwoAxes) {
  const auto [out, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[3,4,8])
    r = Data() {index = 1} -> (f32[3,4,8])
    p = Data() {index = 2} -> (f32[3,4,8])
    g = Const() {value = tensor<f32[4,8]>splat(1.5)} -> (f32[4,8])
    b = Const() {value = tensor<f32[4,8]>splat(0.5)} -> (f32[4,8])
    a = Add(r, x) -> (f32[3,4,8])
    n = LayerNormalization(a, g, b) {axis = 1} -> (f32[3,4,8])
    y = Add(n, p) -> (f32[3,4,8])
    out = NetOutput(y)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[3,4,8])
    r = Data() {index = 1} -> (f32[3,4,8])
    p = Data() {index = 2} -> (f32[3,4,8])
    g = Const() {value = tensor<f32[4,8]>splat(1.5)} -> (f32[4,8])
    b = Const() {value = tensor<f32[4,8]>splat(0.5)} -> (f32[4,8])
    out = NetOutput(y)
    y = _FusedAddLayerNorm(r, g, b, x, p) {_engine_name = "cpu_fused", axis = 1, epsilon = 1e-05} -> (f32[3,4,8])
  })"));
}

TEST(AddLayerNormFusionTest, SumReadTwiceAndNoAddAfterIsNotFused) {
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f32[4,32])
    r = Data() {index = 1} -> (f32[4,32])
    g = Const() {value = tensor<f32[32]>splat(2.0)} -> (f32[32])
    a = Add(x, r) -> (f32[4,32])
    n = LayerNormalization(a, g) -> (f32[4,32])
    out = NetOutput(n, a)
  })");
}

TEST(AddLayerNormFusionTest, BroadcastingAddIsNotFused) {
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f32[4,32])
    r = Data() {index = 1} -> (f32[1,32])
    g = Const() {value = tensor<f32[32]>splat(2.0)} -> (f32[32])
    a = Add(x, r) -> (f32[4,32])
    n = LayerNormalization(a, g) -> (f32[4,32])
    out = NetOutput(n)
  })");
}

TEST(AddLayerNormFusionTest, DoubleIsNotFused) {
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f64[4,32])
    r = Data() {index = 1} -> (f64[4,32])
    g = Const() {value = tensor<f64[32]>splat(2.0)} -> (f64[32])
    a = Add(x, r) -> (f64[4,32])
    n = LayerNormalization(a, g) -> (f64[4,32])
    out = NetOutput(n)
  })");
}

TEST(AddLayerNormFusionTest, UsedStatisticsAreNotFused) {
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f32[4,32])
    r = Data() {index = 1} -> (f32[4,32])
    g = Const() {value = tensor<f32[32]>splat(2.0)} -> (f32[32])
    a = Add(x, r) -> (f32[4,32])
    n = LayerNormalization(a, g) -> (f32[4,32], f32[4,1])
    out = NetOutput(n:0, n:1)
  })");
}

TEST(AddLayerNormFusionTest, BroadcastScaleIsNotFused) {
  // Scale [1] broadcasts in ONNX; the kernel wants one per normalized element.
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f32[4,32])
    r = Data() {index = 1} -> (f32[4,32])
    g = Const() {value = tensor<f32[1]>[2.0]} -> (f32[1])
    a = Add(x, r) -> (f32[4,32])
    n = LayerNormalization(a, g) -> (f32[4,32])
    out = NetOutput(n)
  })");
}

}  // namespace
}  // namespace ge::engine::cpu_fused
