// The partition report: units of a split graph and of an unsplit one, the
// exact JSON shape, the text form, and the DOT drawing.
#include "compiler/partition/partition_report.h"

#include "compiler/partition/dynamic_shape_partitioner.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/partition_test_util.h"

namespace ge::partition {
namespace {

using testing::MustParse;

constexpr const char* kPlaced = R"(
graph main {
  x = Data() {_engine_name = "ge_local", index = 0} -> (f32[2])
  a = Relu(x:0) {_engine_name = "fast"} -> (f32[2])
  b = Neg(a:0) {_engine_name = "fast"} -> (f32[2])
  c = Exp(b:0) {_engine_name = "host_cpu"} -> (f32[-1])
  d = Abs(c:0) {_engine_name = "slow"} -> (f32[-1])
  out = NetOutput(d:0) {_engine_name = "ge_local"}
}
)";

TEST(PartitionReportTest, ListsNodesAndUnitsOfASplitGraph) {
  auto g = MustParse(kPlaced);
  DynamicShapeOptions options;
  options.static_model_ops_lower_limit = 2;
  DynamicShapePartitioner partitioner(options);
  ASSERT_TRUE(partitioner.Partition(*g).ok());
  RejectionMap rejections;
  rejections["c"] = {{"fast", "fast does not run Exp"}};
  PartitionReport report = BuildPartitionReport(*g, rejections);
  // What gectl partition adds from the placer for a node placed by cost.
  report.nodes[2].reason = "cost";
  report.nodes[2].estimates = {{"fast", 30.5}, {"slow", 8000}};
  EXPECT_EQ(
      PartitionReportJson(report),
      R"({"nodes":[{"name":"x","op":"Data","engine":"ge_local","rejected":[],"reason":"priority","estimates":[]},)"
      R"({"name":"out","op":"NetOutput","engine":"ge_local","rejected":[],"reason":"priority","estimates":[]},)"
      R"({"name":"a","op":"Relu","engine":"fast","rejected":[],"reason":"cost",)"
      R"("estimates":[{"engine":"fast","ns":30.5},{"engine":"slow","ns":8000}]},)"
      R"({"name":"b","op":"Neg","engine":"fast","rejected":[],"reason":"priority","estimates":[]},)"
      R"({"name":"c","op":"Exp","engine":"host_cpu","rejected":[{"engine":"fast","reason":"fast does not run Exp"}],)"
      R"("reason":"priority","estimates":[]},)"
      R"({"name":"d","op":"Abs","engine":"slow","rejected":[],"reason":"priority","estimates":[]}],)"
      R"("subgraphs":[{"name":"main_static_0","kind":"static","engines":["fast"],"nodes":["a","b"]},)"
      R"({"name":"main_dynamic_1","kind":"dynamic","engines":["host_cpu","slow"],"nodes":["c","d"]}]})");
  EXPECT_EQ(PartitionReportText(report),
            "nodes (6):\n"
            "  x (Data) on ge_local\n"
            "  out (NetOutput) on ge_local\n"
            "  a (Relu) on fast\n"
            "      estimates: fast 31 ns slow 8000 ns\n"
            "  b (Neg) on fast\n"
            "  c (Exp) on host_cpu\n"
            "      rejected by fast: fast does not run Exp\n"
            "  d (Abs) on slow\n"
            "subgraphs (2):\n"
            "  main_static_0: static, engines fast, 2 node(s): a, b\n"
            "  main_dynamic_1: dynamic, engines host_cpu, slow, 2 node(s): c, d\n");
}

TEST(PartitionReportTest, AnUnsplitGraphIsOneUnit) {
  auto g = MustParse(R"(
    graph main {
      attr _is_unknown_shape = false
      x = Data() {_engine_name = "ge_local", index = 0} -> (f32[2])
      a = Relu(x:0) {_engine_name = "fast"} -> (f32[2])
      out = NetOutput(a:0) {_engine_name = "ge_local"}
    }
  )");
  const PartitionReport report = BuildPartitionReport(*g, {});
  ASSERT_EQ(report.subgraphs.size(), 1u);
  EXPECT_EQ(report.subgraphs[0].name, "main");
  EXPECT_EQ(report.subgraphs[0].kind, "static");
  EXPECT_EQ(report.subgraphs[0].nodes, std::vector<std::string>{"a"});
  g->mutable_attrs()["_is_unknown_shape"] = true;
  EXPECT_EQ(BuildPartitionReport(*g, {}).subgraphs[0].kind, "dynamic");
}

TEST(PartitionReportTest, DrawsOneColourPerEngineAndOneBoxPerSubgraph) {
  auto g = MustParse(kPlaced);
  DynamicShapeOptions options;
  options.static_model_ops_lower_limit = 2;
  DynamicShapePartitioner partitioner(options);
  ASSERT_TRUE(partitioner.Partition(*g).ok());
  const std::string dot = PartitionDot(*g);
  // Engines sorted: fast, ge_local, host_cpu, slow take the palette in order.
  EXPECT_NE(dot.find("engines: fast #8dd3c7, ge_local #ffffb3, host_cpu #bebada, slow #fb8072"), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("label=\"main_static_0\""), std::string::npos);
  EXPECT_NE(dot.find("label=\"main_dynamic_1\""), std::string::npos);
  EXPECT_NE(dot.find("[label=\"a\\nRelu\", style=\"rounded,filled\", fillcolor=\"#8dd3c7\"]"), std::string::npos)
      << dot;
  size_t clusters = 0;
  for (size_t p = dot.find("subgraph cluster_"); p != std::string::npos; p = dot.find("subgraph cluster_", p + 1)) {
    ++clusters;
  }
  EXPECT_EQ(clusters, 2u);
}

}  // namespace
}  // namespace ge::partition
