// QdqFusionPass: the chains it rewrites (text in, text out), what it leaves
// alone, and that a fused QLinearConv computes what its QDQ chain computed
// (within one integer step) on host_cpu's kernels.
#include "compiler/passes/qdq_fusion_pass.h"

#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "base/ops/op_registry.h"
#include "gtest/gtest.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::compiler {
namespace {

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::unique_ptr<ir::Graph> Fuse(const std::string& text, bool expect_changed) {
  auto graph = ir::ParseGraph(text);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return std::make_unique<ir::Graph>("invalid");
  EXPECT_TRUE(ops::InferShapes(**graph).ok());
  QdqFusionPass pass;
  auto changed = pass.Run(**graph);
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (changed.ok()) {
    EXPECT_EQ(*changed, expect_changed);
  }
  return std::move(*graph);
}

int Count(const ir::Graph& g, std::string_view type) {
  int n = 0;
  g.ForEachNode([&](const ir::Node* node) { n += node->type() == type; });
  return n;
}

// x (u8) -> DQ -> Conv(DQ(w s8, per channel), DQ(bias i32)) -> Relu -> Q.
constexpr char kConvChain[] = R"(graph main {
  x = Data() {index = 0} -> (u8[1,2,3,3])
  sx = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
  zx = Const() {value = tensor<u8[]>[10]} -> (u8[])
  xd = DequantizeLinear(x, sx, zx) -> (f32[1,2,3,3])
  w = Const() {value = tensor<i8[2,2,1,1]>[1, -2, 3, -4]} -> (i8[2,2,1,1])
  sw = Const() {value = tensor<f32[2]>[0.25, 0.125]} -> (f32[2])
  zw = Const() {value = tensor<i8[2]>[0, 0]} -> (i8[2])
  wd = DequantizeLinear(w, sw, zw) {axis = 0} -> (f32[2,2,1,1])
  b = Const() {value = tensor<i32[2]>[8, -16]} -> (i32[2])
  sb = Const() {value = tensor<f32[2]>[0.125, 0.0625]} -> (f32[2])
  bd = DequantizeLinear(b, sb) {axis = 0} -> (f32[2])
  conv = Conv(xd, wd, bd) -> (f32[1,2,3,3])
  relu = Relu(conv) -> (f32[1,2,3,3])
  sy = Const() {value = tensor<f32[]>[0.25]} -> (f32[])
  zy = Const() {value = tensor<u8[]>[0]} -> (u8[])
  y = QuantizeLinear(relu, sy, zy) -> (u8[1,2,3,3] as "y")
  out = NetOutput(y)
})";

TEST(QdqFusionPassTest, ConvReluChainBecomesQLinearConv) {
  auto g = Fuse(kConvChain, true);
  EXPECT_EQ(Count(*g, "QLinearConv"), 1);
  for (std::string_view gone : {"Conv", "Relu", "QuantizeLinear", "DequantizeLinear"}) {
    EXPECT_EQ(Count(*g, gone), 0) << gone;
  }
  const ir::Node* q = nullptr;
  g->ForEachNode([&](const ir::Node* n) {
    if (n->type() == "QLinearConv") q = n;
  });
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(q->num_inputs(), 9);
  EXPECT_EQ(q->input(0).node->name(), "x");
  EXPECT_EQ(q->op_desc().output(0).name, "y");
  // The bias in the scale x_scale * w_scale: 8 * 0.125 / (0.5 * 0.25) = 8,
  // -16 * 0.0625 / (0.5 * 0.125) = -16.
  const Tensor bias = q->input(8).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  EXPECT_EQ(bias.data<int32_t>()[0], 8);
  EXPECT_EQ(bias.data<int32_t>()[1], -16);
  EXPECT_EQ(g->OutputNode()->input(0).node, q);
}

