// Session: compile on demand, runs, input checks, option validation and
// graph bookkeeping, on the built-in engines.
#include "session/session.h"

#include <chrono>

#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/engines_test.h"

namespace ge::session {
namespace {

class SessionTest : public ge::testing::EnginesTest {
 protected:
  static std::unique_ptr<ir::Graph> Parse(const std::string& text) {
    auto g = ir::ParseGraph(text);
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }
  // y = relu(x) + x, x: f32[-1, 3]
  static std::unique_ptr<ir::Graph> ReluAdd() {
    return Parse(R"(graph main {
      x = Data() {index = 0} -> (f32[-1,3])
      r = Relu(x:0) -> (f32[-1,3])
      y = Add(r:0, x:0) -> (f32[-1,3])
      out = NetOutput(y:0)
    })");
  }

  ThreadPool pool_{1, "session-test"};
};


TEST_F(SessionTest, CompilesOnFirstRunAndRunsWithNewShapes) {
  Session session(*engines_, {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, ReluAdd()).ok());
  for (int64_t rows : {1, 4, 0}) {
    std::vector<float> x(rows * 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 5;
    auto outputs = session.RunGraph(1, {Tensor::FromVector<float>(x, Shape{rows, 3})});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    ASSERT_EQ(outputs->size(), 1u);
    const Tensor& y = (*outputs)[0].tensor();
    ASSERT_EQ(y.shape(), (Shape{rows, 3}));
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y.data<float>()[i], std::max(x[i], 0.0f) + x[i]);
  }
  auto compiled = session.GetCompiledGraph(1);
  ASSERT_TRUE(compiled.ok());
  EXPECT_EQ((*compiled)->graph->FindNode("r")->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "host_cpu");
  EXPECT_EQ((*compiled)->graph->FindNode("x")->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "ge_local");
}

// Inputs with a default (the importer's "_default_value", from ONNX
// initializers that are graph inputs) may be left out at the end.
TEST_F(SessionTest, TrailingInputsTakeTheirDefaults) {
  auto graph = Parse(R"(graph main {
      x = Data() {index = 0} -> (f32[3])
      b = Data() {index = 1} -> (f32[3])
      y = Add(x:0, b:0) -> (f32[3])
      out = NetOutput(y:0)
    })");
  ASSERT_NE(graph, nullptr);
  graph->FindNode("b")->mutable_op_desc().SetAttr("_default_value", Tensor::FromVector<float>({10, 20, 30}, Shape{3}));
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, std::move(graph)).ok());
  const Tensor x = Tensor::FromVector<float>({1, 2, 3}, Shape{3});
  auto defaulted = session.RunGraph(1, {x});
  ASSERT_TRUE(defaulted.ok()) << defaulted.status();
  EXPECT_EQ((*defaulted)[0].tensor().data<float>()[2], 33.0f);
  auto given = session.RunGraph(1, {x, x});
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_EQ((*given)[0].tensor().data<float>()[2], 6.0f);
  EXPECT_EQ(session.RunGraph(1, {}).status().code(), absl::StatusCode::kInvalidArgument);  // x has no default
}

