// JIT compilation (ge.jitCompile, session/jit_graph.h): graphs whose later
// shapes depend on input values (Compress, ged's NonZero-like op; Shape
// feeding Reshape) run
// correctly slice by slice, recompile only when a guard fails, say which,
// and past ge.jitMaxRecompiles run on the graph's dynamic form.
#include <vector>

#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::session {
namespace {

class JitGraphTest : public ge::testing::EnginesTest {
 protected:
  static std::unique_ptr<ir::Graph> Parse(const std::string& text) {
    auto g = ir::ParseGraph(text);
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }
  // Compress keeps the positive elements (ged's NonZero-like op: its output
  // length depends on the values), and Shape of its result feeds a Reshape
  // to [1, n]: each shape is known only after the step before ran.
  static std::unique_ptr<ir::Graph> CompressGraph() {
    return Parse(R"(graph cr {
      x = Data() {index = 0} -> (f32[-1] as "x")
      z = Const() {value = tensor<f32[]>[0]} -> (f32[])
      one = Const() {value = tensor<i64[1]>[1]} -> (i64[1])
      c = Greater(x:0, z:0) -> (bool[-1])
      k = Compress(x:0, c:0) -> (f32[-1])
      s = Shape(k:0) -> (i64[1])
      ns = Concat(one:0, s:0) {axis = 0} -> (i64[2])
      r = Reshape(k:0, ns:0) -> (f32[-1,-1])
      e = Exp(r:0) -> (f32[-1,-1])
      out = NetOutput(e:0, c:0)
    })");
  }
  // y = Reshape(exp(x), [prod(shape(x))]): the target shape is a value
  // computed from the input's shape.
  static std::unique_ptr<ir::Graph> ShapeReshapeGraph() {
    return Parse(R"(graph sr {
      x = Data() {index = 0} -> (f32[-1,4] as "x")
      s = Shape(x:0) -> (i64[2])
      p = ReduceProd(s:0) {keepdims = 1} -> (i64[1])
      e = Exp(x:0) -> (f32[-1,4])
      y = Reshape(e:0, p:0) -> (f32[-1])
      out = NetOutput(y:0)
    })");
  }
  static Tensor Rows(int64_t rows, int64_t cols, float start) {
    std::vector<float> v(rows * cols);
    for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i % 5) - 2;
    return Tensor::FromVector<float>(v, Shape{rows, cols});
  }

  // Without constant folding planning cannot fold Shape -> ReduceProd or
  // Shape -> Concat, so every value a Reshape reads ends a stage: these
  // tests watch the stages (jit_plan_test the folded, one-slice plans).
  const OptionMap kStaged{{"ge.jitCompile", "1"}, {"ge.oo.constantFolding", "0"}};

  ThreadPool pool_{1, "jit-test"};
};

TEST_F(JitGraphTest, ValueDependentShapesRunSliceBySlice) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, CompressGraph(), kStaged).ok());
  for (float shift : {0.0f, 1.0f, 0.0f}) {
    const Tensor x = Tensor::FromVector<float>({-1.0f + shift, 2.0f, -3.0f + shift, 0.5f, -0.25f + shift, 4.0f}, Shape{6});
    auto out = session.RunGraph(1, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> kept;
    for (int64_t i = 0; i < 6; ++i) {
      if (x.data<float>()[i] > 0) kept.push_back(x.data<float>()[i]);
    }
    const Tensor& e = (*out)[0].tensor();
    ASSERT_EQ(e.shape(), (Shape{1, static_cast<int64_t>(kept.size())}));
    for (size_t i = 0; i < kept.size(); ++i) EXPECT_NEAR(e.data<float>()[i], std::exp(kept[i]), 1e-5) << i;
    EXPECT_EQ((*out)[1].tensor().shape(), (Shape{6}));
  }
  auto stats = session.GetJitStats(1);
  ASSERT_TRUE(stats.ok()) << stats.status();
  // Greater; Compress (run to learn its length); Shape and Concat; Reshape
  // with the value of ns, and Exp.
  EXPECT_EQ(stats->last_run_slices, 4);
  // The second run keeps 4 elements instead of 3: the guard of the stage
  // after Compress fails once; the third run reuses the first's slices.
  EXPECT_EQ(stats->recompilations, 1);
  EXPECT_EQ(stats->compilations, 6);
  // Stage 2 reads c (passed on to the output) and Compress's result (one is
  // a Const of its own).
  EXPECT_EQ(stats->last_guard_failure, "stage 2: input 1 'k_0' is f32[4], compiled for f32[3]");
  // The single compiled form is the dynamic graph, compiled on first ask.
  auto compiled = session.GetCompiledGraph(1);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ((*compiled)->graph->InputNodes()[0]->op_desc().output(0).type.shape(), (Shape{-1}));
  EXPECT_EQ(session.GetJitStats(1)->fallback_runs, 0);
}

