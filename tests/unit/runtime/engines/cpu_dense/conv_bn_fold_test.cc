// ConvBatchNormFold: text in, text out, and the folded Conv computes what
// Conv + BatchNormalization computed.
#include "runtime/engines/cpu_dense/conv_bn_fold.h"

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
  auto raw = test::RunOp1(host, "Conv", {x, test::MakeTensor(DataType::kFloat, {0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, Shape{2, 3, 1, 1})});
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

}  // namespace
}  // namespace ge::engine::cpu_dense
