// CpuDenseGraphOptimizer end to end: a small residual network optimized
// (BN folded, post-ops fused, constant weights marked) and run on cpu_dense
// computes what the original computes on host_cpu; OptimizeFusedGraph
// touches only the nodes placed on cpu_dense.
#include "runtime/engines/cpu_dense/graph_optimizer.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/ir/op_types.h"
#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/channel_shuffle.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/placed_graph_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr char kNet[] = R"(graph main {
  x = Data() {index = 0} -> (f32[2,3,12,12])
  w1 = Const() {value = tensor<f32[16,3,3,3]>splat(0.0)} -> (f32[16,3,3,3])
  s1 = Const() {value = tensor<f32[16]>splat(0.0)} -> (f32[16])
  b1 = Const() {value = tensor<f32[16]>splat(0.0)} -> (f32[16])
  m1 = Const() {value = tensor<f32[16]>splat(0.0)} -> (f32[16])
  v1 = Const() {value = tensor<f32[16]>splat(1.0)} -> (f32[16])
  conv1 = Conv(x, w1) {pads = [1, 1, 1, 1]} -> (f32[2,16,12,12])
  bn1 = BatchNormalization(conv1, s1, b1, m1, v1) -> (f32[2,16,12,12])
  relu1 = Relu(bn1) -> (f32[2,16,12,12])
  w2 = Const() {value = tensor<f32[16,16,3,3]>splat(0.0)} -> (f32[16,16,3,3])
  conv2 = Conv(relu1, w2) {pads = [1, 1, 1, 1]} -> (f32[2,16,12,12])
  bn2 = BatchNormalization(conv2, s1, b1, m1, v1) -> (f32[2,16,12,12])
  add = Add(bn2, relu1) -> (f32[2,16,12,12])
  relu2 = Relu(add) -> (f32[2,16,12,12])
  pool = MaxPool(relu2) {kernel_shape = [2, 2], strides = [2, 2]} -> (f32[2,16,6,6])
  gap = GlobalAveragePool(pool) -> (f32[2,16,1,1])
  flat = Flatten(gap) -> (f32[2,16])
  wfc = Const() {value = tensor<f32[10,16]>splat(0.0)} -> (f32[10,16])
  bfc = Const() {value = tensor<f32[10]>splat(0.0)} -> (f32[10])
  fc = Gemm(flat, wfc, bfc) {transB = 1} -> (f32[2,10])
  lo = Const() {value = tensor<f32[]>[0.0]} -> (f32[])
  hi = Const() {value = tensor<f32[]>[6.0]} -> (f32[])
  clip = Clip(fc, lo, hi) -> (f32[2,10])
  sm = Softmax(clip) {axis = 1} -> (f32[2,10] as "probs")
  out = NetOutput(sm)
})";

class GraphOptimizerTest : public PlacedGraphTest {
 protected:
  // Random weights in every Const but lo, hi and keep_*, positive statistics
  // in v*.
  static void FillWeights(ir::Graph& g) {
    uint64_t seed = 100;
    g.ForEachNode([&](ir::Node* n) {
      if (n->type() != ir::kConst || n->name() == "lo" || n->name() == "hi" || n->name().starts_with("keep_")) return;
      const Shape shape = n->op_desc().output(0).type.shape();
      const bool variance = n->name()[0] == 'v';
      n->mutable_op_desc().SetAttr(ir::kAttrValue,
                                   test::RandomTensor(DataType::kFloat, shape, seed++, variance ? 0.5 : -0.5, 1.0));
    });
  }

  static int Count(const ir::Graph& g, std::string_view type) {
    int n = 0;
    g.ForEachNode([&](ir::Node* node) { n += node->type() == type; });
    return n;
  }
};

TEST_F(GraphOptimizerTest, OptimizedNetworkMatchesTheOriginal) {
  auto original = Parse(kNet);
  FillWeights(*original);
  auto optimized = original->Clone();
  auto& optimizer = *PassTestEngine().graph_optimizers()[0];
  // Before placement: BatchNormalization folds into its Conv and
  // activations fuse; a convolution's residual Add too (a MatMul's or
  // Gemm's binary steps wait for the placed graph, OptimizeFusedGraph).
  auto changed = optimizer.OptimizeOriginalGraph(*optimized);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Count(*optimized, "BatchNormalization"), 0);
  EXPECT_EQ(Count(*optimized, "_DenseFused"), 3);  // conv1+relu, conv2+add+relu, fc+clip
  EXPECT_EQ(Count(*optimized, "Add"), 0);

  Place(*original, /*dense=*/false);
  Place(*optimized, /*dense=*/true);
  changed = optimizer.OptimizeFusedGraph(*optimized);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Count(*optimized, "BatchNormalization"), 0);
  EXPECT_EQ(Count(*optimized, "_DenseFused"), 3);  // conv1+relu, conv2+add+relu, fc+clip
  EXPECT_EQ(Count(*optimized, "Relu") + Count(*optimized, "Clip") + Count(*optimized, "Add"), 0);
  const ir::Node* conv2 = optimized->FindNode("conv2");
  ASSERT_NE(conv2, nullptr);
  EXPECT_EQ(conv2->op_desc().GetAttrOr<std::vector<int64_t>>(kAttrConstInputs, {}), (std::vector<int64_t>{1, 2}));
  optimized->ForEachNode([](ir::Node* n) {
    if (n->type() == "_DenseFused" || n->type() == "MaxPool" || n->type() == "Softmax") {
      EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << n->name();
    }
  });
  for (uint64_t seed : {1, 2}) {
    const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3, 12, 12}, seed);
    const Tensor want = Run(*original, x);
    const Tensor got = Run(*optimized, x);
    EXPECT_TRUE(test::TensorNear(got, want, {1e-5, 1e-4}));
  }
}