TEST_F(SessionTest, ChecksInputs) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, ReluAdd()).ok());
  auto wrong_count = session.RunGraph(1, {});
  EXPECT_EQ(wrong_count.status().code(), absl::StatusCode::kInvalidArgument);
  auto wrong_dtype = session.RunGraph(1, {Tensor::FromVector<double>({1, 2, 3}, Shape{1, 3})});
  EXPECT_NE(std::string(wrong_dtype.status().message()).find("input 0 'x': expected f32[-1,3], got f64[1,3]"),
            std::string::npos)
      << wrong_dtype.status();
  auto wrong_dim = session.RunGraph(1, {Tensor::FromVector<float>({1, 2}, Shape{1, 2})});
  EXPECT_EQ(wrong_dim.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SessionTest, GraphBookkeepingAndOptions) {
  Session session(*engines_, {{"ge.exec.host_exec_ops", "Relu"}}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, ReluAdd()).ok());
  EXPECT_EQ(session.AddGraph(1, ReluAdd()).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(session.AddGraph(2, ReluAdd(), {{"ge.bogus", "1"}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(session.RunGraph(7, {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(session.GetCompiledGraph(1).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(session.CompileGraph(1).ok());
  auto info = session.GetGraphInfo(1);
  ASSERT_TRUE(info.ok());
  ASSERT_EQ(info->inputs.size(), 1u);
  EXPECT_EQ(info->inputs[0].type.ToString(), "f32[-1,3]");
  ASSERT_TRUE(session.RemoveGraph(1).ok());
  EXPECT_EQ(session.RemoveGraph(1).code(), absl::StatusCode::kNotFound);
}

// ReluAdd has a dynamic batch: without ge.jitCompile=0 it would run on a
// per-shape static plan (jit_plan_test), not on the dynamic executor.
TEST_F(SessionTest, InterOpParallelismIsAGraphOptionOfDynamicRuns) {
  Session session(*engines_, {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}, {"ge.jitCompile", "0"}}, &pool_);
  EXPECT_EQ(session.AddGraph(2, ReluAdd(), {{"ge.exec.inter_op_parallelism", "0"}}).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(session.AddGraph(1, ReluAdd(), {{"ge.exec.inter_op_parallelism", "3"}}).ok());
  for (int run = 0; run < 2; ++run) {
    auto outputs = session.RunGraph(1, {Tensor::FromVector<float>({-2, 1, 3}, Shape{1, 3})});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    const Tensor& y = (*outputs)[0].tensor();
    EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 3), (std::vector<float>{-2, 2, 6}));
  }
  // The second run's intermediates came from the session's output cache.
  EXPECT_GT(session.output_cache().stats().hits, 0);
}

TEST_F(SessionTest, TheOutputCacheIsTrimmedWhenTheSessionEnds) {
  auto session = std::make_unique<Session>(
      *engines_, OptionMap{{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}, {"ge.jitCompile", "0"}}, &pool_);
  ASSERT_TRUE(session->AddGraph(1, ReluAdd()).ok());
  auto outputs = session->RunGraph(1, {Tensor::FromVector<float>({-2, 1, 3}, Shape{1, 3})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  std::shared_ptr<device::CachingAllocator> cache = session->output_cache().shared_from_this();
  EXPECT_GT(cache->stats().bytes_cached, 0);  // the Relu output, dead after the Add
  session.reset();
  EXPECT_EQ(cache->stats().bytes_cached, 0);
  const Tensor& y = (*outputs)[0].tensor();  // outlives the session
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 3), (std::vector<float>{-2, 2, 6}));
  outputs->clear();
  EXPECT_EQ(cache->stats().bytes_in_use, 0);
  EXPECT_EQ(cache->stats().bytes_cached, 0);  // closed: the output went straight back
}

TEST_F(SessionTest, StrictModeFailsCompilation) {
  Session session(*engines_, {{"ge.exec.disable_host_cpu_fallback", "1"}, {"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}},
                  &pool_);
  ASSERT_TRUE(session.AddGraph(1, ReluAdd(), {{"ge.jitCompile", "0"}}).ok());
  absl::Status s = session.CompileGraph(1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(s.message()).find("'r' (Relu)"), std::string::npos) << s;
  // With per-shape plans (the default for a dynamic batch) the graph
  // compiles at its first run or when its compiled form is asked for: the
  // same error comes from there.
  ASSERT_TRUE(session.AddGraph(2, ReluAdd()).ok());
  ASSERT_TRUE(session.CompileGraph(2).ok());
  auto run = session.RunGraph(2, {Tensor::FromVector<float>({-2, 1, 3}, Shape{1, 3})});
  EXPECT_EQ(run.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(run.status().message()).find("'r' (Relu)"), std::string::npos) << run.status();
  ASSERT_TRUE(session.AddGraph(3, ReluAdd()).ok());
  ASSERT_TRUE(session.CompileGraph(3).ok());
  EXPECT_EQ(session.GetCompiledGraph(3).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ge::session

namespace ge::session {
namespace {

// A known-shape graph runs on the StaticExecutor; the same graph forced
// dynamic (ge.host_scheduling_max_threshold above its op count) runs on the
// DynamicExecutor, with the same results. (host_cpu nodes are dynamic by
// GE's rule, so the static graph uses ge_local's view ops.)
// A RunControl stops a run between nodes (dynamic) and between tasks
// (static), naming the node it stopped before; without one, runs go on.
TEST_F(SessionTest, RunControlStopsRunsBetweenNodesAndTasks) {
  const std::string static_text = R"(graph main {
      x = Data() {index = 0} -> (f32[2,3])
      s = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
      r = Reshape(x:0, s:0) -> (f32[3,2])
      out = NetOutput(r:0)
    })";
  Session dynamic(*engines_, {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}}, &pool_);
  Session fixed(*engines_, {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}}, &pool_);
  ASSERT_TRUE(dynamic.AddGraph(1, ReluAdd()).ok());
  ASSERT_TRUE(fixed.AddGraph(1, Parse(static_text)).ok());
  ASSERT_TRUE(fixed.CompileGraph(1).ok());
  ASSERT_TRUE(*fixed.RunsStatically(1));
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});

  runtime::RunControl cancelled;
  cancelled.set_cancelled([] { return true; });
  runtime::RunControl late;
  late.set_deadline(runtime::RunControl::Clock::now() - std::chrono::seconds(1));
  runtime::RunControl fine;
  fine.set_cancelled([] { return false; });
  fine.set_deadline(runtime::RunControl::Clock::now() + std::chrono::hours(1));
  for (Session* session : {&dynamic, &fixed}) {
    auto stopped = session->RunGraph(1, {x}, &cancelled);
    EXPECT_EQ(stopped.status().code(), absl::StatusCode::kCancelled) << stopped.status();
    EXPECT_NE(stopped.status().message().find("cancelled before node"), std::string::npos) << stopped.status();
    auto expired = session->RunGraph(1, {x}, &late);
    EXPECT_EQ(expired.status().code(), absl::StatusCode::kDeadlineExceeded) << expired.status();
    EXPECT_TRUE(session->RunGraph(1, {x}, &fine).ok());
    EXPECT_TRUE(session->RunGraph(1, {x}).ok());
  }
}

TEST_F(SessionTest, StaticGraphsRunOnTheStaticPath) {
  const std::string text = R"(graph main {
      x = Data() {index = 0} -> (f32[2,3])
      s = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
      r = Reshape(x:0, s:0) -> (f32[3,2])
      f = Flatten(r:0) {axis = 0} -> (f32[1,6])
      i = Identity(f:0) -> (f32[1,6])
      u = Unsqueeze(x:0, a:0) -> (f32[1,2,3])
      a = Const() {value = tensor<i64[1]>[0]} -> (i64[1])
      out = NetOutput(i:0, u:0, r:0)
    })";
  Session fast(*engines_, {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}}, &pool_);
  Session slow(*engines_, {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}, {"ge.host_scheduling_max_threshold", "1000"}},
               &pool_);
  ASSERT_TRUE(fast.AddGraph(1, Parse(text)).ok());
  ASSERT_TRUE(slow.AddGraph(1, Parse(text)).ok());
  EXPECT_EQ(fast.RunsStatically(1).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(fast.CompileGraph(1).ok());
  ASSERT_TRUE(slow.CompileGraph(1).ok());
  EXPECT_TRUE(*fast.RunsStatically(1));
  EXPECT_FALSE(*slow.RunsStatically(1));
  for (int run = 0; run < 2; ++run) {
    Tensor x = Tensor::FromVector<float>({-1, 2, -3, 4, 5.f + run, -6}, Shape{2, 3});
    auto a = fast.RunGraph(1, {x});
    auto b = slow.RunGraph(1, {x});
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_EQ(a->size(), 3u);
    EXPECT_EQ((*a)[0].tensor().shape(), (Shape{1, 6}));
    for (int o = 0; o < 3; ++o) {
      const Tensor& ta = (*a)[o].tensor();
      const Tensor& tb = (*b)[o].tensor();
      ASSERT_EQ(ta.shape(), tb.shape());
      for (int64_t i = 0; i < ta.NumElements(); ++i) {
        EXPECT_EQ(ta.data<float>()[i], tb.data<float>()[i]);
        EXPECT_EQ(ta.data<float>()[i], x.data<float>()[i]);
      }
    }
  }
  // Dynamic graphs stay dynamic.
  Session dynamic(*engines_, {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}}, &pool_);
  ASSERT_TRUE(dynamic.AddGraph(1, ReluAdd()).ok());
  ASSERT_TRUE(dynamic.CompileGraph(1).ok());
  EXPECT_FALSE(*dynamic.RunsStatically(1));
}

}  // namespace
}  // namespace ge::session

