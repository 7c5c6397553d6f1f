// GatherElements over Expands: the rewrite into `_GatherElementsBroadcast`
// (what it takes, what it leaves), the kernel against GatherElements of the
// materialized expansions on host_cpu, and the graph class of DGCNN's
// torch.gather neighbours (TopK -> Unsqueeze -> Expand -> GatherElements)
// compiled by the whole pipeline on the built engines: one static plan, no
// node on host_cpu, no expansion materialized, the reference's outputs.
#include "runtime/engines/cpu_vector/gather_elements.h"

#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "compiler/build/graph_compiler.h"
#include "compiler/build/task_builder.h"
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/compiler/partition/exec_test_util.h"
#include "tests/unit/runtime/engines/cpu_vector/vector_test_engines.h"

namespace ge::engine::cpu_vector {
namespace {

std::unique_ptr<ir::Graph> Parse(std::string_view text) {
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : nullptr;
}

int Count(const ir::Graph& g, std::string_view type) {
  int n = 0;
  g.ForEachNode([&](ir::Node* node) { n += node->type() == type ? 1 : 0; });
  return n;
}

Tensor I64s(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(v, Shape{static_cast<int64_t>(v.size())});
}
std::vector<int64_t> Dims(const Shape& s) { return std::vector<int64_t>(s.span().begin(), s.span().end()); }

// GatherElements(Expand(data), Expand(indices)) on host_cpu.
absl::StatusOr<Tensor> Reference(const Tensor& data, const Shape& data_shape, const Tensor& indices,
                                 const Shape& indices_shape, int64_t axis) {
  GE_ASSIGN_OR_RETURN(Tensor d, test::RunOp1(Host(), "Expand", {data, I64s(Dims(data_shape))}));
  GE_ASSIGN_OR_RETURN(Tensor i, test::RunOp1(Host(), "Expand", {indices, I64s(Dims(indices_shape))}));
  return test::RunOp1(Host(), "GatherElements", {d, i}, {{"axis", ir::AttrValue(axis)}});
}

absl::StatusOr<Tensor> RunBroadcast(const Tensor& data, const Shape& data_shape, const Tensor& indices,
                                    const Shape& indices_shape, int64_t axis, bool threaded = false) {
  test::RunOptions options;
  if (threaded) options.thread_pool = test::TestThreadPool();
  return test::RunOp1(Vector(), std::string(kGatherElementsBroadcastOp), {data, indices},
                      {{"axis", ir::AttrValue(axis)},
                       {std::string(kAttrDataShape), ir::AttrValue(Dims(data_shape))},
                       {std::string(kAttrIndicesShape), ir::AttrValue(Dims(indices_shape))}},
                      options);
}

// Every axis, both sources broadcast on several dims (the gathered axis
// too), negative indices, int32 and int64 indices, several dtypes.
TEST(GatherElementsBroadcastTest, MatchesGatherElementsOfTheExpansions) {
  struct Shapes {
    Shape data_from, data_shape, indices_from, indices_shape;
  };
  const std::vector<Shapes> cases = {
      {Shape{2, 3, 1, 7}, Shape{2, 3, 7, 7}, Shape{2, 1, 7, 4}, Shape{2, 3, 7, 4}},  // DGCNN's form
      {Shape{3, 1, 7}, Shape{2, 3, 7, 7}, Shape{7, 4}, Shape{2, 3, 7, 4}},           // leading dims dropped
      {Shape{2, 1, 5}, Shape{2, 6, 5}, Shape{1, 6, 1}, Shape{2, 6, 3}},              // indices broadcast on the last
      {Shape{1}, Shape{9}, Shape{4}, Shape{4}},                                      // rank 1, data one element
      {Shape{4, 1}, Shape{4, 5}, Shape{1, 1}, Shape{3, 2}},                          // extent 1 read along the axis
      {Shape{2, 3, 4}, Shape{2, 3, 4}, Shape{2, 3, 0}, Shape{2, 3, 0}},              // empty
  };
  uint64_t seed = 3;
  for (const Shapes& c : cases) {
    const int64_t rank = c.data_shape.rank();
    for (int64_t axis = 0; axis < rank; ++axis) {
      bool fits = true;
      for (int64_t d = 0; d < rank; ++d) fits = fits && (d == axis || c.indices_shape.dim(d) <= c.data_shape.dim(d));
      if (!fits) continue;
      const double extent = static_cast<double>(c.data_shape.dim(axis));
      for (DataType dtype : {DataType::kFloat, DataType::kInt64, DataType::kFloat16, DataType::kUint8}) {
        for (DataType itype : {DataType::kInt64, DataType::kInt32}) {
          SCOPED_TRACE(StrCat(c.data_from.ToString(), " -> ", c.data_shape.ToString(), ", ", c.indices_from.ToString(),
                              " -> ", c.indices_shape.ToString(), " axis ", axis, " ", DataTypeName(dtype)));
          const Tensor data = test::RandomTensor(dtype, c.data_from, ++seed, -50, 50);
          const Tensor indices = test::RandomTensor(itype, c.indices_from, ++seed, -extent, extent - 1);
          auto want = Reference(data, c.data_shape, indices, c.indices_shape, axis);
          ASSERT_TRUE(want.ok()) << want.status();
          auto got = RunBroadcast(data, c.data_shape, indices, c.indices_shape, axis, seed % 2 == 0);
          ASSERT_TRUE(got.ok()) << got.status();
          EXPECT_TRUE(test::TensorEq(*got, *want));
        }
      }
    }
  }
}

// Large enough to split over the team.
TEST(GatherElementsBroadcastTest, SplitsLargeOutputsOverThreads) {
  const Shape data_shape{2, 16, 96, 96}, indices_shape{2, 16, 96, 20};
  const Tensor data = test::RandomTensor(DataType::kFloat, Shape{2, 16, 1, 96}, 1);
  const Tensor indices = test::RandomTensor(DataType::kInt64, Shape{2, 1, 96, 20}, 2, -96, 95);
  auto want = Reference(data, data_shape, indices, indices_shape, 3);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = RunBroadcast(data, data_shape, indices, indices_shape, 3, true);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(test::TensorEq(*got, *want));
}

TEST(GatherElementsBroadcastTest, RefusesIndicesOutOfRangeAndSourcesThatDoNotBroadcast) {
  const Tensor data = test::RandomTensor(DataType::kFloat, Shape{3, 1}, 1);
  EXPECT_FALSE(RunBroadcast(data, Shape{3, 4}, I64s({4}), Shape{3, 1}, 1).ok());
  EXPECT_FALSE(RunBroadcast(data, Shape{3, 4}, I64s({-5}), Shape{3, 1}, 1).ok());
  EXPECT_TRUE(RunBroadcast(data, Shape{3, 4}, I64s({-4}), Shape{3, 1}, 1).ok());
  const Tensor wide = test::RandomTensor(DataType::kFloat, Shape{3, 2}, 1);
  EXPECT_FALSE(RunBroadcast(wide, Shape{3, 4}, I64s({0}), Shape{3, 1}, 1).ok());
}

constexpr const char* kGatherOfExpands = R"(
graph main {
  x = Data() {index = 0} -> (f32[2,3,5])
  i = Data() {index = 1} -> (i64[2,5,4])
  a2 = Const() {value = tensor<i64[1]>[2]} -> (i64[1])
  a1 = Const() {value = tensor<i64[1]>[1]} -> (i64[1])
  ds = Const() {value = tensor<i64[4]>[2, 3, 5, 5]} -> (i64[4])
  is = Const() {value = tensor<i64[4]>[2, 3, 5, 4]} -> (i64[4])
  u = Unsqueeze(x:0, a2:0) -> (f32[2,3,1,5])
  ui = Unsqueeze(i:0, a1:0) -> (i64[2,1,5,4])
  e = Expand(u:0, ds:0) {_engine_name = "cpu_vector"} -> (f32[2,3,5,5])
  ei = Expand(ui:0, is:0) {_engine_name = "cpu_vector"} -> (i64[2,3,5,4])
  g = GatherElements(e:0, ei:0) {axis = -1, _engine_name = "cpu_vector"} -> (f32[2,3,5,4])
  out = NetOutput(g:0)
}
)";

TEST(GatherFromExpandTest, ReadsTheExpandedSourcesAndDropsTheExpands) {
  auto g = Parse(kGatherOfExpands);
  ASSERT_NE(g, nullptr);
  auto changed = GatherFromExpand(*g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Count(*g, "Expand"), 0);
  EXPECT_EQ(Count(*g, "GatherElements"), 0);
  // The expansions' shape constants went with them.
  EXPECT_EQ(g->FindNode("ds"), nullptr);
  EXPECT_EQ(g->FindNode("is"), nullptr);
  const ir::Node* b = g->FindNode("g");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type(), kGatherElementsBroadcastOp);
  EXPECT_EQ(b->input(0).node->name(), "u");
  EXPECT_EQ(b->input(1).node->name(), "ui");
  EXPECT_EQ(b->op_desc().GetAttrOr<int64_t>("axis", -1), 3);
  EXPECT_EQ(b->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_vector");
  EXPECT_EQ(b->op_desc().output(0).type.shape(), (Shape{2, 3, 5, 4}));
}

TEST(GatherFromExpandTest, KeepsAnExpandOthersReadAndLeavesUnknownShapes) {
  std::string shared(kGatherOfExpands);
  shared.replace(shared.find("out = NetOutput(g:0)"), 20, "out = NetOutput(g:0, e:0)");
  auto g = Parse(shared);
  ASSERT_NE(g, nullptr);
  auto changed = GatherFromExpand(*g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Count(*g, "Expand"), 1);  // e stays for the output, ei goes
  EXPECT_EQ(g->FindNode("g")->input(0).node->name(), "u");

  std::string unknown(kGatherOfExpands);
  unknown.replace(unknown.find("(f32[2,3,5,5])"), 14, "(f32[2,3,-1,5])");
  unknown.replace(unknown.find("(i64[2,3,5,4])"), 14, "(i64[2,3,-1,4])");
  auto u = Parse(unknown);
  ASSERT_NE(u, nullptr);
  changed = GatherFromExpand(*u);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(Count(*u, "GatherElements"), 1);
}

// DGCNN's neighbour gather as torch exports it: pairwise scores, TopK,
// the indices and the points unsqueezed and expanded, GatherElements.
constexpr const char* kNeighbours = R"(
graph main {
  x = Data() {index = 0} -> (f32[2,4,16])
  perm = Const() {value = tensor<i64[1]>[5]} -> (i64[1])
  xt = Transpose(x:0) {perm = [0, 2, 1]} -> (f32[2,16,4])
  d = MatMul(xt:0, x:0) -> (f32[2,16,16])
  t = TopK(d:0, perm:0) {axis = -1} -> (f32[2,16,5], i64[2,16,5])
  a2 = Const() {value = tensor<i64[1]>[2]} -> (i64[1])
  a1 = Const() {value = tensor<i64[1]>[1]} -> (i64[1])
  ds = Const() {value = tensor<i64[4]>[2, 4, 16, 16]} -> (i64[4])
  is = Const() {value = tensor<i64[4]>[2, 4, 16, 5]} -> (i64[4])
  u = Unsqueeze(x:0, a2:0) -> (f32[2,4,1,16])
  ui = Unsqueeze(t:1, a1:0) -> (i64[2,1,16,5])
  e = Expand(u:0, ds:0) -> (f32[2,4,16,16])
  ei = Expand(ui:0, is:0) -> (i64[2,4,16,5])
  g = GatherElements(e:0, ei:0) {axis = 3} -> (f32[2,4,16,5])
  r = Relu(g:0) -> (f32[2,4,16,5])
  out = NetOutput(r:0, t:0)
}
)";

