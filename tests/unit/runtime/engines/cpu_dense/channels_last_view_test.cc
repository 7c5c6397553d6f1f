// FuseChannelsLastViews: which Transposes become `_ChannelsLastView` and the
// graph they leave (the values: graph_optimizer_test's
// EdgeFeatureTransposesAreViewsAndNeighbourMaxesPools).
#include "runtime/engines/cpu_dense/channels_last_view.h"

#include <string>

#include "base/ops/op_registry.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

TEST(ChannelsLastViewTest, EdgeFeaturesBeforeConvolutionsBecomeAView) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,4,6])
    t = Transpose(x) {perm = [0, 3, 1, 2]} -> (f32[-1,6,16,4])
    w = Const() {value = tensor<f32[8,6,1,1]>splat(0.5)} -> (f32[8,6,1,1])
    a = Conv(t, w) -> (f32[-1,8,16,4])
    b = Conv(t, w) -> (f32[-1,8,16,4])
    out = NetOutput(a, b)
  })");
  auto changed = FuseChannelsLastViews(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,4,6])
    w = Const() {value = tensor<f32[8,6,1,1]>splat(0.5)} -> (f32[8,6,1,1])
    a = Conv(t, w) -> (f32[-1,8,16,4])
    b = Conv(t, w) -> (f32[-1,8,16,4])
    out = NetOutput(a, b)
    t = _ChannelsLastView(x) -> (f32[-1,6,16,4]@NHWC)
  })"));
  const ir::Node* a = g->FindNode("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->op_desc().input(0).type.tensor().format, ir::Format::kNHWC);
}

TEST(ChannelsLastViewTest, RanksThreeAndFiveTakeTheirChannelsLastFormat) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,10,8])
    t = Transpose(x) {perm = [0, 2, 1]} -> (f32[2,8,10])
    w = Const() {value = tensor<f32[4,8,1]>splat(0.5)} -> (f32[4,8,1])
    c = Conv(t, w) -> (f32[2,4,10])
    y = Data() {index = 1} -> (f32[2,3,4,5,8])
    u = Transpose(y) {perm = [0, 4, 1, 2, 3]} -> (f32[2,8,3,4,5])
    v = Const() {value = tensor<f32[4,8,1,1,1]>splat(0.5)} -> (f32[4,8,1,1,1])
    d = Conv(u, v) -> (f32[2,4,3,4,5])
    out = NetOutput(c, d)
  })");
  auto changed = FuseChannelsLastViews(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const ir::Node* t = g->FindNode("t");
  const ir::Node* u = g->FindNode("u");
  ASSERT_NE(t, nullptr);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(t->type(), kChannelsLastViewOp);
  EXPECT_EQ(t->op_desc().output(0).type.tensor().format, ir::Format::kNHWC);
  EXPECT_EQ(u->type(), kChannelsLastViewOp);
  EXPECT_EQ(u->op_desc().output(0).type.tensor().format, ir::Format::kNDHWC);
  EXPECT_EQ(u->op_desc().output(0).type.shape(), (Shape{2, 8, 3, 4, 5}));
}

