// StaticBody / StaticBodies: control-flow subgraphs run from static plans
// per input signature inside the DynamicExecutor
// (ExecutorOptions::static_body_loader): the same results as the dynamic
// form, parent inputs passed through without a copy, If's parent-index
// offset, one plan per signature (compiled or inferred types) up to the
// bound, and the subgraphs that stay dynamic.
#include "runtime/executor/static_body.h"

#include <string>

#include "base/ir/text_format.h"
#include "base/status.h"
#include "compiler/build/task_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/executor/dynamic_executor.h"
#include "runtime/executor/static_executor.h"
#include "tests/testing/engines_test.h"

namespace ge::runtime {
namespace {

using ::testing::ElementsAre;

std::vector<float> Floats(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

// A lowered Loop of n iterations: x <- x * w + w, w passed through; the
// cond is `i < n` (evaluated by the kernel, _cond_counter).
constexpr char kLoop[] = R"(graph main {
    n = Data() {index = 0} -> (i64[])
    x = Data() {index = 1} -> (f32[SHAPE])
    w = Data() {index = 2} -> (f32[SHAPE])
    i0 = Const() {value = tensor<i64[]>[0], _engine_name = "ge_local"} -> (i64[])
    loop = While(i0, n, x, w) {_engine_name = "control_flow", _cond_counter = [0, 1, -1], _cond_reads = 2} subgraphs(cond, body) -> (i64[], i64[], f32[SHAPE], f32[SHAPE])
    out = NetOutput(loop:2, loop:3)
  }
  graph cond parent(main, loop) {
    i = Data() {index = 0} -> (i64[])
    n = Data() {index = 1} -> (i64[])
    more = Less(i, n) {_engine_name = "cpu_vector"} -> (bool[])
    out = NetOutput(more)
  }
  graph body parent(main, loop) {
    i = Data() {index = 0} -> (i64[])
    n = Data() {index = 1} -> (i64[])
    x = Data() {index = 2} -> (f32[4])
    w = Data() {index = 3} -> (f32[4])
    one = Const() {value = tensor<i64[]>[1], _engine_name = "ge_local"} -> (i64[])
    next = Add(i, one) {_engine_name = "ENGINE"} -> (i64[])
    m = Mul(x, w) {_engine_name = "ENGINE"} -> (f32[4])
    y = Add(m, w) {_engine_name = "ENGINE"} -> (f32[4])
    out = NetOutput(next, n, y, w)
  })";

std::string LoopGraph(const std::string& engine, const std::string& shape = "4") {
  std::string text = kLoop;
  for (size_t at; (at = text.find("ENGINE")) != std::string::npos;) text.replace(at, 6, engine);
  for (size_t at; (at = text.find("SHAPE")) != std::string::npos;) text.replace(at, 5, shape);
  return text;
}

class StaticBodyTest : public ge::testing::EnginesTest {
 protected:
  absl::StatusOr<std::unique_ptr<DynamicExecutor>> Create(const std::string& text, bool static_bodies) {
    GE_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, ir::ParseGraph(text));
    graphs_.push_back(std::move(graph));
    ExecutorOptions options;
    if (static_bodies) {
      options.static_body_loader = [this](const ir::Graph& g) -> absl::StatusOr<std::unique_ptr<StaticExecutor>> {
        ++loads_;
        GE_ASSIGN_OR_RETURN(StaticProgram program, compiler::BuildStaticProgram(g, *engines_, 1));
        return StaticExecutor::Load(std::move(program), *engines_, device_, {});
      };
    }
    return DynamicExecutor::Create(*graphs_.back(), *engines_, options);
  }

  std::vector<std::unique_ptr<ir::Graph>> graphs_;  // outlive the executors made from them
  int loads_ = 0;
  device::CpuDevice device_{device::DeviceSpec{"cpu:0", 0, 1}};
};