TEST(QdqFusionPassTest, FusedConvComputesWhatTheChainComputed) {
  engine::HostCpuEngine host;
  Tensor x = *Tensor::Allocate(DataType::kUint8, Shape{1, 2, 3, 3});
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 37) % 256);
  auto g = ir::ParseGraph(kConvChain);
  ASSERT_TRUE(g.ok());
  auto value = [&](const std::string& name) {
    return (*g)->FindNode(name)->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  };
  // The chain, op by op on host_cpu.
  auto xd = test::RunOp1(host, "DequantizeLinear", {x, value("sx"), value("zx")});
  auto wd = test::RunOp1(host, "DequantizeLinear", {value("w"), value("sw"), value("zw")},
                         {{"axis", ir::AttrValue(int64_t{0})}});
  auto bd = test::RunOp1(host, "DequantizeLinear", {value("b"), value("sb")}, {{"axis", ir::AttrValue(int64_t{0})}});
  ASSERT_TRUE(xd.ok() && wd.ok() && bd.ok());
  auto conv = test::RunOp1(host, "Conv", {*xd, *wd, *bd});
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto relu = test::RunOp1(host, "Relu", {*conv});
  ASSERT_TRUE(relu.ok());
  auto want = test::RunOp1(host, "QuantizeLinear", {*relu, value("sy"), value("zy")});
  ASSERT_TRUE(want.ok()) << want.status();
  // The fused node.
  auto fused = Fuse(kConvChain, true);
  const ir::Node* q = nullptr;
  fused->ForEachNode([&](const ir::Node* n) {
    if (n->type() == "QLinearConv") q = n;
  });
  ASSERT_NE(q, nullptr);
  std::vector<Value> inputs = {x};
  for (int i = 1; i < q->num_inputs(); ++i) {
    inputs.push_back(q->input(i).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value());
  }
  auto got = test::RunKernel(host, q->op_desc(), inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), *want, test::Tolerance{1, 0}));
}

TEST(QdqFusionPassTest, MatMulAndTransposedGemmBecomeQLinearMatMul) {
  auto g = Fuse(R"(graph main {
    a = Data() {index = 0} -> (u8[2,3])
    sa = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    za = Const() {value = tensor<u8[]>[128]} -> (u8[])
    ad = DequantizeLinear(a, sa, za) -> (f32[2,3])
    w = Const() {value = tensor<i8[2,3]>[1, 2, 3, 4, 5, 6]} -> (i8[2,3])
    sw = Const() {value = tensor<f32[2]>[0.5, 0.25]} -> (f32[2])
    wd = DequantizeLinear(w, sw) {axis = 0} -> (f32[2,3])
    gemm = Gemm(ad, wd) {transB = 1} -> (f32[2,2])
    sy = Const() {value = tensor<f32[]>[0.1]} -> (f32[])
    zy = Const() {value = tensor<i8[]>[0]} -> (i8[])
    y = QuantizeLinear(gemm, sy, zy) -> (i8[2,2])
    out = NetOutput(y)
  })",
                true);
  EXPECT_EQ(Count(*g, "QLinearMatMul"), 1);
  EXPECT_EQ(Count(*g, "Gemm"), 0);
  const ir::Node* q = nullptr;
  g->ForEachNode([&](const ir::Node* n) {
    if (n->type() == "QLinearMatMul") q = n;
  });
  ASSERT_NE(q, nullptr);
  // B transposed to [K, N] = [3, 2].
  const Tensor b = q->input(3).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  EXPECT_EQ(b.shape(), (Shape{3, 2}));
  EXPECT_EQ(b.data<int8_t>()[1], 4);
  // The absent zero point of B became a constant 0.
  EXPECT_EQ(q->input(5).node->type(), ir::kConst);
}

TEST(QdqFusionPassTest, MaxPoolBetweenEqualParametersRunsOnTheIntegers) {
  auto g = Fuse(R"(graph main {
    x = Data() {index = 0} -> (u8[1,1,4,4])
    s = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    z = Const() {value = tensor<u8[]>[3]} -> (u8[])
    xd = DequantizeLinear(x, s, z) -> (f32[1,1,4,4])
    p = MaxPool(xd) {kernel_shape = [2, 2], strides = [2, 2]} -> (f32[1,1,2,2])
    y = QuantizeLinear(p, s, z) -> (u8[1,1,2,2])
    out = NetOutput(y)
  })",
                true);
  EXPECT_EQ(Count(*g, "QuantizeLinear"), 0);
  EXPECT_EQ(Count(*g, "DequantizeLinear"), 0);
  const ir::Node* p = g->FindNode("p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->input(0).node->name(), "x");
  EXPECT_EQ(p->op_desc().output(0).type.dtype(), DataType::kUint8);
}

// A residual block's end: DQ(a), DQ(b) -> Add -> Relu -> Q (zero point 0).
constexpr char kAddChain[] = R"(graph main {
  a = Data() {index = 0} -> (u8[1,2,4,4])
  b = Data() {index = 1} -> (u8[1,2,4,4])
  sa = Const() {value = tensor<f32[]>[0.0371]} -> (f32[])
  za = Const() {value = tensor<u8[]>[120]} -> (u8[])
  sb = Const() {value = tensor<f32[]>[0.0213]} -> (f32[])
  zb = Const() {value = tensor<u8[]>[7]} -> (u8[])
  ad = DequantizeLinear(a, sa, za) -> (f32[1,2,4,4])
  bd = DequantizeLinear(b, sb, zb) -> (f32[1,2,4,4])
  add = Add(ad, bd) -> (f32[1,2,4,4])
  relu = Relu(add) -> (f32[1,2,4,4])
  sy = Const() {value = tensor<f32[]>[0.0459]} -> (f32[])
  zy = Const() {value = tensor<u8[]>[0]} -> (u8[])
  y = QuantizeLinear(relu, sy, zy) -> (u8[1,2,4,4] as "y")
  out = NetOutput(y)
})";

