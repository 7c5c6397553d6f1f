// StaticExecutor on placed graphs in the text form: results equal to the
// DynamicExecutor, the address table (changing, unchanged and frozen
// inputs), zero copy for aligned user buffers and copies for unaligned
// ones (inputs and outputs), weights (small ones packed), views, and device
// capacity errors.
#include "runtime/executor/static_executor.h"

#include <cstring>

#include "base/ir/text_format.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "compiler/build/task_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/executor/dynamic_executor.h"
#include "tests/testing/engines_test.h"

namespace ge::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<float> Floats(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements()); }

// A tensor whose data starts `skew` bytes past an aligned address.
Tensor Skewed(const std::vector<float>& values, size_t skew) {
  auto buffer = *Buffer::Allocate(values.size() * sizeof(float) + skew);
  std::memcpy(static_cast<char*>(buffer->data()) + skew, values.data(), values.size() * sizeof(float));
  return Tensor(DataType::kFloat, Shape{static_cast<int64_t>(values.size())}, buffer, skew);
}

constexpr char kChain[] = R"(graph main {
    x = Data() {index = 0} -> (f32[4])
    y = Data() {index = 1} -> (f32[4])
    w = Const() {value = tensor<f32[4]>[1, 2, 3, 4], _engine_name = "ge_local"} -> (f32[4])
    a = Add(x, y) {_engine_name = "host_cpu"}
    r = Relu(a) {_engine_name = "host_cpu"}
    m = Mul(r, w) {_engine_name = "host_cpu"}
    s = Reshape(m, shape) {_engine_name = "host_cpu"}
    shape = Const() {value = tensor<i64[2]>[2, 2], _engine_name = "ge_local"} -> (i64[2])
    n = Mul(s, s) {_engine_name = "host_cpu"}
    out = NetOutput(n, r)
  })";

class StaticExecutorTest : public ge::testing::EnginesTest {
 protected:
  absl::StatusOr<std::unique_ptr<ir::Graph>> Parse(std::string_view text) {
    GE_ASSIGN_OR_RETURN(auto graph, ir::ParseGraph(text));
    GE_RETURN_IF_ERROR(ops::InferShapes(*graph));
    return graph;
  }
  absl::StatusOr<std::unique_ptr<StaticExecutor>> Load(std::string_view text, device::Device& device) {
    GE_ASSIGN_OR_RETURN(auto graph, Parse(text));
    GE_ASSIGN_OR_RETURN(StaticProgram program, compiler::BuildStaticProgram(*graph, *engines_, 1));
    graph.reset();  // the executor keeps nothing of the graph
    return StaticExecutor::Load(std::move(program), *engines_, device, {});
  }

  device::CpuDevice device_{device::DeviceSpec{"cpu:0", 0, 1}};
};

TEST(WithNodePrefixTest, NamesTheNodeOnce) {
  const absl::Status bare = WithNodePrefix(absl::InvalidArgumentError("index 7 is out of range"), "g", "Gather");
  EXPECT_EQ(bare.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bare.message(), "node 'g' (Gather): index 7 is out of range");
  // A kernel's own NodeError already starts with the node: left as it is.
  EXPECT_EQ(WithNodePrefix(bare, "g", "Gather"), bare);
  // Another node's name is not this node's prefix.
  const absl::Status other = WithNodePrefix(bare, "gg", "Gather");
  EXPECT_EQ(other.message(), "node 'gg' (Gather): node 'g' (Gather): index 7 is out of range");
}

TEST_F(StaticExecutorTest, SameResultsAsDynamicExecutor) {
  auto exec = Load(kChain, device_);
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto graph = Parse(kChain);
  ASSERT_TRUE(graph.ok());
  auto dynamic = DynamicExecutor::Create(**graph, *engines_, {});
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  for (int run = 0; run < 3; ++run) {
    std::vector<Value> inputs = {Tensor::FromVector<float>({-1, 2, -3, 4.f + run}, Shape{4}),
                                 Tensor::FromVector<float>({0.5, 0.5, 0.5, 0.5}, Shape{4})};
    auto s = (*exec)->Run(inputs);
    auto d = (*dynamic)->Run(inputs);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_EQ(s->size(), 2u);
    EXPECT_EQ((*s)[0].tensor().shape(), (Shape{2, 2}));
    EXPECT_EQ(Floats((*s)[0].tensor()), Floats((*d)[0].tensor()));
    EXPECT_EQ(Floats((*s)[1].tensor()), Floats((*d)[1].tensor()));
  }
  EXPECT_EQ((*exec)->num_tasks(), 5);
}

