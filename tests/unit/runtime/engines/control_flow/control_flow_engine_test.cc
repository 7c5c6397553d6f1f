// The control_flow engine through the whole compile -> execute path: If,
// Case, While and PartitionedCall graphs in the text form, compiled and run
// by a Session on the built-in engines; nesting, shapes that change from
// one iteration to the next, and the errors a user can cause.
#include "runtime/engines/control_flow/control_flow_kernels.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/control_flow/cf_test_util.h"

namespace ge::test {
namespace {

using ::testing::HasSubstr;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

std::vector<float> Floats(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

// then: a + a (shape kept); else: concat(a, a) (shape doubled).
constexpr char kIfGraph[] = R"(graph main {
  p = Data() {index = 0} -> (bool[])
  x = Data() {index = 1} -> (f32[2])
  c = If(p, x) subgraphs(then_0, else_0)
  out = NetOutput(c)
}
graph then_0 parent(main, c) {
  a = Data() {index = 0} -> (f32[2])
  y = Add(a, a)
  out = NetOutput(y)
}
graph else_0 parent(main, c) {
  a = Data() {index = 0} -> (f32[2])
  y = Concat(a, a) {axis = 0}
  out = NetOutput(y)
})";

TEST(ControlFlowEngine, LoadsAsAPluginWithItsConfiguration) {
  const engine::EngineAttributes* attrs = BuiltinEngines().FindAttributes("control_flow");
  ASSERT_NE(attrs, nullptr);
  EXPECT_EQ(attrs->compute_cost, 2);
  EXPECT_FALSE(attrs->reference);
  EXPECT_EQ(attrs->version, "1");
  const engine::Engine* engine = BuiltinEngines().Find("control_flow");
  EXPECT_THAT(engine->info_store().SupportedOpTypes(),
              ::testing::IsSupersetOf({"If", "Case", "While", "PartitionedCall", "LoopAccumulatorStack"}));
}

TEST(ControlFlowEngine, IfRunsTheChosenBranchAndKeepsItsShape) {
  const Tensor x = Tensor::FromVector<float>({1, 2}, Shape{2});
  std::unique_ptr<session::Session> session;
  auto then_out = CompileAndRun(ParseOrDie(kIfGraph), {Tensor::Scalar(true), x}, {}, nullptr, &session);
  ASSERT_TRUE(then_out.ok()) << then_out.status();
  EXPECT_EQ((*then_out)[0].tensor().shape(), Shape{2});
  EXPECT_THAT(Floats((*then_out)[0]), ::testing::ElementsAre(2, 4));
  EXPECT_EQ(EngineOf(*session, "c"), "control_flow");
  EXPECT_EQ(EngineOf(*session, "y"), "host_cpu");
  // The same session runs the other branch: the output takes its real shape.
  auto else_out = session->RunGraph(0, {Tensor::Scalar(false), x});
  ASSERT_TRUE(else_out.ok()) << else_out.status();
  EXPECT_EQ((*else_out)[0].tensor().shape(), Shape{4});
  EXPECT_THAT(Floats((*else_out)[0]), ::testing::ElementsAre(1, 2, 1, 2));
}

TEST(ControlFlowEngine, IfConditionMustBeBool) {
  std::string text = kIfGraph;
  text.replace(text.find("(bool[])"), 8, "(i32[])");
  auto out = CompileAndRun(text, {Tensor::Scalar(int32_t{1}), Tensor::FromVector<float>({1, 2}, Shape{2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(Message(out.status()), HasSubstr("'c' (If)"));
  EXPECT_THAT(Message(out.status()), HasSubstr("i32"));
}

TEST(ControlFlowEngine, IfConditionMustHoldOneElement) {
  std::string text = kIfGraph;
  text.replace(text.find("(bool[])"), 8, "(bool[-1])");
  auto out = CompileAndRun(text, {Tensor::FromVector<bool>({true, false}, Shape{2}),
                                  Tensor::FromVector<float>({1, 2}, Shape{2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(Message(out.status()), HasSubstr("node 'c' (If)"));
  EXPECT_THAT(Message(out.status()), HasSubstr("one element"));
}

// The kernel checks its condition itself (for graphs built without the
// compiler), and needs an executor that runs subgraphs.
TEST(ControlFlowEngine, IfKernelChecksItsConditionAndNeedsSubgraphs) {
  const engine::Engine& engine = *BuiltinEngines().Find("control_flow");
  ir::OpDesc op = OpBuilder("If", "c").Input(ir::ValueType::Tensor(DataType::kInt32, Shape{})).Outputs(1).Build();
  op.mutable_subgraph_names() = {"then_0", "else_0"};
  RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{2})};
  auto bad = RunKernel(engine, op, {Tensor::Scalar(int32_t{1})}, options);
  EXPECT_THAT(Message(bad.status()), HasSubstr("input 0 (cond) must be a bool tensor with one element, got i32[]"));
  auto no_executor = RunKernel(engine, op, {Tensor::Scalar(true)}, options);
  EXPECT_EQ(no_executor.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Message(no_executor.status()), HasSubstr("subgraph 'then_0'"));
  op.mutable_subgraph_names().clear();
  EXPECT_THAT(Message(engine.kernel_factory().CreateKernel(op).status()), HasSubstr("names no subgraph"));
}

// Branch 0: 2a, 1: a*a, 2: -a. Out of range (either side) runs the last.
constexpr char kCaseGraph[] = R"(graph main {
  k = Data() {index = 0} -> (i32[])
  x = Data() {index = 1} -> (f32[2])
  c = Case(k, x) subgraphs(b0, b1, b2)
  out = NetOutput(c)
}
graph b0 parent(main, c) {
  a = Data() {index = 0} -> (f32[2])
  y = Add(a, a)
  out = NetOutput(y)
}
graph b1 parent(main, c) {
  a = Data() {index = 0} -> (f32[2])
  y = Mul(a, a)
  out = NetOutput(y)
}
graph b2 parent(main, c) {
  a = Data() {index = 0} -> (f32[2])
  y = Neg(a)
  out = NetOutput(y)
})";

TEST(ControlFlowEngine, CaseSelectsABranchAndFallsBackToTheLast) {
  std::unique_ptr<session::Session> session;
  const Tensor x = Tensor::FromVector<float>({3, 4}, Shape{2});
  auto first = CompileAndRun(ParseOrDie(kCaseGraph), {Tensor::Scalar(int32_t{0}), x}, {}, nullptr, &session);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(Floats((*first)[0]), ::testing::ElementsAre(6, 8));
  const std::vector<std::pair<int32_t, std::vector<float>>> cases = {
      {1, {9, 16}}, {2, {-3, -4}}, {3, {-3, -4}}, {100, {-3, -4}}, {-1, {-3, -4}}};
  for (const auto& [index, expected] : cases) {
    auto out = session->RunGraph(0, {Tensor::Scalar(index), x});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Floats((*out)[0]), expected) << "branch_index " << index;
  }
  EXPECT_EQ(EngineOf(*session, "c"), "control_flow");
}

TEST(ControlFlowEngine, CaseNeedsAnIntegerScalarAndBranches) {
  std::string text = kCaseGraph;
  text.replace(text.find("(i32[])"), 7, "(i32[-1])");
  std::unique_ptr<session::Session> session;
  auto two = CompileAndRun(ParseOrDie(text), {Tensor::FromVector<int32_t>({0, 1}, Shape{2}),
                                              Tensor::FromVector<float>({3, 4}, Shape{2})},
                           {}, nullptr, &session);
  EXPECT_THAT(Message(two.status()), HasSubstr("node 'c' (Case)"));
  EXPECT_THAT(Message(two.status()), HasSubstr("one element"));
  auto no_branches = CompileAndRun(R"(graph main {
      k = Data() {index = 0} -> (i32[])
      c = Case(k) -> (f32[1])
      out = NetOutput(c)
    })",
                                   {Tensor::Scalar(int32_t{0})});
  EXPECT_THAT(Message(no_branches.status()), HasSubstr("has no branches"));
}

// i counts to 5; x doubles each iteration.
constexpr char kWhileGraph[] = R"(graph main {
  i0 = Data() {index = 0} -> (i64[])
  x0 = Data() {index = 1} -> (f32[2])
  w = While(i0, x0) subgraphs(cond_0, body_0)
  out = NetOutput(w:0, w:1)
}
graph cond_0 parent(main, w) {
  i = Data() {index = 0} -> (i64[])
  x = Data() {index = 1} -> (f32[2])
  five = Const() {value = tensor<i64[]>[5]} -> (i64[])
  lt = Less(i, five) -> (bool[])
  out = NetOutput(lt)
}
graph body_0 parent(main, w) {
  i = Data() {index = 0} -> (i64[])
  x = Data() {index = 1} -> (f32[2])
  one = Const() {value = tensor<i64[]>[1]} -> (i64[])
  next = Add(i, one) -> (i64[])
  y = Add(x, x) -> (f32[2])
  out = NetOutput(next, y)
})";