TEST(QdqFusionPassTest, ResidualAddBecomesQLinearAddWithinOneStepOfTheChain) {
  auto g = Fuse(kAddChain, true);
  EXPECT_EQ(Count(*g, "_QLinearAdd"), 1);
  for (std::string_view gone : {"Add", "Relu", "QuantizeLinear", "DequantizeLinear"}) {
    EXPECT_EQ(Count(*g, gone), 0) << gone;
  }
  const ir::Node* q = nullptr;
  g->ForEachNode([&](const ir::Node* n) {
    if (n->type() == "_QLinearAdd") q = n;
  });
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(q->num_inputs(), 8);
  EXPECT_EQ(q->input(0).node->name(), "a");
  EXPECT_EQ(q->input(3).node->name(), "b");
  // Numerics on host_cpu: the chain op by op against the fused node, every
  // pair of u8 values.
  engine::HostCpuEngine host;
  Tensor a = *Tensor::Allocate(DataType::kUint8, Shape{1, 2, 4, 4});
  Tensor b = *Tensor::Allocate(DataType::kUint8, Shape{1, 2, 4, 4});
  auto value = [&](const std::string& name) {
    return g->FindNode(name)->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  };
  for (int round = 0; round < 2048; ++round) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      const int64_t k = round * a.NumElements() + i;
      a.data<uint8_t>()[i] = static_cast<uint8_t>(k % 256);
      b.data<uint8_t>()[i] = static_cast<uint8_t>(k / 256);
    }
    auto ad = test::RunOp1(host, "DequantizeLinear", {a, value("sa"), value("za")});
    auto bd = test::RunOp1(host, "DequantizeLinear", {b, value("sb"), value("zb")});
    ASSERT_TRUE(ad.ok() && bd.ok());
    auto sum = test::RunOp1(host, "Add", {*ad, *bd});
    ASSERT_TRUE(sum.ok());
    auto relu = test::RunOp1(host, "Relu", {*sum});
    ASSERT_TRUE(relu.ok());
    auto want = test::RunOp1(host, "QuantizeLinear", {*relu, value("sy"), value("zy")});
    ASSERT_TRUE(want.ok());
    std::vector<Value> inputs = {a, value("sa"), value("za"), b, value("sb"), value("zb"), value("sy"), value("zy")};
    auto got = test::RunKernel(host, q->op_desc(), inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(test::TensorNear((*got)[0].tensor(), *want, test::Tolerance{1, 0})) << "round " << round;
  }
}

// A classifier: DQ(a) -> Gemm(DQ(w s8 per row), C) {transB} -> float logits.
constexpr char kFloatGemm[] = R"(graph main {
  a = Data() {index = 0} -> (u8[2,3])
  sa = Const() {value = tensor<f32[]>[0.05]} -> (f32[])
  za = Const() {value = tensor<u8[]>[100]} -> (u8[])
  ad = DequantizeLinear(a, sa, za) -> (f32[2,3])
  w = Const() {value = tensor<i8[4,3]>[1, -2, 3, 64, -64, 7, -127, 127, 0, 5, 9, -11]} -> (i8[4,3])
  sw = Const() {value = tensor<f32[4]>[0.5, 0.25, 0.01, 0.3]} -> (f32[4])
  zw = Const() {value = tensor<i8[4]>[0, 0, 0, 0]} -> (i8[4])
  wd = DequantizeLinear(w, sw, zw) {axis = 0} -> (f32[4,3])
  c = Const() {value = tensor<f32[4]>[0.5, -1.5, 2.25, 0]} -> (f32[4])
  gemm = Gemm(ad, wd, c) {transB = 1} -> (f32[2,4] as "logits")
  out = NetOutput(gemm)
})";

