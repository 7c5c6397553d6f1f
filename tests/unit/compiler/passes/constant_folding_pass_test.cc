// ConstantFoldingPass, text in and text out: Shape/Size of static tensors,
// nodes over Consts through the reference engine's kernels (host_cpu's),
// and what must not fold.
#include "compiler/passes/constant_folding_pass.h"

#include <memory>
#include <string>

#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "base/ops/op_registry.h"
#include "compiler/compile_options.h"
#include "gtest/gtest.h"
#include "tests/testing/engines_test.h"

namespace ge::compiler {
namespace {

class ConstantFoldingPassTest : public testing::EnginesTest {
 protected:
  // Parses `text`, infers its shapes and runs the pass.
  std::unique_ptr<ir::Graph> Fold(const std::string& text, bool expect_changed = true,
                                  const engine::EngineRegistry* engines = nullptr) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    if (!graph.ok()) return std::make_unique<ir::Graph>("invalid");
    EXPECT_TRUE(ops::InferShapes(**graph).ok());
    ConstantFoldingPass pass(engines != nullptr ? *engines : *engines_);
    auto changed = pass.Run(**graph);
    EXPECT_TRUE(changed.ok()) << changed.status();
    if (changed.ok()) {
      EXPECT_EQ(*changed, expect_changed);
    }
    return std::move(*graph);
  }

  static std::string Print(const std::string& text) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    return graph.ok() ? ir::PrintGraph(**graph) : "";
  }

  static Tensor ConstValue(const ir::Graph& graph, const std::string& name) {
    const ir::Node* node = graph.FindNode(name);
    EXPECT_NE(node, nullptr) << name;
    if (node == nullptr) return Tensor();
    EXPECT_EQ(node->type(), ir::kConst) << name;
    return node->op_desc().GetAttr<Tensor>(ir::kAttrValue).value_or(Tensor());
  }
};

// torch's reshape idiom: the target shape is computed from the input's own
// shape. Folding makes the Reshape's output static and leaves no Const behind
// that nothing reads.
TEST_F(ConstantFoldingPassTest, ShapeChainFeedingReshapeBecomesOneConst) {
  auto graph = Fold(R"(graph g {
    x = Data() {index = 0} -> (f32[2, 3, 4])
    s = Shape(x:0) -> (i64[3])
    i = Const() {value = tensor<i64[]>[0]} -> (i64[])
    b = Gather(s:0, i:0) {axis = 0} -> (i64[])
    axes = Const() {value = tensor<i64[1]>[0]} -> (i64[1])
    bu = Unsqueeze(b:0, axes:0) -> (i64[1])
    m = Const() {value = tensor<i64[1]>[-1]} -> (i64[1])
    shape = Concat(bu:0, m:0) {axis = 0} -> (i64[2])
    y = Reshape(x:0, shape:0) -> (f32[-1, -1])
    out = NetOutput(y:0)
  })");
  EXPECT_EQ(ir::PrintGraph(*graph), Print(R"(graph g {
    x = Data() {index = 0} -> (f32[2, 3, 4])
    y = Reshape(x:0, shape:0) -> (f32[2, 12])
    out = NetOutput(y:0)
    shape = Const() {value = tensor<i64[2]>[2, -1]} -> (i64[2])
  })"));
}

TEST_F(ConstantFoldingPassTest, ShapeWithStartAndEndAndSize) {
  auto graph = Fold(R"(graph g {
    x = Data() {index = 0} -> (f32[2, 3, 4])
    s = Shape(x:0) {start = -2} -> (i64[2])
    n = Size(x:0) -> (i64[])
    out = NetOutput(s:0, n:0)
  })");
  Tensor s = ConstValue(*graph, "s");
  ASSERT_EQ(s.NumElements(), 2);
  EXPECT_EQ(s.data<int64_t>()[0], 3);
  EXPECT_EQ(s.data<int64_t>()[1], 4);
  EXPECT_EQ(ConstValue(*graph, "n").data<int64_t>()[0], 24);
}

TEST_F(ConstantFoldingPassTest, ShapeOfADynamicTensorStays) {
  const std::string text = R"(graph g {
    x = Data() {index = 0} -> (f32[-1, 4])
    s = Shape(x:0) -> (i64[2])
    out = NetOutput(s:0)
  })";
  auto graph = Fold(text, /*expect_changed=*/false);
  EXPECT_EQ(graph->FindNode("s")->type(), "Shape");
}

