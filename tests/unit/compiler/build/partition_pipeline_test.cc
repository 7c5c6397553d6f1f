// The splitting passes of the compiler driver on the built engines: the
// partitioned form kept for reports, the flat form the executor runs, the
// new options, stages, subgraph backends, dumps, and placement of boundary
// nodes the engines do not know yet.
#include "compiler/build/partition_passes.h"

#include <filesystem>
#include <random>

#include "base/ir/op_types.h"
#include "base/ir/verifier.h"
#include "compiler/build/graph_compiler.h"
#include "compiler/partition/partition_report.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/exec_test_util.h"
#include "tests/unit/compiler/partition/partition_test_util.h"

namespace ge::compiler {
namespace {

using partition::testing::BuiltEngines;
using partition::testing::MustParse;

constexpr const char* kModel = R"(
graph main {
  x = Data() {index = 0} -> (f32[2,3])
  k = Const() {value = tensor<f32[2,3]>[1.0, -2.0, 3.0, -4.0, 5.0, -6.0]} -> (f32[2,3])
  a = Add(x:0, k:0) -> (f32[2,3])
  r = Relu(a:0) -> (f32[2,3])
  n = Neg(r:0) {_stage_level = 0} -> (f32[2,3])
  m = Mul(n:0, a:0) {_stage_level = 1} -> (f32[2,3])
  out = NetOutput(m:0, r:0)
}
)";

absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(std::string_view text, const OptionMap& option_map,
                                                       bool keep = true) {
  // Placement expectations here are on the reference engines; cpu_dense has its own tests.
  OptionMap with_exclusion = option_map;
  with_exclusion.emplace("ge.exec.exclude_engines", "cpu_dense,cpu_vector");
  auto options = CompileOptions::FromOptions(with_exclusion);
  if (!options.ok()) return options.status();
  options->keep_partitioned_graph = keep;
  GraphCompiler compiler(BuiltEngines(), nullptr);
  return compiler.Compile(MustParse(text), *options);
}

std::vector<Value> RunCompiled(const CompiledGraph& compiled) {
  std::vector<float> v = {0.5f, 1.0f, -1.5f, 2.0f, -2.5f, 3.0f};
  auto out = partition::testing::Execute(*compiled.graph, BuiltEngines(), {Tensor::FromVector<float>(v, Shape{2, 3})});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Value>();
}

bool HasPartitionCalls(const ir::Graph& g) {
  bool found = false;
  g.ForEachNode([&](ir::Node* n) { found = found || n->type() == ir::kPartitionedCall; });
  return found;
}

TEST(PartitionPipelineTest, KeepsThePartitionedFormAndRunsTheFlatOne) {
  const char* kSimple = R"(
    graph main {
      x = Data() {index = 0} -> (f32[2,3])
      r = Relu(x:0) -> (f32[2,3])
      out = NetOutput(r:0)
    }
  )";
  auto compiled = Compile(kSimple, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const CompiledGraph& c = **compiled;
  ASSERT_NE(c.partitioned, nullptr);
  EXPECT_TRUE(HasPartitionCalls(*c.partitioned));
  EXPECT_FALSE(HasPartitionCalls(*c.graph));
  EXPECT_TRUE(c.graph->subgraphs().empty());
  // Every node of the flat graph is placed and in the report.
  EXPECT_EQ(c.placement.nodes.size(), c.graph->num_nodes());
  for (const NodePlacement& p : c.placement.nodes) {
    EXPECT_FALSE(p.engine.empty()) << p.node->name();
    EXPECT_EQ(p.node->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), p.engine);
  }
  // host_cpu nodes are dynamic (rule 5): one dynamic unit.
  auto report = partition::BuildPartitionReport(*c.partitioned, {});
  ASSERT_EQ(report.subgraphs.size(), 1u);
  EXPECT_EQ(report.subgraphs[0].kind, "dynamic");
  EXPECT_EQ(report.subgraphs[0].nodes, std::vector<std::string>{"r"});
  auto outputs = RunCompiled(c);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].tensor().data<float>()[2], 0.0f);
  EXPECT_EQ(outputs[0].tensor().data<float>()[3], 2.0f);
  // Without keep_partitioned_graph nothing extra is kept.
  auto lean = Compile(kSimple, {}, /*keep=*/false);
  ASSERT_TRUE(lean.ok());
  EXPECT_EQ((*lean)->partitioned, nullptr);
}

// stop_after_partitioning: the compilation ends at the partitioned tree,
// which on_partitioned saw, placed and typed; nothing is flattened.
TEST(PartitionPipelineTest, StopsAfterPartitioningWithThePartitionedTree) {
  OptionMap with_exclusion = {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}};
  auto options = CompileOptions::FromOptions(with_exclusion);
  ASSERT_TRUE(options.ok());
  options->stop_after_partitioning = true;
  const ir::Graph* seen = nullptr;
  options->on_partitioned = [&](const ir::Graph& g) {
    seen = &g;
    return absl::OkStatus();
  };
  GraphCompiler compiler(BuiltEngines(), nullptr);
  auto compiled = compiler.Compile(MustParse(kModel), *options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const CompiledGraph& c = **compiled;
  EXPECT_EQ(seen, c.graph.get());
  EXPECT_TRUE(HasPartitionCalls(*c.graph));
  EXPECT_FALSE(c.graph->subgraphs().empty());
  EXPECT_TRUE(ir::VerifyGraph(*c.graph).ok()) << ir::VerifyGraph(*c.graph);
  // The placement covers the tree: the root's nodes and every subgraph's.
  size_t nodes = c.graph->num_nodes();
  for (const ir::Graph* sub : c.graph->subgraphs()) nodes += sub->num_nodes();
  EXPECT_EQ(c.placement.nodes.size(), nodes);
  bool relu_placed = false;
  for (const NodePlacement& p : c.placement.nodes) {
    relu_placed = relu_placed || (p.node->name() == "r" && !p.engine.empty());
  }
  EXPECT_TRUE(relu_placed);
}