TEST(QdqFusionPassTest, FloatResultGemmComputesOnIntegersThenScales) {
  auto g = Fuse(kFloatGemm, true);
  for (std::string_view gone : {"Gemm", "DequantizeLinear"}) EXPECT_EQ(Count(*g, gone), 0) << gone;
  for (std::string_view kept : {"MatMulInteger", "Cast", "Mul", "Add"}) EXPECT_EQ(Count(*g, kept), 1) << kept;
  const ir::Node* last = g->OutputNode()->input(0).node;
  ASSERT_EQ(last->type(), "Add");
  EXPECT_EQ(last->op_desc().output(0).name, "logits");
  // The chain on host_cpu against the fused nodes, op by op.
  engine::HostCpuEngine host;
  Tensor a = *Tensor::Allocate(DataType::kUint8, Shape{2, 3});
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<uint8_t>()[i] = static_cast<uint8_t>((i * 91 + 13) % 256);
  auto src = ir::ParseGraph(kFloatGemm);
  ASSERT_TRUE(src.ok());
  auto value = [&](const ir::Graph& graph, const std::string& name) {
    return graph.FindNode(name)->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  };
  auto ad = test::RunOp1(host, "DequantizeLinear", {a, value(**src, "sa"), value(**src, "za")});
  auto wd = test::RunOp1(host, "DequantizeLinear", {value(**src, "w"), value(**src, "sw"), value(**src, "zw")},
                         {{"axis", ir::AttrValue(int64_t{0})}});
  ASSERT_TRUE(ad.ok() && wd.ok());
  auto want = test::RunOp1(host, "Gemm", {*ad, *wd, value(**src, "c")}, {{"transB", ir::AttrValue(int64_t{1})}});
  ASSERT_TRUE(want.ok()) << want.status();
  // Evaluate the fused nodes from the output back to `a` and constants.
  std::function<absl::StatusOr<Value>(const ir::OutPort&)> eval = [&](const ir::OutPort& p) -> absl::StatusOr<Value> {
    if (p.node->type() == ir::kData) return Value(a);
    if (p.node->type() == ir::kConst) return Value(p.node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value());
    std::vector<Value> inputs;
    for (const ir::OutPort& in : p.node->inputs()) {
      GE_ASSIGN_OR_RETURN(Value v, eval(in));
      inputs.push_back(std::move(v));
    }
    GE_ASSIGN_OR_RETURN(std::vector<Value> out, test::RunKernel(host, p.node->op_desc(), inputs));
    return out[p.index];
  };
  auto got = eval(g->OutputNode()->input(0));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(test::TensorNear(got->tensor(), *want, test::Tolerance{1e-5, 1e-6}));
}

TEST(QdqFusionPassTest, FloatResultMatMulWithoutBiasEndsInTheScale) {
  auto g = Fuse(R"(graph main {
    a = Data() {index = 0} -> (i8[1,2,3])
    sa = Const() {value = tensor<f32[]>[0.1]} -> (f32[])
    ad = DequantizeLinear(a, sa) -> (f32[1,2,3])
    w = Const() {value = tensor<i8[3,2]>[1, 2, 3, 4, 5, 6]} -> (i8[3,2])
    sw = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    wd = DequantizeLinear(w, sw) -> (f32[3,2])
    mm = MatMul(ad, wd) -> (f32[1,2,2])
    out = NetOutput(mm)
  })",
                true);
  EXPECT_EQ(Count(*g, "MatMulInteger"), 1);
  EXPECT_EQ(Count(*g, "Add"), 0);
  EXPECT_EQ(g->OutputNode()->input(0).node->type(), "Mul");
  // B's zero point absent, A's became a constant 0 of A's type.
  const ir::Node* mi = nullptr;
  g->ForEachNode([&](const ir::Node* n) {
    if (n->type() == "MatMulInteger") mi = n;
  });
  ASSERT_NE(mi, nullptr);
  ASSERT_EQ(mi->num_inputs(), 3);
  EXPECT_EQ(mi->op_desc().input(2).type.dtype(), DataType::kInt8);
}

