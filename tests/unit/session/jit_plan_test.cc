// Per-shape plans by default (session/jit_graph.h, ge.jitCompile's default
// 1): a graph with a dynamic batch dim gets a static plan per input shape
// without any option; its outputs equal the dynamic executor's; past
// ge.jitMaxRecompiles inputs that fit no plan run on the dynamic form
// instead of failing, and the plans stay bounded; at ge.jitMaxPlans (or
// ge.jitPlanMemoryBytes) a more frequent shape replaces the least recently
// used plan, a cycle wider than the bound does not thrash, and replaced
// plans stay valid for the runs using them; runs of different shapes
// run at once; the single compiled form (GetCompiledGraph, the .gem export)
// is the dynamic graph, compiled on first ask; the session's compile
// bound covers the plans and the dynamic form, compiled after CompileGraph.
#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/str_replace.h"
#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "runtime/model/gem.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::session {
namespace {

class JitPlanTest : public ge::testing::EnginesTest {
 protected:
  // A small MLP over a dynamic batch: MatMul, bias Add, Relu, a reshape
  // through Shape (the batch read as a value), Softmax.
  static std::unique_ptr<ir::Graph> MlpGraph() {
    auto g = ir::ParseGraph(R"(graph mlp {
      x = Data() {index = 0} -> (f32[-1,4] as "x")
      w = Const() {value = tensor<f32[4,3]>[0.5,-1,0.25,1,0.75,-0.5,-0.25,0.5,1,0.125,-0.75,0.5]} -> (f32[4,3])
      b = Const() {value = tensor<f32[3]>[0.1,-0.2,0.3]} -> (f32[3])
      m = MatMul(x:0, w:0) -> (f32[-1,3])
      a = Add(m:0, b:0) -> (f32[-1,3])
      r = Relu(a:0) -> (f32[-1,3])
      s = Shape(x:0) -> (i64[2])
      p = ReduceProd(s:0) {keepdims = 1} -> (i64[1])
      t = Tanh(x:0) -> (f32[-1,4])
      f = Reshape(t:0, p:0) -> (f32[-1])
      y = Softmax(r:0) {axis = 1} -> (f32[-1,3])
      out = NetOutput(y:0, f:0)
    })");
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }
  static Tensor Rows(int64_t rows, float start) {
    std::vector<float> v(rows * 4);
    for (size_t i = 0; i < v.size(); ++i) v[i] = start + 0.25f * static_cast<float>(i % 7) - 0.75f;
    return Tensor::FromVector<float>(v, Shape{rows, 4});
  }
  static void ExpectSame(const std::vector<Value>& got, const std::vector<Value>& want, const std::string& where) {
    ASSERT_EQ(got.size(), want.size()) << where;
    for (size_t i = 0; i < got.size(); ++i) {
      const Tensor& g = got[i].tensor();
      const Tensor& w = want[i].tensor();
      ASSERT_EQ(g.shape(), w.shape()) << where << " output " << i;
      for (int64_t k = 0; k < g.NumElements(); ++k) {
        EXPECT_NEAR(g.data<float>()[k], w.data<float>()[k], 1e-6) << where << " output " << i << " element " << k;
      }
    }
  }

  ThreadPool pool_{1, "jit-plan-test"};
};

TEST_F(JitPlanTest, DynamicGraphsGetPlansByDefaultAndMatchTheDynamicExecutor) {
  Session planned(*engines_, {}, &pool_);
  Session dynamic(*engines_, {}, &pool_);
  ASSERT_TRUE(planned.AddGraph(1, MlpGraph()).ok());
  ASSERT_TRUE(dynamic.AddGraph(1, MlpGraph(), {{"ge.jitCompile", "0"}}).ok());
  for (int64_t rows : {1, 4, 3, 4, 1}) {
    auto got = planned.RunGraph(1, {Rows(rows, 0.5f)});
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = dynamic.RunGraph(1, {Rows(rows, 0.5f)});
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectSame(*got, *want, StrCat("rows ", rows));
  }
  auto stats = planned.GetJitStats(1);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->planned_runs, 5);
  EXPECT_EQ(stats->fallback_runs, 0);
  // Per shape one static plan of the whole graph: planning folds the
  // Shape -> ReduceProd feeding the Reshape, so nothing waits for a value.
  EXPECT_EQ(stats->last_run_slices, 1);
  EXPECT_EQ(stats->compilations, 3);
  EXPECT_EQ(stats->recompilations, 2);
  EXPECT_EQ(dynamic.GetJitStats(1).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(*dynamic.RunsStatically(1));
}

