// ReduceToPool: which reductions become global pooling and the graph they
// leave (the values: graph_optimizer_test's SpatialReductionsOfConvolutions).
#include "runtime/engines/cpu_dense/reduce_to_pool.h"

#include <string>
#include <vector>

#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

TEST(ReduceToPoolTest, MaxOverPointsBecomesGlobalMaxPoolAndFlatten) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,3,37])
    w = Const() {value = tensor<f32[16,3,1]>splat(0.5)} -> (f32[16,3,1])
    conv = Conv(x, w) -> (f32[-1,16,37])
    relu = Relu(conv) -> (f32[-1,16,37])
    m = ReduceMax(relu) {axes = [-1], keepdims = 0} -> (f32[-1,16])
    out = NetOutput(m)
  })");
  auto changed = ReduceToGlobalPool(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,3,37])
    w = Const() {value = tensor<f32[16,3,1]>splat(0.5)} -> (f32[16,3,1])
    conv = Conv(x, w) -> (f32[-1,16,37])
    relu = Relu(conv) -> (f32[-1,16,37])
    out = NetOutput(m)
    m_GlobalMaxPool = GlobalMaxPool(relu) -> (f32[-1,16,1])
    m = Flatten(m_GlobalMaxPool) {axis = 1} -> (f32[-1,16])
  })"));
}

TEST(ReduceToPoolTest, KeptDimsMeanThroughAResidualAddIsTheAveragePoolAlone) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,8,5,7])
    w = Const() {value = tensor<f32[8,8,3,3]>splat(0.5)} -> (f32[8,8,3,3])
    axes = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
    conv = Conv(x, w) {pads = [1, 1, 1, 1]} -> (f32[2,8,5,7])
    add = Add(x, conv) -> (f32[2,8,5,7])
    m = ReduceMean(add, axes) -> (f32[2,8,1,1])
    out = NetOutput(m)
  })");
  auto changed = ReduceToGlobalPool(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const ir::Node* m = g->FindNode("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->type(), "GlobalAveragePool");
  EXPECT_EQ(m->input(0).node->name(), "add");
  EXPECT_EQ(m->op_desc().output(0).type.shape(), (Shape{2, 8, 1, 1}));
}

// DGCNN's max over the neighbours: the last axis of a 2-D convolution's
// output is a MaxPool whose window spans it, and a Squeeze of that axis.
TEST(ReduceToPoolTest, MaxOverTheLastAxisIsAWindowedMaxPoolAndSqueeze) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8,5,7])
    w = Const() {value = tensor<f32[8,8,1,1]>splat(0.5)} -> (f32[8,8,1,1])
    conv = Conv(x, w) -> (f32[-1,8,5,7])
    m = ReduceMax(conv) {axes = [3], keepdims = 0} -> (f32[-1,8,5])
    out = NetOutput(m)
  })");
  auto changed = ReduceToGlobalPool(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8,5,7])
    w = Const() {value = tensor<f32[8,8,1,1]>splat(0.5)} -> (f32[8,8,1,1])
    conv = Conv(x, w) -> (f32[-1,8,5,7])
    out = NetOutput(m)
    m_MaxPool = MaxPool(conv) {kernel_shape = [1, 7]} -> (f32[-1,8,5,1])
    m_axes = Const() {value = tensor<i64[1]>[3]} -> (i64[1])
    m = Squeeze(m_MaxPool, m_axes) -> (f32[-1,8,5])
  })"));
}