TEST_F(StaticBodyTest, LoopBodyRunsStaticallyWithTheDynamicResults) {
  auto dynamic = Create(LoopGraph("cpu_vector"), false);
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  EXPECT_EQ((*dynamic)->num_static_bodies(), 0);
  auto planned = Create(LoopGraph("cpu_vector"), true);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_EQ((*planned)->num_static_bodies(), 2);  // cond and body
  EXPECT_EQ(loads_, 0);                           // planned on first use
  const Tensor x = Tensor::FromVector<float>({1, -2, 0.5f, 3}, Shape{4});
  const Tensor w = Tensor::FromVector<float>({0.5f, 1, -1, 2}, Shape{4});
  for (int64_t n : {0, 1, 3}) {
    auto want = (*dynamic)->Run({Tensor::Scalar<int64_t>(n), x, w});
    ASSERT_TRUE(want.ok()) << want.status();
    auto got = (*planned)->Run({Tensor::Scalar<int64_t>(n), x, w});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Floats((*got)[0]), Floats((*want)[0])) << n;
    // The pass-through value is the caller's tensor, never copied.
    EXPECT_EQ((*got)[1].tensor().raw_data(), w.raw_data()) << n;
  }
  auto three = (*planned)->Run({Tensor::Scalar<int64_t>(3), x, w});
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(loads_, 1);  // the body, once (the cond is the kernel's counter)
  EXPECT_EQ((*planned)->num_static_plans(), 1);
  // x1 = x*w + w = [1, -1, -1.5, 8]; x2 = [1, 0, 0.5, 18]; x3 = [1, 1, -1.5, 38].
  EXPECT_THAT(Floats((*three)[0]), ElementsAre(1, 1, -1.5f, 38));
}

// A lowered Scan's shape: the body appends y to an accumulator (a scan output).
constexpr char kScanLike[] = R"(graph main {
    n = Data() {index = 0} -> (i64[])
    x = Data() {index = 1} -> (f32[4])
    w = Data() {index = 2} -> (f32[4])
    i0 = Const() {value = tensor<i64[]>[0], _engine_name = "ge_local"} -> (i64[])
    acc0 = LoopAccumulatorInit() {_engine_name = "control_flow", dtype = 1} -> (seq<f32[?]>)
    loop = While(i0, n, x, w, acc0) {_engine_name = "control_flow", _cond_counter = [0, 1, -1], _cond_reads = 2} subgraphs(cond, body) -> (i64[], i64[], f32[4], f32[4], seq<f32[?]>)
    stack = LoopAccumulatorStack(loop:4) {_engine_name = "control_flow", axis = 0, reverse = 0} -> (f32[-1,4])
    out = NetOutput(loop:2, stack)
  }
  graph cond parent(main, loop) {
    i = Data() {index = 0} -> (i64[])
    n = Data() {index = 1} -> (i64[])
    more = Less(i, n) {_engine_name = "cpu_vector"} -> (bool[])
    out = NetOutput(more)
  }
  graph body parent(main, loop) {
    i = Data() {index = 0} -> (i64[])
    n = Data() {index = 1} -> (i64[])
    x = Data() {index = 2} -> (f32[4])
    w = Data() {index = 3} -> (f32[4])
    acc = Data() {index = 4} -> (seq<f32[?]>)
    one = Const() {value = tensor<i64[]>[1], _engine_name = "ge_local"} -> (i64[])
    next = Add(i, one) {_engine_name = "cpu_vector"} -> (i64[])
    m = Mul(x, w) {_engine_name = "cpu_vector"} -> (f32[4])
    y = Add(m, w) {_engine_name = "cpu_vector"} -> (f32[4])
    app = LoopAccumulatorAppend(acc, y) {_engine_name = "control_flow"} -> (seq<f32[?]>)
    out = NetOutput(next, n, y, w, app)
  })";

TEST_F(StaticBodyTest, ScanOutputsAreAppendedOutsideThePlan) {
  auto dynamic = Create(kScanLike, false);
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  auto planned = Create(kScanLike, true);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_EQ((*planned)->num_static_bodies(), 2);
  const Tensor x = Tensor::FromVector<float>({1, -2, 0.5f, 3}, Shape{4});
  const Tensor w = Tensor::FromVector<float>({0.5f, 1, -1, 2}, Shape{4});
  for (int64_t n : {0, 1, 3}) {
    auto want = (*dynamic)->Run({Tensor::Scalar<int64_t>(n), x, w});
    ASSERT_TRUE(want.ok()) << want.status();
    auto got = (*planned)->Run({Tensor::Scalar<int64_t>(n), x, w});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Floats((*got)[0]), Floats((*want)[0])) << n;
    EXPECT_EQ((*got)[1].tensor().shape(), (*want)[1].tensor().shape()) << n;
    EXPECT_EQ(Floats((*got)[1]), Floats((*want)[1])) << n;
  }
  EXPECT_EQ((*planned)->num_static_plans(), 1);
  auto three = (*planned)->Run({Tensor::Scalar<int64_t>(3), x, w});
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_THAT(Floats((*three)[1]), ElementsAre(1, -1, -1.5f, 8, 1, 0, 0.5f, 18, 1, 1, -1.5f, 38));
  // The accumulator's input node is not a program input: the stripped body
  // plans with its tensors alone.
  auto graph = ir::ParseGraph(kScanLike);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(StaticBodies::OutsideAppends(*(*graph)->FindSubgraph("body")).size(), 1u);
  EXPECT_TRUE(StaticBodies::Plannable(*(*graph)->FindSubgraph("body"), *engines_));
  // An accumulator read by anything else keeps the body dynamic.
  auto shared = ir::ParseGraph(std::string(kScanLike).replace(
      std::string(kScanLike).find("out = NetOutput(next, n, y, w, app)"), 35, "out = NetOutput(next, n, y, w, acc)"));
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_TRUE(StaticBodies::OutsideAppends(*(*shared)->FindSubgraph("body")).empty());
  EXPECT_FALSE(StaticBodies::Plannable(*(*shared)->FindSubgraph("body"), *engines_));
}