TEST_F(JitPlanTest, PastTheBoundInputsRunOnTheDynamicFormAndThePlansStayBounded) {
  Session planned(*engines_, {}, &pool_);
  Session dynamic(*engines_, {}, &pool_);
  ASSERT_TRUE(planned.AddGraph(1, MlpGraph(), {{"ge.jitMaxRecompiles", "2"}}).ok());
  ASSERT_TRUE(dynamic.AddGraph(1, MlpGraph(), {{"ge.jitCompile", "0"}}).ok());
  int64_t runs = 0;
  for (int round = 0; round < 2; ++round) {
    for (int64_t rows = 1; rows <= 6; ++rows) {
      auto got = planned.RunGraph(1, {Rows(rows, -0.5f)});
      ASSERT_TRUE(got.ok()) << got.status();
      auto want = dynamic.RunGraph(1, {Rows(rows, -0.5f)});
      ASSERT_TRUE(want.ok()) << want.status();
      ExpectSame(*got, *want, StrCat("round ", round, " rows ", rows));
      ++runs;
    }
  }
  const JitStats stats = *planned.GetJitStats(1);
  EXPECT_EQ(stats.recompilations, 2) << "the bound";
  // rows 1 to 3 get a plan each; rows 4 to 6 miss every guard past the bound.
  EXPECT_EQ(stats.compilations, 3);
  EXPECT_EQ(stats.planned_runs, 6);
  EXPECT_EQ(stats.fallback_runs, 6);
  EXPECT_EQ(stats.planned_runs + stats.fallback_runs, runs);
  EXPECT_NE(stats.fallback_reason.find("ge.jitMaxRecompiles=2 reached"), std::string::npos) << stats.fallback_reason;
  // The dynamic form came on first need and is the graph's compiled form.
  auto compiled = planned.GetCompiledGraph(1);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_FALSE(*planned.RunsStatically(1));
}

// ge.jitMaxPlans: at the bound a new shape replaces the least recently used
// plan only once it has been seen 2 more times than that plan ran; until
// then it runs on the dynamic form. Outputs equal the dynamic executor's throughout.
TEST_F(JitPlanTest, AtThePlanBoundAMoreFrequentShapeReplacesTheLeastRecentlyUsedPlan) {
  Session planned(*engines_, {}, &pool_);
  Session dynamic(*engines_, {}, &pool_);
  ASSERT_TRUE(planned.AddGraph(1, MlpGraph(), {{"ge.jitMaxPlans", "2"}}).ok());
  ASSERT_TRUE(dynamic.AddGraph(1, MlpGraph(), {{"ge.jitCompile", "0"}}).ok());
  auto run = [&](int64_t rows) {
    auto got = planned.RunGraph(1, {Rows(rows, 0.75f)});
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = dynamic.RunGraph(1, {Rows(rows, 0.75f)});
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectSame(*got, *want, StrCat("rows ", rows));
  };
  run(1);
  run(2);  // two plans: the bound
  run(3);  // seen once, rows 1's plan ran once: the dynamic form
  run(3);  // seen twice: still the dynamic form
  JitStats stats = *planned.GetJitStats(1);
  EXPECT_EQ(stats.live_plans, 2);
  EXPECT_EQ(stats.fallback_runs, 2);
  EXPECT_EQ(stats.evictions, 0);
  EXPECT_NE(stats.fallback_reason.find("ge.jitMaxPlans=2"), std::string::npos) << stats.fallback_reason;
  run(3);  // seen 3 times: replaces rows 1's plan (least recently used, ran once)
  stats = *planned.GetJitStats(1);
  EXPECT_EQ(stats.evictions, 1);
  EXPECT_EQ(stats.live_plans, 2);
  EXPECT_EQ(stats.compilations, 3);
  EXPECT_GT(stats.plan_bytes, 0);
  run(3);
  run(2);  // both still planned
  stats = *planned.GetJitStats(1);
  EXPECT_EQ(stats.compilations, 3);
  EXPECT_EQ(stats.fallback_runs, 2);
  run(1);  // its plan is gone: the dynamic form again
  EXPECT_EQ(planned.GetJitStats(1)->fallback_runs, 3);
  EXPECT_EQ(planned.GetJitStats(1)->planned_runs, 5);
}