// After placement, OptimizeFusedGraph adds blocked layouts and TransData
// nodes; the network still computes the same.
TEST_F(GraphOptimizerTest, BlockedLayoutsComputeTheSame) {
  auto original = Parse(kNet);
  FillWeights(*original);
  auto optimized = original->Clone();
  auto& optimizer = *PassTestEngine().graph_optimizers()[0];
  ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
  Place(*original, /*dense=*/false);
  Place(*optimized, /*dense=*/true);
  auto changed = optimizer.OptimizeFusedGraph(*optimized);
  ASSERT_TRUE(changed.ok()) << changed.status();
  int blocked = 0;
  optimized->ForEachNode([&](ir::Node* n) {
    if (n->num_outputs() > 0 && n->op_desc().output(0).type.tensor().format != ir::Format::kND) ++blocked;
  });
  if (blocked == 0) GTEST_SKIP() << "oneDNN prefers plain layouts on this CPU";
  EXPECT_TRUE(*changed);
  for (uint64_t seed : {3, 4}) {
    const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3, 12, 12}, seed);
    EXPECT_TRUE(test::TensorNear(Run(*optimized, x), Run(*original, x), {1e-5, 1e-4}));
  }
}

TEST_F(GraphOptimizerTest, FusedGraphOptimizationTouchesOnlyDenseNodes) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    mm = MatMul(x, w) {_engine_name = "cpu_dense"} -> (f32[4,8])
    relu = Relu(mm) {_engine_name = "cpu_dense"} -> (f32[4,8])
    mm2 = MatMul(relu, w) {_engine_name = "host_cpu"} -> (f32[4,8])
    relu2 = Relu(mm2) {_engine_name = "host_cpu"} -> (f32[4,8])
    out = NetOutput(relu2)
  })");
  auto changed = PassTestEngine().graph_optimizers()[0]->OptimizeFusedGraph(*g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    mm2 = MatMul(mm, w) {_engine_name = "host_cpu"} -> (f32[4,8])
    relu2 = Relu(mm2) {_engine_name = "host_cpu"} -> (f32[4,8])
    out = NetOutput(relu2)
    mm = _DenseFused(x, w) {_const_inputs = [1], _engine_name = "cpu_dense", base = "MatMul", post_alpha = [0.0],
                            post_beta = [0.0], post_ops = ["relu"]} -> (f32[4,8])
  })"));
}

// A constant reaches a placed subgraph through a PlaceHolder: the marking of
// the whole graph stays (dynamic-shape kernels see no values at Prepare and
// pack only what the attribute lists once); unmarked inputs stay unmarked.
TEST_F(GraphOptimizerTest, ConstantsMarkedBeforePartitioningStayMarked) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[4,8])
    w = PlaceHolder() -> (f32[8,8])
    w2 = InnerData() {_parent_index = 2} -> (f32[8,8])
    mm = MatMul(x, w) {_const_inputs = [1], _engine_name = "cpu_dense"} -> (f32[4,8])
    mm2 = MatMul(mm, w2) {_engine_name = "cpu_dense"} -> (f32[4,8])
    out = NetOutput(mm2)
  })");
  auto changed = PassTestEngine().graph_optimizers()[0]->OptimizeFusedGraph(*g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(g->FindNode("mm")->op_desc().GetAttrOr<std::vector<int64_t>>(kAttrConstInputs, {}),
            std::vector<int64_t>{1});
  EXPECT_FALSE(g->FindNode("mm2")->op_desc().GetAttr<std::vector<int64_t>>(kAttrConstInputs));
}

TEST_F(GraphOptimizerTest, NodesPinnedElsewhereStayAsTheyAre) {
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (f32[4,8])
    w = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    mm = MatMul(x, w) {_ge_engine = "host_cpu"} -> (f32[4,8])
    relu = Relu(mm) -> (f32[4,8])
    out = NetOutput(relu)
  })";
  auto g = Parse(text);
  auto changed = PassTestEngine().graph_optimizers()[0]->OptimizeOriginalGraph(*g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(text));
}

