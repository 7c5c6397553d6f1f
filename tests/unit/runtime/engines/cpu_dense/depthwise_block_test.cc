// Depthwise blocks (layout_pass.cc, docs/design/cpu_dense.md): an
// inverted-residual block (1x1 expand -> depthwise kxk -> 1x1 project) whose
// depthwise source holds kLargeDepthwiseBytes or more runs on oneDNN's channel
// blocks on hosts that otherwise run it channels-last, and computes what the
// original graph computes on host_cpu; below the bound, or with the switch
// off, the layouts stay as before.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/ir/op_types.h"
#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/graph_optimizer.h"
#include "runtime/engines/cpu_dense/layout_pass.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/placed_graph_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

struct Block {
  int64_t batch, in_channels, height, width, expanded, kernel, stride, out_channels;
  bool residual = false;        // the projection adds the block's input (stride 1, in == out)
  bool squeeze_excite = false;  // a sigmoid-gated scale between depthwise and projection
};

int64_t Out(int64_t size, int64_t kernel, int64_t stride) { return (size + 2 * (kernel / 2) - kernel) / stride + 1; }

std::string Dims(std::vector<int64_t> d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) absl::StrAppend(&s, i ? "," : "", d[i]);
  return s;
}

// stem (3x3, 8 -> in_channels) -> expand (1x1 + ReLU6) -> depthwise (kxk,
// stride, + ReLU6) [-> squeeze-excite] -> project (1x1) [+ input].
std::string BlockGraph(const Block& b) {
  const int64_t n = b.batch, h = b.height, w = b.width, e = b.expanded;
  const int64_t oh = Out(h, b.kernel, b.stride), ow = Out(w, b.kernel, b.stride), p = b.kernel / 2;
  const std::string x = Dims({n, 8, h, w}), xi = Dims({n, b.in_channels, h, w}), xe = Dims({n, e, h, w});
  const std::string de = Dims({n, e, oh, ow}), y = Dims({n, b.out_channels, oh, ow});
  std::string text = absl::StrCat(
      R"(graph main {
  x = Data() {index = 0} -> (f32[)",
      x, R"(])
  lo = Const() {value = tensor<f32[]>[0.0]} -> (f32[])
  hi = Const() {value = tensor<f32[]>[6.0]} -> (f32[])
  w0 = Const() {value = tensor<f32[)",
      Dims({b.in_channels, 8, 3, 3}), R"(]>splat(0.0)} -> (f32[)", Dims({b.in_channels, 8, 3, 3}), R"(])
  stem = Conv(x, w0) {pads = [1, 1, 1, 1]} -> (f32[)",
      xi, R"(])
  w1 = Const() {value = tensor<f32[)",
      Dims({e, b.in_channels, 1, 1}), R"(]>splat(0.0)} -> (f32[)", Dims({e, b.in_channels, 1, 1}), R"(])
  b1 = Const() {value = tensor<f32[)",
      e, R"(]>splat(0.0)} -> (f32[)", e, R"(])
  expand = Conv(stem, w1, b1) -> (f32[)",
      xe, R"(])
  act1 = Clip(expand, lo, hi) -> (f32[)",
      xe, R"(])
  w2 = Const() {value = tensor<f32[)",
      Dims({e, 1, b.kernel, b.kernel}), R"(]>splat(0.0)} -> (f32[)", Dims({e, 1, b.kernel, b.kernel}), R"(])
  b2 = Const() {value = tensor<f32[)",
      e, R"(]>splat(0.0)} -> (f32[)", e, R"(])
  dw = Conv(act1, w2, b2) {group = )",
      e, ", pads = [", p, ", ", p, ", ", p, ", ", p, "], strides = [", b.stride, ", ", b.stride, R"(]} -> (f32[)", de,
      R"(])
  act2 = Clip(dw, lo, hi) -> (f32[)",
      de, "])\n");
  std::string gated = "act2";
  if (b.squeeze_excite) {
    const int64_t s = 8;
    absl::StrAppend(&text, "  gap = GlobalAveragePool(act2) -> (f32[", Dims({n, e, 1, 1}), "])\n",
                    "  ws1 = Const() {value = tensor<f32[", Dims({s, e, 1, 1}), "]>splat(0.0)} -> (f32[",
                    Dims({s, e, 1, 1}), "])\n", "  se1 = Conv(gap, ws1) -> (f32[", Dims({n, s, 1, 1}), "])\n",
                    "  ser = Relu(se1) -> (f32[", Dims({n, s, 1, 1}), "])\n", "  ws2 = Const() {value = tensor<f32[",
                    Dims({e, s, 1, 1}), "]>splat(0.0)} -> (f32[", Dims({e, s, 1, 1}), "])\n",
                    "  se2 = Conv(ser, ws2) -> (f32[", Dims({n, e, 1, 1}), "])\n", "  gate = Sigmoid(se2) -> (f32[",
                    Dims({n, e, 1, 1}), "])\n", "  scaled = Mul(act2, gate) -> (f32[", de, "])\n");
    gated = "scaled";
  }
  absl::StrAppend(&text, "  w3 = Const() {value = tensor<f32[", Dims({b.out_channels, e, 1, 1}),
                  "]>splat(0.0)} -> (f32[", Dims({b.out_channels, e, 1, 1}), "])\n", "  project = Conv(", gated,
                  ", w3) -> (f32[", y, "])\n");
  if (b.residual) {
    absl::StrAppend(&text, "  sum = Add(project, stem) -> (f32[", y, "])\n  out = NetOutput(sum)\n}");
  } else {
    absl::StrAppend(&text, "  out = NetOutput(project)\n}");
  }
  return text;
}

class DepthwiseBlockTest : public PlacedGraphTest {
 protected:
  void TearDown() override { SetDepthwiseBlocksEnabled(true); }

  // Random weights (small, so that ReLU6 does not saturate everywhere).
  static void FillWeights(ir::Graph& g) {
    uint64_t seed = 300;
    g.ForEachNode([&](ir::Node* n) {
      if (n->type() != ir::kConst || n->name() == "lo" || n->name() == "hi") return;
      const Shape shape = n->op_desc().output(0).type.shape();
      n->mutable_op_desc().SetAttr(ir::kAttrValue, test::RandomTensor(DataType::kFloat, shape, seed++, -0.4, 0.4));
    });
  }

  // The optimized, placed and laid-out graph of `text`.
  static std::unique_ptr<ir::Graph> Optimize(const ir::Graph& original) {
    auto optimized = original.Clone();
    auto& optimizer = *PassTestEngine().graph_optimizers()[0];
    EXPECT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
    Place(*optimized, /*dense=*/true);
    EXPECT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
    return optimized;
  }

  // The output layout of the node that `name` became (fused ops keep the
  // base node's name).
  static ir::Format FormatOf(const ir::Graph& g, const std::string& name) {
    const ir::Node* n = g.FindNode(name);
    EXPECT_NE(n, nullptr) << name;
    return n == nullptr ? ir::Format::kND : n->op_desc().output(0).type.tensor().format;
  }
};

bool IsBlocked(ir::Format f) { return f == ir::Format::kNChw16c || f == ir::Format::kNChw8c; }

TEST_F(DepthwiseBlockTest, LargeBlocksRunOnChannelBlocksAndComputeTheSame) {
  // Each depthwise source holds at least 8 MiB: kernels 3, 5 and 7,
  // strides 1 and 2, odd sizes, projections that fill a block of 16 and
  // ones that do not (24: the destination is converted), a residual add, a
  // squeeze-excite gate between depthwise and projection.
  const std::vector<Block> blocks = {
      {4, 24, 64, 64, 144, 3, 1, 24, /*residual=*/true, /*squeeze_excite=*/false},
      {4, 16, 65, 63, 160, 5, 2, 32, false, false},
      {3, 32, 60, 62, 192, 7, 1, 32, true, true},
      {4, 40, 57, 50, 240, 3, 2, 48, false, true},
  };
  for (const Block& b : blocks) {
    ASSERT_GE(b.batch * b.expanded * b.height * b.width * 4, kLargeDepthwiseBytes);
    const std::string text = BlockGraph(b);
    auto original = Parse(text);
    FillWeights(*original);
    SetDepthwiseBlocksEnabled(false);
    auto before = Optimize(*original);
    SetDepthwiseBlocksEnabled(true);
    auto after = Optimize(*original);
    // On hosts where the depthwise convolution runs channels-last without
    // the rule (AVX-512), the block takes channel blocks; elsewhere the
    // layouts stay as they were.
    const ir::Format dw_before = FormatOf(*before, "dw");
    if (IsChannelsLast(dw_before)) {
      const ir::Format f = FormatOf(*after, "dw");
      EXPECT_TRUE(IsBlocked(f)) << ir::FormatName(f) << "\n" << text;
      EXPECT_EQ(FormatOf(*after, "expand"), f) << text;
      const ir::Node* project = after->FindNode("project");
      ASSERT_NE(project, nullptr);
      EXPECT_EQ(project->op_desc().input(0).type.tensor().format, f) << text;
      if (b.out_channels % 16 == 0) {
        EXPECT_EQ(FormatOf(*after, "project"), f) << text;
      }
    } else {
      EXPECT_EQ(FormatOf(*after, "dw"), dw_before);
    }
    Place(*original, /*dense=*/false);
    const Shape shape = original->FindNode("x")->op_desc().output(0).type.shape();
    const Tensor x = test::RandomTensor(DataType::kFloat, shape, 17, -1.0, 1.0);
    const Tensor want = Run(*original, x);
    EXPECT_TRUE(test::TensorNear(Run(*after, x), want, {1e-4, 1e-4})) << text;
    EXPECT_TRUE(test::TensorNear(Run(*before, x), want, {1e-4, 1e-4})) << text;
  }
}

TEST_F(DepthwiseBlockTest, SmallOrOddBlocksKeepTheirLayouts) {
  // Batch 1 at 28x28 (0.4 MiB): in the cache, where the channels-last
  // kernel is as fast; 5.1 MiB, below the bound (at 2 threads channels-last
  // still wins there). 72 channels at 8 x 64 x 64 (9 MiB): no whole blocks
  // of 16 (blocks of 8 ran oneDNN's AVX2 kernels and its reference binary op
  // for the squeeze-excite scale on AVX-512).
  for (const Block& b :
       {Block{1, 24, 28, 28, 144, 3, 1, 24, true, false}, Block{4, 24, 48, 48, 144, 3, 1, 24, true, false},
        Block{8, 24, 64, 64, 72, 5, 2, 40, false, true}}) {
    auto graph = Parse(BlockGraph(b));
    FillWeights(*graph);
    SetDepthwiseBlocksEnabled(false);
    auto before = Optimize(*graph);
    SetDepthwiseBlocksEnabled(true);
    auto after = Optimize(*graph);
    for (const char* name : {"stem", "expand", "dw", "project"}) {
      EXPECT_EQ(FormatOf(*after, name), FormatOf(*before, name)) << name << " of " << b.expanded;
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
