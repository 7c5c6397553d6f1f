// ge_local, the engine of ops that need no computation, loaded as a plugin
// through the registry: what it claims (CheckSupported, the op list), the
// kernels it makes (Const, NoOp, the zero-copy views) and the errors of the
// ops it cannot run alone (Data and NetOutput are bound by the executor;
// the state ops need a session's variables).
#include <algorithm>
#include <string>

#include "base/ir/graph.h"
#include "base/ir/op_types.h"
#include "runtime/engines/engine_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::test {
namespace {

using ::testing::HasSubstr;

const engine::Engine& GeLocal() {
  static engine::EngineRegistry* engines = [] {
    auto registry = engine::CreateEngineRegistry({}, {});
    GE_CHECK(registry.ok());
    return registry->release();
  }();
  const engine::Engine* e = engines->Find("ge_local");
  GE_CHECK(e != nullptr);
  return *e;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// A node of `type` with `inputs` f32[4] inputs and `outputs` outputs, in a
// graph of its own (CheckSupported takes a node).
absl::Status Check(const std::string& type, int outputs) {
  ir::Graph graph("g");
  ir::OpDesc op("n", type);
  for (int i = 0; i < outputs; ++i)
    op.AddOutput({"y" + std::to_string(i), ir::ValueType::Tensor(DataType::kFloat, Shape{4})});
  GE_ASSIGN_OR_RETURN(ir::Node * node, graph.AddNode(std::move(op)));
  return GeLocal().info_store().CheckSupported(*node);
}

TEST(GeLocalEngineTest, ClaimsTheOpsThatNeedNoComputation) {
  for (const char* type : {"Data", "NetOutput", "Const", "NoOp", "Identity", "Reshape", "Squeeze", "Unsqueeze",
                           "Flatten", "Variable", "FileConstant", "VarIsInitializedOp"}) {
    EXPECT_TRUE(Check(type, 1).ok()) << type;
  }
  const absl::Status add = Check("Add", 1);
  EXPECT_EQ(add.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Message(add), HasSubstr("Add"));
  // A view forwards one output; more would need computation.
  EXPECT_EQ(Check("Reshape", 2).code(), absl::StatusCode::kUnimplemented);
  const std::vector<std::string> types = GeLocal().info_store().SupportedOpTypes();
  EXPECT_TRUE(std::is_sorted(types.begin(), types.end()));
  EXPECT_EQ(types.size(), 12u);
}

TEST(GeLocalEngineTest, ConstProducesItsValue) {
  const Tensor value = Tensor::FromVector<float>({1, 2, 3}, Shape{3});
  auto out = RunOp1(GeLocal(), "Const", {}, {{std::string(ir::kAttrValue), ir::AttrValue(value)}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(TensorEq(*out, value));
}

TEST(GeLocalEngineTest, ViewsShareTheInputsStorage) {
  const Tensor in = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{1, 6})};
  auto out = RunOp(GeLocal(), "Flatten", {Value(in)}, {{"axis", int64_t{0}}}, 1, options);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& flat = (*out)[0].tensor();
  EXPECT_EQ(flat.shape(), (Shape{1, 6}));
  EXPECT_EQ(flat.raw_data(), in.raw_data()) << "a view copies nothing";
  auto same = RunOp1(GeLocal(), "Identity", {Value(in)});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->raw_data(), in.raw_data());
}

TEST(GeLocalEngineTest, AViewWhoseShapeDoesNotFitIsAnError) {
  const Tensor in = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4});
  RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{5})};
  options.check_output_types = false;
  auto out = RunOp(GeLocal(), "Identity", {Value(in)}, {}, 1, options);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(Message(out.status()), HasSubstr("does not fit"));
}

TEST(GeLocalEngineTest, NoOpRunsAndProducesNothing) {
  auto out = RunOp(GeLocal(), "NoOp", {}, {}, 0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
}

TEST(GeLocalEngineTest, OpsItCannotRunAloneSayWhy) {
  ir::OpDesc data("x", std::string(ir::kData));
  data.AddOutput({"x", ir::ValueType::Tensor(DataType::kFloat, Shape{4})});
  auto kernel = GeLocal().kernel_factory().CreateKernel(data);
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(kernel.status()), HasSubstr("bound by the executor"));

  // The state ops need a session's variables; the test context has none.
  ir::OpDesc var("v", std::string(ir::kVariable));
  var.AddOutput({"v", ir::ValueType::Tensor(DataType::kFloat, Shape{4})});
  var.SetAttr("shape", Shape{4});
  var.SetAttr("dtype", static_cast<int64_t>(DataType::kFloat));
  auto run = RunKernel(GeLocal(), var, {});
  EXPECT_EQ(run.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(run.status()), HasSubstr("needs a session's variables"));

  ir::OpDesc add("a", "Add");
  EXPECT_EQ(GeLocal().kernel_factory().CreateKernel(add).status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace ge::test