// Before placement a convolution's whole chain fuses (GELU's arithmetic, a
// residual Add first), a MatMul takes its bias but its residual Add waits
// for the engine partition, and an Add feeding a LayerNormalization stays
// for cpu_fused.
TEST_F(GraphOptimizerTest, ConvolutionChainsFuseBeforePlacementMatMulsWait) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,40])
    a = Data() {index = 1} -> (f32[4,8])
    w = Const() {value = tensor<f32[16,16,3]>splat(0.5)} -> (f32[16,16,3])
    wm = Const() {value = tensor<f32[8,8]>splat(0.5)} -> (f32[8,8])
    bm = Const() {value = tensor<f32[8]>splat(0.5)} -> (f32[8])
    gamma = Const() {value = tensor<f32[40]>splat(1.0)} -> (f32[40])
    sqrt2 = Const() {value = tensor<f32[]>[1.4142135]} -> (f32[])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    half = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    conv = Conv(x, w) {pads = [1, 1]} -> (f32[-1,16,40])
    d = Div(conv, sqrt2) -> (f32[-1,16,40])
    e = Erf(d) -> (f32[-1,16,40])
    p = Add(e, one) -> (f32[-1,16,40])
    m = Mul(conv, p) -> (f32[-1,16,40])
    g = Mul(m, half) -> (f32[-1,16,40])
    conv2 = Conv(g, w) {pads = [1, 1]} -> (f32[-1,16,40])
    res = Add(conv2, x) -> (f32[-1,16,40])
    relu = Relu(res) -> (f32[-1,16,40])
    mm = MatMul(a, wm) -> (f32[4,8])
    mb = Add(mm, bm) -> (f32[4,8])
    mres = Add(mb, a) -> (f32[4,8])
    conv3 = Conv(relu, w) {pads = [1, 1]} -> (f32[-1,16,40])
    ln_in = Add(conv3, x) -> (f32[-1,16,40])
    ln = LayerNormalization(ln_in, gamma) {axis = -1} -> (f32[-1,16,40])
    out = NetOutput(ln, mres)
  })");
  auto changed = PassTestEngine().graph_optimizers()[0]->OptimizeOriginalGraph(*g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  auto post_ops = [&](const char* name) {
    const ir::Node* n = g->FindNode(name);
    return n == nullptr ? std::vector<std::string>{"missing"}
                        : n->op_desc().GetAttrOr<std::vector<std::string>>("post_ops", {});
  };
  EXPECT_EQ(post_ops("conv"), std::vector<std::string>({"gelu_erf"}));
  EXPECT_EQ(post_ops("conv2"), std::vector<std::string>({"add", "relu"}));
  EXPECT_TRUE(post_ops("conv3").empty());  // its Add feeds the LayerNormalization
  EXPECT_NE(g->FindNode("ln_in"), nullptr);
  EXPECT_EQ(g->FindNode("mb"), nullptr);  // the MatMul's bias joins it
  ASSERT_NE(g->FindNode("mm"), nullptr);
  EXPECT_EQ(g->FindNode("mm")->type(), "_DenseFused");
  EXPECT_TRUE(post_ops("mm").empty());
  EXPECT_NE(g->FindNode("mres"), nullptr);  // the residual waits
  EXPECT_EQ(g->FindNode("e"), nullptr);
}

// Max and mean over every spatial axis of a convolution's output (PointNet's
// max over points, squeeze-excite's mean, a global max at 1x1) become global
// pooling on cpu_dense, in the blocked layout where oneDNN blocks the
// convolution, and compute what the reductions compute on host_cpu: 1-D and
// 2-D, keepdims either way, channels in 8s and not, a spatial size of 1.
TEST_F(GraphOptimizerTest, SpatialReductionsOfConvolutionsRunAsGlobalPools) {
  const char* nets[] = {
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,4,9,11])
        wa = Const() {value = tensor<f32[16,4,3,3]>splat(0.0)} -> (f32[16,4,3,3])
        wb = Const() {value = tensor<f32[12,4,1,1]>splat(0.0)} -> (f32[12,4,1,1])
        wc = Const() {value = tensor<f32[8,4,9,11]>splat(0.0)} -> (f32[8,4,9,11])
        a = Conv(x, wa) {pads = [1, 1, 1, 1]} -> (f32[2,16,9,11])
        ra = Relu(a) -> (f32[2,16,9,11])
        se = ReduceMean(ra) {axes = [2, 3]} -> (f32[2,16,1,1])
        gate = Sigmoid(se) -> (f32[2,16,1,1])
        scaled = Mul(ra, gate) -> (f32[2,16,9,11])
        ma = ReduceMax(scaled) {axes = [2, 3], keepdims = 0} -> (f32[2,16])
        b = Conv(x, wb) -> (f32[2,12,9,11])
        mb = ReduceMean(b) {axes = [-1, -2], keepdims = 0} -> (f32[2,12])
        c = Conv(x, wc) -> (f32[2,8,1,1])
        mc = ReduceMax(c) {axes = [2, 3], keepdims = 0} -> (f32[2,8])
        out = NetOutput(ma, mb, mc)
      })",
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,4,37])
        wa = Const() {value = tensor<f32[24,4,1]>splat(0.0)} -> (f32[24,4,1])
        wb = Const() {value = tensor<f32[5,24,3]>splat(0.0)} -> (f32[5,24,3])
        a = Conv(x, wa) -> (f32[2,24,37])
        ra = Relu(a) -> (f32[2,24,37])
        ma = ReduceMax(ra) {axes = [2], keepdims = 0} -> (f32[2,24])
        b = Conv(ra, wb) {pads = [1, 1]} -> (f32[2,5,37])
        mb = ReduceMean(b) {axes = [-1]} -> (f32[2,5,1])
        out = NetOutput(ma, mb)
      })",
  };
  for (const char* text : nets) {
    auto original = Parse(text);
    FillWeights(*original);
    auto optimized = original->Clone();
    auto& optimizer = *PassTestEngine().graph_optimizers()[0];
    ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
    EXPECT_EQ(Count(*optimized, "ReduceMax") + Count(*optimized, "ReduceMean"), 0) << text;
    Place(*original, /*dense=*/false);
    Place(*optimized, /*dense=*/true);
    ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
    optimized->ForEachNode([](ir::Node* n) {
      if (n->type() == "GlobalMaxPool" || n->type() == "GlobalAveragePool") {
        EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << n->name();
      }
    });
    const Shape shape = original->FindNode("x")->op_desc().output(0).type.shape();
    for (uint64_t seed : {5, 6}) {
      const Tensor x = test::RandomTensor(DataType::kFloat, shape, seed);
      const std::vector<Tensor> want = RunAll(*original, x);
      const std::vector<Tensor> got = RunAll(*optimized, x);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
        EXPECT_TRUE(test::TensorNear(got[i], want[i], {1e-5, 1e-5})) << "output " << i << " of\n" << text;
      }
    }
  }
}

