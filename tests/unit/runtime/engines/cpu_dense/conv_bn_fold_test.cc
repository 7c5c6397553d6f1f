// ConvBatchNormFold: text in, text out, and the folded Conv computes what
// Conv + BatchNormalization computed.
#include "runtime/engines/cpu_dense/conv_bn_fold.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/ir/op_types.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

// scale / sqrt(var + eps) = [3/2, 1/1] with eps = 1, so the folded values
// are exact: W' = W * [1.5, 1], B' = (B - mean) * a + bias.
constexpr char kConvBn[] = R"(graph main {
  x = Data() {index = 0} -> (f32[1,1,3,3])
  w = Const() {value = tensor<f32[2,1,1,1]>[1.0, 2.0]} -> (f32[2,1,1,1])
  b = Const() {value = tensor<f32[2]>[0.5, -1.0]} -> (f32[2])
  conv = Conv(x, w, b) -> (f32[1,2,3,3])
  scale = Const() {value = tensor<f32[2]>[3.0, 1.0]} -> (f32[2])
  shift = Const() {value = tensor<f32[2]>[0.25, 0.5]} -> (f32[2])
  mean = Const() {value = tensor<f32[2]>[1.0, 0.0]} -> (f32[2])
  var = Const() {value = tensor<f32[2]>[3.0, 0.0]} -> (f32[2])
  bn = BatchNormalization(conv, scale, shift, mean, var) {epsilon = 1.0} -> (f32[1,2,3,3] as "y")
  out = NetOutput(bn)
})";

TEST(ConvBnFoldTest, FoldsIntoNewConstants) {
  auto g = Parse(kConvBn);
  auto changed = FoldConvBatchNorm(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[1,1,3,3])
    conv = Conv(x, conv_folded_weights, conv_folded_bias) -> (f32[1,2,3,3] as "y")
    out = NetOutput(conv)
    conv_folded_weights = Const() {value = tensor<f32[2,1,1,1]>[1.5, 2.0]} -> (f32[2,1,1,1])
    conv_folded_bias = Const() {value = tensor<f32[2]>[-0.5, -0.5]} -> (f32[2])
  })"));
}

TEST(ConvBnFoldTest, FoldedConvComputesTheSame) {
  // A Conv without bias (ResNet's form), folded, against the pair on host_cpu.
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (f32[1,3,5,5])
    w = Const() {value = tensor<f32[2,3,1,1]>[0.5, -1.0, 2.0, 0.25, 1.5, -0.75]} -> (f32[2,3,1,1])
    conv = Conv(x, w) -> (f32[1,2,5,5])
    scale = Const() {value = tensor<f32[2]>[0.7, 1.3]} -> (f32[2])
    shift = Const() {value = tensor<f32[2]>[0.1, -0.2]} -> (f32[2])
    mean = Const() {value = tensor<f32[2]>[0.3, -0.4]} -> (f32[2])
    var = Const() {value = tensor<f32[2]>[0.9, 1.7]} -> (f32[2])
    bn = BatchNormalization(conv, scale, shift, mean, var) -> (f32[1,2,5,5])
    out = NetOutput(bn)
  })";
  auto g = Parse(text);
  ASSERT_TRUE(FoldConvBatchNorm(*g, AnyNode).ok());
  const ir::Node* conv = g->FindNode("conv");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->num_inputs(), 3);
  const Tensor w = conv->input(1).node->op_desc().GetAttr<Tensor>("value").value();
  const Tensor b = conv->input(2).node->op_desc().GetAttr<Tensor>("value").value();
  HostCpuEngine host;
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{1, 3, 5, 5}, 7);
  auto folded = test::RunOp1(host, "Conv", {x, w, b});
  auto raw = test::RunOp1(
      host, "Conv", {x, test::MakeTensor(DataType::kFloat, {0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, Shape{2, 3, 1, 1})});
  ASSERT_TRUE(folded.ok() && raw.ok());
  auto f32 = [](std::vector<double> v) { return test::MakeTensor(DataType::kFloat, v, Shape{2}); };
  auto expected = test::RunOp1(host, "BatchNormalization",
                               {*raw, f32({0.7, 1.3}), f32({0.1, -0.2}), f32({0.3, -0.4}), f32({0.9, 1.7})});
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_TRUE(test::TensorNear(*folded, *expected, {1e-5, 1e-5}));
}

