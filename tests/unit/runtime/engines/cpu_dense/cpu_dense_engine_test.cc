// The cpu_dense engine as a whole: the plugin loads with its attributes,
// Initialize registers `_DenseFused`, constant weights are packed once (not
// per run), plans follow shape changes, and a fused residual of batch 1 is
// repeated over a dynamic batch.
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"

#include <cstdlib>

#include "base/ops/op_registry.h"
#include "runtime/engines/cpu_dense/post_ops.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "runtime/engines/plugin_loader.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

std::string PluginPath() {
  const char* dir = std::getenv("GED_BINARY_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/lib/ged/engines/libge_engine_cpu_dense.so";
}

TEST(CpuDenseEngineTest, PluginLoadsWithItsAttributes) {
  auto loaded = LoadEnginePlugin(PluginPath());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const EngineAttributes& a = (*loaded)->attributes();
  EXPECT_EQ(a.name, "cpu_dense");
  EXPECT_EQ(a.compute_cost, 1);
  EXPECT_TRUE(a.atomic);
  EXPECT_EQ((*loaded)->engine().graph_optimizers().size(), 1u);
  EXPECT_TRUE((*loaded)->engine().Initialize({}).ok());
}

TEST(CpuDenseEngineTest, InitializeRegistersTheFusedOp) {
  PassTestEngine();
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find("_DenseFused");
  ASSERT_NE(schema, nullptr);
  // A second engine in the same process finds it registered.
  CpuDenseEngine other;
  EXPECT_TRUE(other.Initialize({}).ok());
}

TEST(CpuDenseEngineTest, SupportedOpTypesCoverTheDenseOps) {
  const std::vector<std::string> types = PassTestEngine().info_store().SupportedOpTypes();
  for (const char* t : {"Conv", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool", "BatchNormalization",
                        "LayerNormalization", "Softmax", "Relu", "Add", "_DenseFused"}) {
    EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << t;
  }
}

// Runs one kernel several times, as an executor does.
class KernelRunner {
 public:
  KernelRunner(const ir::OpDesc& op, const std::vector<Value>& inputs, const std::vector<const Tensor*>& consts) {
    auto types = test::InferOutputTypes(op, inputs);
    EXPECT_TRUE(types.ok()) << types.status();
    output_types_ = *types;
    op_ = op;
    for (int i = 0; i < op_.num_outputs(); ++i) op_.mutable_output(i).type = output_types_[i];
    auto kernel = PassTestEngine().kernel_factory().CreateKernel(op_);
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    kernel_ = std::move(*kernel);
    PrepareContext p;
    p.op = &op_;
    for (const Value& v : inputs) p.input_types.push_back(test::TypeOf(v));
    p.output_types = output_types_;
    p.const_inputs = consts;
    p.const_inputs.resize(inputs.size(), nullptr);
    EXPECT_TRUE(kernel_->Prepare(p).ok());
    workspace_ = p.workspace_bytes;
  }
  Tensor Run(const std::vector<Value>& inputs) {
    test::TestExecuteContext ctx(inputs, output_types_, test::TestThreadPool(), workspace_);
    const absl::Status s = kernel_->Compute(ctx);
    EXPECT_TRUE(s.ok()) << s;
    return s.ok() ? ctx.outputs()[0].tensor() : Tensor();
  }

 private:
  ir::OpDesc op_;
  std::vector<ir::ValueType> output_types_;
  std::unique_ptr<Kernel> kernel_;
  size_t workspace_ = 0;
};

Tensor HostConv(const std::vector<Value>& inputs) {
  HostCpuEngine host;
  auto y = test::RunOp1(host, "Conv", inputs, {{"pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1})}});
  EXPECT_TRUE(y.ok()) << y.status();
  return y.ok() ? *y : Tensor();
}

ir::OpDesc ConvOp(const std::vector<Value>& inputs, bool mark_const) {
  test::OpBuilder b("Conv", "conv");
  b.Inputs(inputs).Outputs(1).Attr("pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1}));
  if (mark_const) b.Attr(kAttrConstInputs, ir::AttrValue(std::vector<int64_t>{1}));
  return b.Build();
}

TEST(CpuDenseEngineTest, ConstantWeightsArePackedOncePerTensor) {
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{32, 16, 3, 3}, 1);
  const Tensor x1 = test::RandomTensor(DataType::kFloat, Shape{1, 16, 8, 8}, 2);
  const Tensor x2 = test::RandomTensor(DataType::kFloat, Shape{1, 16, 8, 8}, 3);
  KernelRunner conv(ConvOp({x1, w}, /*mark_const=*/true), {x1, w}, {});
  const int64_t before = WeightPacks().load();
  EXPECT_TRUE(test::TensorNear(conv.Run({x1, w}), HostConv({x1, w}), {1e-4, 1e-4}));
  EXPECT_EQ(WeightPacks().load(), before + 1);
  EXPECT_TRUE(test::TensorNear(conv.Run({x2, w}), HostConv({x2, w}), {1e-4, 1e-4}));
  EXPECT_EQ(WeightPacks().load(), before + 1) << "the same weights were packed again";
  // Other storage: packed anew, and the result follows the new values.
  const Tensor w2 = test::RandomTensor(DataType::kFloat, Shape{32, 16, 3, 3}, 4);
  EXPECT_TRUE(test::TensorNear(conv.Run({x1, w2}), HostConv({x1, w2}), {1e-4, 1e-4}));
  EXPECT_EQ(WeightPacks().load(), before + 2);
}

TEST(CpuDenseEngineTest, WeightsKnownAtPrepareArePackedThere) {
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{32, 16, 3, 3}, 5);
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 16, 6, 6}, 6);
  const int64_t before = WeightPacks().load();
  KernelRunner conv(ConvOp({x, w}, /*mark_const=*/false), {x, w}, {nullptr, &w});
  EXPECT_EQ(WeightPacks().load(), before + 1);
  for (int run = 0; run < 3; ++run) {
    EXPECT_TRUE(test::TensorNear(conv.Run({x, w}), HostConv({x, w}), {1e-4, 1e-4}));
  }
  EXPECT_EQ(WeightPacks().load(), before + 1);
}

TEST(CpuDenseEngineTest, WeightsComputedAtRunTimeAreNeverCached) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{1, 16, 8, 8}, 7);
  Tensor w = test::RandomTensor(DataType::kFloat, Shape{32, 16, 3, 3}, 8);
  KernelRunner conv(ConvOp({x, w}, /*mark_const=*/false), {x, w}, {});
  const int64_t before = WeightPacks().load();
  EXPECT_TRUE(test::TensorNear(conv.Run({x, w}), HostConv({x, w}), {1e-4, 1e-4}));
  // New values in the same storage (what a planned arena does to activations).
  for (int64_t i = 0; i < w.NumElements(); ++i) w.data<float>()[i] *= -0.5f;
  EXPECT_TRUE(test::TensorNear(conv.Run({x, w}), HostConv({x, w}), {1e-4, 1e-4}));
  EXPECT_EQ(WeightPacks().load(), before);
}