// Point-cloud edge convolutions: the Transpose of [B, N, K, C] features to
// [B, C, N, K] before a convolution becomes a `_ChannelsLastView` the
// convolution reads channels-last (no copy, no reorder), rank 3 (a Conv1d
// after transpose(1, 2)) too; the max over the neighbours and a mean over a
// middle axis become windowed pools. Values against host_cpu's, and the
// views reach the convolutions without a TransData.
TEST_F(GraphOptimizerTest, EdgeFeatureTransposesAreViewsAndNeighbourMaxesPools) {
  constexpr char kEdges[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2,8,5,6])
    nx = Neg(x) -> (f32[2,8,5,6])
    e = Concat(x, nx) {axis = 3} -> (f32[2,8,5,12])
    t = Transpose(e) {perm = [0, 3, 1, 2]} -> (f32[2,12,8,5])
    w = Const() {value = tensor<f32[16,12,1,1]>splat(0.0)} -> (f32[16,12,1,1])
    conv = Conv(t, w) -> (f32[2,16,8,5])
    act = LeakyRelu(conv) {alpha = 0.2} -> (f32[2,16,8,5])
    m = ReduceMax(act) {axes = [-1], keepdims = 0} -> (f32[2,16,8])
    w3 = Const() {value = tensor<f32[7,12,3,3]>splat(0.0)} -> (f32[7,12,3,3])
    conv3 = Conv(t, w3) {pads = [1, 1, 1, 1]} -> (f32[2,7,8,5])
    mean = ReduceMean(conv3) {axes = [2]} -> (f32[2,7,1,5])
    t1 = Transpose(m) {perm = [0, 2, 1]} -> (f32[2,8,16])
    w1 = Const() {value = tensor<f32[4,8,1]>splat(0.0)} -> (f32[4,8,1])
    conv1 = Conv(t1, w1) -> (f32[2,4,16])
    out = NetOutput(m, mean, conv1)
  })";
  auto original = Parse(kEdges);
  FillWeights(*original);
  auto optimized = original->Clone();
  auto& optimizer = *PassTestEngine().graph_optimizers()[0];
  ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
  EXPECT_EQ(Count(*optimized, "Transpose"), 0);
  EXPECT_EQ(Count(*optimized, "_ChannelsLastView"), 2);
  EXPECT_EQ(Count(*optimized, "ReduceMax") + Count(*optimized, "ReduceMean"), 0);
  EXPECT_EQ(Count(*optimized, "MaxPool"), 1);
  EXPECT_EQ(Count(*optimized, "AveragePool"), 1);
  Place(*original, /*dense=*/false);
  Place(*optimized, /*dense=*/true);
  ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
  optimized->ForEachNode([](ir::Node* n) {
    if (n->type() != "_ChannelsLastView") return;
    EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << n->name();
    EXPECT_TRUE(IsChannelsLast(n->op_desc().output(0).type.tensor().format)) << n->name();
    for (const ir::InPort& use : n->consumers(0)) {
      EXPECT_NE(use.node->type(), ir::kTransData) << n->name() << " -> " << use.node->name();
      EXPECT_TRUE(IsChannelsLast(use.node->op_desc().input(use.index).type.tensor().format)) << use.node->name();
    }
  });
  for (uint64_t seed : {7, 8}) {
    const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 8, 5, 6}, seed);
    const std::vector<Tensor> want = RunAll(*original, x);
    const std::vector<Tensor> got = RunAll(*optimized, x);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
      EXPECT_TRUE(test::TensorNear(got[i], want[i], {1e-5, 1e-5})) << "output " << i;
    }
  }
}

