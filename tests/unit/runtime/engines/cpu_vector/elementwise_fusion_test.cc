// cpu_vector's element-wise fusion: which groups form (chains, broadcast
// constants, values read twice, multi-consumer boundaries, element counts,
// unknown dims) and which nodes it refuses (other dtypes, pinned nodes,
// control edges, lone ops); then fused programs against the single ops.
#include "runtime/engines/cpu_vector/elementwise_fusion.h"

#include <string>
#include <vector>

#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"
#include "runtime/engines/cpu_vector/fused_elementwise.h"

namespace ge::engine::cpu_vector {
namespace {

CpuVectorEngine& Engine() {
  static CpuVectorEngine* e = [] {
    auto* engine = new CpuVectorEngine();
    const absl::Status s = engine->Initialize({});
    if (!s.ok()) ADD_FAILURE() << s;
    return engine;
  }();
  return *e;
}

std::unique_ptr<ir::Graph> Parse(const std::string& text) {
  Engine();
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : std::make_unique<ir::Graph>("empty");
}

std::vector<const ir::Node*> NodesOf(const ir::Graph& g, std::string_view type) {
  std::vector<const ir::Node*> out;
  g.ForEachNode([&](const ir::Node* n) {
    if (n->type() == type) out.push_back(n);
  });
  return out;
}

std::vector<std::string> Ops(const ir::Node& n) {
  return *n.op_desc().FindAttr("ops")->get<std::vector<std::string>>();
}
std::vector<int64_t> Args(const ir::Node& n) { return *n.op_desc().FindAttr("args")->get<std::vector<int64_t>>(); }

// Runs the pass; the graph afterwards and whether it changed.
std::pair<std::unique_ptr<ir::Graph>, bool> Fuse(const std::string& text) {
  auto g = Parse(text);
  absl::StatusOr<bool> changed = FuseElementwise(*g);
  EXPECT_TRUE(changed.ok()) << changed.status();
  return {std::move(g), changed.ok() && *changed};
}

void ExpectUnchanged(const std::string& text) {
  auto [g, changed] = Fuse(text);
  EXPECT_FALSE(changed);
  EXPECT_EQ(ir::PrintGraph(*g), ir::PrintGraph(*Parse(text)));
}

TEST(ElementwiseFusionTest, ChainWithConstantsBecomesOneNode) {
  auto [g, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[8])
    c1 = Const() {value = tensor<f32[8]>splat(0.5)} -> (f32[8])
    c2 = Const() {value = tensor<f32[8]>splat(2.0)} -> (f32[8])
    a = Relu(x) {_engine_name = "cpu_vector"} -> (f32[8])
    b = Add(a, c1) {_engine_name = "cpu_vector"} -> (f32[8])
    c = Tanh(b) {_engine_name = "cpu_vector"} -> (f32[8])
    d = Div(c2, c) {_engine_name = "cpu_vector"} -> (f32[8] as "y")
    out = NetOutput(d)
  })");
  ASSERT_TRUE(changed);
  const auto fused = NodesOf(*g, "_FusedElementwise");
  ASSERT_EQ(fused.size(), 1u);
  const ir::Node& f = *fused[0];
  EXPECT_EQ(f.name(), "d");
  EXPECT_EQ(f.op_desc().GetAttrOr<std::string>("_engine_name", ""), "cpu_vector");
  ASSERT_EQ(f.num_inputs(), 3);
  EXPECT_EQ(f.input(0).node->name(), "x");
  EXPECT_EQ(f.input(1).node->name(), "c1");
  EXPECT_EQ(f.input(2).node->name(), "c2");
  EXPECT_EQ(Ops(f), (std::vector<std::string>{"Relu", "Add", "Tanh", "Div"}));
  // Values: inputs 0..2, then one per op (3: Relu, 4: Add, 5: Tanh).
  EXPECT_EQ(Args(f), (std::vector<int64_t>{0, -1, 3, 1, 4, -1, 2, 5}));
  EXPECT_EQ(f.op_desc().output(0).name, "y");
  EXPECT_EQ(f.consumers(0).size(), 1u);
  EXPECT_EQ(f.consumers(0)[0].node->name(), "out");
  EXPECT_EQ(g->num_nodes(), 5u);
}

// Constants of fewer elements broadcast into the group's shape; the group
// keeps one op per node and one input per distinct value.
TEST(ElementwiseFusionTest, BroadcastConstantsAndValuesReadTwice) {
  auto [g, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,3,4])
    c = Const() {value = tensor<f32[3,1]>splat(0.25)} -> (f32[3,1])
    s = Const() {value = tensor<f32[]>splat(3.0)} -> (f32[])
    a = Mul(x, c) -> (f32[2,3,4])
    sg = Sigmoid(a) -> (f32[2,3,4])
    silu = Mul(a, sg) -> (f32[2,3,4])
    y = Add(silu, s) -> (f32[2,3,4])
    out = NetOutput(y)
  })");
  ASSERT_TRUE(changed);
  const auto fused = NodesOf(*g, "_FusedElementwise");
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(Ops(*fused[0]), (std::vector<std::string>{"Mul", "Sigmoid", "Mul", "Add"}));
  EXPECT_EQ(Args(*fused[0]), (std::vector<int64_t>{0, 1, 3, -1, 3, 4, 5, 2}));
  EXPECT_EQ(fused[0]->op_desc().output(0).type.ToString(), "f32[2,3,4]");
}