// A cycle of more shapes than the bound (a decoder's growing past length,
// run again and again) keeps the first plans and runs the rest on the
// dynamic form: no plan is replaced, nothing recompiles after the first round.
TEST_F(JitPlanTest, ACycleWiderThanThePlanBoundDoesNotThrash) {
  Session planned(*engines_, {}, &pool_);
  ASSERT_TRUE(planned.AddGraph(1, MlpGraph(), {{"ge.jitMaxPlans", "3"}}).ok());
  constexpr int kRounds = 40;  // past the ageing period (16 x 3 lookups)
  for (int round = 0; round < kRounds; ++round) {
    for (int64_t rows = 1; rows <= 5; ++rows) ASSERT_TRUE(planned.RunGraph(1, {Rows(rows, 0)}).ok());
  }
  const JitStats stats = *planned.GetJitStats(1);
  EXPECT_EQ(stats.compilations, 3);
  EXPECT_EQ(stats.evictions, 0);
  EXPECT_EQ(stats.live_plans, 3);
  EXPECT_EQ(stats.planned_runs, 3 * kRounds);
  EXPECT_EQ(stats.fallback_runs, 2 * kRounds);
}

// ge.jitPlanMemoryBytes bounds the plans' arenas as ge.jitMaxPlans bounds
// their count: with one byte, the first plan fills it.
TEST_F(JitPlanTest, ThePlanMemoryBoundActsAsTheCountBound) {
  Session planned(*engines_, {}, &pool_);
  ASSERT_TRUE(planned.AddGraph(1, MlpGraph(), {{"ge.jitPlanMemoryBytes", "1"}}).ok());
  ASSERT_TRUE(planned.RunGraph(1, {Rows(4, 0)}).ok());
  ASSERT_TRUE(planned.RunGraph(1, {Rows(2, 0)}).ok());
  JitStats stats = *planned.GetJitStats(1);
  EXPECT_EQ(stats.live_plans, 1);
  EXPECT_GT(stats.plan_bytes, 1);
  EXPECT_EQ(stats.fallback_runs, 1);
  EXPECT_NE(stats.fallback_reason.find("ge.jitPlanMemoryBytes=1"), std::string::npos) << stats.fallback_reason;
  EXPECT_EQ(planned.AddGraph(2, MlpGraph(), {{"ge.jitMaxPlans", "0"}}).code(), absl::StatusCode::kInvalidArgument);
}