TEST(ControlFlowEngine, WhileRepeatsTheBodyWhileCondHolds) {
  std::unique_ptr<session::Session> session;
  auto out = CompileAndRun(ParseOrDie(kWhileGraph),
                           {Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({1, -2}, Shape{2})}, {},
                           nullptr, &session);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().data<int64_t>()[0], 5);
  EXPECT_THAT(Floats((*out)[1]), ::testing::ElementsAre(32, -64));
  EXPECT_EQ(EngineOf(*session, "w"), "control_flow");
  // Zero iterations: the loop-carried values come out as they went in.
  auto none = session->RunGraph(0, {Tensor::Scalar(int64_t{7}), Tensor::FromVector<float>({1, -2}, Shape{2})});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ((*none)[0].tensor().data<int64_t>()[0], 7);
  EXPECT_THAT(Floats((*none)[1]), ::testing::ElementsAre(1, -2));
}

// `_cond_reads = 1`: the cond gets the loop counter only (what the lowered
// Loop and Scan set, so that an accumulator is not copied for the cond).
TEST(ControlFlowEngine, WhileCondReadsOnlyTheValuesItsAttributeNames) {
  std::string text = kWhileGraph;
  text.replace(text.find("w = While(i0, x0) "), 18, "w = While(i0, x0) {_cond_reads = 1} ");
  auto out =
      CompileAndRun(ParseOrDie(text), {Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({1, -2}, Shape{2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().data<int64_t>()[0], 5);
  EXPECT_THAT(Floats((*out)[1]), ::testing::ElementsAre(32, -64));
  // A cond that reads a value past the count does not get it: while the
  // sum of x stays negative (always, here) it runs without the attribute
  // and fails with it.
  const std::string bound = "  lt = Less(i, five) -> (bool[])";
  const std::string by_size =
      "  below = Less(i, five) -> (bool[])\n  sum = ReduceSum(x) {keepdims = 0} -> (f32[])\n"
      "  zero = Const() {value = tensor<f32[]>[0]} -> (f32[])\n  negative = Less(sum, zero) -> (bool[])\n"
      "  lt = And(below, negative) -> (bool[])";
  std::string reads_x = kWhileGraph;
  reads_x.replace(reads_x.find(bound), bound.size(), by_size);
  auto whole =
      CompileAndRun(ParseOrDie(reads_x), {Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({1, -2}, Shape{2})});
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ((*whole)[0].tensor().data<int64_t>()[0], 5);
  reads_x.replace(reads_x.find("w = While(i0, x0) "), 18, "w = While(i0, x0) {_cond_reads = 1} ");
  auto refused =
      CompileAndRun(ParseOrDie(reads_x), {Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({1, -2}, Shape{2})});
  EXPECT_FALSE(refused.ok());
}

TEST(ControlFlowEngine, WhileLoopCarriedShapesMayChangeEachIteration) {
  auto out = CompileAndRun(R"(graph main {
      x0 = Data() {index = 0} -> (f32[-1])
      w = While(x0) subgraphs(cond_0, body_0)
      out = NetOutput(w)
    }
    graph cond_0 parent(main, w) {
      x = Data() {index = 0} -> (f32[-1])
      n = Size(x)
      limit = Const() {value = tensor<i64[]>[16]} -> (i64[])
      lt = Less(n, limit)
      out = NetOutput(lt)
    }
    graph body_0 parent(main, w) {
      x = Data() {index = 0} -> (f32[-1])
      y = Concat(x, x) {axis = 0}
      out = NetOutput(y)
    })",
                           {Tensor::FromVector<float>({1, 2, 3}, Shape{3})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].tensor().shape(), Shape{24});  // 3 -> 6 -> 12 -> 24
  EXPECT_EQ(Floats((*out)[0])[23], 3);
}

TEST(ControlFlowEngine, WhileCondMustGiveABool) {
  std::string text = kWhileGraph;
  text.replace(text.find("out = NetOutput(lt)"), 19, "out = NetOutput(i)");
  auto out = CompileAndRun(text, {Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({1, 2}, Shape{2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(Message(out.status()),
              HasSubstr("node 'w' (While): the result of cond subgraph 'cond_0' (iteration 0) must be a bool "
                        "tensor with one element, got i64[]"));
}

TEST(ControlFlowEngine, WhileBodyMustKeepTheDtypes) {
  std::string text = kWhileGraph;
  text.replace(text.find("out = NetOutput(next, y)"), 24, "n = Size(x)\n  out = NetOutput(next, n)");
  auto out = CompileAndRun(text, {Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({1, 2}, Shape{2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(Message(out.status()), HasSubstr("loop-carried value 1"));
}

constexpr char kEndlessLoop[] = R"(graph main {
  x0 = Data() {index = 0} -> (f32[1])
  w = While(x0) ATTRS subgraphs(cond_0, body_0)
  out = NetOutput(w)
}
graph cond_0 parent(main, w) {
  x = Data() {index = 0} -> (f32[1])
  t = Const() {value = tensor<bool[]>[true]} -> (bool[])
  out = NetOutput(t)
}
graph body_0 parent(main, w) {
  x = Data() {index = 0} -> (f32[1])
  y = Add(x, x)
  out = NetOutput(y)
})";

std::string EndlessLoop(const std::string& attrs) {
  std::string text = kEndlessLoop;
  return text.replace(text.find("ATTRS"), 5, attrs);
}

TEST(ControlFlowEngine, WhileStopsAtItsIterationCap) {
  auto out = CompileAndRun(EndlessLoop("{_max_loop_iterations = 3}"), {Tensor::FromVector<float>({1}, Shape{1})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
  EXPECT_THAT(Message(out.status()),
              HasSubstr("node 'w' (While): the loop did not finish within 3 iterations (attribute "
                        "_max_loop_iterations=3)"));
}

TEST(ControlFlowEngine, TheEngineOptionCapsEveryLoop) {
  auto registry = engine::CreateEngineRegistry({}, {{"ge.exec.max_loop_iterations", "10"}});
  ASSERT_TRUE(registry.ok()) << registry.status();
  auto capped = CompileAndRun(ParseOrDie(EndlessLoop("")), {Tensor::FromVector<float>({1}, Shape{1})}, {},
                              registry->get());
  EXPECT_THAT(Message(capped.status()),
              HasSubstr("within 10 iterations (option ge.exec.max_loop_iterations=10)"));
  // The node's attribute wins over the option.
  auto own = CompileAndRun(ParseOrDie(EndlessLoop("{_max_loop_iterations = 2}")),
                           {Tensor::FromVector<float>({1}, Shape{1})}, {}, registry->get());
  EXPECT_THAT(Message(own.status()), HasSubstr("within 2 iterations"));
  // ... but cannot lift it: a graph's larger attribute stops at the option.
  auto lifted = CompileAndRun(ParseOrDie(EndlessLoop("{_max_loop_iterations = 1000000}")),
                              {Tensor::FromVector<float>({1}, Shape{1})}, {}, registry->get());
  EXPECT_EQ(lifted.status().code(), absl::StatusCode::kResourceExhausted) << lifted.status();
  EXPECT_THAT(Message(lifted.status()), HasSubstr("within 10 iterations (option ge.exec.max_loop_iterations=10)"));
  auto unlimited = CompileAndRun(ParseOrDie(EndlessLoop("{_max_loop_iterations = -1}")),
                                 {Tensor::FromVector<float>({1}, Shape{1})}, {}, registry->get());
  EXPECT_THAT(Message(unlimited.status()), HasSubstr("within 10 iterations"));
  // A daemon names its configuration key instead.
  auto named = engine::CreateEngineRegistry(
      {}, {{"ge.exec.max_loop_iterations", "4"}, {"ge.exec.max_loop_iterations_source", "max_loop_iterations=4"}});
  ASSERT_TRUE(named.ok()) << named.status();
  auto by_key =
      CompileAndRun(ParseOrDie(EndlessLoop("")), {Tensor::FromVector<float>({1}, Shape{1})}, {}, named->get());
  EXPECT_THAT(Message(by_key.status()), HasSubstr("within 4 iterations (max_loop_iterations=4)"));
  engine::EngineRegistry bad;
  absl::Status init = bad.LoadPlugin(engine::DefaultEngineDirectory() + "/libge_engine_control_flow.so",
                                     {{"ge.exec.max_loop_iterations", "many"}});
  EXPECT_THAT(Message(init), HasSubstr("ge.exec.max_loop_iterations: expected an integer >= -1"));
}

TEST(ControlFlowEngine, PartitionedCallRunsItsFunction) {
  std::unique_ptr<session::Session> session;
  auto out = CompileAndRun(ParseOrDie(R"(graph main {
      x = Data() {index = 0} -> (f32[2])
      y = Data() {index = 1} -> (f32[2])
      call = PartitionedCall(x, y) subgraphs(f_0)
      out = NetOutput(call:0, call:1)
    }
    graph f_0 parent(main, call) {
      a = Data() {index = 0} -> (f32[2])
      b = Data() {index = 1} -> (f32[2])
      m = Mul(a, b)
      s = Sub(a, b)
      out = NetOutput(m, s)
    })"),
                           {Tensor::FromVector<float>({2, 3}, Shape{2}), Tensor::FromVector<float>({5, 7}, Shape{2})},
                           {}, nullptr, &session);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ::testing::ElementsAre(10, 21));
  EXPECT_THAT(Floats((*out)[1]), ::testing::ElementsAre(-3, -4));
}

// While (i < 4) whose body has an If: i < 2 runs a PartitionedCall (x * 3),
// otherwise an inner While doubling x twice (x * 4). [1, 2] -> 144 * [1, 2].
constexpr char kNestedGraph[] = R"(graph main {
  i0 = Data() {index = 0} -> (i64[])
  x0 = Data() {index = 1} -> (f32[2])
  w = While(i0, x0) subgraphs(w_cond, w_body)
  out = NetOutput(w:0, w:1)
}
graph w_cond parent(main, w) {
  i = Data() {index = 0} -> (i64[])
  four = Const() {value = tensor<i64[]>[4]} -> (i64[])
  lt = Less(i, four)
  out = NetOutput(lt)
  x = Data() {index = 1} -> (f32[2])
}
graph w_body parent(main, w) {
  i = Data() {index = 0} -> (i64[])
  x = Data() {index = 1} -> (f32[2])
  two = Const() {value = tensor<i64[]>[2]} -> (i64[])
  p = Less(i, two)
  c = If(p, x) subgraphs(then_0, else_0)
  one = Const() {value = tensor<i64[]>[1]} -> (i64[])
  next = Add(i, one)
  out = NetOutput(next, c)
}
graph then_0 parent(w_body, c) {
  a = Data() {index = 0} -> (f32[2])
  call = PartitionedCall(a) subgraphs(triple)
  out = NetOutput(call)
}
graph triple parent(then_0, call) {
  a = Data() {index = 0} -> (f32[2])
  three = Const() {value = tensor<f32[]>[3]} -> (f32[])
  m = Mul(a, three)
  out = NetOutput(m)
}
graph else_0 parent(w_body, c) {
  a = Data() {index = 0} -> (f32[2])
  j0 = Const() {value = tensor<i64[]>[0]} -> (i64[])
  inner = While(j0, a) subgraphs(inner_cond, inner_body)
  out = NetOutput(inner:1)
}
graph inner_cond parent(else_0, inner) {
  j = Data() {index = 0} -> (i64[])
  two = Const() {value = tensor<i64[]>[2]} -> (i64[])
  lt = Less(j, two)
  out = NetOutput(lt)
  b = Data() {index = 1} -> (f32[2])
}
graph inner_body parent(else_0, inner) {
  j = Data() {index = 0} -> (i64[])
  b = Data() {index = 1} -> (f32[2])
  one = Const() {value = tensor<i64[]>[1]} -> (i64[])
  next = Add(j, one)
  d = Add(b, b)
  out = NetOutput(next, d)
})";

TEST(ControlFlowEngine, NestedControlFlowRuns) {
  std::unique_ptr<session::Session> session;
  auto out = CompileAndRun(ParseOrDie(kNestedGraph),
                           {Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({1, 2}, Shape{2})}, {}, nullptr,
                           &session);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().data<int64_t>()[0], 4);
  EXPECT_THAT(Floats((*out)[1]), ::testing::ElementsAre(144, 288));
  // Runs again with other values: the cached subgraph executors are reused.
  auto again = session->RunGraph(0, {Tensor::Scalar(int64_t{2}), Tensor::FromVector<float>({1, 2}, Shape{2})});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(Floats((*again)[1]), ::testing::ElementsAre(16, 32));
  EXPECT_EQ(EngineOf(*session, "inner"), "control_flow");
  EXPECT_EQ(EngineOf(*session, "m"), "host_cpu");
}

TEST(ControlFlowEngine, ErrorsInsideSubgraphsNameThePath) {
  // The body gathers table[i]: the third iteration reads past the table.
  auto out = CompileAndRun(R"(graph main {
      i0 = Data() {index = 0} -> (i64[])
      s0 = Data() {index = 1} -> (f32[])
      w = While(i0, s0) subgraphs(cond_0, body_0)
      out = NetOutput(w:1)
    }
    graph cond_0 parent(main, w) {
      i = Data() {index = 0} -> (i64[])
      five = Const() {value = tensor<i64[]>[5]} -> (i64[])
      lt = Less(i, five)
      out = NetOutput(lt)
      s = Data() {index = 1} -> (f32[])
    }
    graph body_0 parent(main, w) {
      i = Data() {index = 0} -> (i64[])
      s = Data() {index = 1} -> (f32[])
      table = Const() {value = tensor<f32[2]>[10, 20]} -> (f32[2])
      g = Gather(table, i) {axis = 0}
      t = Add(s, g)
      one = Const() {value = tensor<i64[]>[1]} -> (i64[])
      next = Add(i, one)
      out = NetOutput(next, t)
    })",
                           {Tensor::Scalar(int64_t{0}), Tensor::Scalar(0.0f)});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(Message(out.status()), HasSubstr("node 'w' (While): subgraph 'body_0': node 'g' (Gather)"));
}

}  // namespace
}  // namespace ge::test
