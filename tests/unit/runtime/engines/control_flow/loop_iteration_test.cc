// The per-iteration path of lowered Loops: a sequence the body grows stays
// one storage (amortized O(1) per element), and the executor's inference
// cache follows the values inference reads, so shapes that change with them
// and errors of later iterations are as without it.
#include <cstdint>
#include <numeric>

#include "base/value.h"
#include "compiler/frontend/onnx_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/onnx_builder.h"
#include "tests/unit/base/ir/ir_test_util.h"
#include "tests/unit/runtime/engines/control_flow/cf_test_util.h"

namespace ge::test {
namespace {

using onnx_builder::AddInitializer;
using onnx_builder::AddInput;
using onnx_builder::AddNode;
using onnx_builder::AddOutput;
using onnx_builder::AttrGraph;
using onnx_builder::AttrInt;
using onnx_builder::kBool;
using onnx_builder::kI64;
using onnx_builder::MakeModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

onnx::ValueInfoProto* AddSequence(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                                  const std::string& name, int32_t elem) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  onnx_builder::SetTensorType(v->mutable_type()->mutable_sequence_type()->mutable_elem_type(), elem, {1});
  return v;
}

// Loop(M) over a sequence made by SequenceEmpty: the body inserts [iter] at
// the end (SequenceInsert) and also emits iter as a scan output; after the
// loop ConcatFromSequence joins the sequence.
onnx::ModelProto InsertingLoop() {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "M", kI64, {});
  onnx::NodeProto* empty = AddNode(g, "SequenceEmpty", {}, {"seq0"}, "empty");
  AttrInt(empty, "dtype", kI64);
  onnx::NodeProto* loop = AddNode(g, "Loop", {"M", "", "seq0"}, {"seq", "iters"}, "loop");
  onnx::GraphProto* body = AttrGraph(loop, "body");
  body->set_name("body");
  AddInput(body, "iter", kI64, {});
  AddInput(body, "cond_in", kBool, {});
  AddSequence(body->mutable_input(), "seq_in", kI64);
  AddInitializer(body, "axes", Tensor::FromVector<int64_t>({0}, Shape{1}));
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Unsqueeze", {"iter", "axes"}, {"item"});
  AddNode(body, "SequenceInsert", {"seq_in", "item"}, {"seq_out"}, "insert");
  AddNode(body, "Identity", {"iter"}, {"iter_scan"});
  AddOutput(body, "cond_out", kBool, {});
  AddSequence(body->mutable_output(), "seq_out", kI64);
  AddOutput(body, "iter_scan", kI64, {});
  onnx::NodeProto* join = AddNode(g, "ConcatFromSequence", {"seq"}, {"joined"}, "join");
  AttrInt(join, "axis", 0);
  AddOutput(g, "joined", kI64, {-1});
  AddOutput(g, "iters", kI64, {-1});
  return model;
}

std::unique_ptr<session::Session> Compile(const onnx::ModelProto& model) {
  auto graph = frontend::ImportOnnxModel(model, "");
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return nullptr;
  auto session = std::make_unique<session::Session>(
      BuiltinEngines(), OptionMap{{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}}, nullptr);
  absl::Status added = session->AddGraph(0, std::move(*graph), {});
  EXPECT_TRUE(added.ok()) << added;
  return added.ok() ? std::move(session) : nullptr;
}

TEST(LoopIteration, ASequenceGrownByTheBodyIsNotCopiedPerIteration) {
  std::unique_ptr<session::Session> session = Compile(InsertingLoop());
  ASSERT_NE(session, nullptr);
  constexpr int64_t kN = 10000;
  const int64_t before = Value::SequenceElementsCopied();
  auto out = session->RunGraph(0, {Tensor::Scalar(kN)});
  ASSERT_TRUE(out.ok()) << out.status();
  // Copying the sequence per iteration would copy kN * (kN - 1) / 2 handles
  // (5e7); owned by the body, it is never copied.
  EXPECT_LT(Value::SequenceElementsCopied() - before, kN);
  const Tensor& joined = (*out)[0].tensor();
  ASSERT_EQ(joined.shape(), (Shape{kN}));
  std::vector<int64_t> expected(kN);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(std::vector<int64_t>(joined.data<int64_t>(), joined.data<int64_t>() + kN), expected);
  EXPECT_EQ((*out)[1].tensor().shape(), (Shape{kN}));
}

TEST(LoopIteration, ASequenceInsertLoopTakesLinearTime) {
  std::unique_ptr<session::Session> session = Compile(InsertingLoop());
  ASSERT_NE(session, nullptr);
  // This thread's CPU time (the executor runs the loop on the calling
  // thread), least of three: 4x the iterations take about 4x when each is
  // O(1), 16x when each is O(n).
  auto cpu_nanos = [&](int64_t n) {
    return ir::testing::LeastThreadCpuNanos(3, [&] {
      auto out = session->RunGraph(0, {Tensor::Scalar(n)});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].tensor().NumElements(), n);
    });
  };
  (void)cpu_nanos(100);  // first run: preparation
  const int64_t small = cpu_nanos(2500);
  const int64_t big = cpu_nanos(10000);
  EXPECT_LT(big, 9 * small + 2000000) << "2500 iterations: " << small / 1000 << " us, 10000: " << big / 1000 << " us";
}

