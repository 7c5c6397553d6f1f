// Session with gears: branch selection from the input shapes, the error
// listing the gears, hybrid routing to the dynamic graph, counts by path,
// static executors for the gear branches, and the Case through a .gem.
#include <vector>

#include "base/ir/text_format.h"
#include "ge/v1/model.pb.h"
#include "gtest/gtest.h"
#include "runtime/model/gem.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::session {
namespace {

class SessionGearsTest : public ge::testing::EnginesTest {
 protected:
  // y = exp(relu(x) * 0.5) - 1 with x: f32[-1,4]; all static per gear.
  static std::unique_ptr<ir::Graph> Graph() {
    auto g = ir::ParseGraph(R"(graph main {
      x = Data() {index = 0} -> (f32[-1,4] as "x")
      h = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
      o = Const() {value = tensor<f32[]>[1]} -> (f32[])
      r = Relu(x:0) -> (f32[-1,4])
      m = Mul(r:0, h:0) -> (f32[-1,4])
      e = Exp(m:0) -> (f32[-1,4])
      y = Sub(e:0, o:0) -> (f32[-1,4])
      out = NetOutput(y:0 as "y")
    })");
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }
  static Tensor Input(int64_t rows) {
    std::vector<float> x(rows * 4);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3;
    return Tensor::FromVector<float>(x, Shape{rows, 4});
  }
  static void ExpectCorrect(const absl::StatusOr<std::vector<Value>>& outputs, const Tensor& x) {
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    const Tensor& y = (*outputs)[0].tensor();
    ASSERT_EQ(y.shape(), x.shape());
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      EXPECT_NEAR(y.data<float>()[i], std::exp(std::max(x.data<float>()[i], 0.0f) * 0.5f) - 1, 1e-5) << i;
    }
  }

  ThreadPool pool_{1, "gears-test"};
};

TEST_F(SessionGearsTest, SelectsTheGearByShapeAndListsTheGearsOtherwise) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, Graph(), {{"ge.dynamicBatchSize", "1,4,8"}}).ok());
  ASSERT_TRUE(session.CompileGraph(1).ok());
  // Each gear branch runs on a StaticExecutor.
  EXPECT_EQ(*session.NumStaticSubgraphs(1), 3);
  EXPECT_FALSE(*session.RunsStatically(1));
  // Callers see their own shape, not the max shape.
  EXPECT_EQ(session.GetGraphInfo(1)->inputs[0].type.ToString(), "f32[-1,4]");
  for (int64_t rows : {1, 4, 8, 4}) ExpectCorrect(session.RunGraph(1, {Input(rows)}), Input(rows));
  auto off = session.RunGraph(1, {Input(3)});
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(off.status().message()),
            "input shape [3,4] fits no gear of this model; the gears of --dynamic_batch_size (ge.dynamicBatchSize) "
            "are: 1; 4; 8. Compile with ge.compileHybridMode=1 to run other shapes on the dynamic graph");
  // Larger than every gear, and the wrong rank, fail too (the latter on the input check).
  EXPECT_FALSE(session.RunGraph(1, {Input(9)}).ok());
  EXPECT_FALSE(session.RunGraph(1, {Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4})}).ok());
  auto counts = session.GetGearRunCounts(1);
  ASSERT_TRUE(counts.ok());
  EXPECT_TRUE(counts->multi_batch);
  EXPECT_FALSE(counts->has_dynamic_graph);
  EXPECT_EQ(counts->gears, (std::vector<std::string>{"1", "4", "8"}));
  EXPECT_EQ(counts->gear_runs, 4u);
  EXPECT_EQ(counts->dynamic_runs, 0u);
}

TEST_F(SessionGearsTest, HybridModeRoutesOtherShapesToTheDynamicGraph) {
  Session session(*engines_, {}, &pool_);
  std::vector<RunPath> paths;
  session.set_run_path_observer([&](RunPath p) { paths.push_back(p); });
  ASSERT_TRUE(session.AddGraph(1, Graph(), {{"ge.dynamicBatchSize", "2,4"}, {"ge.compileHybridMode", "1"}}).ok());
  for (int64_t rows : {2, 3, 4, 9}) ExpectCorrect(session.RunGraph(1, {Input(rows)}), Input(rows));
  EXPECT_EQ(paths, (std::vector<RunPath>{RunPath::kGear, RunPath::kDynamic, RunPath::kGear, RunPath::kDynamic}));
  auto counts = session.GetGearRunCounts(1);
  ASSERT_TRUE(counts.ok());
  EXPECT_TRUE(counts->has_dynamic_graph);
  EXPECT_EQ(counts->gear_runs, 2u);
  EXPECT_EQ(counts->dynamic_runs, 2u);
}

TEST_F(SessionGearsTest, GraphsWithoutGearsCountNothing) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, Graph()).ok());
  ExpectCorrect(session.RunGraph(1, {Input(3)}), Input(3));
  auto counts = session.GetGearRunCounts(1);
  ASSERT_TRUE(counts.ok());
  EXPECT_FALSE(counts->multi_batch);
  EXPECT_EQ(counts->gear_runs + counts->dynamic_runs, 0u);
}

TEST_F(SessionGearsTest, TheCaseSurvivesAGem) {
  Session compiling(*engines_, {}, &pool_);
  ASSERT_TRUE(compiling.AddGraph(1, Graph(), {{"ge.dynamicDims", "2;5"}}).ok());
  ASSERT_TRUE(compiling.CompileGraph(1).ok());
  auto bytes = compiling.ExportCompiledModel(1);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // The second branch's weights are the first's: stored once.
  v1::CompiledModelDef def;
  ASSERT_TRUE(def.ParseFromString(*bytes));
  EXPECT_EQ(def.format_version(), runtime::kGemFormatVersion);
  std::vector<std::string> shared;
  for (const auto& w : def.weight_aliases()) {
    if (w.node().partitioned()) continue;
    shared.push_back(w.node().graph() + ":" + w.node().node() + " <- " + w.source().graph() + ":" + w.source().node());
  }
  EXPECT_EQ(shared, (std::vector<std::string>{"main_gear_1:h <- main_gear_0:h", "main_gear_1:o <- main_gear_0:o"}));
  auto model = runtime::LoadGemFromBytes(*bytes, "gears.gem", *engines_);
  ASSERT_TRUE(model.ok()) << model.status();
  Session loaded(*engines_, {}, &pool_);
  ASSERT_TRUE(loaded.AddCompiledModel(7, *std::move(model)).ok());
  EXPECT_EQ(*loaded.NumStaticSubgraphs(7), 2);
  ExpectCorrect(loaded.RunGraph(7, {Input(5)}), Input(5));
  ExpectCorrect(loaded.RunGraph(7, {Input(2)}), Input(2));
  auto off = loaded.RunGraph(7, {Input(4)});
  ASSERT_FALSE(off.ok());
  EXPECT_NE(std::string(off.status().message()).find("the gears of --dynamic_dims (ge.dynamicDims) are: 2; 5"),
            std::string::npos)
      << off.status();
  EXPECT_EQ(loaded.GetGearRunCounts(7)->gear_runs, 2u);
}

}  // namespace
}  // namespace ge::session