TEST_F(StaticExecutorTest, RefreshesOnlyChangedInputs) {
  auto exec = Load(kChain, device_);
  ASSERT_TRUE(exec.ok()) << exec.status();
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4});
  Tensor y = Tensor::FromVector<float>({0, 0, 0, 0}, Shape{4});
  std::vector<Tensor> outputs = {*Tensor::Allocate(DataType::kFloat, Shape{2, 2}),
                                 *Tensor::Allocate(DataType::kFloat, Shape{4})};
  ASSERT_TRUE((*exec)->RunWithOutputs({x, y}, outputs).ok());
  const int first = (*exec)->last_run_stats().refreshed_entries;
  EXPECT_GE(first, 2);  // both inputs, plus the outputs written in place
  ASSERT_TRUE((*exec)->RunWithOutputs({x, y}, outputs).ok());
  EXPECT_EQ((*exec)->last_run_stats().refreshed_entries, 0);
  EXPECT_THAT(Floats(outputs[1]), ElementsAre(1, 2, 3, 4));
  // A new buffer for x only: one entry changes, and the results follow it.
  Tensor x2 = Tensor::FromVector<float>({5, 6, 7, 8}, Shape{4});
  ASSERT_TRUE((*exec)->RunWithOutputs({x2, y}, outputs).ok());
  EXPECT_EQ((*exec)->last_run_stats().refreshed_entries, 1);
  EXPECT_THAT(Floats(outputs[1]), ElementsAre(5, 6, 7, 8));
  EXPECT_THAT(Floats(outputs[0]), ElementsAre(25, 144, 441, 1024));
  // Contents change behind an unchanged address: no refresh, new results.
  x2.data<float>()[0] = -9;
  ASSERT_TRUE((*exec)->RunWithOutputs({x2, y}, outputs).ok());
  EXPECT_EQ((*exec)->last_run_stats().refreshed_entries, 0);
  EXPECT_THAT(Floats(outputs[1]), ElementsAre(0, 6, 7, 8));
}

TEST_F(StaticExecutorTest, FrozenInputsAreBoundOnceAndSkipped) {
  auto exec = Load(kChain, device_);
  ASSERT_TRUE(exec.ok()) << exec.status();
  ASSERT_TRUE((*exec)->FreezeInputs({1}).ok());
  EXPECT_THAT(std::string((*exec)->FreezeInputs({7}).message()), HasSubstr("cannot freeze input 7"));
  Tensor y = Tensor::FromVector<float>({1, 1, 1, 1}, Shape{4});
  auto out = (*exec)->Run({Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4}), y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*exec)->last_run_stats().frozen_inputs_skipped, 0);
  EXPECT_THAT(Floats((*out)[1].tensor()), ElementsAre(2, 3, 4, 5));
  // The frozen input is skipped: the first binding (and its contents) stays.
  y.data<float>()[0] = 10;
  out = (*exec)->Run({Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4}),
                      Tensor::FromVector<float>({100, 100, 100, 100}, Shape{4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*exec)->last_run_stats().frozen_inputs_skipped, 1);
  EXPECT_THAT(Floats((*out)[1].tensor()), ElementsAre(11, 3, 4, 5));
}