// Loop(M): the body's Range(0, iter + 1) has another length every
// iteration with the same input types; its sum is the scan output. With
// `fail_at` >= 0, a Reshape to [6] of a 6-element tensor turns into one to
// [fail_at + 1] at iteration fail_at (its shape input is iter + 1 there).
onnx::ModelProto RangeLoop(int64_t fail_at) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "M", kI64, {});
  onnx::NodeProto* loop = AddNode(g, "Loop", {"M", ""}, {"sums"}, "loop");
  onnx::GraphProto* body = AttrGraph(loop, "body");
  body->set_name("body");
  AddInput(body, "iter", kI64, {});
  AddInput(body, "cond_in", kBool, {});
  AddInitializer(body, "zero", Tensor::Scalar(int64_t{0}));
  AddInitializer(body, "one", Tensor::Scalar(int64_t{1}));
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Add", {"iter", "one"}, {"limit"});
  AddNode(body, "Range", {"zero", "limit", "one"}, {"range"}, "range");
  onnx::NodeProto* sum = AddNode(body, "ReduceSum", {"range"}, {"sum"}, "sum");
  AttrInt(sum, "keepdims", 0);
  std::string scan = "sum";
  if (fail_at >= 0) {
    AddInitializer(body, "six", Tensor::FromVector<int64_t>({6}, Shape{1}));
    AddInitializer(body, "fail_at", Tensor::Scalar(fail_at));
    AddInitializer(body, "axes", Tensor::FromVector<int64_t>({0}, Shape{1}));
    AddInitializer(body, "data", Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3}));
    AddNode(body, "Equal", {"iter", "fail_at"}, {"failing"});
    AddNode(body, "Unsqueeze", {"limit", "axes"}, {"limit_1d"});
    AddNode(body, "Where", {"failing", "limit_1d", "six"}, {"shape"});
    AddNode(body, "Reshape", {"data", "shape"}, {"flat"}, "bad_reshape");
    onnx::NodeProto* total = AddNode(body, "ReduceSum", {"flat"}, {"total"}, "total");
    AttrInt(total, "keepdims", 0);
    AddNode(body, "Add", {"sum", "total"}, {"sum_total"});
    scan = "sum_total";
  }
  AddOutput(body, "cond_out", kBool, {});
  AddOutput(body, scan, kI64, {});
  AddOutput(g, "sums", kI64, {-1});
  return model;
}

TEST(LoopIteration, InferenceFollowsTheValuesItReads) {
  std::unique_ptr<session::Session> session = Compile(RangeLoop(-1));
  ASSERT_NE(session, nullptr);
  for (int round = 0; round < 2; ++round) {
    auto out = session->RunGraph(0, {Tensor::Scalar(int64_t{6})});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& sums = (*out)[0].tensor();
    ASSERT_EQ(sums.shape(), (Shape{6}));
    EXPECT_THAT(std::vector<int64_t>(sums.data<int64_t>(), sums.data<int64_t>() + 6), ElementsAre(0, 1, 3, 6, 10, 15));
  }
}

TEST(LoopIteration, ALaterIterationsErrorStillNamesTheNode) {
  std::unique_ptr<session::Session> session = Compile(RangeLoop(3));
  ASSERT_NE(session, nullptr);
  auto ok = session->RunGraph(0, {Tensor::Scalar(int64_t{3})});  // iterations 0-2: 21 added
  ASSERT_TRUE(ok.ok()) << ok.status();
  const Tensor& sums = (*ok)[0].tensor();
  EXPECT_THAT(std::vector<int64_t>(sums.data<int64_t>(), sums.data<int64_t>() + 3), ElementsAre(21, 22, 24));
  auto failed = session->RunGraph(0, {Tensor::Scalar(int64_t{5})});
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(std::string(failed.status().message()), HasSubstr("bad_reshape"));
  // The same session runs again after the failure.
  auto again = session->RunGraph(0, {Tensor::Scalar(int64_t{2})});
  ASSERT_TRUE(again.ok()) << again.status();
}

// Loop(M) whose body adds a captured initializer `w` to the carried y: the
// compiled body reads its own Const of w (SplitConstIntoSubgraphPass), and
// the result is the same.
TEST(LoopIteration, ASmallCapturedConstantBecomesTheBodysOwn) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "M", kI64, {});
  AddInput(g, "y0", onnx_builder::kF32, {2});
  AddInitializer(g, "w", Tensor::FromVector<float>({1, 10}, Shape{2}));
  onnx::NodeProto* loop = AddNode(g, "Loop", {"M", "", "y0"}, {"y"}, "loop");
  onnx::GraphProto* body = AttrGraph(loop, "body");
  body->set_name("body");
  AddInput(body, "iter", kI64, {});
  AddInput(body, "cond_in", kBool, {});
  AddInput(body, "y_in", onnx_builder::kF32, {2});
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Add", {"y_in", "w"}, {"y_out"}, "add");
  AddOutput(body, "cond_out", kBool, {});
  AddOutput(body, "y_out", onnx_builder::kF32, {2});
  AddOutput(g, "y", onnx_builder::kF32, {2});
  std::unique_ptr<session::Session> session = Compile(model);
  ASSERT_NE(session, nullptr);
  auto out = session->RunGraph(0, {Tensor::Scalar(int64_t{3}), Tensor::FromVector<float>({0, 1}, Shape{2})});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0].tensor();
  EXPECT_THAT(std::vector<float>(y.data<float>(), y.data<float>() + 2), ElementsAre(3, 31));
  auto compiled = session->GetCompiledGraph(0);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const ir::Node* add = nullptr;
  for (const ir::Graph* sub : (*compiled)->graph->subgraphs()) {
    if (add == nullptr) add = sub->FindNode("add");
  }
  ASSERT_NE(add, nullptr);
  const ir::Node* operand = add->input(1).node;
  ASSERT_NE(operand, nullptr);
  EXPECT_EQ(operand->type(), "Const") << operand->name();
}

}  // namespace
}  // namespace ge::test