TEST(PartitionPipelineTest, StagesBackendsAndLimitsKeepTheResults) {
  auto reference = Compile(kModel, {{"ge.exec.static_model_ops_lower_limit", "-1"}});
  ASSERT_TRUE(reference.ok()) << reference.status();
  const std::vector<Value> expected = RunCompiled(**reference);
  ASSERT_EQ(expected.size(), 2u);
  // Stages were cut first: the partitioned form holds two stage calls.
  int stage_calls = 0;
  (*reference)->partitioned->ForEachNode([&](ir::Node* n) { stage_calls += n->name().rfind("stage_", 0) == 0; });
  EXPECT_EQ(stage_calls, 2);
  const OptionMap variants[] = {
      {},
      {{"ge.exec.static_model_ops_lower_limit", "1"}},
      {{"ge.subgraph_backends", "elementwise"}},
      {{"ge.host_scheduling_max_threshold", "100"}, {"ge.tiling_schedule_optimize", "1"}},
  };
  for (const OptionMap& options : variants) {
    auto compiled = Compile(kModel, options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    ASSERT_TRUE(ir::VerifyGraph(*(*compiled)->graph).ok());
    const std::vector<Value> got = RunCompiled(**compiled);
    std::string why;
    EXPECT_TRUE(partition::testing::SameOutputs(expected, got, &why)) << why;
  }
}

TEST(PartitionPipelineTest, ValidatesTheNewOptions) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"ge.exec.static_model_ops_lower_limit", "-2"},
                                                        {"ge.exec.static_model_ops_lower_limit", "four"},
                                                        {"ge.host_scheduling_max_threshold", "-1"},
                                                        {"ge.tiling_schedule_optimize", "2"},
                                                        {"ge.subgraph_backends", "no such"}}) {
    auto options = CompileOptions::FromOptions({{key, value}});
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument) << key << "=" << value;
  }
  // Backend names are the driver's to check (it knows the partitioners).
  auto unknown = Compile(kModel, {{"ge.subgraph_backends", "nosuch"}});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("nosuch"), std::string_view::npos) << unknown.status();
  auto options = CompileOptions::FromOptions({{"ge.exec.static_model_ops_lower_limit", "-1"},
                                              {"ge.host_scheduling_max_threshold", "20"},
                                              {"ge.subgraph_backends", "elementwise"}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->static_model_ops_lower_limit, -1);
  EXPECT_EQ(options->host_scheduling_max_threshold, 20);
  EXPECT_EQ(options->subgraph_backends, std::vector<std::string>{"elementwise"});
  auto defaults = CompileOptions::FromOptions({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->static_model_ops_lower_limit, 4);
  EXPECT_EQ(defaults->host_scheduling_max_threshold, 0);
}

TEST(PartitionPipelineTest, DumpsStepsAndClusters) {
  const std::string dir = (std::filesystem::temp_directory_path() / "ged_partition_dump_test").string();
  std::filesystem::remove_all(dir);
  auto compiled = Compile(kModel, {{"ge.dump_graph", "2"}, {"ge.dump_path", dir}});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  auto has = [&](std::string_view part) {
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& n) { return n.find(part) != std::string::npos; });
  };
  for (const char* step :
       {"StagePartition.before", "StagePartition.after", "DynamicShapePartition.after", "EnginePlacer2.after",
        "AtomicEnginePartition.after", "Flatten.after", "StagePartitioner.MergeClusters.clusters.txt",
        "DynamicShapePartitioner.MergeClusters.clusters.txt"}) {
    EXPECT_TRUE(has(step)) << step;
  }
  std::filesystem::remove_all(dir);
}

TEST(PartitionPipelineTest, PlacesBoundaryNodesTheEnginesDoNotKnowYet) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      c = PartitionedCall(x:0) subgraphs(body) -> (f32[2])
      out = NetOutput(c:0)
    }
    graph body parent(main, c) {
      i = InnerData() {_parent_index = 0} -> (f32[2])
      r = Relu(i:0) -> (f32[2])
      o = InnerNetOutput(r:0)
    }
  )");
  CompileOptions no_dense;  // pins placement on the reference engine; cpu_dense has its own tests
  no_dense.exclude_engines = {"cpu_dense", "cpu_vector"};
  auto report = PlaceWithBoundaryNodes(*g, BuiltEngines(), no_dense, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(g->FindNode("c")->type(), "PartitionedCall");  // restored
  EXPECT_EQ(g->FindSubgraph("body")->FindNode("i")->type(), "InnerData");
  EXPECT_EQ(g->FindSubgraph("body")->FindNode("r")->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""),
            "host_cpu");
  EXPECT_FALSE(g->FindNode("c")->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, "").empty());
}

}  // namespace
}  // namespace ge::compiler