TEST_F(StaticBodyTest, EachInputSignatureGetsItsOwnPlan) {
  // The body was compiled for f32[4] (BODY_SHAPE) or unknown dims; runs with
  // f32[3] and f32[5] infer the body for those shapes and plan it once each.
  for (const std::string body_shape : {"4", "-1"}) {
    std::string text = LoopGraph("cpu_vector", "-1");
    for (size_t at = 0; (at = text.find("f32[4]", at)) != std::string::npos; at += 4) {
      text.replace(at, 6, "f32[" + body_shape + "]");
    }
    auto planned = Create(text, true);
    ASSERT_TRUE(planned.ok()) << planned.status();
    ASSERT_EQ((*planned)->num_static_bodies(), 2);
    EXPECT_EQ((*planned)->num_static_plans(), 0);  // planned on first use
    const Tensor x3 = Tensor::FromVector<float>({1, -2, 0.5f}, Shape{3});
    const Tensor w3 = Tensor::FromVector<float>({0.5f, 1, -1}, Shape{3});
    const Tensor x5 = Tensor::FromVector<float>({1, -2, 0.5f, 3, 1}, Shape{5});
    const Tensor w5 = Tensor::FromVector<float>({0.5f, 1, -1, 2, 0}, Shape{5});
    for (int pass = 0; pass < 2; ++pass) {
      auto three = (*planned)->Run({Tensor::Scalar<int64_t>(2), x3, w3});
      ASSERT_TRUE(three.ok()) << three.status();
      EXPECT_THAT(Floats((*three)[0]), ElementsAre(1, 0, 0.5f)) << body_shape;
      auto five = (*planned)->Run({Tensor::Scalar<int64_t>(2), x5, w5});
      ASSERT_TRUE(five.ok()) << five.status();
      EXPECT_THAT(Floats((*five)[0]), ElementsAre(1, 0, 0.5f, 18, 0)) << body_shape;
      // One plan per shape of the body (the cond is the kernel's counter).
      EXPECT_EQ((*planned)->num_static_plans(), 2) << body_shape;
    }
  }
}