TEST(ConvBnFoldTest, LeavesPairsItCannotFold) {
  const std::string training = R"(graph main {
    x = Data() {index = 0} -> (f32[1,1,3,3])
    w = Const() {value = tensor<f32[1,1,1,1]>[1.0]} -> (f32[1,1,1,1])
    conv = Conv(x, w) -> (f32[1,1,3,3])
    p = Const() {value = tensor<f32[1]>[1.0]} -> (f32[1])
    bn = BatchNormalization(conv, p, p, p, p) {training_mode = 1} -> (f32[1,1,3,3])
    out = NetOutput(bn)
  })";
  const std::string shared = R"(graph main {
    x = Data() {index = 0} -> (f32[1,1,3,3])
    w = Const() {value = tensor<f32[1,1,1,1]>[1.0]} -> (f32[1,1,1,1])
    conv = Conv(x, w) -> (f32[1,1,3,3])
    p = Const() {value = tensor<f32[1]>[1.0]} -> (f32[1])
    bn = BatchNormalization(conv, p, p, p, p) -> (f32[1,1,3,3])
    out = NetOutput(bn, conv)
  })";
  const std::string runtime_weights = R"(graph main {
    x = Data() {index = 0} -> (f32[1,1,3,3])
    w = Data() {index = 1} -> (f32[1,1,1,1])
    conv = Conv(x, w) -> (f32[1,1,3,3])
    p = Const() {value = tensor<f32[1]>[1.0]} -> (f32[1])
    bn = BatchNormalization(conv, p, p, p, p) -> (f32[1,1,3,3])
    out = NetOutput(bn)
  })";
  const std::string runtime_stats = R"(graph main {
    x = Data() {index = 0} -> (f32[1,1,3,3])
    v = Data() {index = 1} -> (f32[1])
    w = Const() {value = tensor<f32[1,1,1,1]>[1.0]} -> (f32[1,1,1,1])
    conv = Conv(x, w) -> (f32[1,1,3,3])
    p = Const() {value = tensor<f32[1]>[1.0]} -> (f32[1])
    bn = BatchNormalization(conv, p, p, p, v) -> (f32[1,1,3,3])
    out = NetOutput(bn)
  })";
  for (const std::string& text : {training, shared, runtime_weights, runtime_stats}) {
    auto g = Parse(text);
    auto changed = FoldConvBatchNorm(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
    EXPECT_EQ(ir::PrintGraph(*g), Canonical(text));
  }
}

// Every Const gets seeded values (variances positive), so the folds work on
// non-trivial numbers.
void Fill(ir::Graph& g) {
  uint64_t seed = 40;
  g.ForEachNode([&](ir::Node* n) {
    if (n->type() != ir::kConst) return;
    const Shape shape = n->op_desc().output(0).type.shape();
    const bool positive = n->name() == "var";
    n->mutable_op_desc().SetAttr(ir::kAttrValue,
                                 test::RandomTensor(DataType::kFloat, shape, seed++, positive ? 0.5 : -1.0, 1.5));
  });
}

Tensor ValueOf(const ir::Graph& g, const std::string& name) {
  return g.FindNode(name)->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
}

// Pre-norm: a BatchNormalization read only by an unpadded (here grouped,
// dilated) Conv folds into its weights; Conv(x, W', B') equals
// Conv(BN(x), W, B) on host_cpu. A padded Conv, a BN read twice and a Conv
// reading the BN at W are left alone.
TEST(ConvBnFoldTest, BatchNormFoldsIntoTheConvItFeeds) {
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (f32[2,4,7,7])
    scale = Const() {value = tensor<f32[4]>splat(0.0)} -> (f32[4])
    shift = Const() {value = tensor<f32[4]>splat(0.0)} -> (f32[4])
    mean = Const() {value = tensor<f32[4]>splat(0.0)} -> (f32[4])
    var = Const() {value = tensor<f32[4]>splat(0.0)} -> (f32[4])
    w = Const() {value = tensor<f32[6,2,3,3]>splat(0.0)} -> (f32[6,2,3,3])
    b = Const() {value = tensor<f32[6]>splat(0.0)} -> (f32[6])
    bn = BatchNormalization(x, scale, shift, mean, var) {epsilon = 0.001} -> (f32[2,4,7,7])
    conv = Conv(bn, w, b) {dilations = [2, 2], group = 2} -> (f32[2,6,3,3])
    out = NetOutput(conv)
  })";
  auto g = Parse(text);
  Fill(*g);
  std::vector<Tensor> params;
  for (const char* name : {"scale", "shift", "mean", "var", "w", "b"}) params.push_back(ValueOf(*g, name));
  auto changed = FoldBatchNormIntoConv(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(*changed);
  EXPECT_EQ(g->FindNode("bn"), nullptr);
  const ir::Node* conv = g->FindNode("conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->input(0).node->name(), "x");
  const Tensor w = conv->input(1).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  const Tensor b = conv->input(2).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  HostCpuEngine host;
  const ir::AttrMap attrs = {{"dilations", ir::AttrValue(std::vector<int64_t>{2, 2})},
                             {"group", ir::AttrValue(int64_t{2})}};
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 4, 7, 7}, 9);
  auto normalized = test::RunOp1(host, "BatchNormalization", {x, params[0], params[1], params[2], params[3]},
                                 {{"epsilon", ir::AttrValue(0.001f)}});
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  auto expected = test::RunOp1(host, "Conv", {*normalized, params[4], params[5]}, attrs);
  auto got = test::RunOp1(host, "Conv", {x, w, b}, attrs);
  ASSERT_TRUE(expected.ok() && got.ok());
  EXPECT_TRUE(test::TensorNear(*got, *expected, {1e-4, 1e-4}));

  for (const char* conv_line : {"conv = Conv(bn, w, b) {group = 2, pads = [1, 0, 1, 0]} -> (f32[2,6,7,5])",
                                "conv = Conv(bn, w, b) {group = 2, auto_pad = \"SAME_UPPER\"} -> (f32[2,6,7,7])"}) {
    std::string padded = absl::StrReplaceAll(
        text, {{"conv = Conv(bn, w, b) {dilations = [2, 2], group = 2} -> (f32[2,6,3,3])", conv_line}});
    auto kept = Parse(padded);
    auto none = FoldBatchNormIntoConv(*kept, AnyNode);
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(*none) << conv_line;
  }
  auto twice = Parse(absl::StrReplaceAll(text, {{"out = NetOutput(conv)", "out = NetOutput(conv, bn)"}}));
  auto none = FoldBatchNormIntoConv(*twice, AnyNode);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
}