// A weight read after a value-dependent step: the later stage gets it as
// a Const of its own (BinaryPartitioner copies it), not as a stage input;
// the outputs equal the reference for several row counts.
TEST_F(JitGraphTest, WeightsAfterAValueDependentStepStayConstants) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session
                  .AddGraph(1, Parse(R"(graph cw {
      x = Data() {index = 0} -> (f32[-1,4] as "x")
      w = Const() {value = tensor<f32[4,3]>[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]} -> (f32[4,3])
      i0 = Const() {value = tensor<i64[]>[0]} -> (i64[])
      z = Const() {value = tensor<f32[]>[0]} -> (f32[])
      col = Gather(x:0, i0:0) {axis = 1} -> (f32[-1])
      c = Greater(col:0, z:0) -> (bool[-1])
      k = Compress(x:0, c:0) {axis = 0} -> (f32[-1,4])
      y = MatMul(k:0, w:0) -> (f32[-1,3])
      out = NetOutput(y:0)
    })"),
                            kStaged)
                  .ok());
  for (int64_t rows : {5, 7, 5}) {
    const Tensor x = Rows(rows, 4, 0.5f);
    auto out = session.RunGraph(1, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> expected;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data<float>() + r * 4;
      if (!(row[0] > 0)) continue;
      for (int j = 0; j < 3; ++j) {
        float acc = 0;
        for (int i = 0; i < 4; ++i) acc += row[i] * static_cast<float>(i * 3 + j + 1);
        expected.push_back(acc);
      }
    }
    const Tensor& y = (*out)[0].tensor();
    ASSERT_EQ(y.shape(), (Shape{static_cast<int64_t>(expected.size() / 3), 3}));
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(y.data<float>()[i], expected[i], 1e-4) << i;
  }
  EXPECT_GE(session.GetJitStats(1)->planned_runs, 3);
}

TEST_F(JitGraphTest, ShapeFeedingReshapeRecompilesOnlyWhenAGuardFails) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, ShapeReshapeGraph(), kStaged).ok());
  auto run = [&](int64_t rows) {
    const Tensor x = Rows(rows, 4, 0.5f);
    auto out = session.RunGraph(1, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0].tensor();
    ASSERT_EQ(y.shape(), (Shape{rows * 4}));
    for (int64_t i = 0; i < y.NumElements(); ++i) EXPECT_NEAR(y.data<float>()[i], std::exp(x.data<float>()[i]), 1e-5);
  };
  run(2);
  const JitStats first = *session.GetJitStats(1);
  // Stage 0 (Shape, ReduceProd, Exp are known), then Reshape with the value of p.
  EXPECT_EQ(first.last_run_slices, 2);
  EXPECT_EQ(first.compilations, 2);
  EXPECT_EQ(first.recompilations, 0);
  run(2);
  EXPECT_EQ(session.GetJitStats(1)->compilations, 2) << "same shapes: every guard holds, nothing compiles";
  run(3);
  const JitStats third = *session.GetJitStats(1);
  EXPECT_EQ(third.recompilations, 1);
  EXPECT_EQ(third.last_guard_failure, "stage 0: input 0 'x' is f32[3,4], compiled for f32[2,4]");
  run(2);
  run(3);
  EXPECT_EQ(session.GetJitStats(1)->compilations, third.compilations);
}

TEST_F(JitGraphTest, PastTheRecompilationBoundRunsTheDynamicForm) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session
                  .AddGraph(1, ShapeReshapeGraph(),
                            {{"ge.jitCompile", "1"}, {"ge.oo.constantFolding", "0"}, {"ge.jitMaxRecompiles", "1"}})
                  .ok());
  ASSERT_TRUE(session.RunGraph(1, {Rows(2, 4, 0)}).ok());
  // Rows 3: stage 0's guard fails (the one recompilation allowed); the
  // stage after the new slice is new, so planning it is no recompilation.
  ASSERT_TRUE(session.RunGraph(1, {Rows(3, 4, 0)}).ok());
  const Tensor x = Rows(5, 4, 0);
  auto over = session.RunGraph(1, {x});
  ASSERT_TRUE(over.ok()) << over.status();
  const Tensor& y = (*over)[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{20}));
  for (int64_t i = 0; i < y.NumElements(); ++i) EXPECT_NEAR(y.data<float>()[i], std::exp(x.data<float>()[i]), 1e-5);
  const JitStats stats = *session.GetJitStats(1);
  EXPECT_EQ(stats.recompilations, 1);
  EXPECT_EQ(stats.compilations, 4);
  EXPECT_EQ(stats.fallback_runs, 1);
  EXPECT_EQ(stats.fallback_reason,
            "ge.jitMaxRecompiles=1 reached; the guard of stage 0: input 0 'x' is f32[5,4], compiled for f32[2,4] | "
            "f32[3,4]");
  // Shapes already planned still run on their plans.
  ASSERT_TRUE(session.RunGraph(1, {Rows(2, 4, 0)}).ok());
  EXPECT_EQ(session.GetJitStats(1)->planned_runs, 3);
  EXPECT_EQ(session.GetJitStats(1)->compilations, 4);
}

TEST_F(JitGraphTest, GearsWinOverJit) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(
      session.AddGraph(1, ShapeReshapeGraph(), {{"ge.jitCompile", "1"}, {"ge.dynamicBatchSize", "2,3"}}).ok());
  ASSERT_TRUE(session.RunGraph(1, {Rows(3, 4, 0)}).ok());
  EXPECT_EQ(session.GetJitStats(1).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(session.GetGearRunCounts(1)->multi_batch);
}

TEST_F(JitGraphTest, StaticGraphsCompileAsUsual) {
  Session session(*engines_, {}, &pool_);
  auto g = Parse(R"(graph s {
    x = Data() {index = 0} -> (f32[2,3])
    r = Relu(x:0) -> (f32[2,3])
    out = NetOutput(r:0)
  })");
  ASSERT_TRUE(session.AddGraph(1, std::move(g), {{"ge.jitCompile", "1"}}).ok());
  ASSERT_TRUE(session.RunGraph(1, {Rows(2, 3, 0)}).ok());
  EXPECT_EQ(session.GetJitStats(1).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(session.GetCompiledGraph(1).ok());
}

}  // namespace
}  // namespace ge::session