TEST_F(ConstantFoldingPassTest, ArithmeticOverConstsRunsTheHostKernel) {
  auto graph = Fold(R"(graph g {
    x = Data() {index = 0} -> (f32[2])
    a = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
    b = Const() {value = tensor<f32[2]>[10, 20]} -> (f32[2])
    c = Add(a:0, b:0) -> (f32[2])
    d = Mul(c:0, c:0) -> (f32[2])
    y = Add(x:0, d:0) -> (f32[2])
    out = NetOutput(y:0)
  })");
  Tensor d = ConstValue(*graph, "d");
  ASSERT_EQ(d.NumElements(), 2);
  EXPECT_FLOAT_EQ(d.data<float>()[0], 121.0f);
  EXPECT_FLOAT_EQ(d.data<float>()[1], 484.0f);
  // The inputs of folded nodes went with them; the node over Data stayed.
  EXPECT_EQ(graph->FindNode("a"), nullptr);
  EXPECT_EQ(graph->FindNode("c"), nullptr);
  EXPECT_EQ(graph->FindNode("y")->type(), "Add");
}

TEST_F(ConstantFoldingPassTest, MultipleOutputsGetOneConstEach) {
  auto graph = Fold(R"(graph g {
    a = Const() {value = tensor<i32[4]>[1, 2, 3, 4]} -> (i32[4])
    p = Split(a:0) {axis = 0} -> (i32[2], i32[2])
    out = NetOutput(p:1, p:0)
  })");
  const ir::Node* out = graph->OutputNode();
  ASSERT_NE(out, nullptr);
  const ir::Node* second = out->input(0).node;
  const ir::Node* first = out->input(1).node;
  ASSERT_EQ(second->type(), ir::kConst);
  ASSERT_EQ(first->type(), ir::kConst);
  EXPECT_NE(first->name(), second->name());
  Tensor v0 = first->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  Tensor v1 = second->op_desc().GetAttr<Tensor>(ir::kAttrValue).value();
  EXPECT_EQ(v0.data<int32_t>()[0], 1);
  EXPECT_EQ(v1.data<int32_t>()[1], 4);
  EXPECT_EQ(graph->FindNode("p"), nullptr);
}

TEST_F(ConstantFoldingPassTest, ResultsMuchLargerThanTheirInputsStay) {
  // 1024 x 1024 floats from a scalar: 4 MiB the model would carry for nothing.
  auto graph = Fold(R"(graph g {
    a = Const() {value = tensor<f32[]>[1]} -> (f32[])
    s = Const() {value = tensor<i64[2]>[1024, 1024]} -> (i64[2])
    e = Expand(a:0, s:0) -> (f32[1024, 1024])
    out = NetOutput(e:0)
  })", /*expect_changed=*/false);
  EXPECT_EQ(graph->FindNode("e")->type(), "Expand");
}

// Widening without new elements folds however large: per-channel s8
// weights (2 MiB) dequantized to f32 (8 MiB), as a QDQ model's weights that
// no int8 node took are; the values are the dequantized ones.
TEST_F(ConstantFoldingPassTest, DequantizedWeightsFoldWhateverTheirSize) {
  auto graph = Fold(R"(graph g {
    w = Const() {value = tensor<i8[512,4096]>splat(-3)} -> (i8[512,4096])
    s = Const() {value = tensor<f32[512]>splat(0.5)} -> (f32[512])
    z = Const() {value = tensor<i8[512]>splat(1)} -> (i8[512])
    d = DequantizeLinear(w:0, s:0, z:0) {axis = 0} -> (f32[512,4096])
    out = NetOutput(d:0)
  })");
  const Tensor d = ConstValue(*graph, "d");
  ASSERT_EQ(d.shape(), (Shape{512, 4096}));
  EXPECT_EQ(d.data<float>()[0], -2.0f);
  EXPECT_EQ(d.data<float>()[d.NumElements() - 1], -2.0f);
}

TEST_F(ConstantFoldingPassTest, ControlInputsAndStatefulOpsStay) {
  const std::string text = R"(graph g {
    x = Data() {index = 0} -> (f32[1])
    v = Variable() {dtype = 1, shape = shape[1], value = tensor<f32[1]>[1.0]} -> (f32[1])
    a = Const() {value = tensor<f32[1]>[1]} -> (f32[1])
    r = Relu(x:0) -> (f32[1])
    n = Neg(a:0) ^r -> (f32[1])
    w = Assign(v:0, a:0) -> (f32[1])
    out = NetOutput(n:0, w:0)
  })";
  auto graph = Fold(text, /*expect_changed=*/false);
  EXPECT_EQ(graph->FindNode("n")->type(), "Neg");
  EXPECT_EQ(graph->FindNode("w")->type(), "Assign");
}