TEST(QdqFusionPassTest, FloatResultProductThatCouldOverflowInt32StaysInFloat) {
  // K = 66,400 rows of 127: 66,400 * 255 * 127 > 2^31 - 1.
  const int64_t k = 66400;
  std::string w = "127";
  for (int64_t i = 1; i < k; ++i) w += ", 1";
  const std::string text = R"(graph main {
    a = Data() {index = 0} -> (u8[1,)" +
                           std::to_string(k) + R"(])
    sa = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    za = Const() {value = tensor<u8[]>[0]} -> (u8[])
    ad = DequantizeLinear(a, sa, za) -> (f32[1,)" +
                           std::to_string(k) + R"(])
    w = Const() {value = tensor<i8[)" +
                           std::to_string(k) + ",1]>[" + w + R"(]} -> (i8[)" + std::to_string(k) + R"(,1])
    sw = Const() {value = tensor<f32[]>[0.25]} -> (f32[])
    wd = DequantizeLinear(w, sw) -> (f32[)" +
                           std::to_string(k) + R"(,1])
    mm = MatMul(ad, wd) -> (f32[1,1])
    out = NetOutput(mm)
  })";
  auto g = Fuse(text, false);
  EXPECT_EQ(Count(*g, "MatMul"), 1);
  EXPECT_EQ(Count(*g, "MatMulInteger"), 0);
  // With 64 the largest weight the sum fits: fused.
  g = Fuse(Replaced(text, "[127, 1", "[64, 1"), true);
  EXPECT_EQ(Count(*g, "MatMulInteger"), 1);
}

// kConvChain with Clip(conv, lo, hi) in place of its Relu ("_" for an
// absent bound). Q's range is [0, 63.75] (scale 0.25, zero point 0).
std::string ClipChain(const std::string& lo, const std::string& hi) {
  std::string consts;
  std::string args = "conv";
  for (const auto& [name, v] : {std::pair{std::string("lo"), lo}, std::pair{std::string("hi"), hi}}) {
    if (v == "_") {
      args += ", _";
      continue;
    }
    consts += "  " + name + " = Const() {value = tensor<f32[]>[" + v + "]} -> (f32[])\n";
    args += ", " + name;
  }
  return Replaced(kConvChain, "  relu = Relu(conv) -> (f32[1,2,3,3])\n",
                  consts + "  relu = Clip(" + args + ") -> (f32[1,2,3,3])\n");
}

// A Clip whose bounds quantize to Q's limits or beyond (ReLU6 before a Q
// calibrated within [0, 6]) changes nothing Q's saturation does not: it is
// absorbed, and the fused node computes what the chain with the Clip did.
// Bounds inside Q's range keep the chain in float.
TEST(QdqFusionPassTest, ClipThatTheSaturationHidesIsAbsorbed) {
  for (auto [lo, hi] :
       {std::pair{"-1.0", "100.0"}, std::pair{"0.0", "63.75"}, std::pair{"_", "64.0"}, std::pair{"-0.1", "_"}}) {
    const std::string text = ClipChain(lo, hi);
    auto g = Fuse(text, true);
    EXPECT_EQ(Count(*g, "QLinearConv"), 1) << lo << " " << hi;
    EXPECT_EQ(Count(*g, "Clip"), 0) << lo << " " << hi;
    // The chain op by op on host_cpu against the fused node.
    engine::HostCpuEngine host;
    Tensor x = *Tensor::Allocate(DataType::kUint8, Shape{1, 2, 3, 3});
    for (int64_t i = 0; i < x.NumElements(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 53 + 7) % 256);
    auto chain = ir::ParseGraph(text);
    ASSERT_TRUE(chain.ok());
    auto value = [&](const std::string& name) {
      return (*chain)->FindNode(name)->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
    };
    auto xd = test::RunOp1(host, "DequantizeLinear", {x, value("sx"), value("zx")});
    auto wd = test::RunOp1(host, "DequantizeLinear", {value("w"), value("sw"), value("zw")},
                           {{"axis", ir::AttrValue(int64_t{0})}});
    auto bd = test::RunOp1(host, "DequantizeLinear", {value("b"), value("sb")}, {{"axis", ir::AttrValue(int64_t{0})}});
    ASSERT_TRUE(xd.ok() && wd.ok() && bd.ok());
    auto conv = test::RunOp1(host, "Conv", {*xd, *wd, *bd});
    ASSERT_TRUE(conv.ok()) << conv.status();
    // An absent bound clips nothing: the reference takes the float range's end.
    auto bound = [&](const std::string& v, const std::string& name, float none) {
      if (v != "_") return value(name);
      Tensor t = *Tensor::Allocate(DataType::kFloat, Shape{});
      t.data<float>()[0] = none;
      return t;
    };
    auto clipped = test::RunOp1(host, "Clip",
                                {*conv, bound(lo, "lo", -std::numeric_limits<float>::max()),
                                 bound(hi, "hi", std::numeric_limits<float>::max())});
    ASSERT_TRUE(clipped.ok()) << clipped.status();
    auto want = test::RunOp1(host, "QuantizeLinear", {*clipped, value("sy"), value("zy")});
    ASSERT_TRUE(want.ok()) << want.status();
    const ir::Node* q = nullptr;
    g->ForEachNode([&](const ir::Node* n) {
      if (n->type() == "QLinearConv") q = n;
    });
    ASSERT_NE(q, nullptr);
    std::vector<Value> inputs = {x};
    for (int i = 1; i < q->num_inputs(); ++i) {
      inputs.push_back(q->input(i).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value());
    }
    auto got = test::RunKernel(host, q->op_desc(), inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), *want, test::Tolerance{1, 0})) << lo << " " << hi;
  }
  // A Clip the saturation does not hide stays, in float: the Conv before it
  // takes the float-result form (ConvInteger, then the scales).
  for (auto [lo, hi] : {std::pair{"0.0", "6.0"}, std::pair{"0.25", "100.0"}, std::pair{"_", "63.5"}}) {
    auto g = Fuse(ClipChain(lo, hi), true);
    EXPECT_EQ(Count(*g, "Clip"), 1) << lo << " " << hi;
    EXPECT_EQ(Count(*g, "QLinearConv"), 0) << lo << " " << hi;
    EXPECT_EQ(Count(*g, "ConvInteger"), 1) << lo << " " << hi;
  }
}