TEST_F(StaticBodyTest, SignaturesPastTheBoundRunDynamically) {
  auto planned = Create(LoopGraph("cpu_vector", "-1"), true);
  ASSERT_TRUE(planned.ok()) << planned.status();
  for (int64_t n = 1; n <= static_cast<int64_t>(StaticBodies::kMaxSignatures) + 3; ++n) {
    std::vector<float> x(n, 2.0f), w(n, 0.5f);
    auto out = (*planned)->Run(
        {Tensor::Scalar<int64_t>(1), Tensor::FromVector<float>(x, Shape{n}), Tensor::FromVector<float>(w, Shape{n})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Floats((*out)[0]), std::vector<float>(n, 1.5f)) << n;
  }
  EXPECT_EQ((*planned)->num_static_plans(), static_cast<int>(StaticBodies::kMaxSignatures));
}

TEST_F(StaticBodyTest, BodiesOnTheReferenceEngineStayDynamic) {
  auto exec = Create(LoopGraph("host_cpu"), true);
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ((*exec)->num_static_bodies(), 1);  // the cond only
  auto out = (*exec)->Run({Tensor::Scalar<int64_t>(3), Tensor::FromVector<float>({1, -2, 0.5f, 3}, Shape{4}),
                           Tensor::FromVector<float>({0.5f, 1, -1, 2}, Shape{4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(1, 1, -1.5f, 38));
}

TEST_F(StaticBodyTest, IfBranchesTakeTheParentInputsAfterTheCondition) {
  // Data index i takes input i + 1, `_parent_index` names the input; a
  // branch may return a constant.
  auto exec = Create(R"(graph main {
      p = Data() {index = 0} -> (bool[])
      x = Data() {index = 1} -> (f32[2])
      y = Data() {index = 2} -> (f32[2])
      c = If(p, x, y) {_engine_name = "control_flow"} subgraphs(t, e) -> (f32[2], f32[2])
      out = NetOutput(c:0, c:1)
    }
    graph t parent(main, c) {
      a = Data() {index = 0} -> (f32[2])
      b = Data() {index = 1} -> (f32[2])
      s = Sub(a, b) {_engine_name = "cpu_vector"} -> (f32[2])
      k = Const() {value = tensor<f32[2]>[7, 8], _engine_name = "ge_local"} -> (f32[2])
      out = NetOutput(s, k)
    }
    graph e parent(main, c) {
      b = Data() {index = 0, _parent_index = 2} -> (f32[2])
      a = Data() {index = 1, _parent_index = 1} -> (f32[2])
      s = Sub(b, a) {_engine_name = "cpu_vector"} -> (f32[2])
      out = NetOutput(s, a)
    })",
                     true);
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ((*exec)->num_static_bodies(), 2);
  const Tensor x = Tensor::FromVector<float>({5, 7}, Shape{2});
  const Tensor y = Tensor::FromVector<float>({1, 2}, Shape{2});
  auto then_out = (*exec)->Run({Tensor::Scalar(true), x, y});
  ASSERT_TRUE(then_out.ok()) << then_out.status();
  EXPECT_THAT(Floats((*then_out)[0]), ElementsAre(4, 5));
  EXPECT_THAT(Floats((*then_out)[1]), ElementsAre(7, 8));
  auto else_out = (*exec)->Run({Tensor::Scalar(false), x, y});
  ASSERT_TRUE(else_out.ok()) << else_out.status();
  EXPECT_THAT(Floats((*else_out)[0]), ElementsAre(-4, -5));
  EXPECT_EQ((*else_out)[1].tensor().raw_data(), x.raw_data());
  EXPECT_EQ((*exec)->num_static_plans(), 2);
}

TEST_F(StaticBodyTest, PlannableByStructureAndPlacement) {
  auto parse = [](const std::string& text) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    return graph.ok() ? std::move(*graph) : nullptr;
  };
  auto graph = parse(LoopGraph("cpu_vector"));
  ASSERT_NE(graph, nullptr);
  EXPECT_TRUE(StaticBodies::Plannable(*graph->FindSubgraph("body"), *engines_));
  EXPECT_TRUE(StaticBodies::FullyTyped(*graph->FindSubgraph("body")));
  // An unknown dim still plans (per signature), but is not fully typed.
  ir::Graph* sub = graph->FindSubgraph("body");
  sub->FindNode("m")->mutable_op_desc().mutable_output(0).type = ir::ValueType::Tensor(DataType::kFloat, Shape{-1});
  EXPECT_TRUE(StaticBodies::Plannable(*sub, *engines_));
  EXPECT_FALSE(StaticBodies::FullyTyped(*sub));
  // The dynamic-shape partitioner's flags and the reference engine do not.
  auto forced = parse(LoopGraph("cpu_vector"));
  forced->FindSubgraph("body")->FindNode("y")->mutable_op_desc().SetAttr("_force_unknown_shape", true);
  EXPECT_FALSE(StaticBodies::Plannable(*forced->FindSubgraph("body"), *engines_));
  auto reference = parse(LoopGraph("host_cpu"));
  EXPECT_FALSE(StaticBodies::Plannable(*reference->FindSubgraph("body"), *engines_));
  // Nor does a value inference reads that is not a Const's (Reshape's shape
  // from the parent).
  auto reshape = parse(R"(graph main {
      x = Data() {index = 0} -> (f32[4])
      s = Data() {index = 1} -> (i64[2])
      p = Data() {index = 2} -> (bool[])
      c = If(p, x, s) {_engine_name = "control_flow"} subgraphs(t, e) -> (f32[-1, -1])
      out = NetOutput(c)
    }
    graph t parent(main, c) {
      a = Data() {index = 0} -> (f32[4])
      b = Data() {index = 1} -> (i64[2])
      r = Reshape(a, b) {_engine_name = "cpu_vector"} -> (f32[-1, -1])
      out = NetOutput(r)
    }
    graph e parent(main, c) {
      a = Data() {index = 0} -> (f32[4])
      k = Const() {value = tensor<i64[2]>[2, 2], _engine_name = "ge_local"} -> (i64[2])
      r = Reshape(a, k) {_engine_name = "cpu_vector"} -> (f32[2, 2])
      out = NetOutput(r)
    })");
  ASSERT_NE(reshape, nullptr);
  EXPECT_FALSE(StaticBodies::Plannable(*reshape->FindSubgraph("t"), *engines_));
  EXPECT_TRUE(StaticBodies::Plannable(*reshape->FindSubgraph("e"), *engines_));
}