TEST_F(StaticExecutorTest, ZeroCopyForAlignedBuffersCopyForUnaligned) {
  auto exec = Load(kChain, device_);
  ASSERT_TRUE(exec.ok()) << exec.status();
  std::vector<Tensor> outputs = {*Tensor::Allocate(DataType::kFloat, Shape{2, 2}),
                                 *Tensor::Allocate(DataType::kFloat, Shape{4})};
  Tensor aligned = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4});
  Tensor unaligned = Skewed({1, 1, 1, 1}, 4);
  ASSERT_NE(reinterpret_cast<uintptr_t>(unaligned.raw_data()) % kStaticAlignment, 0u);
  ASSERT_TRUE((*exec)->RunWithOutputs({aligned, unaligned}, outputs).ok());
  StaticRunStats stats = (*exec)->last_run_stats();
  EXPECT_EQ(stats.zero_copy_inputs, 1);
  EXPECT_EQ(stats.copied_inputs, 1);
  // n's buffer holds only n (Mul(s, s) cannot overwrite s in place, both
  // inputs read it): written in place. r's is read by m too, so the arena
  // keeps it and it is copied out.
  EXPECT_EQ(stats.zero_copy_outputs, 1);
  EXPECT_EQ(stats.copied_outputs, 1);
  EXPECT_THAT(Floats(outputs[0]), ElementsAre(4, 36, 144, 400));
  EXPECT_THAT(Floats(outputs[1]), ElementsAre(2, 3, 4, 5));
  // An unaligned output buffer is filled by a copy.
  std::vector<Tensor> skewed_outputs = {Skewed({0, 0, 0, 0}, 8), Skewed({0, 0, 0, 0}, 4)};
  skewed_outputs[0] = Tensor(DataType::kFloat, Shape{2, 2}, skewed_outputs[0].buffer(), 8);
  ASSERT_TRUE((*exec)->RunWithOutputs({aligned, unaligned}, skewed_outputs).ok());
  stats = (*exec)->last_run_stats();
  EXPECT_EQ(stats.zero_copy_outputs, 0);
  EXPECT_EQ(stats.copied_outputs, 2);
  EXPECT_THAT(Floats(skewed_outputs[0]), ElementsAre(4, 36, 144, 400));
  // Back to aligned: the entry moves to the user's buffer again.
  ASSERT_TRUE((*exec)->RunWithOutputs({aligned, unaligned}, outputs).ok());
  EXPECT_EQ((*exec)->last_run_stats().zero_copy_outputs, 1);
  EXPECT_THAT(Floats(outputs[0]), ElementsAre(4, 36, 144, 400));
}

TEST_F(StaticExecutorTest, RejectsInputsOfTheWrongTypeNamingThem) {
  auto exec = Load(kChain, device_);
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run({Tensor::FromVector<float>({1, 2}, Shape{2}), Tensor::FromVector<float>({1, 2}, Shape{2})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("input 0 'x': expected f32[4]"));
  EXPECT_THAT(std::string((*exec)->Run({}).status().message()), HasSubstr("takes 2 inputs, got 0"));
}

TEST_F(StaticExecutorTest, DeviceCapacityErrorNamesDeviceAskedAndFree) {
  device::CpuDevice small(device::DeviceSpec{"cpu:3", 256, 1});
  auto exec = Load(R"(graph big {
      x = Data() {index = 0} -> (f32[1024])
      a = Relu(x) {_engine_name = "host_cpu"}
      b = Neg(a) {_engine_name = "host_cpu"}
      out = NetOutput(b)
    })", small);
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string message(exec.status().message());
  EXPECT_THAT(message, HasSubstr("cpu:3"));
  EXPECT_THAT(message, HasSubstr("cannot allocate"));
  EXPECT_THAT(message, HasSubstr("256 of 256 bytes free"));
  EXPECT_THAT(message, HasSubstr("static graph 'big'"));
  EXPECT_EQ(small.memory_stats().in_use_bytes, 0);
}

TEST_F(StaticExecutorTest, ArenaReturnsToTheDeviceWhenTheExecutorDies) {
  device::CpuDevice device(device::DeviceSpec{"cpu:1", 1 << 20, 1});
  {
    auto exec = Load(kChain, device);
    ASSERT_TRUE(exec.ok()) << exec.status();
    EXPECT_GT(device.memory_stats().in_use_bytes, 0);
    ASSERT_TRUE((*exec)->Run({Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4}),
                              Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4})})
                    .ok());
  }
  EXPECT_EQ(device.memory_stats().in_use_bytes, 0);
}