// A quantized transformer's bias Add: the bias (a constant over the last
// axis) first or second, fused with it as B; within one step of the chain.
TEST(QdqFusionPassTest, BiasAddOverTheLastAxisBecomesQLinearAdd) {
  for (const bool bias_first : {false, true}) {
    const std::string operands = bias_first ? "bd, ad" : "ad, bd";
    const std::string text = R"(graph main {
    a = Data() {index = 0} -> (u8[2,3,5])
    sa = Const() {value = tensor<f32[]>[0.05]} -> (f32[])
    za = Const() {value = tensor<u8[]>[120]} -> (u8[])
    ad = DequantizeLinear(a, sa, za) -> (f32[2,3,5])
    b = Const() {value = tensor<u8[5]>[0, 255, 7, 128, 64]} -> (u8[5])
    sb = Const() {value = tensor<f32[]>[0.02]} -> (f32[])
    zb = Const() {value = tensor<u8[]>[128]} -> (u8[])
    bd = DequantizeLinear(b, sb, zb) -> (f32[5])
    add = Add()" + operands + R"() -> (f32[2,3,5])
    sy = Const() {value = tensor<f32[]>[0.06]} -> (f32[])
    zy = Const() {value = tensor<u8[]>[100]} -> (u8[])
    y = QuantizeLinear(add, sy, zy) -> (u8[2,3,5] as "y")
    out = NetOutput(y)
  })";
    auto g = Fuse(text, true);
    EXPECT_EQ(Count(*g, "_QLinearAdd"), 1);
    EXPECT_EQ(Count(*g, "Add"), 0);
    const ir::Node* q = g->OutputNode()->input(0).node;
    ASSERT_EQ(q->type(), "_QLinearAdd");
    EXPECT_EQ(q->input(0).node->name(), "a") << "the full operand is A";
    engine::HostCpuEngine host;
    Tensor a = *Tensor::Allocate(DataType::kUint8, Shape{2, 3, 5});
    for (int64_t i = 0; i < a.NumElements(); ++i) a.data<uint8_t>()[i] = static_cast<uint8_t>((i * 71 + 3) % 256);
    auto src = ir::ParseGraph(text);
    ASSERT_TRUE(src.ok());
    auto value = [&](const std::string& name) {
      return (*src)->FindNode(name)->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
    };
    auto ad = test::RunOp1(host, "DequantizeLinear", {a, value("sa"), value("za")});
    auto bd = test::RunOp1(host, "DequantizeLinear", {value("b"), value("sb"), value("zb")});
    ASSERT_TRUE(ad.ok() && bd.ok());
    auto sum = test::RunOp1(host, "Add", {*ad, *bd});
    ASSERT_TRUE(sum.ok());
    auto want = test::RunOp1(host, "QuantizeLinear", {*sum, value("sy"), value("zy")});
    ASSERT_TRUE(want.ok());
    std::vector<Value> inputs = {a};
    for (int i = 1; i < q->num_inputs(); ++i) {
      inputs.push_back(q->input(i).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value());
    }
    auto got = test::RunKernel(host, q->op_desc(), inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), *want, test::Tolerance{1, 0})) << bias_first;
  }
}