// A value read outside the group ends it: `a` feeds both the rest of the
// chain and the output, so it stays a node of its own and the group after
// it reads it as an input.
TEST(ElementwiseFusionTest, MultiConsumerValueIsABoundary) {
  auto [g, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[4])
    p = Neg(x) -> (f32[4])
    a = Relu(p) -> (f32[4])
    b = Abs(a) -> (f32[4])
    c = Sin(b) -> (f32[4])
    out = NetOutput(c, a)
  })");
  ASSERT_TRUE(changed);
  const auto fused = NodesOf(*g, "_FusedElementwise");
  ASSERT_EQ(fused.size(), 2u);
  for (const ir::Node* f : fused) {
    if (f->name() == "c") {
      EXPECT_EQ(Ops(*f), (std::vector<std::string>{"Abs", "Sin"}));
      EXPECT_EQ(f->input(0).node->name(), "a");
    } else {
      EXPECT_EQ(f->name(), "a");
      EXPECT_EQ(Ops(*f), (std::vector<std::string>{"Neg", "Relu"}));
      EXPECT_EQ(f->consumers(0).size(), 2u);
    }
  }
}

// A producer over fewer elements than the root would run over more of
// them inside the group: it stays out.
TEST(ElementwiseFusionTest, SmallerProducerStaysOut) {
  auto [g, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[4,16])
    b = Data() {index = 1} -> (f32[16])
    r = Sigmoid(b) -> (f32[16])
    y = Add(x, r) -> (f32[4,16])
    z = Relu(y) -> (f32[4,16])
    out = NetOutput(z)
  })");
  ASSERT_TRUE(changed);
  const auto fused = NodesOf(*g, "_FusedElementwise");
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(Ops(*fused[0]), (std::vector<std::string>{"Add", "Relu"}));
  EXPECT_EQ(NodesOf(*g, "Sigmoid").size(), 1u);
}

TEST(ElementwiseFusionTest, UnknownDimsFuseWhenShapesMatch) {
  auto [g, changed] = Fuse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8])
    c = Const() {value = tensor<f32[8]>splat(1.0)} -> (f32[8])
    a = Sub(x, c) -> (f32[-1,8])
    b = Floor(a) -> (f32[-1,8])
    out = NetOutput(b)
  })");
  ASSERT_TRUE(changed);
  const auto fused = NodesOf(*g, "_FusedElementwise");
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(fused[0]->op_desc().output(0).type.ToString(), "f32[-1,8]");
}

TEST(ElementwiseFusionTest, RefusesOtherDtypes) {
  for (const char* dtype : {"f16", "f64", "i32"}) {
    SCOPED_TRACE(dtype);
    const std::string d = dtype;
    ExpectUnchanged("graph main {\n x = Data() {index = 0} -> (" + d + "[4])\n a = Neg(x) -> (" + d +
                    "[4])\n b = Abs(a) -> (" + d + "[4])\n out = NetOutput(b)\n}");
  }
}

TEST(ElementwiseFusionTest, RefusesPinnedNodesControlEdgesAndOtherOps) {
  // Pinned by the user.
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f32[4])
    a = Neg(x) {_ge_engine = "cpu_vector"} -> (f32[4])
    b = Abs(a) -> (f32[4])
    out = NetOutput(b)
  })");
  // A control edge.
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f32[4])
    a = Neg(x) -> (f32[4])
    b = Abs(a) ^x -> (f32[4])
    out = NetOutput(b)
  })");
  // Ops outside the set: Clip (bounds are inputs), comparisons, three-input Max.
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f32[4])
    y = Data() {index = 1} -> (f32[4])
    a = Max(x, y, x) -> (f32[4])
    b = Less(a, y) -> (bool[4])
    out = NetOutput(b)
  })");
  // One fusable op alone.
  ExpectUnchanged(R"(graph main {
    x = Data() {index = 0} -> (f32[4])
    a = Neg(x) -> (f32[4])
    out = NetOutput(a)
  })");
}

TEST(ElementwiseFusionTest, OptimizerAnswersForFusableTypes) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[4])
    a = Neg(x) -> (f32[4])
    b = Less(a, x) -> (bool[4])
    out = NetOutput(b)
  })");
  ElementwiseFusionOptimizer opt;
  EXPECT_TRUE(opt.MayOptimizeFused(*g->FindNode("a")));
  EXPECT_FALSE(opt.MayOptimizeFused(*g->FindNode("b")));
  // The engine runs the gather rewrite, then fusion.
  ASSERT_EQ(Engine().graph_optimizers().size(), 2u);
  EXPECT_EQ(Engine().graph_optimizers()[0]->name(), "cpu_vector_gather");
  EXPECT_EQ(Engine().graph_optimizers()[1]->name(), "cpu_vector");
}

}  // namespace
}  // namespace ge::engine::cpu_vector