// Random ops are stateful: over Consts, or with no inputs at all, they
// stay (each run must draw new values), and so do the nodes they feed.
TEST_F(ConstantFoldingPassTest, RandomOpsStay) {
  auto graph = Fold(R"(graph g {
    a = Const() {value = tensor<f32[2]>[0.5, 0.5]} -> (f32[2])
    b = Bernoulli(a:0) -> (f32[2])
    u = RandomUniformLike(a:0) -> (f32[2])
    n = RandomNormal() {shape = [2]} -> (f32[2])
    s = Add(b:0, u:0) -> (f32[2])
    t = Add(s:0, n:0) -> (f32[2])
    out = NetOutput(t:0)
  })",
                    /*expect_changed=*/false);
  for (const char* name : {"b", "u", "n", "s", "t"}) EXPECT_NE(graph->FindNode(name)->type(), ir::kConst) << name;
}

TEST_F(ConstantFoldingPassTest, WithoutAHostEngineOnlyShapesFold) {
  engine::EngineRegistry none;
  auto graph = Fold(R"(graph g {
    x = Data() {index = 0} -> (f32[2, 3])
    s = Shape(x:0) -> (i64[2])
    t = Neg(s:0) -> (i64[2])
    out = NetOutput(t:0)
  })", /*expect_changed=*/true, &none);
  EXPECT_EQ(graph->FindNode("s")->type(), ir::kConst);
  EXPECT_EQ(graph->FindNode("t")->type(), "Neg");
}

// An engine running another engine's kernels, under a name and reference
// flag of the test's choosing.
class Renamed final : public engine::Engine {
 public:
  Renamed(std::string name, bool reference, const engine::Engine& kernels) : kernels_(kernels) {
    attributes_.name = std::move(name);
    attributes_.reference = reference;
  }
  const engine::OpsKernelInfoStore& info_store() const override { return kernels_.info_store(); }
  const engine::KernelFactory& kernel_factory() const override { return kernels_.kernel_factory(); }

 private:
  const engine::Engine& kernels_;
};

// Folding uses the reference engine, found by its attribute: an engine called
// host_cpu that is not the reference folds nothing, one called oracle that
// is folds everything.
TEST_F(ConstantFoldingPassTest, TheFoldingEngineIsTheReferenceEngine) {
  const engine::Engine* host = engines_->Find("host_cpu");
  ASSERT_NE(host, nullptr);
  ASSERT_TRUE(host->attributes().reference);
  const std::string text = R"(graph g {
    x = Data() {index = 0} -> (f32[2, 3])
    s = Shape(x:0) -> (i64[2])
    t = Neg(s:0) -> (i64[2])
    out = NetOutput(t:0)
  })";
  engine::EngineRegistry named;
  ASSERT_TRUE(named.AddEngine(std::make_unique<Renamed>("host_cpu", false, *host), {}).ok());
  EXPECT_EQ(Fold(text, /*expect_changed=*/true, &named)->FindNode("t")->type(), "Neg");
  engine::EngineRegistry marked;
  ASSERT_TRUE(marked.AddEngine(std::make_unique<Renamed>("oracle", true, *host), {}).ok());
  EXPECT_EQ(Fold(text, /*expect_changed=*/true, &marked)->FindNode("t")->type(), ir::kConst);
}

TEST_F(ConstantFoldingPassTest, KernelErrorsAreLeftForRunTime) {
  // An out-of-range Gather index: the node stays and run time reports it.
  auto graph = Fold(R"(graph g {
    a = Const() {value = tensor<f32[2]>[1, 2]} -> (f32[2])
    i = Const() {value = tensor<i64[]>[5]} -> (i64[])
    y = Gather(a:0, i:0) {axis = 0} -> (f32[])
    out = NetOutput(y:0)
  })", /*expect_changed=*/false);
  EXPECT_EQ(graph->FindNode("y")->type(), "Gather");
}

TEST(ConstantFoldingOptionTest, OnByDefaultAndSwitchedOffByOption) {
  auto defaults = CompileOptions::FromOptions({});
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_TRUE(defaults->constant_folding);
  auto off = CompileOptions::FromOptions({{"ge.oo.constantFolding", "0"}});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->constant_folding);
  auto bad = CompileOptions::FromOptions({{"ge.oo.constantFolding", "yes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ge.oo.constantFolding"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace ge::compiler