// DQ -> Q between two parameter sets (QLinearConcat's inputs of other
// scales): one int8 pass, within one step of the chain; with equal
// parameters, nothing at all.
TEST(QdqFusionPassTest, RequantizationRunsOnTheIntegers) {
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (i8[3,7])
    sx = Const() {value = tensor<f32[]>[0.07]} -> (f32[])
    zx = Const() {value = tensor<i8[]>[-128]} -> (i8[])
    xd = DequantizeLinear(x, sx, zx) -> (f32[3,7])
    sy = Const() {value = tensor<f32[]>[0.03]} -> (f32[])
    zy = Const() {value = tensor<i8[]>[5]} -> (i8[])
    y = QuantizeLinear(xd, sy, zy) -> (i8[3,7] as "y")
    out = NetOutput(y)
  })";
  auto g = Fuse(text, true);
  EXPECT_EQ(Count(*g, "_QLinearAdd"), 1);
  EXPECT_EQ(Count(*g, "DequantizeLinear") + Count(*g, "QuantizeLinear"), 0);
  const ir::Node* q = g->OutputNode()->input(0).node;
  ASSERT_EQ(q->type(), "_QLinearAdd");
  EXPECT_EQ(q->op_desc().output(0).name, "y");
  engine::HostCpuEngine host;
  Tensor x = *Tensor::Allocate(DataType::kInt8, Shape{3, 7});
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<int8_t>()[i] = static_cast<int8_t>((i * 53) % 256 - 128);
  auto src = ir::ParseGraph(text);
  ASSERT_TRUE(src.ok());
  auto value = [&](const std::string& name) {
    return (*src)->FindNode(name)->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  };
  auto xd = test::RunOp1(host, "DequantizeLinear", {x, value("sx"), value("zx")});
  ASSERT_TRUE(xd.ok());
  auto want = test::RunOp1(host, "QuantizeLinear", {*xd, value("sy"), value("zy")});
  ASSERT_TRUE(want.ok());
  std::vector<Value> inputs = {x};
  for (int i = 1; i < q->num_inputs(); ++i) {
    inputs.push_back(q->input(i).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value());
  }
  auto got = test::RunKernel(host, q->op_desc(), inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), *want, test::Tolerance{1, 0}));
  // Equal parameters: the output is x itself.
  std::string same = Replaced(text, "tensor<f32[]>[0.03]", "tensor<f32[]>[0.07]");
  same = Replaced(same, "tensor<i8[]>[5]", "tensor<i8[]>[-128]");
  g = Fuse(same, true);
  EXPECT_EQ(g->OutputNode()->input(0).node->name(), "x");
}

TEST(QdqFusionPassTest, LeavesWhatIsNotAFusableChain) {
  // An Add that broadcasts other than by a suffix stays in float between
  // its DQ and Q nodes; a
  // Relu before a Q whose zero point is not the minimum is not absorbed (the
  // Conv then has a float result: ConvInteger and the scales); a Conv whose
  // weights are computed is not fused.
  Fuse(R"(graph main {
    a = Data() {index = 0} -> (u8[2,4])
    b = Data() {index = 1} -> (u8[2,1])
    s = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    z = Const() {value = tensor<u8[]>[3]} -> (u8[])
    ad = DequantizeLinear(a, s, z) -> (f32[2,4])
    bd = DequantizeLinear(b, s, z) -> (f32[2,1])
    add = Add(ad, bd) -> (f32[2,4])
    y = QuantizeLinear(add, s, z) -> (u8[2,4])
    out = NetOutput(y)
  })",
       false);
  auto g = Fuse(Replaced(kConvChain, "tensor<u8[]>[0]", "tensor<u8[]>[9]"), true);
  EXPECT_EQ(Count(*g, "Conv"), 0);
  EXPECT_EQ(Count(*g, "QLinearConv"), 0);
  EXPECT_EQ(Count(*g, "ConvInteger"), 1);
  EXPECT_EQ(Count(*g, "Relu"), 1);
  g = Fuse(Replaced(kConvChain, "w = Const() {value = tensor<i8[2,2,1,1]>[1, -2, 3, -4]}", "w = Data() {index = 1}"),
           false);
  EXPECT_EQ(Count(*g, "QLinearConv"), 0);
  // A Gemm whose C is scaled by beta stays in float.
  g = Fuse(Replaced(kFloatGemm, "{transB = 1}", "{transB = 1, beta = 0.5}"), false);
  EXPECT_EQ(Count(*g, "Gemm"), 1);
}