TEST_F(StaticBodyTest, SpecializeInfersTheBodyForItsInputs) {
  auto graph = ir::ParseGraph(LoopGraph("cpu_vector", "-1"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::ValueType f7 = ir::ValueType::Tensor(DataType::kFloat, Shape{7});
  const ir::ValueType i64 = ir::ValueType::Tensor(DataType::kInt64, Shape());
  auto specialized = StaticBodies::Specialize(*(*graph)->FindSubgraph("body"), {i64, i64, f7, f7});
  ASSERT_TRUE(specialized.ok()) << specialized.status();
  EXPECT_TRUE(StaticBodies::FullyTyped(**specialized));
  EXPECT_EQ((*specialized)->FindNode("y")->op_desc().output(0).type, f7);
  EXPECT_EQ((*specialized)->FindNode("next")->op_desc().output(0).type, i64);
  // A value an engine keeps in another layout stays in it (its consumer reads it so).
  ir::Graph* body = (*graph)->FindSubgraph("body");
  body->FindNode("m")->mutable_op_desc().mutable_output(0).type =
      ir::TensorDesc(DataType::kFloat, Shape{-1}, ir::Format::kNHWC);
  auto in_layout = StaticBodies::Specialize(*body, {i64, i64, f7, f7});
  ASSERT_TRUE(in_layout.ok()) << in_layout.status();
  EXPECT_EQ((*in_layout)->FindNode("m")->op_desc().output(0).type,
            ir::ValueType(ir::TensorDesc(DataType::kFloat, Shape{7}, ir::Format::kNHWC)));
  body->FindNode("m")->mutable_op_desc().mutable_output(0).type = ir::ValueType::Tensor(DataType::kFloat, Shape{4});
  // The compiled subgraph is unchanged.
  EXPECT_EQ((*graph)->FindSubgraph("body")->FindNode("y")->op_desc().output(0).type.shape(), Shape{4});
  // Inputs the body cannot take are an inference error.
  const ir::ValueType f3 = ir::ValueType::Tensor(DataType::kFloat, Shape{3});
  EXPECT_FALSE(StaticBodies::Specialize(*(*graph)->FindSubgraph("body"), {i64, i64, f7, f3}).ok());
}

TEST_F(StaticBodyTest, AcceptsOnlyThePlannedTypes) {
  auto graph = ir::ParseGraph(LoopGraph("cpu_vector"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::Graph* body = (*graph)->FindSubgraph("body");
  auto loaded =
      StaticBody::Load(*body, 0, [this](const ir::Graph& g) -> absl::StatusOr<std::unique_ptr<StaticExecutor>> {
        GE_ASSIGN_OR_RETURN(StaticProgram program, compiler::BuildStaticProgram(g, *engines_, 1));
        return StaticExecutor::Load(std::move(program), *engines_, device_, {});
      });
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_NE(*loaded, nullptr);
  const Tensor f4 = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4});
  std::vector<Value> ok = {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(2), f4, f4};
  EXPECT_TRUE((*loaded)->Accepts(ok));
  std::vector<Value> short_shape = ok;
  short_shape[2] = Tensor::FromVector<float>({1, 2, 3}, Shape{3});
  EXPECT_FALSE((*loaded)->Accepts(short_shape));
  std::vector<Value> other_dtype = ok;
  other_dtype[0] = Tensor::Scalar<int32_t>(0);
  EXPECT_FALSE((*loaded)->Accepts(other_dtype));
  std::vector<Value> missing = {ok[0], ok[1], ok[2]};
  EXPECT_FALSE((*loaded)->Accepts(missing));
  std::vector<Value> none = ok;
  none[3] = Value();
  EXPECT_FALSE((*loaded)->Accepts(none));
  auto out = (*loaded)->Run(ok, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[0].tensor().data<int64_t>()[0], 1);
  EXPECT_EQ((*out)[1].tensor().data<int64_t>()[0], 2);
  EXPECT_THAT(Floats((*out)[2]), ElementsAre(2, 6, 12, 20));
  EXPECT_EQ((*out)[3].tensor().raw_data(), f4.raw_data());
}

}  // namespace
}  // namespace ge::runtime