// Plans replaced while other runs use them: every output stays right (a
// replaced plan lives until its last run ends).
TEST_F(JitPlanTest, PlansReplacedWhileOthersRunThemStayValid) {
  Session planned(*engines_, {}, &pool_);
  Session dynamic(*engines_, {}, &pool_);
  ASSERT_TRUE(planned.AddGraph(1, MlpGraph(), {{"ge.jitMaxPlans", "2"}}).ok());
  ASSERT_TRUE(dynamic.AddGraph(1, MlpGraph(), {{"ge.jitCompile", "0"}}).ok());
  constexpr int kThreads = 4;
  constexpr int kRuns = 30;
  constexpr int kShapes = 5;
  std::vector<std::vector<Value>> want(kShapes);
  for (int s = 0; s < kShapes; ++s) {
    auto out = dynamic.RunGraph(1, {Rows(s + 1, 0.5f)});
    ASSERT_TRUE(out.ok()) << out.status();
    want[s] = *std::move(out);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        // Each thread favours its own shape for a while, then another's:
        // the frequencies shift, so plans get replaced during others' runs.
        const int s = (i < kRuns / 2 ? t : t + 1 + i % 3) % kShapes;
        auto got = planned.RunGraph(1, {Rows(s + 1, 0.5f)});
        if (!got.ok() || got->size() != want[s].size()) {
          ++failures;
          continue;
        }
        for (size_t o = 0; o < got->size(); ++o) {
          const Tensor& g = (*got)[o].tensor();
          const Tensor& w = want[s][o].tensor();
          if (g.shape() != w.shape()) {
            ++failures;
            continue;
          }
          for (int64_t k = 0; k < g.NumElements(); ++k) {
            if (std::abs(g.data<float>()[k] - w.data<float>()[k]) > 1e-6) {
              ++failures;
              break;
            }
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  const JitStats stats = *planned.GetJitStats(1);
  EXPECT_EQ(stats.planned_runs + stats.fallback_runs, kThreads * kRuns);
  EXPECT_LE(stats.live_plans, 2);
  EXPECT_EQ(stats.compilations - stats.evictions, stats.live_plans);
}

TEST_F(JitPlanTest, RunsOfDifferentShapesRunAtOnce) {
  Session planned(*engines_, {}, &pool_);
  Session dynamic(*engines_, {}, &pool_);
  ASSERT_TRUE(planned.AddGraph(1, MlpGraph()).ok());
  ASSERT_TRUE(dynamic.AddGraph(1, MlpGraph(), {{"ge.jitCompile", "0"}}).ok());
  constexpr int kThreads = 4;
  constexpr int kRuns = 25;
  // Expected outputs first, from the dynamic executor, one per shape.
  std::vector<std::vector<Value>> want(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    auto out = dynamic.RunGraph(1, {Rows(t + 1, 0.25f * t)});
    ASSERT_TRUE(out.ok()) << out.status();
    want[t] = *std::move(out);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        auto got = planned.RunGraph(1, {Rows(t + 1, 0.25f * t)});
        if (!got.ok() || got->size() != want[t].size()) {
          ++failures;
          continue;
        }
        for (size_t o = 0; o < got->size(); ++o) {
          const Tensor& g = (*got)[o].tensor();
          const Tensor& w = want[t][o].tensor();
          if (g.shape() != w.shape()) {
            ++failures;
            continue;
          }
          for (int64_t k = 0; k < g.NumElements(); ++k) {
            if (std::abs(g.data<float>()[k] - w.data<float>()[k]) > 1e-6) {
              ++failures;
              break;
            }
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  const JitStats stats = *planned.GetJitStats(1);
  EXPECT_EQ(stats.planned_runs + stats.fallback_runs, kThreads * kRuns);
  EXPECT_EQ(stats.fallback_runs, 0) << "4 shapes: 4 plans, within the default bound of 64";
  EXPECT_EQ(stats.recompilations, kThreads - 1);
  EXPECT_EQ(stats.compilations, kThreads);
}

TEST_F(JitPlanTest, TheExportIsTheDynamicForm) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, MlpGraph()).ok());
  ASSERT_TRUE(session.CompileGraph(1).ok());
  ASSERT_TRUE(session.RunGraph(1, {Rows(2, 0)}).ok());
  EXPECT_EQ(session.GetJitStats(1)->planned_runs, 1);
  auto gem = session.ExportCompiledModel(1);
  ASSERT_TRUE(gem.ok()) << gem.status();
  auto model = runtime::LoadGemFromBytes(*gem, "export", *engines_);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<ir::Node*> inputs = model->graph->InputNodes();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0]->op_desc().output(0).type.shape().dim(0), -1) << "the batch dim stays dynamic";
  EXPECT_FALSE(model->program.has_value()) << "a dynamic graph has no static program";
  // The exported model runs any batch, and so does the graph after its
  // dynamic form was compiled (its plans still serve their shapes).
  Session loaded(*engines_, {}, &pool_);
  ASSERT_TRUE(loaded.AddCompiledModel(1, *std::move(model)).ok());
  auto a = loaded.RunGraph(1, {Rows(5, 0)});
  auto b = session.RunGraph(1, {Rows(5, 0)});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ExpectSame(*b, *a, "rows 5");
  EXPECT_EQ(session.GetJitStats(1)->planned_runs, 2);
}

// A compiled model with unknown input dims (a .gem, LoadModel's bytes, a
// cache entry loaded by key) gets per-shape plans too: they are planned
// from its compiled graph (placed and fused: MatMul + Add + Relu are one
// node there), whose slices compile again for the actual shapes; the model
// as loaded is the fallback. Its outputs equal the dynamic executor's.
TEST_F(JitPlanTest, ACompiledDynamicModelPlansPerShape) {
  Session source(*engines_, {}, &pool_);
  ASSERT_TRUE(source.AddGraph(1, MlpGraph()).ok());
  ASSERT_TRUE(source.CompileGraph(1).ok());
  auto gem = source.ExportCompiledModel(1);
  ASSERT_TRUE(gem.ok()) << gem.status();
  auto model = runtime::LoadGemFromBytes(*gem, "export", *engines_);
  ASSERT_TRUE(model.ok()) << model.status();
  size_t compiled_nodes = 0;
  model->graph->ForEachNode([&](const ir::Node*) { ++compiled_nodes; });
  Session loaded(*engines_, {}, &pool_);
  Session dynamic(*engines_, {}, &pool_);
  ASSERT_TRUE(loaded.AddCompiledModel(7, *std::move(model)).ok());
  ASSERT_TRUE(dynamic.AddGraph(1, MlpGraph(), {{"ge.jitCompile", "0"}}).ok());
  for (int64_t rows : {1, 4, 3, 4, 1, 2}) {
    auto got = loaded.RunGraph(7, {Rows(rows, 0.5f)});
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = dynamic.RunGraph(1, {Rows(rows, 0.5f)});
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectSame(*got, *want, StrCat("rows ", rows));
  }
  auto stats = loaded.GetJitStats(7);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->planned_runs, 6);
  EXPECT_EQ(stats->fallback_runs, 0) << stats->fallback_reason;
  EXPECT_EQ(stats->last_run_slices, 1) << "one static plan per shape, as from the source graph";
  EXPECT_EQ(stats->compilations, 4);
  // The graph's description and compiled form stay the loaded model's.
  auto info = loaded.GetGraphInfo(7);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->inputs[0].type.shape().dim(0), -1);
  auto compiled = loaded.GetCompiledGraph(7);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  size_t nodes = 0;
  (*compiled)->graph->ForEachNode([&](const ir::Node*) { ++nodes; });
  EXPECT_EQ(nodes, compiled_nodes);
  EXPECT_FALSE(*loaded.RunsStatically(7)) << "the loaded model is the dynamic form";
  auto again = loaded.ExportCompiledModel(7);
  ASSERT_TRUE(again.ok()) << again.status();

  // A model compiled with ge.jitCompile=0 keeps it: the dynamic executor.
  Session off(*engines_, {}, &pool_);
  ASSERT_TRUE(off.AddGraph(1, MlpGraph(), {{"ge.jitCompile", "0"}}).ok());
  ASSERT_TRUE(off.CompileGraph(1).ok());
  auto off_gem = off.ExportCompiledModel(1);
  ASSERT_TRUE(off_gem.ok()) << off_gem.status();
  auto off_model = runtime::LoadGemFromBytes(*off_gem, "export", *engines_);
  ASSERT_TRUE(off_model.ok()) << off_model.status();
  Session off_loaded(*engines_, {}, &pool_);
  ASSERT_TRUE(off_loaded.AddCompiledModel(1, *std::move(off_model)).ok());
  ASSERT_TRUE(off_loaded.RunGraph(1, {Rows(2, 0)}).ok());
  EXPECT_EQ(off_loaded.GetJitStats(1).status().code(), absl::StatusCode::kFailedPrecondition);
}