TEST(ChannelsLastViewTest, LeavesOtherTransposes) {
  const char* cases[] = {
      // another perm
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,16,4,6])
        t = Transpose(x) {perm = [0, 3, 2, 1]} -> (f32[2,6,4,16])
        w = Const() {value = tensor<f32[8,6,1,1]>splat(0.5)} -> (f32[8,6,1,1])
        c = Conv(t, w) -> (f32[2,8,4,16])
        out = NetOutput(c)
      })",
      // a reader that is not a convolution
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,16,4,6])
        t = Transpose(x) {perm = [0, 3, 1, 2]} -> (f32[2,6,16,4])
        w = Const() {value = tensor<f32[8,6,1,1]>splat(0.5)} -> (f32[8,6,1,1])
        c = Conv(t, w) -> (f32[2,8,16,4])
        r = Relu(t) -> (f32[2,6,16,4])
        out = NetOutput(c, r)
      })",
      // the convolution's weights, not its input
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,6,16,4])
        v = Data() {index = 1} -> (f32[8,1,1,6])
        t = Transpose(v) {perm = [0, 3, 1, 2]} -> (f32[8,6,1,1])
        c = Conv(x, t) -> (f32[2,8,16,4])
        out = NetOutput(c)
      })",
      // a graph output
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,16,4,6])
        t = Transpose(x) {perm = [0, 3, 1, 2]} -> (f32[2,6,16,4])
        out = NetOutput(t)
      })",
      // a constant input (folding's)
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,6,16,4])
        k = Const() {value = tensor<f32[2,16,4,6]>splat(0.5)} -> (f32[2,16,4,6])
        t = Transpose(k) {perm = [0, 3, 1, 2]} -> (f32[2,6,16,4])
        w = Const() {value = tensor<f32[8,6,1,1]>splat(0.5)} -> (f32[8,6,1,1])
        c = Conv(t, w) -> (f32[2,8,16,4])
        out = NetOutput(c)
      })",
      // unknown dims past the batch
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,-1,4,6])
        t = Transpose(x) {perm = [0, 3, 1, 2]} -> (f32[2,6,-1,4])
        w = Const() {value = tensor<f32[8,6,1,1]>splat(0.5)} -> (f32[8,6,1,1])
        c = Conv(t, w) -> (f32[2,8,-1,4])
        out = NetOutput(c)
      })",
      // another dtype
      R"(graph main {
        x = Data() {index = 0} -> (f64[2,16,4,6])
        t = Transpose(x) {perm = [0, 3, 1, 2]} -> (f64[2,6,16,4])
        w = Const() {value = tensor<f64[8,6,1,1]>splat(0.5)} -> (f64[8,6,1,1])
        c = Conv(t, w) -> (f64[2,8,16,4])
        out = NetOutput(c)
      })",
      // rank 2
      R"(graph main {
        x = Data() {index = 0} -> (f32[16,6])
        t = Transpose(x) {perm = [1, 0]} -> (f32[6,16])
        out = NetOutput(t)
      })",
  };
  for (const char* text : cases) {
    auto g = Parse(text);
    const std::string before = ir::PrintGraph(*g);
    auto changed = FuseChannelsLastViews(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
    EXPECT_EQ(ir::PrintGraph(*g), before);
  }
}

TEST(ChannelsLastViewTest, NodesTheFilterRefusesStay) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,16,4,6])
    t = Transpose(x) {perm = [0, 3, 1, 2]} -> (f32[2,6,16,4])
    w = Const() {value = tensor<f32[8,6,1,1]>splat(0.5)} -> (f32[8,6,1,1])
    c = Conv(t, w) -> (f32[2,8,16,4])
    out = NetOutput(c)
  })");
  for (const char* refused : {"Transpose", "Conv"}) {
    auto changed = FuseChannelsLastViews(*g, [refused](const ir::Node& n) { return n.type() != refused; });
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << refused;
  }
}

// The schema: X's transpose as the channels-last storage; plain inputs only.
TEST(ChannelsLastViewTest, InferenceGivesTheTransposedShapeChannelsLast) {
  ASSERT_TRUE(RegisterChannelsLastViewOp(ops::OpRegistry::Global()).ok());
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,4,6])
    t = _ChannelsLastView(x) -> (f32[?])
    out = NetOutput(t)
  })");
  ASSERT_TRUE(ops::InferNode(*g->FindNode("t"), ops::OpRegistry::Global()).ok());
  const ir::TensorDesc& y = g->FindNode("t")->op_desc().output(0).type.tensor();
  EXPECT_EQ(y.shape, (Shape{-1, 6, 16, 4}));
  EXPECT_EQ(y.format, ir::Format::kNHWC);
  auto bad = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[16,6])
    t = _ChannelsLastView(x) -> (f32[?])
    out = NetOutput(t)
  })");
  EXPECT_FALSE(ops::InferNode(*bad->FindNode("t"), ops::OpRegistry::Global()).ok());
}

}  // namespace
}  // namespace ge::engine::cpu_dense
