// GELU's tanh form fused into a MatMul (gelu_tanh_match.h through
// FusePostOps): torch's and GPT-2's exports, a FastGELU factoring, and the
// graphs that must stay as they are (a wrong constant, erf's constant in the
// tanh form, x read outside, no Tanh).
#include "runtime/engines/cpu_dense/gelu_tanh_match.h"

#include "runtime/engines/cpu_dense/post_op_fusion.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

std::pair<std::string, bool> Fuse(const std::string& input) {
  auto g = Parse(input);
  auto changed = FusePostOps(*g, AnyNode, DenseSupport());
  EXPECT_TRUE(changed.ok()) << changed.status();
  return {ir::PrintGraph(*g), changed.ok() && *changed};
}

constexpr char kFusedMatMul[] = R"(graph main {
    a = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.125)} -> (f32[8,8])
    out = NetOutput(x)
    x = _DenseFused(a, w) {base = "MatMul", post_alpha = [0.0], post_beta = [0.0], post_ops = ["gelu_tanh"]}
        -> (f32[4,8])
  })";

// torch.nn.functional.gelu(x, approximate="tanh") as torch 1.13 exports it.
std::string TorchForm(const std::string& cubic = "0.044715", const std::string& extra = "") {
  return R"(graph main {
    a = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.125)} -> (f32[8,8])
    c1 = Const() {value = tensor<f32[]>[)" +
         cubic + R"(]} -> (f32[])
    c2 = Const() {value = tensor<f32[]>[0.7978846]} -> (f32[])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    half = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    x = MatMul(a, w) -> (f32[4,8])
    x2 = Mul(x, x) -> (f32[4,8])
    x3 = Mul(x, x2) -> (f32[4,8])
    k = Mul(c1, x3) -> (f32[4,8])
    s = Add(x, k) -> (f32[4,8])
    u = Mul(c2, s) -> (f32[4,8])
    t = Tanh(u) -> (f32[4,8])
    p = Add(one, t) -> (f32[4,8])
    m = Mul(x, p) -> (f32[4,8])
    g = Mul(half, m) -> (f32[4,8])
    )" + extra +
         R"(out = NetOutput(g)
  })";
}

TEST(GeluTanhMatchTest, TorchExportFuses) {
  const auto [out, changed] = Fuse(TorchForm());
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(kFusedMatMul));
}

TEST(GeluTanhMatchTest, Gpt2FormAfterTheBiasFuses) {
  // GPT-2: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0)))), x = Linear.
  const auto [out, changed] = Fuse(R"(graph main {
    a = Data() {index = 0} -> (f32[2,4,8])
    w = Const() {value = tensor<f32[8,16]>splat(0.125)} -> (f32[8,16])
    bias = Const() {value = tensor<f32[16]>splat(0.5)} -> (f32[16])
    three = Const() {value = tensor<f32[]>[3.0]} -> (f32[])
    c1 = Const() {value = tensor<f32[]>[0.044715]} -> (f32[])
    c2 = Const() {value = tensor<f32[]>[0.7978846]} -> (f32[])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    half = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    mm = MatMul(a, w) -> (f32[2,4,16])
    x = Add(bias, mm) -> (f32[2,4,16])
    h = Mul(x, half) -> (f32[2,4,16])
    x3 = Pow(x, three) -> (f32[2,4,16])
    k = Mul(x3, c1) -> (f32[2,4,16])
    s = Add(x, k) -> (f32[2,4,16])
    u = Mul(s, c2) -> (f32[2,4,16])
    t = Tanh(u) -> (f32[2,4,16])
    p = Add(t, one) -> (f32[2,4,16])
    g = Mul(h, p) -> (f32[2,4,16])
    out = NetOutput(g)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    a = Data() {index = 0} -> (f32[2,4,8])
    w = Const() {value = tensor<f32[8,16]>splat(0.125)} -> (f32[8,16])
    bias = Const() {value = tensor<f32[16]>splat(0.5)} -> (f32[16])
    out = NetOutput(mm)
    mm = _DenseFused(a, w, bias) {base = "MatMul", post_alpha = [0.0], post_beta = [0.0], post_ops = ["gelu_tanh"]}
         -> (f32[2,4,16])
  })"));
}

TEST(GeluTanhMatchTest, FactoredFormWithDivFusesAndLaterOpsStay) {
  // x * (1 + tanh(x * (1 + 0.044715 x x) / 1.2533141)) / 2, then a Relu the
  // chain takes as its next step.
  const auto [out, changed] = Fuse(R"(graph main {
    a = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.125)} -> (f32[8,8])
    c1 = Const() {value = tensor<f32[]>[0.044715]} -> (f32[])
    inv = Const() {value = tensor<f32[]>[1.2533141]} -> (f32[])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    two = Const() {value = tensor<f32[]>[2.0]} -> (f32[])
    x = MatMul(a, w) -> (f32[4,8])
    x2 = Mul(x, x) -> (f32[4,8])
    k = Mul(x2, c1) -> (f32[4,8])
    q = Add(k, one) -> (f32[4,8])
    s = Mul(x, q) -> (f32[4,8])
    u = Div(s, inv) -> (f32[4,8])
    t = Tanh(u) -> (f32[4,8])
    p = Add(t, one) -> (f32[4,8])
    m = Mul(p, x) -> (f32[4,8])
    g = Div(m, two) -> (f32[4,8])
    r = Relu(g) -> (f32[4,8])
    out = NetOutput(r)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(out, Canonical(R"(graph main {
    a = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.125)} -> (f32[8,8])
    out = NetOutput(x)
    x = _DenseFused(a, w) {base = "MatMul", post_alpha = [0.0, 0.0], post_beta = [0.0, 0.0],
                           post_ops = ["gelu_tanh", "relu"]} -> (f32[4,8])
  })"));
}

TEST(GeluTanhMatchTest, AnotherCubicConstantStays) {
  const auto [out, changed] = Fuse(TorchForm("0.05"));
  EXPECT_FALSE(changed);
  EXPECT_EQ(out, Canonical(TorchForm("0.05")));
}

TEST(GeluTanhMatchTest, XReadOutsideStays) {
  const std::string g = TorchForm("0.044715", "y = Add(x, g) -> (f32[4,8])\n    ");
  auto graph = Parse(g);
  auto changed = FusePostOps(*graph, AnyNode, DenseSupport());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(GeluTanhMatchTest, NoTanhIsNoMatch) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[4,8])
    half = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    h = Mul(x, half) -> (f32[4,8])
    out = NetOutput(h)
  })");
  EXPECT_FALSE(MatchGeluTanh({g->FindNode("x"), 0}, AnyNode).has_value());
}

TEST(GeluTanhMatchTest, FilteredNodeIsNoMatch) {
  auto g = Parse(TorchForm());
  const NodeFilter no_tanh = [](const ir::Node& n) { return n.type() != "Tanh"; };
  EXPECT_FALSE(MatchGeluTanh({g->FindNode("x"), 0}, no_tanh).has_value());
  const auto region = MatchGeluTanh({g->FindNode("x"), 0}, AnyNode);
  ASSERT_TRUE(region.has_value());
  EXPECT_EQ(region->size(), 9u);
  EXPECT_EQ(region->back()->name(), "g");
}

}  // namespace
}  // namespace ge::engine::cpu_dense