namespace ge::session {
namespace {

// A root split into static and dynamic units runs its static units on
// StaticExecutors inside the dynamic root, with the same results as the
// flattened graph on the DynamicExecutor.
TEST_F(SessionTest, MixedRootRunsStaticUnitsStatically) {
  const std::string text = R"(graph main {
      x = Data() {index = 0} -> (f32[2,3])
      s = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
      r = Reshape(x:0, s:0) -> (f32[3,2])
      i = Identity(r:0) -> (f32[3,2])
      n = Neg(i:0) {_ge_engine = "host_cpu"} -> (f32[3,2])
      f = Flatten(n:0) {axis = 0} -> (f32[1,6])
      j = Identity(f:0) -> (f32[1,6])
      out = NetOutput(j:0, i:0)
    })";
  const OptionMap base = {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}, {"ge.exec.static_model_ops_lower_limit", "1"}};
  Session mixed(*engines_, base, &pool_);
  ASSERT_TRUE(mixed.AddGraph(1, Parse(text)).ok());
  ASSERT_TRUE(mixed.CompileGraph(1).ok());
  EXPECT_FALSE(*mixed.RunsStatically(1));
  EXPECT_GE(*mixed.NumStaticSubgraphs(1), 1);
  Tensor x = Tensor::FromVector<float>({-1, 2, -3, 4, 5, -6}, Shape{2, 3});
  for (int run = 0; run < 2; ++run) {
    auto out = mixed.RunGraph(1, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ((*out)[0].tensor().shape(), (Shape{1, 6}));
    EXPECT_EQ((*out)[1].tensor().shape(), (Shape{3, 2}));
    for (int k = 0; k < 6; ++k) {
      EXPECT_EQ((*out)[0].tensor().data<float>()[k], -x.data<float>()[k]);
      EXPECT_EQ((*out)[1].tensor().data<float>()[k], x.data<float>()[k]);
    }
  }
}

}  // namespace
}  // namespace ge::session