// A QDQ model with a dynamic batch: each plan fuses DQ -> Conv -> Q into
// its int8 node before folding (which would turn DQ(weights) into float
// weights and leave the chain in float, as the plans once did), so a plan
// computes what the static compile does. The float bias 0.6 is 1 at the
// int32 scale: on integers y = round((x + 1) / 2), in float round((x +
// 0.6) / 2), which differ at x = 2 and 6.
TEST_F(JitPlanTest, PlansOfQdqModelsComputeOnIntegers) {
  const std::string text = R"(graph q {
    x = Data() {index = 0} -> (u8[BATCH,1,1,8] as "x")
    sx = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    zx = Const() {value = tensor<u8[]>[0]} -> (u8[])
    xd = DequantizeLinear(x:0, sx:0, zx:0) -> (f32[BATCH,1,1,8])
    w = Const() {value = tensor<i8[1,1,1,1]>[1]} -> (i8[1,1,1,1])
    sw = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    zw = Const() {value = tensor<i8[]>[0]} -> (i8[])
    wd = DequantizeLinear(w:0, sw:0, zw:0) -> (f32[1,1,1,1])
    b = Const() {value = tensor<f32[1]>[0.6]} -> (f32[1])
    conv = Conv(xd:0, wd:0, b:0) -> (f32[BATCH,1,1,8])
    sy = Const() {value = tensor<f32[]>[2.0]} -> (f32[])
    zy = Const() {value = tensor<u8[]>[0]} -> (u8[])
    y = QuantizeLinear(conv:0, sy:0, zy:0) -> (u8[BATCH,1,1,8] as "y")
    out = NetOutput(y:0)
  })";
  auto graph = [&](const std::string& batch) {
    auto g = ir::ParseGraph(absl::StrReplaceAll(text, {{"BATCH", batch}}));
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  };
  Session planned(*engines_, {}, &pool_);
  Session fixed(*engines_, {}, &pool_);
  ASSERT_TRUE(planned.AddGraph(1, graph("-1")).ok());
  ASSERT_TRUE(fixed.AddGraph(1, graph("2")).ok());
  Tensor x = *Tensor::Allocate(DataType::kUint8, Shape{2, 1, 1, 8});
  for (int64_t i = 0; i < 16; ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(i % 8);
  auto got = planned.RunGraph(1, {x});
  ASSERT_TRUE(got.ok()) << got.status();
  auto want = fixed.RunGraph(1, {x});
  ASSERT_TRUE(want.ok()) << want.status();
  auto stats = planned.GetJitStats(1);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->planned_runs, 1);
  const std::vector<uint8_t> integers = {0, 1, 2, 2, 2, 3, 4, 4};
  for (int64_t i = 0; i < 16; ++i) {
    EXPECT_EQ((*got)[0].tensor().data<uint8_t>()[i], integers[i % 8]) << i;
    EXPECT_EQ((*want)[0].tensor().data<uint8_t>()[i], integers[i % 8]) << i;
  }
}