// A kept-dims mean over the middle spatial axes of a 3-D output: the
// AveragePool alone, its window 1 along the last axis.
TEST(ReduceToPoolTest, KeptDimsMeanOverMiddleAxesIsAWindowedAveragePool) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,8,3,5,7])
    w = Const() {value = tensor<f32[8,8,1,1,1]>splat(0.5)} -> (f32[8,8,1,1,1])
    conv = Conv(x, w) -> (f32[2,8,3,5,7])
    m = ReduceMean(conv) {axes = [3, 2]} -> (f32[2,8,1,1,7])
    out = NetOutput(m)
  })");
  auto changed = ReduceToGlobalPool(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const ir::Node* m = g->FindNode("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->type(), "AveragePool");
  EXPECT_EQ(m->op_desc().GetAttrOr<std::vector<int64_t>>("kernel_shape", {}), (std::vector<int64_t>{3, 5, 1}));
  EXPECT_EQ(m->op_desc().output(0).type.shape(), (Shape{2, 8, 1, 1, 7}));
}

TEST(ReduceToPoolTest, LeavesOtherReductions) {
  const char* cases[] = {
      // a LayerNorm written out: the last axis of [batch, sequence, hidden] after a MatMul
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,4,8])
        w = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
        mm = MatMul(x, w) -> (f32[2,4,8])
        m = ReduceMean(mm) {axes = [2]} -> (f32[2,4,1])
        out = NetOutput(m)
      })",
      // some spatial axes whose extent is not known
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,5,-1])
        w = Const() {value = tensor<f32[8,8,1,1]>splat(0.5)} -> (f32[8,8,1,1])
        conv = Conv(x, w) -> (f32[2,8,5,-1])
        m = ReduceMax(conv) {axes = [3], keepdims = 0} -> (f32[2,8,5])
        out = NetOutput(m)
      })",
      // a spatial axis and the batch
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,5,7])
        w = Const() {value = tensor<f32[8,8,1,1]>splat(0.5)} -> (f32[8,8,1,1])
        conv = Conv(x, w) -> (f32[2,8,5,7])
        m = ReduceMax(conv) {axes = [0, 3], keepdims = 0} -> (f32[8,5])
        out = NetOutput(m)
      })",
      // the channels too
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,5])
        w = Const() {value = tensor<f32[8,8,1]>splat(0.5)} -> (f32[8,8,1])
        conv = Conv(x, w) -> (f32[2,8,5])
        m = ReduceMax(conv) {axes = [1, 2], keepdims = 0} -> (f32[2])
        out = NetOutput(m)
      })",
      // no axes: every axis
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,5])
        w = Const() {value = tensor<f32[8,8,1]>splat(0.5)} -> (f32[8,8,1])
        conv = Conv(x, w) -> (f32[2,8,5])
        m = ReduceMean(conv) -> (f32[1,1,1])
        out = NetOutput(m)
      })",
      // axes computed at run time
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,5])
        axes = Data() {index = 1} -> (i64[1])
        w = Const() {value = tensor<f32[8,8,1]>splat(0.5)} -> (f32[8,8,1])
        conv = Conv(x, w) -> (f32[2,8,5])
        m = ReduceMean(conv, axes) -> (f32[2,8,1])
        out = NetOutput(m)
      })",
      // straight from the graph's input: no convolution before it
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,5])
        m = ReduceMax(x) {axes = [2], keepdims = 0} -> (f32[2,8])
        out = NetOutput(m)
      })",
      // a convolution more than three element-wise nodes up
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,5])
        w = Const() {value = tensor<f32[8,8,1]>splat(0.5)} -> (f32[8,8,1])
        conv = Conv(x, w) -> (f32[2,8,5])
        a = Relu(conv) -> (f32[2,8,5])
        b = Relu(a) -> (f32[2,8,5])
        c = Relu(b) -> (f32[2,8,5])
        d = Relu(c) -> (f32[2,8,5])
        m = ReduceMax(d) {axes = [2], keepdims = 0} -> (f32[2,8])
        out = NetOutput(m)
      })",
      // another dtype
      R"(graph main {
        x = Data() {index = 0} -> (f64[2,8,5])
        w = Const() {value = tensor<f64[8,8,1]>splat(0.5)} -> (f64[8,8,1])
        conv = Conv(x, w) -> (f64[2,8,5])
        m = ReduceMax(conv) {axes = [2], keepdims = 0} -> (f64[2,8])
        out = NetOutput(m)
      })",
      // unknown rank
      R"(graph main {
        x = Data() {index = 0} -> (f32[?])
        w = Const() {value = tensor<f32[8,8,1]>splat(0.5)} -> (f32[8,8,1])
        conv = Conv(x, w) -> (f32[?])
        m = ReduceMax(conv) {axes = [2], keepdims = 0} -> (f32[?])
        out = NetOutput(m)
      })",
  };
  for (const char* text : cases) {
    auto g = Parse(text);
    const std::string before = ir::PrintGraph(*g);
    auto changed = ReduceToGlobalPool(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
    EXPECT_EQ(ir::PrintGraph(*g), before);
  }
}

TEST(ReduceToPoolTest, NodesTheFilterRefusesStay) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,3,9])
    w = Const() {value = tensor<f32[8,3,1]>splat(0.5)} -> (f32[8,3,1])
    conv = Conv(x, w) -> (f32[2,8,9])
    m = ReduceMax(conv) {axes = [2], keepdims = 0} -> (f32[2,8])
    out = NetOutput(m)
  })");
  auto changed = ReduceToGlobalPool(*g, [](const ir::Node& n) { return n.type() != "ReduceMax"; });
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace ge::engine::cpu_dense