// Small constants are copied into one block in the order tasks read them
// (16-byte steps); a constant above kPackedWeightBytes keeps its own buffer.
TEST_F(StaticExecutorTest, PacksSmallWeightsInTaskOrder) {
  constexpr char kWeights[] = R"(graph main {
      x = Data() {index = 0} -> (f32[20])
      big = Const() {value = tensor<f32[20]>[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], _engine_name = "ge_local"} -> (f32[20])
      half = Const() {value = tensor<f32[1]>[0.5], _engine_name = "ge_local"} -> (f32[1])
      three = Const() {value = tensor<f32[1]>[3], _engine_name = "ge_local"} -> (f32[1])
      a = Add(x, big) {_engine_name = "host_cpu"}
      m = Mul(a, three) {_engine_name = "host_cpu"}
      n = Add(m, half) {_engine_name = "host_cpu"}
      out = NetOutput(n)
    })";
  auto exec = Load(kWeights, device_);
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ((*exec)->packed_weights(), 2);
  EXPECT_EQ((*exec)->packed_weight_bytes(), kPackedWeightAlignment + 4);  // three, then half
  std::vector<float> x(20);
  for (int i = 0; i < 20; ++i) x[i] = static_cast<float>(-i);
  for (int run = 0; run < 2; ++run) {
    auto out = (*exec)->Run({Tensor::FromVector<float>(x, Shape{20})});
    ASSERT_TRUE(out.ok()) << out.status();
    // (x + big) * 3 + 0.5 with x[i] = -i and big[i] = i + 1.
    EXPECT_EQ(Floats((*out)[0].tensor()), std::vector<float>(20, 3.5f));
  }
}

// The static path runs tasks one after another: pipeline stages come in
// ascending `_stage_level` even when the later stage is listed first and
// reads nothing of the earlier one.
TEST_F(StaticExecutorTest, TasksRunStageByStage) {
  constexpr char kStaged[] = R"(graph main {
      x = Data() {index = 0} -> (f32[2])
      late = Relu(x) {_engine_name = "host_cpu", _stage_level = 1}
      late2 = Neg(late) {_engine_name = "host_cpu", _stage_level = 1}
      early = Neg(x) {_engine_name = "host_cpu", _stage_level = 0}
      out = NetOutput(early, late2)
    })";
  auto graph = Parse(kStaged);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto program = compiler::BuildStaticProgram(**graph, *engines_, 1);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<std::string> names;
  for (const StaticTask& t : program->tasks) names.push_back(t.op.name());
  EXPECT_THAT(names, ElementsAre("early", "late", "late2"));
  auto exec = StaticExecutor::Load(*std::move(program), *engines_, device_, {});
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run({Tensor::FromVector<float>({-1, 2}, Shape{2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0].tensor()), ElementsAre(1, -2));
  EXPECT_THAT(Floats((*out)[1].tensor()), ElementsAre(0, -2));
  // A later stage feeding an earlier one cannot run stage by stage.
  auto backwards = Parse(R"(graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x) {_engine_name = "host_cpu", _stage_level = 1}
      b = Neg(a) {_engine_name = "host_cpu", _stage_level = 0}
      out = NetOutput(b)
    })");
  ASSERT_TRUE(backwards.ok()) << backwards.status();
  auto refused = compiler::BuildStaticProgram(**backwards, *engines_, 1);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("cannot run in ascending order"));
}

TEST_F(StaticExecutorTest, BuilderRefusesWhatTheStaticPathCannotRun) {
  auto graph = Parse(R"(graph main {
      x = Data() {index = 0} -> (f32[-1])
      r = Relu(x) {_engine_name = "host_cpu"}
      out = NetOutput(r)
    })");
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto program = compiler::BuildStaticProgram(**graph, *engines_, 1);
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("node 'x' output 0 has type f32[-1]"));
}

}  // namespace
}  // namespace ge::runtime