absl::StatusOr<std::unique_ptr<compiler::CompiledGraph>> Compile(const OptionMap& map) {
  GE_ASSIGN_OR_RETURN(compiler::CompileOptions options, compiler::CompileOptions::FromOptions(map));
  compiler::GraphCompiler compiler(partition::testing::BuiltEngines(), nullptr);
  return compiler.Compile(Parse(kNeighbours), options);
}

TEST(GatherPlanTest, TopKAndGatherOfExpandsStayOneStaticPlanWithoutTheExpansion) {
  auto compiled = Compile({});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const ir::Graph& g = *(*compiled)->graph;
  EXPECT_TRUE(compiler::IsStaticGraph(g)) << "the graph left the static path";
  g.ForEachNode([&](ir::Node* n) {
    const std::string engine = n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, "");
    EXPECT_NE(engine, "host_cpu") << n->name() << " (" << n->type() << ") fell back to the reference engine";
    EXPECT_NE(n->type(), "Expand") << n->name() << " is still materialized";
  });
  EXPECT_EQ(Count(g, std::string(kGatherElementsBroadcastOp)), 1);

  // The same outputs as the reference engine alone (integer points: the
  // scores are exact, so the neighbours are the same).
  auto reference = Compile({{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}});
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<float> points(2 * 4 * 16);
  for (size_t i = 0; i < points.size(); ++i) points[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5);
  const Tensor x = Tensor::FromVector<float>(points, Shape{2, 4, 16});
  const auto& engines = partition::testing::BuiltEngines();
  auto got = partition::testing::Execute(g, engines, {x});
  ASSERT_TRUE(got.ok()) << got.status();
  auto want = partition::testing::Execute(*(*reference)->graph, engines, {x});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(got->size(), 2u);
  ASSERT_EQ(want->size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(test::TensorEq((*got)[i].tensor(), (*want)[i].tensor())) << "output " << i;
}

}  // namespace
}  // namespace ge::engine::cpu_vector