// ShuffleNet's channel shuffle (Reshape -> Transpose -> Reshape) between
// convolutions, with the channel Slices after it (torch's `chunk`), groups
// 2, 3 and 4, odd channel counts, batches 1 to 3, or a Split in their place:
// FuseChannelShuffles makes `_ChannelShuffle` nodes (one per Slice or Split
// output, one with every channel for the graph output) reading the Concat's
// two inputs (the Concat goes), the layout pass keeps them in the
// convolutions' layout when that is channels-last, and the values equal
// host_cpu's run of the original graph. A shuffle of the plain input runs
// the plain kernel.
TEST_F(GraphOptimizerTest, ChannelShufflesBetweenConvolutionsAndTheirSlices) {
  struct Case {
    int64_t batch, group, ca, cb, take;
  };
  int trial = 0;
  for (const Case& c : {Case{2, 2, 5, 5, 5}, Case{1, 3, 4, 5, 4}, Case{3, 4, 16, 16, 16}, Case{2, 2, 24, 24, 24},
                        Case{1, 3, 7, 8, 9}, Case{2, 2, 58, 58, 58}}) {
    const bool split = trial++ % 2 == 1;
    const int64_t ch = c.ca + c.cb, g = c.group, b = c.batch;
    auto dims = [](std::vector<int64_t> d) {
      std::string s;
      for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
      return s;
    };
    auto list = [&dims](std::vector<int64_t> d) { return "[" + absl::StrReplaceAll(dims(d), {{",", ", "}}) + "]"; };
    const std::string text =
        absl::StrCat(R"(graph main {
      x = Data() {index = 0} -> (f32[)",
                     dims({b, 6, 7, 5}), R"(])
      wa = Const() {value = tensor<f32[)",
                     dims({c.ca, 6, 3, 3}), R"(]>splat(0.0)} -> (f32[)", dims({c.ca, 6, 3, 3}), R"(])
      wb = Const() {value = tensor<f32[)",
                     dims({c.cb, 6, 1, 1}), R"(]>splat(0.0)} -> (f32[)", dims({c.cb, 6, 1, 1}), R"(])
      wc = Const() {value = tensor<f32[)",
                     dims({8, ch - c.take, 1, 1}), R"(]>splat(0.0)} -> (f32[)", dims({8, ch - c.take, 1, 1}), R"(])
      a = Conv(x, wa) {pads = [1, 1, 1, 1]} -> (f32[)",
                     dims({b, c.ca, 7, 5}), R"(])
      ra = Relu(a) -> (f32[)",
                     dims({b, c.ca, 7, 5}), R"(])
      bb = Conv(x, wb) -> (f32[)",
                     dims({b, c.cb, 7, 5}), R"(])
      cat = Concat(ra, bb) {axis = 1} -> (f32[)",
                     dims({b, ch, 7, 5}), R"(])
      keep_s1 = Const() {value = tensor<i64[5]>)",
                     list({b, g, ch / g, 7, 5}), R"(} -> (i64[5])
      keep_s2 = Const() {value = tensor<i64[4]>)",
                     list({b, ch, 7, 5}), R"(} -> (i64[4])
      r1 = Reshape(cat, keep_s1) -> (f32[)",
                     dims({b, g, ch / g, 7, 5}), R"(])
      t = Transpose(r1) {perm = [0, 2, 1, 3, 4]} -> (f32[)",
                     dims({b, ch / g, g, 7, 5}), R"(])
      r2 = Reshape(t, keep_s2) -> (f32[)",
                     dims({b, ch, 7, 5}), R"(])
      keep_zero = Const() {value = tensor<i64[1]>[0]} -> (i64[1])
      keep_take = Const() {value = tensor<i64[1]>[)",
                     c.take, R"(]} -> (i64[1])
      keep_end = Const() {value = tensor<i64[1]>[1000]} -> (i64[1])
      keep_axis = Const() {value = tensor<i64[1]>[1]} -> (i64[1])
      )",
                     split ? absl::StrCat("keep_sizes = Const() {value = tensor<i64[2]>", list({c.take, ch - c.take}),
                                          "} -> (i64[2])\n      sp = Split(r2, keep_sizes) {axis = 1} -> (f32[",
                                          dims({b, c.take, 7, 5}), "], f32[", dims({b, ch - c.take, 7, 5}),
                                          "])\n      s1 = Identity(sp:0) -> (f32[", dims({b, c.take, 7, 5}),
                                          "])\n      s2 = Identity(sp:1) -> (f32[", dims({b, ch - c.take, 7, 5}), "])")
                           : absl::StrCat("s1 = Slice(r2, keep_zero, keep_take, keep_axis) -> (f32[",
                                          dims({b, c.take, 7, 5}),
                                          "])\n      s2 = Slice(r2, keep_take, keep_end, keep_axis) -> (f32[",
                                          dims({b, ch - c.take, 7, 5}), "])"),
                     R"(
      cc = Conv(s2, wc) -> (f32[)",
                     dims({b, 8, 7, 5}), R"(])
      rc = Relu(cc) -> (f32[)",
                     dims({b, 8, 7, 5}), R"(])
      cat2 = Concat(s1, rc) {axis = 1} -> (f32[)",
                     dims({b, c.take + 8, 7, 5}), R"(])
      keep_p1 = Const() {value = tensor<i64[5]>)",
                     list({b, 3, 2, 7, 5}), R"(} -> (i64[5])
      keep_p2 = Const() {value = tensor<i64[4]>)",
                     list({b, 6, 7, 5}), R"(} -> (i64[4])
      p1 = Reshape(x, keep_p1) -> (f32[)",
                     dims({b, 3, 2, 7, 5}), R"(])
      pt = Transpose(p1) {perm = [0, 2, 1, 3, 4]} -> (f32[)",
                     dims({b, 2, 3, 7, 5}), R"(])
      p2 = Reshape(pt, keep_p2) -> (f32[)",
                     dims({b, 6, 7, 5}), R"(])
      out = NetOutput(cat2, r2, p2)
    })");
    auto original = Parse(text);
    FillWeights(*original);
    auto optimized = original->Clone();
    auto& optimizer = *PassTestEngine().graph_optimizers()[0];
    ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
    EXPECT_EQ(Count(*optimized, "Transpose"), 0) << text;
    EXPECT_EQ(Count(*optimized, "Slice") + Count(*optimized, "Split"), 0) << text;
    EXPECT_EQ(Count(*optimized, "_ChannelShuffle"), 4) << text;
    EXPECT_EQ(Count(*optimized, "Concat"), 1) << text;  // the shuffles read cat's inputs
    Place(*original, /*dense=*/false);
    Place(*optimized, /*dense=*/true);
    ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
    const ir::Node* conv = optimized->FindNode("bb");
    ASSERT_NE(conv, nullptr);
    const ir::Format conv_format = conv->op_desc().output(0).type.tensor().format;
    int channels_last = 0;
    optimized->ForEachNode([&](ir::Node* n) {
      if (n->type() != "_ChannelShuffle") return;
      channels_last += IsChannelsLast(n->op_desc().output(0).type.tensor().format) ? 1 : 0;
      EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << n->name();
      const ir::Format in = n->op_desc().input(0).type.tensor().format;
      EXPECT_EQ(n->op_desc().output(0).type.tensor().format, in) << n->name();
      if (n->num_inputs() == 2 && IsChannelsLast(conv_format)) {
        EXPECT_EQ(in, conv_format) << n->name();
        EXPECT_EQ(n->op_desc().input(1).type.tensor().format, conv_format) << n->name();
      }
    });
    // The two parts and the whole of the convolutions' shuffle (the input's
    // shuffle stays plain).
    EXPECT_EQ(channels_last, IsChannelsLast(conv_format) ? 3 : 0) << ir::FormatName(conv_format);
    const Shape shape = original->FindNode("x")->op_desc().output(0).type.shape();
    for (uint64_t seed : {11, 12}) {
      const Tensor x = test::RandomTensor(DataType::kFloat, shape, seed);
      const std::vector<Tensor> want = RunAll(*original, x);
      const std::vector<Tensor> got = RunAll(*optimized, x);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
        EXPECT_TRUE(test::TensorNear(got[i], want[i], {1e-5, 1e-5})) << "output " << i << " group " << g;
      }
    }
  }
}

// Transposes that are no channel shuffle stay: another permutation, a
// Reshape whose shape is computed, a view read by another node too, a
// reshape that does not split the channels.
TEST_F(GraphOptimizerTest, ChannelShuffleLeavesOtherTransposes) {
  const char* cases[] = {
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,6,4,5])
        s1 = Const() {value = tensor<i64[5]>[2, 2, 3, 4, 5]} -> (i64[5])
        s2 = Const() {value = tensor<i64[4]>[2, 6, 4, 5]} -> (i64[4])
        r1 = Reshape(x, s1) -> (f32[2,2,3,4,5])
        t = Transpose(r1) {perm = [0, 1, 2, 4, 3]} -> (f32[2,2,3,5,4])
        r2 = Reshape(t, s2) -> (f32[2,6,4,5])
        out = NetOutput(r2)
      })",
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,6,4,5])
        s1 = Data() {index = 1} -> (i64[5])
        s2 = Const() {value = tensor<i64[4]>[2, 6, 4, 5]} -> (i64[4])
        r1 = Reshape(x, s1) -> (f32[2,2,3,4,5])
        t = Transpose(r1) {perm = [0, 2, 1, 3, 4]} -> (f32[2,3,2,4,5])
        r2 = Reshape(t, s2) -> (f32[2,6,4,5])
        out = NetOutput(r2)
      })",
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,6,4,5])
        s1 = Const() {value = tensor<i64[5]>[2, 2, 3, 4, 5]} -> (i64[5])
        s2 = Const() {value = tensor<i64[4]>[2, 6, 4, 5]} -> (i64[4])
        r1 = Reshape(x, s1) -> (f32[2,2,3,4,5])
        t = Transpose(r1) {perm = [0, 2, 1, 3, 4]} -> (f32[2,3,2,4,5])
        r2 = Reshape(t, s2) -> (f32[2,6,4,5])
        out = NetOutput(r2, r1)
      })",
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,6,4,5])
        s1 = Const() {value = tensor<i64[5]>[2, 6, 2, 2, 5]} -> (i64[5])
        s2 = Const() {value = tensor<i64[4]>[2, 6, 4, 5]} -> (i64[4])
        r1 = Reshape(x, s1) -> (f32[2,6,2,2,5])
        t = Transpose(r1) {perm = [0, 2, 1, 3, 4]} -> (f32[2,2,6,2,5])
        r2 = Reshape(t, s2) -> (f32[2,6,4,5])
        out = NetOutput(r2)
      })",
  };
  for (const char* text : cases) {
    auto g = Parse(text);
    auto changed = FuseChannelShuffles(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
    EXPECT_EQ(Count(*g, "Transpose"), 1) << text;
  }
}