// x (u8) -> DQ -> Conv(DQ(w s8 per channel), DQ(bias i32)), 3x3 with padding,
// whose float result feeds a GlobalAveragePool (no Q after it).
constexpr char kFloatConv[] = R"(graph main {
  x = Data() {index = 0} -> (u8[1,2,5,3])
  sx = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
  zx = Const() {value = tensor<u8[]>[255]} -> (u8[])
  xd = DequantizeLinear(x, sx, zx) -> (f32[1,2,5,3])
  w = Const() {value = tensor<i8[3,2,3,3]>[1, -2, 3, -4, 5, -6, 7, -8, 127, -127, 0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4, -5, -6, -7, -8, -9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36]} -> (i8[3,2,3,3])
  sw = Const() {value = tensor<f32[3]>[0.25, 0.125, 0.5]} -> (f32[3])
  zw = Const() {value = tensor<i8[3]>[0, 0, 0]} -> (i8[3])
  wd = DequantizeLinear(w, sw, zw) {axis = 0} -> (f32[3,2,3,3])
  b = Const() {value = tensor<i32[3]>[8, -16, 1000]} -> (i32[3])
  sb = Const() {value = tensor<f32[3]>[0.125, 0.0625, 0.25]} -> (f32[3])
  bd = DequantizeLinear(b, sb) {axis = 0} -> (f32[3])
  conv = Conv(xd, wd, bd) {pads = [1, 1, 1, 1]} -> (f32[1,3,5,3])
  gap = GlobalAveragePool(conv) -> (f32[1,3,1,1] as "pooled")
  out = NetOutput(gap)
})";

TEST(QdqFusionPassTest, FloatResultConvComputesOnIntegersThenScales) {
  auto g = Fuse(kFloatConv, true);
  for (std::string_view gone : {"Conv", "DequantizeLinear"}) EXPECT_EQ(Count(*g, gone), 0) << gone;
  for (std::string_view kept : {"ConvInteger", "Cast", "Mul", "Add", "GlobalAveragePool"}) {
    EXPECT_EQ(Count(*g, kept), 1) << kept;
  }
  engine::HostCpuEngine host;
  Tensor x = *Tensor::Allocate(DataType::kUint8, Shape{1, 2, 5, 3});
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 97 + 5) % 256);
  x.data<uint8_t>()[0] = 0;  // the far end of the range from the zero point
  auto src = ir::ParseGraph(kFloatConv);
  ASSERT_TRUE(src.ok());
  auto value = [&](const std::string& name) {
    return (*src)->FindNode(name)->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  };
  auto xd = test::RunOp1(host, "DequantizeLinear", {x, value("sx"), value("zx")});
  auto wd = test::RunOp1(host, "DequantizeLinear", {value("w"), value("sw"), value("zw")},
                         {{"axis", ir::AttrValue(int64_t{0})}});
  auto bd = test::RunOp1(host, "DequantizeLinear", {value("b"), value("sb")}, {{"axis", ir::AttrValue(int64_t{0})}});
  ASSERT_TRUE(xd.ok() && wd.ok() && bd.ok());
  auto conv = test::RunOp1(host, "Conv", {*xd, *wd, *bd}, {{"pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1})}});
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto want = test::RunOp1(host, "GlobalAveragePool", {*conv});
  ASSERT_TRUE(want.ok()) << want.status();
  std::function<absl::StatusOr<Value>(const ir::OutPort&)> eval = [&](const ir::OutPort& p) -> absl::StatusOr<Value> {
    if (p.node->type() == ir::kData) return Value(x);
    if (p.node->type() == ir::kConst) return Value(p.node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value());
    std::vector<Value> inputs;
    for (const ir::OutPort& in : p.node->inputs()) {
      GE_ASSIGN_OR_RETURN(Value v, eval(in));
      inputs.push_back(std::move(v));
    }
    GE_ASSIGN_OR_RETURN(std::vector<Value> out, test::RunKernel(host, p.node->op_desc(), inputs));
    return out[p.index];
  };
  auto got = eval(g->OutputNode()->input(0));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(test::TensorNear(got->tensor(), *want, test::Tolerance{1e-4, 1e-5}));
}

TEST(QdqFusionPassTest, FloatResultConvWithU8WeightsStaysInFloat) {
  std::string text = Replaced(kFloatConv, "tensor<i8[3]>[0, 0, 0]} -> (i8[3])", "tensor<u8[3]>[0, 0, 0]} -> (u8[3])");
  const size_t from = text.find("  w = Const()"), to = text.find('\n', from);
  text.replace(from, to - from,
               "  w = Const() {value = tensor<u8[3,2,3,3]>[" + std::string(53 * 3, ' ') + "]} -> (u8[3,2,3,3])");
  std::string values;
  for (int i = 0; i < 54; ++i) values += std::to_string(i * 4) + (i < 53 ? ", " : "");
  text = Replaced(text, "[" + std::string(53 * 3, ' ') + "]", "[" + values + "]");
  auto g = Fuse(text, false);
  EXPECT_EQ(Count(*g, "Conv"), 1);
  EXPECT_EQ(Count(*g, "ConvInteger"), 0);
}

}  // namespace
}  // namespace ge::compiler