TEST(CpuDenseEngineTest, PlansFollowShapeChanges) {
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{8, 4, 3, 3}, 9);
  const Tensor small = test::RandomTensor(DataType::kFloat, Shape{1, 4, 5, 5}, 10);
  const Tensor big = test::RandomTensor(DataType::kFloat, Shape{3, 4, 9, 7}, 11);
  ir::OpDesc op = ConvOp({small, w}, /*mark_const=*/true);
  op.mutable_output(0).type = ir::ValueType::Tensor(DataType::kFloat, Shape{-1, 8, -1, -1});
  auto kernel = PassTestEngine().kernel_factory().CreateKernel(op);
  ASSERT_TRUE(kernel.ok());
  for (const Tensor& x : {small, big, small}) {
    std::vector<Value> inputs = {x, w};
    auto types = test::InferOutputTypes(op, inputs);
    ASSERT_TRUE(types.ok());
    // Shapes unknown at prepare: the plan is built on the first run.
    test::TestExecuteContext ctx(inputs, *types, test::TestThreadPool(), 0);
    ASSERT_TRUE((*kernel)->Compute(ctx).ok());
    EXPECT_TRUE(test::TensorNear(ctx.outputs()[0].tensor(), HostConv(inputs), {1e-4, 1e-4}));
  }
}

// A fused Conv + Add + Relu compiled for a dynamic batch whose residual
// turns out to have batch 1 at run time (ONNX broadcasting allows it): the
// kernel repeats the residual per image.
TEST(CpuDenseEngineTest, FusedResidualOfBatchOneIsRepeated) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{3, 4, 6, 6}, 21);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{8, 4, 3, 3}, 22);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{8}, 23);
  const Tensor r = test::RandomTensor(DataType::kFloat, Shape{1, 8, 6, 6}, 24);
  test::OpBuilder builder(std::string(kDenseFusedOp), "conv");
  builder.Inputs({x, w, b, r}).Outputs(1).Attr("pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1}));
  builder.Attr(std::string(kAttrFusedBase), ir::AttrValue(std::string("Conv")));
  ir::OpDesc op = builder.Build();
  SetPostOps(PostOpChain{{{PostOpKind::kAdd, 0.0f, 0.0f}, {PostOpKind::kRelu, 0.0f, 0.0f}}}, op);
  op.mutable_input(kFusedAddInput).type = ir::ValueType::Tensor(DataType::kFloat, Shape{-1, 8, 6, 6});
  op.mutable_output(0).type = ir::ValueType::Tensor(DataType::kFloat, Shape{-1, 8, 6, 6});
  auto kernel = PassTestEngine().kernel_factory().CreateKernel(op);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const std::vector<Value> inputs = {x, w, b, r};
  const std::vector<ir::ValueType> types = {ir::ValueType::Tensor(DataType::kFloat, Shape{3, 8, 6, 6})};
  test::TestExecuteContext ctx(inputs, types, test::TestThreadPool(), 0);
  const absl::Status s = (*kernel)->Compute(ctx);
  ASSERT_TRUE(s.ok()) << s;
  HostCpuEngine host;
  auto sum = test::RunOp1(host, "Add", {HostConv({x, w, b}), r});
  ASSERT_TRUE(sum.ok()) << sum.status();
  auto expected = test::RunOp1(host, "Relu", {*sum});
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_TRUE(test::TensorNear(ctx.outputs()[0].tensor(), *expected, {1e-4, 1e-4}));
}

}  // namespace
}  // namespace ge::engine::cpu_dense
