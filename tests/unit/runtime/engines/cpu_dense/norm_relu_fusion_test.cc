// NormReluFusion: text in, text out (what fuses and what is left), and a
// fused BatchNormalization computing Relu(BatchNormalization(x)) on cpu_dense
// against host_cpu's two ops.
#include "runtime/engines/cpu_dense/norm_relu_fusion.h"

#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr const char* kParams = R"(
    s = Const() {value = tensor<f32[4]>[1.0, 0.5, 2.0, 1.5]} -> (f32[4])
    b = Const() {value = tensor<f32[4]>[0.1, -0.2, 0.3, 0.0]} -> (f32[4])
    m = Const() {value = tensor<f32[4]>[0.0, 0.1, -0.1, 0.2]} -> (f32[4])
    v = Const() {value = tensor<f32[4]>[1.0, 0.5, 0.8, 1.2]} -> (f32[4])
)";

std::string Graph(const std::string& body) { return "graph main {\n" + std::string(kParams) + body + "}"; }

TEST(NormReluFusionTest, TheReluBecomesTheNormsAttribute) {
  auto g = Parse(Graph(R"(
    x = Data() {index = 0} -> (f32[-1,4,5,5])
    bn = BatchNormalization(x, s, b, m, v) {epsilon = 0.001} -> (f32[-1,4,5,5])
    r = Relu(bn) -> (f32[-1,4,5,5])
    w = Const() {value = tensor<f32[2,4,1,1]>splat(0.5)} -> (f32[2,4,1,1])
    conv = Conv(r, w) {kernel_shape = [1, 1]} -> (f32[-1,2,5,5])
    out = NetOutput(conv)
  )"));
  auto changed = FuseNormRelu(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(Graph(R"(
    x = Data() {index = 0} -> (f32[-1,4,5,5])
    bn = BatchNormalization(x, s, b, m, v) {_fused_relu = 1, epsilon = 0.001} -> (f32[-1,4,5,5])
    w = Const() {value = tensor<f32[2,4,1,1]>splat(0.5)} -> (f32[2,4,1,1])
    conv = Conv(bn, w) {kernel_shape = [1, 1]} -> (f32[-1,2,5,5])
    out = NetOutput(conv)
  )")));
  // Idempotent.
  changed = FuseNormRelu(*g, AnyNode);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

TEST(NormReluFusionTest, LeavesWhatItCannotFuse) {
  const std::vector<std::string> bodies = {
      // the Relu's tensor is a graph output
      R"(
    x = Data() {index = 0} -> (f32[1,4,5,5])
    bn = BatchNormalization(x, s, b, m, v) -> (f32[1,4,5,5])
    r = Relu(bn) -> (f32[1,4,5,5])
    out = NetOutput(r)
  )",
      // the norm's output has a second consumer
      R"(
    x = Data() {index = 0} -> (f32[1,4,5,5])
    bn = BatchNormalization(x, s, b, m, v) -> (f32[1,4,5,5])
    r = Relu(bn) -> (f32[1,4,5,5])
    a = Add(r, bn) -> (f32[1,4,5,5])
    out = NetOutput(a)
  )",
      // a rank the kernel does not run (it would fall back to the reference)
      R"(
    x = Data() {index = 0} -> (f32[1,4,2,2,2,2])
    bn = BatchNormalization(x, s, b, m, v) -> (f32[1,4,2,2,2,2])
    r = Relu(bn) -> (f32[1,4,2,2,2,2])
    e = Exp(r) -> (f32[1,4,2,2,2,2])
    out = NetOutput(e)
  )",
      // not a Relu
      R"(
    x = Data() {index = 0} -> (f32[1,4,5,5])
    bn = BatchNormalization(x, s, b, m, v) -> (f32[1,4,5,5])
    r = Sigmoid(bn) -> (f32[1,4,5,5])
    e = Exp(r) -> (f32[1,4,5,5])
    out = NetOutput(e)
  )",
  };
  for (const std::string& body : bodies) {
    auto g = Parse(Graph(body));
    const std::string before = ir::PrintGraph(*g);
    auto changed = FuseNormRelu(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << body;
    EXPECT_EQ(ir::PrintGraph(*g), before);
  }
  // The filter: a Relu placed elsewhere stays.
  auto g = Parse(Graph(R"(
    x = Data() {index = 0} -> (f32[1,4,5,5])
    bn = BatchNormalization(x, s, b, m, v) -> (f32[1,4,5,5])
    r = Relu(bn) -> (f32[1,4,5,5])
    e = Exp(r) -> (f32[1,4,5,5])
    out = NetOutput(e)
  )"));
  auto changed = FuseNormRelu(*g, [](const ir::Node& n) { return n.type() != "Relu"; });
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

// The fused kernel against host_cpu's BatchNormalization then Relu, ranks 2
// to 5 (negative scales and shifts, so that the ReLU cuts).
TEST(NormReluFusionTest, TheFusedKernelComputesReluOfTheNorm) {
  HostCpuEngine host;
  for (const Shape& shape : {Shape{3, 16}, Shape{2, 16, 7}, Shape{2, 16, 5, 6}, Shape{1, 16, 3, 4, 5}}) {
    const Tensor x = test::RandomTensor(DataType::kFloat, shape, 1, -2, 2);
    std::vector<Value> inputs = {x};
    for (uint64_t seed = 2; seed <= 5; ++seed) {
      inputs.push_back(test::RandomTensor(DataType::kFloat, Shape{16}, seed, seed == 5 ? 0.5 : -1, 1.5));
    }
    const ir::AttrMap attrs = {{"epsilon", ir::AttrValue(1e-3f)}};
    auto norm = test::RunOp1(host, "BatchNormalization", inputs, attrs);
    ASSERT_TRUE(norm.ok()) << norm.status();
    auto want = test::RunOp1(host, "Relu", {*norm});
    ASSERT_TRUE(want.ok()) << want.status();
    test::OpBuilder builder("BatchNormalization", "bn");
    builder.Inputs(inputs)
        .Outputs(1)
        .Attr("epsilon", ir::AttrValue(1e-3f))
        .Attr(kAttrFusedRelu, ir::AttrValue(int64_t{1}));
    ir::OpDesc op = builder.Build();
    auto got = test::RunKernel(PassTestEngine(), op, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), *want, {1e-5, 1e-5})) << shape.ToString();
  }
}

// An InstanceNormalization takes its Relu too, and cpu_dense's kernel
// computes Relu(InstanceNormalization(x)), ranks 3 to 5.
TEST(NormReluFusionTest, InstanceNormTakesItsReluAndComputesIt) {
  auto g = Parse(Graph(R"(
    x = Data() {index = 0} -> (f32[-1,4,5,5])
    in = InstanceNormalization(x, s, b) {epsilon = 0.001} -> (f32[-1,4,5,5])
    r = Relu(in) -> (f32[-1,4,5,5])
    w = Const() {value = tensor<f32[2,4,1,1]>splat(0.5)} -> (f32[2,4,1,1])
    conv = Conv(r, w) {kernel_shape = [1, 1]} -> (f32[-1,2,5,5])
    out = NetOutput(conv)
  )"));
  auto changed = FuseNormRelu(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const ir::Node* in = g->FindNode("in");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->op_desc().GetAttrOr<int64_t>(kAttrFusedRelu, 0), 1);
  EXPECT_EQ(g->FindNode("r"), nullptr);

  HostCpuEngine host;
  for (const Shape& shape : {Shape{2, 16, 7}, Shape{2, 16, 5, 6}, Shape{1, 16, 3, 4, 5}}) {
    const Tensor x = test::RandomTensor(DataType::kFloat, shape, 1, -2, 2);
    std::vector<Value> inputs = {x};
    for (uint64_t seed = 2; seed <= 3; ++seed)
      inputs.push_back(test::RandomTensor(DataType::kFloat, Shape{16}, seed, -1, 1.5));
    const ir::AttrMap attrs = {{"epsilon", ir::AttrValue(1e-3f)}};
    auto norm = test::RunOp1(host, "InstanceNormalization", inputs, attrs);
    ASSERT_TRUE(norm.ok()) << norm.status();
    auto want = test::RunOp1(host, "Relu", {*norm});
    ASSERT_TRUE(want.ok()) << want.status();
    test::OpBuilder builder("InstanceNormalization", "in");
    builder.Inputs(inputs)
        .Outputs(1)
        .Attr("epsilon", ir::AttrValue(1e-3f))
        .Attr(kAttrFusedRelu, ir::AttrValue(int64_t{1}));
    auto got = test::RunKernel(PassTestEngine(), builder.Build(), inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), *want, {1e-5, 1e-5})) << shape.ToString();
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