// WaveNet's gate: a convolution's channels split in two halves by Slices
// (rank 3, a dilated 1-D convolution) or three parts by a Split (rank 4, one
// part unread), tanh of one times sigmoid of another into a 1x1
// convolution. FuseChannelSlices makes one-group `_ChannelShuffle` nodes
// of them, which keep the convolution's layout (no reorder between the
// convolutions); the values equal host_cpu's run of the original graph.
// Slices of a graph input or with a step stay Slices.
TEST_F(GraphOptimizerTest, ChannelSlicesOfConvolutionsKeepTheirLayout) {
  auto dims = [](std::vector<int64_t> d) {
    std::string s;
    for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s;
  };
  struct Case {
    int64_t batch, half;
    bool split;
  };
  for (const Case& c : {Case{2, 5, false}, Case{1, 16, false}, Case{3, 24, true}, Case{2, 7, true}}) {
    const int64_t b = c.batch, h = c.half;
    // Rank 3 for the Slices, rank 4 for the Split (a spatial dim of 1 more).
    const std::vector<int64_t> sp = c.split ? std::vector<int64_t>{5, 9} : std::vector<int64_t>{33};
    auto shape = [&](int64_t ch) {
      std::vector<int64_t> d = {b, ch};
      d.insert(d.end(), sp.begin(), sp.end());
      return dims(d);
    };
    const std::string k = c.split ? "3, 3" : "3";
    const std::string wk = c.split ? "3,3" : "3";
    const std::string one = c.split ? "1,1" : "1";
    const std::string pads = c.split ? "[2, 2, 2, 2]" : "[2, 2]";
    const std::string dil = c.split ? "[2, 2]" : "[2]";
    const int64_t total = c.split ? 3 * h : 2 * h;
    std::string gates;
    if (c.split) {
      gates = absl::StrCat(R"(keep_sizes = Const() {value = tensor<i64[3]>[)", h, ", ", h, ", ", h,
                           R"(]} -> (i64[3])
      sp = Split(a, keep_sizes) {axis = 1} -> (f32[)",
                           shape(h), "], f32[", shape(h), "], f32[", shape(h), R"(])
      t = Tanh(sp:0) -> (f32[)",
                           shape(h), R"(])
      g = Sigmoid(sp:2) -> (f32[)",
                           shape(h), "])");
    } else {
      gates = absl::StrCat(R"(keep_zero = Const() {value = tensor<i64[1]>[0]} -> (i64[1])
      keep_half = Const() {value = tensor<i64[1]>[)",
                           h, R"(]} -> (i64[1])
      keep_end = Const() {value = tensor<i64[1]>[-1]} -> (i64[1])
      keep_big = Const() {value = tensor<i64[1]>[1000]} -> (i64[1])
      keep_axis = Const() {value = tensor<i64[1]>[1]} -> (i64[1])
      keep_two = Const() {value = tensor<i64[1]>[2]} -> (i64[1])
      s1 = Slice(a, keep_zero, keep_half, keep_axis) -> (f32[)",
                           shape(h), R"(])
      s2 = Slice(a, keep_half, keep_big, keep_axis) -> (f32[)",
                           shape(h), R"(])
      t = Tanh(s1) -> (f32[)",
                           shape(h), R"(])
      g = Sigmoid(s2) -> (f32[)",
                           shape(h), R"(])
      sx = Slice(x, keep_zero, keep_two, keep_axis) -> (f32[)",
                           shape(2), R"(])
      se = Slice(a, keep_zero, keep_end, keep_axis, keep_two) -> (f32[)",
                           shape((total - 1 + 1) / 2), "])");
    }
    const std::string text =
        absl::StrCat(R"(graph main {
      x = Data() {index = 0} -> (f32[)",
                     shape(6), R"(])
      wa = Const() {value = tensor<f32[)",
                     total, ",6,", wk, "]>splat(0.0)} -> (f32[", total, ",6,", wk, R"(])
      wo = Const() {value = tensor<f32[8,)",
                     h, ",", one, "]>splat(0.0)} -> (f32[8,", h, ",", one, R"(])
      a = Conv(x, wa) {dilations = )",
                     dil, ", kernel_shape = [", k, "], pads = ", pads, R"(} -> (f32[)", shape(total), R"(])
      )",
                     gates, R"(
      m = Mul(t, g) -> (f32[)",
                     shape(h), R"(])
      o = Conv(m, wo) -> (f32[)",
                     shape(8), R"(])
      out = NetOutput(o)",
                     c.split ? "" : ", sx, se", R"()
    })");
    auto original = Parse(text);
    FillWeights(*original);
    auto optimized = original->Clone();
    auto& optimizer = *PassTestEngine().graph_optimizers()[0];
    ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
    // The gates' parts become shuffles; the input's slice and the strided one stay.
    EXPECT_EQ(Count(*optimized, "_ChannelShuffle"), 2) << text;
    EXPECT_EQ(Count(*optimized, "Split"), 0) << text;
    EXPECT_EQ(Count(*optimized, "Slice"), c.split ? 0 : 2) << text;
    Place(*original, /*dense=*/false);
    Place(*optimized, /*dense=*/true);
    ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
    const ir::Node* conv = optimized->FindNode("a");
    ASSERT_NE(conv, nullptr);
    const ir::Format conv_format = conv->op_desc().output(0).type.tensor().format;
    optimized->ForEachNode([&](ir::Node* n) {
      if (n->type() != "_ChannelShuffle") return;
      EXPECT_EQ(n->op_desc().GetAttrOr<int64_t>("group", 0), 1) << n->name();
      EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << n->name();
      EXPECT_EQ(n->op_desc().input(0).type.tensor().format, conv_format) << n->name();
      if (IsChannelsLast(conv_format)) {
        EXPECT_EQ(n->op_desc().output(0).type.tensor().format, conv_format) << n->name();
      }
    });
    const Shape x_shape = original->FindNode("x")->op_desc().output(0).type.shape();
    for (uint64_t seed : {21, 22}) {
      const Tensor x = test::RandomTensor(DataType::kFloat, x_shape, seed);
      const std::vector<Tensor> want = RunAll(*original, x);
      const std::vector<Tensor> got = RunAll(*optimized, x);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
        EXPECT_TRUE(test::TensorNear(got[i], want[i], {1e-5, 1e-5})) << "output " << i << " half " << h;
      }
    }
  }
}

// A convolution's output in whatever layout oneDNN picks here (channels-last
// on AVX-512, channel blocks on AVX2) feeding Resize, a reflection Pad,
// InstanceNormalization, a channel Concat with a plain input (29 channels:
// no whole blocks) and a squeeze-excite Mul, the decoder, style-transfer and
// mobile-net patterns: the same
// values as on host_cpu (on AVX-512 the three ran their plain loops over
// NHWC data, or refused it, before they were kept from following it).
TEST_F(GraphOptimizerTest, ResizePadAndInstanceNormAfterConvolutions) {
  auto original = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,5,9,7])
    w1 = Const() {value = tensor<f32[16,5,3,3]>splat(0.0)} -> (f32[16,5,3,3])
    w2 = Const() {value = tensor<f32[8,16,3,3]>splat(0.0)} -> (f32[8,16,3,3])
    ws = Const() {value = tensor<f32[16]>splat(0.0)} -> (f32[16])
    wb = Const() {value = tensor<f32[16]>splat(0.0)} -> (f32[16])
    keep_s = Const() {value = tensor<f32[4]>[1.0, 1.0, 2.0, 2.0]} -> (f32[4])
    keep_pads = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
    c1 = Conv(x, w1) {pads = [1, 1, 1, 1]} -> (f32[2,16,9,7])
    r1 = Relu(c1) -> (f32[2,16,9,7])
    up = Resize(r1, _, keep_s) {mode = "linear"} -> (f32[2,16,18,14])
    keep_sizes = Const() {value = tensor<i64[4]>[2, 16, 5, 13]} -> (i64[4])
    near = Resize(r1, _, _, keep_sizes) {mode = "nearest", coordinate_transformation_mode = "asymmetric"} -> (f32[2,16,5,13])
    w5 = Const() {value = tensor<f32[3,16,1,1]>splat(0.0)} -> (f32[3,16,1,1])
    c5 = Conv(near, w5) -> (f32[2,3,5,13])
    padded = Pad(r1, keep_pads) {mode = "reflect"} -> (f32[2,16,11,9])
    c2 = Conv(padded, w2) -> (f32[2,8,9,7])
    norm = InstanceNormalization(r1, ws, wb) -> (f32[2,16,9,7])
    r2 = Relu(norm) -> (f32[2,16,9,7])
    w3 = Const() {value = tensor<f32[8,5,1,1]>splat(0.0)} -> (f32[8,5,1,1])
    w4 = Const() {value = tensor<f32[4,29,3,3]>splat(0.0)} -> (f32[4,29,3,3])
    c3 = Conv(x, w3) -> (f32[2,8,9,7])
    cat = Concat(r1, c3, x) {axis = 1} -> (f32[2,29,9,7])
    c4 = Conv(cat, w4) {pads = [1, 1, 1, 1]} -> (f32[2,4,9,7])
    gap = GlobalAveragePool(r1) -> (f32[2,16,1,1])
    w6 = Const() {value = tensor<f32[16,16,1,1]>splat(0.0)} -> (f32[16,16,1,1])
    fc = Conv(gap, w6) -> (f32[2,16,1,1])
    gate = Sigmoid(fc) -> (f32[2,16,1,1])
    excited = Mul(r1, gate) -> (f32[2,16,9,7])
    w7 = Const() {value = tensor<f32[8,16,1,1]>splat(0.0)} -> (f32[8,16,1,1])
    c7 = Conv(excited, w7) -> (f32[2,8,9,7])
    out = NetOutput(up, c2, r2, c4, c5, c7)
  })");
  FillWeights(*original);
  auto optimized = original->Clone();
  auto& optimizer = *PassTestEngine().graph_optimizers()[0];
  ASSERT_TRUE(optimizer.OptimizeOriginalGraph(*optimized).ok());
  Place(*original, /*dense=*/false);
  Place(*optimized, /*dense=*/true);
  ASSERT_TRUE(optimizer.OptimizeFusedGraph(*optimized).ok());
  for (const char* name : {"up", "near", "padded", "norm"}) {
    const ir::Node* n = optimized->FindNode(name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(n->op_desc().GetAttrOr<std::string>(ir::kAttrEngineName, ""), "cpu_dense") << name;
  }
  for (uint64_t seed : {7, 8}) {
    const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 5, 9, 7}, seed);
    const std::vector<Tensor> want = RunAll(*original, x);
    const std::vector<Tensor> got = RunAll(*optimized, x);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(test::TensorNear(got[i], want[i], {1e-5, 1e-4})) << "output " << i;
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