TEST_F(JitPlanTest, OptionZeroRunsTheDynamicExecutor) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, MlpGraph(), {{"ge.jitCompile", "0"}}).ok());
  ASSERT_TRUE(session.RunGraph(1, {Rows(2, 0)}).ok());
  EXPECT_EQ(session.GetJitStats(1).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(session.GetCompiledGraph(1).ok());
}

TEST_F(JitPlanTest, TheSessionsCompileBoundCoversPlansAndTheDynamicForm) {
  // A bound nothing can meet: every compile the session makes stops at its
  // first check, the run-time ones included.
  Session bounded(*engines_, {}, &pool_);
  bounded.set_compile_timeout(1e-9, "test_compile_limit");
  ASSERT_TRUE(bounded.AddGraph(1, MlpGraph()).ok());
  ASSERT_TRUE(bounded.CompileGraph(1).ok()) << "a JIT graph compiles nothing before its first run";
  auto run = bounded.RunGraph(1, {Rows(2, 0)});
  ASSERT_EQ(run.status().code(), absl::StatusCode::kResourceExhausted) << run.status();
  EXPECT_NE(run.status().message().find("test_compile_limit"), std::string::npos) << run.status();
  // The plan's compile failed first (the graph then stopped planning), and
  // the dynamic form it fell back to was bounded the same way.
  const JitStats stats = *bounded.GetJitStats(1);
  EXPECT_NE(stats.fallback_reason.find("test_compile_limit"), std::string::npos) << stats.fallback_reason;
  auto compiled = bounded.GetCompiledGraph(1);
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kResourceExhausted) << compiled.status();
  // A caller's own timeout replaces the session's: CompileGraph's bound
  // is the one given.
  auto dense = ir::ParseGraph(R"(graph g {
      x = Data() {index = 0} -> (f32[2,4] as "x")
      r = Relu(x:0) -> (f32[2,4])
      out = NetOutput(r:0)
    })");
  ASSERT_TRUE(dense.ok()) << dense.status();
  ASSERT_TRUE(bounded.AddGraph(2, *std::move(dense)).ok());
  EXPECT_TRUE(bounded.CompileGraph(2, 600, "generous").ok());

  // A reachable bound changes nothing.
  Session roomy(*engines_, {}, &pool_);
  roomy.set_compile_timeout(600, "test_compile_limit");
  ASSERT_TRUE(roomy.AddGraph(1, MlpGraph()).ok());
  auto ok = roomy.RunGraph(1, {Rows(3, 0)});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(roomy.GetJitStats(1)->planned_runs, 1);
  EXPECT_TRUE(roomy.GetCompiledGraph(1).ok());
}

}  // namespace
}  // namespace ge::session