// A layer scale: a Mul by a per-output-channel constant ([M, 1, 1],
// [1, M, 1, 1] or one value) that alone reads a Conv's output folds into the
// Conv (with or without bias); other constants and a Conv read twice stay.
TEST(ConvBnFoldTest, ChannelScalesFoldIntoTheConv) {
  for (const std::string& factor : {std::string("6,1,1"), std::string("1,6,1,1"), std::string("1")}) {
    for (bool bias : {true, false}) {
      const std::string text = absl::StrCat(R"(graph main {
        x = Data() {index = 0} -> (f32[2,3,6,5])
        w = Const() {value = tensor<f32[6,3,3,3]>splat(0.0)} -> (f32[6,3,3,3])
        b = Const() {value = tensor<f32[6]>splat(0.0)} -> (f32[6])
        f = Const() {value = tensor<f32[)",
                                            factor, R"(]>splat(0.0)} -> (f32[)", factor, R"(])
        conv = Conv(x, w)",
                                            bias ? ", b" : "", R"() {pads = [1, 1, 1, 1]} -> (f32[2,6,6,5])
        m = Mul(f, conv) -> (f32[2,6,6,5])
        out = NetOutput(m)
      })");
      auto g = Parse(text);
      Fill(*g);
      const Tensor w0 = ValueOf(*g, "w"), b0 = ValueOf(*g, "b"), f0 = ValueOf(*g, "f");
      auto changed = FoldConvChannelScale(*g, AnyNode);
      ASSERT_TRUE(changed.ok()) << changed.status();
      ASSERT_TRUE(*changed) << factor;
      EXPECT_EQ(g->FindNode("m"), nullptr);
      const ir::Node* conv = g->FindNode("conv");
      ASSERT_NE(conv, nullptr);
      const Tensor w = conv->input(1).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
      const Tensor b = conv->input(2).node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
      HostCpuEngine host;
      const ir::AttrMap attrs = {{"pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1})}};
      const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3, 6, 5}, 5);
      auto raw = bias ? test::RunOp1(host, "Conv", {x, w0, b0}, attrs) : test::RunOp1(host, "Conv", {x, w0}, attrs);
      ASSERT_TRUE(raw.ok());
      auto expected = test::RunOp1(host, "Mul", {f0, *raw});
      auto got = test::RunOp1(host, "Conv", {x, w, b}, attrs);
      ASSERT_TRUE(expected.ok() && got.ok());
      EXPECT_TRUE(test::TensorNear(*got, *expected, {1e-5, 1e-5})) << factor << " bias " << bias;
    }
  }
  const std::string base = R"(graph main {
    x = Data() {index = 0} -> (f32[1,3,4,4])
    w = Const() {value = tensor<f32[6,3,1,1]>splat(1.0)} -> (f32[6,3,1,1])
    f = Const() {value = tensor<f32[SHAPE]>splat(2.0)} -> (f32[SHAPE])
    conv = Conv(x, w) -> (f32[1,6,4,4])
    m = Mul(conv, f) -> (f32[1,6,4,4])
    out = NetOutput(OUTS)
  })";
  for (const auto& [shape, outs] :
       {std::pair<std::string, std::string>{"1,1,1,4", "m"}, {"6,1,4", "m"}, {"6,1,1", "m, conv"}, {"6,4,4", "m"}}) {
    auto g = Parse(absl::StrReplaceAll(base, {{"SHAPE", shape}, {"OUTS", outs}}));
    auto none = FoldConvChannelScale(*g, AnyNode);
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(*none) << shape << " " << outs;
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
