// BlockedLayoutPass: which edges keep the convolution's layout, where
// TransData nodes go, and that running it twice changes nothing. The
// layout is whatever oneDNN prefers on this CPU (asked, not assumed).
#include "runtime/engines/cpu_dense/layout_pass.h"

#include "absl/strings/str_replace.h"
#include "runtime/engines/cpu_dense/dense_ops.h"
#include "runtime/engines/cpu_dense/narrow_conv.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

bool OnDense(const ir::Node& n) { return n.op_desc().GetAttrOr<std::string>("_engine_name", "") == "cpu_dense"; }

// The layout oneDNN picks for a 16-channel f32 convolution here.
std::string Preferred() {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[1,16,8,8])
    w = Const() {value = tensor<f32[16,16,3,3]>splat(0.5)} -> (f32[16,16,3,3])
    c = Conv(x, w) {pads = [1, 1, 1, 1]} -> (f32[1,16,8,8])
    out = NetOutput(c)
  })");
  auto f = ConvPreferredFormat(g->FindNode("c")->op_desc(), PassTestEngine().context());
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? std::string(ir::FormatName(*f)) : "ND";
}

constexpr char kBlock[] = R"(graph main {
  x = Data() {index = 0} -> (f32[1,16,8,8])
  w = Const() {value = tensor<f32[16,16,3,3]>splat(0.5)} -> (f32[16,16,3,3])
  c1 = Conv(x, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[1,16,8,8])
  r1 = Relu(c1) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8])
  c2 = Conv(r1, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[1,16,8,8])
  add = Add(c2, r1) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8])
  pool = MaxPool(add) {_engine_name = "cpu_dense", kernel_shape = [2, 2], strides = [2, 2]} -> (f32[1,16,4,4])
  gap = GlobalAveragePool(pool) {_engine_name = "cpu_dense"} -> (f32[1,16,1,1])
  other = Sigmoid(pool) {_engine_name = "host_cpu"} -> (f32[1,16,4,4])
  out = NetOutput(gap, other, add)
})";

TEST(LayoutPassTest, KeepsTheConvolutionLayoutBetweenDenseNodes) {
  const std::string f = Preferred();
  if (f == "ND") GTEST_SKIP() << "oneDNN prefers plain layouts on this CPU";
  auto g = Parse(kBlock);
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const std::string expected = absl::StrReplaceAll(R"(graph main {
    x = Data() {index = 0} -> (f32[1,16,8,8])
    w = Const() {value = tensor<f32[16,16,3,3]>splat(0.5)} -> (f32[16,16,3,3])
    c1 = Conv(x, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[1,16,8,8]@F)
    r1 = Relu(c1) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8]@F)
    c2 = Conv(r1, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[1,16,8,8]@F)
    add = Add(c2, r1) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8]@F)
    pool = MaxPool(add) {_engine_name = "cpu_dense", kernel_shape = [2, 2], strides = [2, 2]} -> (f32[1,16,4,4]@F)
    gap = GlobalAveragePool(pool) {_engine_name = "cpu_dense"} -> (f32[1,16,1,1])
    other = Sigmoid(pool_to_plain) {_engine_name = "host_cpu"} -> (f32[1,16,4,4])
    out = NetOutput(gap, other, add_to_plain)
    add_to_plain = TransData(add) {_engine_name = "cpu_dense", dst_format = "ND", src_format = "F"} -> (f32[1,16,8,8])
    pool_to_plain = TransData(pool) {_engine_name = "cpu_dense", dst_format = "ND", src_format = "F"} -> (f32[1,16,4,4])
  })",
                                                   {{"@F", "@" + f}, {"\"F\"", "\"" + f + "\""}});
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(expected));
  // Idempotent: the partitioner may run the optimizer on its own output.
  auto again = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(expected));
}

TEST(LayoutPassTest, ConvertsThePlainOperandOfABinaryOp) {
  const std::string f = Preferred();
  if (f == "ND") GTEST_SKIP() << "oneDNN prefers plain layouts on this CPU";
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[1,16,8,8])
    y = Data() {index = 1} -> (f32[1,16,8,8])
    w = Const() {value = tensor<f32[16,16,1,1]>splat(0.5)} -> (f32[16,16,1,1])
    c = Conv(x, w) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8])
    add = Add(y, c) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8])
    out = NetOutput(add)
  })");
  ASSERT_TRUE(AssignBlockedLayouts(*g, OnDense, PassTestEngine().context()).ok());
  const ir::Node* add = g->FindNode("add");
  EXPECT_EQ(add->input(0).node->type(), "TransData");
  EXPECT_EQ(add->op_desc().input(0).type.tensor().format, add->op_desc().output(0).type.tensor().format);
  EXPECT_EQ(ir::FormatName(add->op_desc().output(0).type.tensor().format), f);
  EXPECT_EQ(g->OutputNode()->input(0).node->type(), "TransData");
}

// A one-element operand (EfficientDet's fusion weights, a residual scale)
// beside a convolution's laid-out output: the product keeps the layout and
// reads the scalar where it is, so no TransData goes either way.
TEST(LayoutPassTest, OneElementOperandsStayPlainBesideALaidOutOne) {
  const std::string f = Preferred();
  if (f == "ND") GTEST_SKIP() << "oneDNN prefers plain layouts on this CPU";
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,8,8])
    w = Const() {value = tensor<f32[16,16,1,1]>splat(0.5)} -> (f32[16,16,1,1])
    s = Const() {value = tensor<f32[]>[0.5]} -> (f32[])
    s4 = Const() {value = tensor<f32[1,1,1,1]>[2.0]} -> (f32[1,1,1,1])
    c = Conv(x, w) {_engine_name = "cpu_dense"} -> (f32[-1,16,8,8])
    m = Mul(s, c) {_engine_name = "cpu_dense"} -> (f32[-1,16,8,8])
    d = Div(m, s4) {_engine_name = "cpu_dense"} -> (f32[-1,16,8,8])
    c2 = Conv(d, w) {_engine_name = "cpu_dense"} -> (f32[-1,16,8,8])
    out = NetOutput(c2)
  })");
  ASSERT_TRUE(AssignBlockedLayouts(*g, OnDense, PassTestEngine().context()).ok());
  for (const char* name : {"m", "d"}) {
    EXPECT_EQ(ir::FormatName(g->FindNode(name)->op_desc().output(0).type.tensor().format), f) << name;
  }
  EXPECT_EQ(g->FindNode("m")->input(0).node->name(), "s");
  EXPECT_EQ(g->FindNode("m")->input(1).node->name(), "c");
  EXPECT_EQ(g->FindNode("d")->input(1).node->name(), "s4");
  EXPECT_EQ(g->FindNode("c2")->input(0).node->name(), "d");
}

TEST(LayoutPassTest, LeavesShapesThatDoNotFillBlocks) {
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (f32[1,3,8,8])
    w = Const() {value = tensor<f32[5,3,3,3]>splat(0.5)} -> (f32[5,3,3,3])
    c = Conv(x, w) {_engine_name = "cpu_dense"} -> (f32[1,5,6,6])
    r = Relu(c) {_engine_name = "cpu_dense"} -> (f32[1,5,6,6])
    out = NetOutput(r)
  })";
  auto g = Parse(text);
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok());
  if (Preferred() != "NHWC") {  // channels-last fits any channel count
    EXPECT_FALSE(*changed);
    EXPECT_EQ(ir::PrintGraph(*g), Canonical(text));
  }
}

// A quantized residual block: int8 activations stay channels-last from the
// first QLinearConv through MaxPool, the second QLinearConv, `_QLinearAdd`
// and a DequantizeLinear; the only conversion is the one to the graph's
// (plain) output.
TEST(LayoutPassTest, KeepsInt8ActivationsChannelsLast) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (u8[1,16,8,8])
    s = Const() {value = tensor<f32[]>[0.1]} -> (f32[])
    z = Const() {value = tensor<u8[]>[0]} -> (u8[])
    w = Const() {value = tensor<i8[16,16,3,3]>splat(1)} -> (i8[16,16,3,3])
    sw = Const() {value = tensor<f32[]>[0.01]} -> (f32[])
    zw = Const() {value = tensor<i8[]>[0]} -> (i8[])
    c1 = QLinearConv(x, s, z, w, sw, zw, s, z) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (u8[1,16,8,8])
    pool = MaxPool(c1) {_engine_name = "cpu_dense", kernel_shape = [3, 3], pads = [1, 1, 1, 1]} -> (u8[1,16,8,8])
    c2 = QLinearConv(pool, s, z, w, sw, zw, s, z) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (u8[1,16,8,8])
    add = _QLinearAdd(c2, s, z, pool, s, z, s, z) {_engine_name = "cpu_dense"} -> (u8[1,16,8,8])
    dq = DequantizeLinear(add, s, z) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8])
    out = NetOutput(dq)
  })");
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  for (const char* name : {"c1", "pool", "c2", "add", "dq"}) {
    const ir::Node* n = g->FindNode(name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(n->op_desc().output(0).type.tensor().format, ir::Format::kNHWC) << name;
  }
  // The data inputs read NHWC; the graph input (plain) stays plain.
  EXPECT_EQ(g->FindNode("c1")->op_desc().input(0).type.tensor().format, ir::Format::kND);
  EXPECT_EQ(g->FindNode("c2")->op_desc().input(0).type.tensor().format, ir::Format::kNHWC);
  EXPECT_EQ(g->FindNode("add")->op_desc().input(3).type.tensor().format, ir::Format::kNHWC);
  int trans = 0;
  g->ForEachNode([&](const ir::Node* n) { trans += n->type() == "TransData" ? 1 : 0; });
  EXPECT_EQ(trans, 1);
  EXPECT_EQ(g->OutputNode()->input(0).node->type(), "TransData");
}

// `_QLinearAdd` with a one-element B (a requantization, hard-swish's + 3)
// keeps its channels-last A's layout and reads B as it is.
TEST(LayoutPassTest, Int8AddOfOneElementKeepsChannelsLast) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (u8[1,16,8,8])
    s = Const() {value = tensor<f32[]>[0.1]} -> (f32[])
    z = Const() {value = tensor<u8[]>[0]} -> (u8[])
    one = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
    w = Const() {value = tensor<i8[16,16,3,3]>splat(1)} -> (i8[16,16,3,3])
    sw = Const() {value = tensor<f32[]>[0.01]} -> (f32[])
    zw = Const() {value = tensor<i8[]>[0]} -> (i8[])
    c1 = QLinearConv(x, s, z, w, sw, zw, s, z) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (u8[1,16,8,8])
    rq = _QLinearAdd(c1, s, z, z, one, z, s, z) {_engine_name = "cpu_dense"} -> (u8[1,16,8,8])
    pool = MaxPool(rq) {_engine_name = "cpu_dense", kernel_shape = [2, 2]} -> (u8[1,16,7,7])
    dq = DequantizeLinear(pool, s, z) {_engine_name = "cpu_dense"} -> (f32[1,16,7,7])
    out = NetOutput(dq)
  })");
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  for (const char* name : {"c1", "rq", "pool"}) {
    EXPECT_EQ(g->FindNode(name)->op_desc().output(0).type.tensor().format, ir::Format::kNHWC) << name;
  }
  EXPECT_EQ(g->FindNode("rq")->op_desc().input(0).type.tensor().format, ir::Format::kNHWC);
  EXPECT_EQ(g->FindNode("rq")->input(3).node->type(), "Const") << "B is read as it is";
}

// An int8 MaxPool reached in plain layout (a quantized graph input) takes
// channels-last behind a TransData: oneDNN pools plain int8 with its
// reference kernel only.
TEST(LayoutPassTest, Int8PoolOfAPlainInputGoesChannelsLast) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (u8[1,16,8,8])
    s = Const() {value = tensor<f32[]>[0.1]} -> (f32[])
    z = Const() {value = tensor<u8[]>[0]} -> (u8[])
    pool = MaxPool(x) {_engine_name = "cpu_dense", kernel_shape = [2, 2]} -> (u8[1,16,7,7])
    dq = DequantizeLinear(pool, s, z) {_engine_name = "cpu_dense"} -> (f32[1,16,7,7])
    out = NetOutput(dq)
  })");
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const ir::Node* pool = g->FindNode("pool");
  EXPECT_EQ(pool->op_desc().output(0).type.tensor().format, ir::Format::kNHWC);
  EXPECT_EQ(pool->op_desc().input(0).type.tensor().format, ir::Format::kNHWC);
  EXPECT_EQ(pool->input(0).node->type(), "TransData");
}

// A channels-last f32 tensor (here the DequantizeLinear of a QLinearConv's
// NHWC output; on AVX-512 oneDNN also runs some f32 convolutions
// channels-last): a product with a per-channel operand, a spatial Resize
// and Pad keep it (their kernels read it),
// InstanceNormalization, whose kernel reads plain and channel-blocked
// tensors only, gets a plain copy.
TEST(LayoutPassTest, ChannelsLastReachesOnlyFollowersThatReadIt) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (u8[1,16,8,8])
    s = Const() {value = tensor<f32[]>[0.1]} -> (f32[])
    z = Const() {value = tensor<u8[]>[0]} -> (u8[])
    w = Const() {value = tensor<i8[16,16,3,3]>splat(1)} -> (i8[16,16,3,3])
    sw = Const() {value = tensor<f32[]>[0.01]} -> (f32[])
    zw = Const() {value = tensor<i8[]>[0]} -> (i8[])
    sc = Const() {value = tensor<f32[4]>[1.0, 1.0, 2.0, 2.0]} -> (f32[4])
    pads = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
    g1 = Const() {value = tensor<f32[16]>splat(1.0)} -> (f32[16])
    b1 = Const() {value = tensor<f32[16]>splat(0.0)} -> (f32[16])
    c1 = QLinearConv(x, s, z, w, sw, zw, s, z) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (u8[1,16,8,8])
    dq = DequantizeLinear(c1, s, z) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8])
    se = Const() {value = tensor<f32[1,16,1,1]>splat(0.5)} -> (f32[1,16,1,1])
    scaled = Mul(dq, se) {_engine_name = "cpu_dense"} -> (f32[1,16,8,8])
    up = Resize(scaled, _, sc) {_engine_name = "cpu_dense", mode = "linear"} -> (f32[1,16,16,16])
    pad = Pad(up, pads) {_engine_name = "cpu_dense", mode = "reflect"} -> (f32[1,16,18,18])
    norm = InstanceNormalization(pad, g1, b1) {_engine_name = "cpu_dense"} -> (f32[1,16,18,18])
    out = NetOutput(norm)
  })");
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  for (const char* name : {"dq", "scaled", "up", "pad"}) {
    EXPECT_EQ(g->FindNode(name)->op_desc().output(0).type.tensor().format, ir::Format::kNHWC) << name;
  }
  EXPECT_EQ(g->FindNode("scaled")->input(1).node->name(), "se");  // a per-channel operand, read in place
  const ir::Node* norm = g->FindNode("norm");
  EXPECT_EQ(norm->op_desc().output(0).type.tensor().format, ir::Format::kND);
  ASSERT_EQ(norm->input(0).node->type(), "TransData");
  EXPECT_EQ(norm->input(0).node->input(0).node->name(), "pad");
}

// int8 tensors take channels-last only: a blocked layout would change
// their byte size rules on other ISAs, so a u8 operand of an f32 layout
// chain is never given one.
TEST(LayoutPassTest, GivesInt8TensorsNoBlockedLayout) {
  const ir::ValueType u8 = ir::ValueType::Tensor(DataType::kUint8, Shape{1, 16, 8, 8});
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[1,16,8,8])
    w = Const() {value = tensor<f32[16,16,3,3]>splat(0.5)} -> (f32[16,16,3,3])
    s = Const() {value = tensor<f32[]>[0.1]} -> (f32[])
    z = Const() {value = tensor<u8[]>[0]} -> (u8[])
    c = Conv(x, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[1,16,8,8])
    q = QuantizeLinear(c, s, z) {_engine_name = "cpu_dense"} -> (u8[1,16,8,8])
    out = NetOutput(q)
  })");
  ASSERT_TRUE(AssignBlockedLayouts(*g, OnDense, PassTestEngine().context()).ok());
  const ir::Format f = g->FindNode("q")->op_desc().output(0).type.tensor().format;
  EXPECT_TRUE(f == ir::Format::kND || f == ir::Format::kNHWC) << ir::FormatName(f);
  EXPECT_EQ(g->FindNode("q")->op_desc().output(0).type.dtype(), u8.dtype());
}

// A dynamic batch: the layout is decided all the same (every other dim is
// known), a channel Concat of blocked inputs keeps it, and a squeeze-excite
// scale [N, C, 1, 1] multiplies in place, without a TransData.
TEST(LayoutPassTest, DynamicBatchConcatAndPerChannelOperands) {
  const std::string f = Preferred();
  if (f == "ND" || f == "NHWC") GTEST_SKIP() << "oneDNN prefers no channel-blocked layout on this CPU";
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,8,8])
    w = Const() {value = tensor<f32[16,16,3,3]>splat(0.5)} -> (f32[16,16,3,3])
    c1 = Conv(x, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[-1,16,8,8])
    c2 = Conv(x, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[-1,16,8,8])
    cat = Concat(c1, c2) {_engine_name = "cpu_dense", axis = 1} -> (f32[-1,32,8,8])
    gap = GlobalAveragePool(cat) {_engine_name = "cpu_dense"} -> (f32[-1,32,1,1])
    s = Sigmoid(gap) {_engine_name = "host_cpu"} -> (f32[-1,32,1,1])
    scaled = Mul(cat, s) {_engine_name = "cpu_dense"} -> (f32[-1,32,8,8])
    out = NetOutput(scaled)
  })");
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  for (const char* name : {"c1", "c2", "cat", "scaled"}) {
    EXPECT_EQ(ir::FormatName(g->FindNode(name)->op_desc().output(0).type.tensor().format), f) << name;
  }
  const ir::Node* scaled = g->FindNode("scaled");
  EXPECT_EQ(scaled->input(1).node->name(), "s");  // read in place
  EXPECT_EQ(scaled->op_desc().input(1).type.tensor().format, ir::Format::kND);
  int trans = 0;
  g->ForEachNode([&](const ir::Node* n) { trans += n->type() == "TransData" ? 1 : 0; });
  EXPECT_EQ(trans, 1);  // to the plain graph output only
  EXPECT_EQ(g->OutputNode()->input(0).node->type(), "TransData");
}

// Unknown dims besides the batch leave everything plain.
TEST(LayoutPassTest, LeavesUnknownSpatialDimsPlain) {
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,-1,8])
    w = Const() {value = tensor<f32[16,16,3,3]>splat(0.5)} -> (f32[16,16,3,3])
    c = Conv(x, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[-1,16,-1,8])
    r = Relu(c) {_engine_name = "cpu_dense"} -> (f32[-1,16,-1,8])
    out = NetOutput(r)
  })";
  auto g = Parse(text);
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(text));
}

// A UNet's decoder with a dynamic batch: the ConvTranspose writes the layout
// oneDNN's deconvolution prefers, the Concat and the spatial Resize keep the
// blocked layout, so no TransData stands between the convolutions; a
// Resize that scales the channels stays plain.
TEST(LayoutPassTest, ConvTransposeAndSpatialResizeKeepBlockedLayouts) {
  const std::string f = Preferred();
  if (f == "ND") GTEST_SKIP() << "oneDNN prefers plain layouts on this CPU";
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,16,8,8])
    skip = Data() {index = 1} -> (f32[-1,16,16,16])
    w = Const() {value = tensor<f32[16,16,3,3]>splat(0.5)} -> (f32[16,16,3,3])
    wt = Const() {value = tensor<f32[16,16,2,2]>splat(0.5)} -> (f32[16,16,2,2])
    w2 = Const() {value = tensor<f32[16,32,3,3]>splat(0.5)} -> (f32[16,32,3,3])
    s = Const() {value = tensor<f32[4]>[1.0, 1.0, 2.0, 2.0]} -> (f32[4])
    sc = Const() {value = tensor<f32[4]>[1.0, 2.0, 1.0, 1.0]} -> (f32[4])
    c = Conv(x, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[-1,16,8,8])
    up = ConvTranspose(c, wt) {_engine_name = "cpu_dense", kernel_shape = [2, 2], strides = [2, 2]} -> (f32[-1,16,16,16])
    sk = Conv(skip, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[-1,16,16,16])
    cat = Concat(up, sk) {_engine_name = "cpu_dense", axis = 1} -> (f32[-1,32,16,16])
    c2 = Conv(cat, w2) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[-1,16,16,16])
    big = Resize(c2, _, s) {_engine_name = "cpu_dense", mode = "linear"} -> (f32[-1,16,32,32])
    c3 = Conv(big, w) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[-1,16,32,32])
    wide = Resize(c2, _, sc) {_engine_name = "cpu_dense"} -> (f32[-1,32,16,16])
    out = NetOutput(c3, wide)
  })");
  const ir::OpDesc up = g->FindNode("up")->op_desc();
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  // Asked with the layout its input arrives in (c's): on AVX-512 oneDNN
  // prefers channel blocks for it alone, channels-last after a channels-last
  // convolution.
  const ir::Format arriving = g->FindNode("c")->op_desc().output(0).type.tensor().format;
  auto deconv = DeconvPreferredFormat(up, PassTestEngine().context(), arriving);
  ASSERT_TRUE(deconv.ok()) << deconv.status();
  EXPECT_EQ(g->FindNode("up")->op_desc().output(0).type.tensor().format, *deconv);
  if (arriving == ir::Format::kNHWC) {
    auto alone = DeconvPreferredFormat(up, PassTestEngine().context());
    ASSERT_TRUE(alone.ok());
    EXPECT_TRUE(*deconv == ir::Format::kNHWC || *deconv == *alone) << ir::FormatName(*deconv);
  }
  if (ir::FormatName(*deconv) == f) {
    for (const char* name : {"up", "cat", "c2", "big"}) {
      EXPECT_EQ(ir::FormatName(g->FindNode(name)->op_desc().output(0).type.tensor().format), f) << name;
    }
    EXPECT_EQ(g->FindNode("c3")->input(0).node->name(), "big");  // no TransData between
    EXPECT_EQ(g->FindNode("cat")->input(0).node->name(), "up");
  }
  EXPECT_EQ(g->FindNode("wide")->op_desc().output(0).type.tensor().format, ir::Format::kND);
  EXPECT_EQ(g->FindNode("wide")->input(0).node->type(), "TransData");
}

// A grouped 3x3 convolution between 1x1 ones (RegNet's, ResNeXt's block):
// on AVX-512 oneDNN, asked with `any`, runs it on channel blocks while the
// 1x1 ones run channels-last. With a channels-last input it takes
// channels-last whenever oneDNN has a JIT kernel for that (so no TransData
// on either side); with any other input its answer is oneDNN's.
TEST(LayoutPassTest, GroupedConvolutionTakesItsChannelsLastNeighboursLayout) {
  const std::string f = Preferred();
  if (f == "ND") GTEST_SKIP() << "oneDNN prefers plain layouts on this CPU";
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[1,32,28,28])
    w1 = Const() {value = tensor<f32[64,32,1,1]>splat(0.5)} -> (f32[64,32,1,1])
    wg = Const() {value = tensor<f32[64,16,3,3]>splat(0.5)} -> (f32[64,16,3,3])
    w3 = Const() {value = tensor<f32[64,64,1,1]>splat(0.5)} -> (f32[64,64,1,1])
    c1 = Conv(x, w1) {_engine_name = "cpu_dense"} -> (f32[1,64,28,28])
    gc = Conv(c1, wg) {_engine_name = "cpu_dense", group = 4, pads = [1, 1, 1, 1]} -> (f32[1,64,28,28])
    c3 = Conv(gc, w3) {_engine_name = "cpu_dense"} -> (f32[1,64,28,28])
    out = NetOutput(c3)
  })");
  const ir::OpDesc grouped = g->FindNode("gc")->op_desc();
  auto any = ConvPreferredFormat(grouped, PassTestEngine().context());
  auto after_nhwc = ConvPreferredFormat(grouped, PassTestEngine().context(), ir::Format::kNHWC);
  auto after_blocked = ConvPreferredFormat(grouped, PassTestEngine().context(), ir::Format::kNChw8c);
  ASSERT_TRUE(any.ok() && after_nhwc.ok() && after_blocked.ok());
  EXPECT_EQ(*after_blocked, *any);
  EXPECT_TRUE(*after_nhwc == ir::Format::kNHWC || *after_nhwc == *any) << ir::FormatName(*after_nhwc);
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  const ir::Format c1 = g->FindNode("c1")->op_desc().output(0).type.tensor().format;
  if (c1 == ir::Format::kNHWC && *after_nhwc == ir::Format::kNHWC) {
    EXPECT_EQ(g->FindNode("gc")->op_desc().output(0).type.tensor().format, ir::Format::kNHWC);
    EXPECT_EQ(g->FindNode("gc")->input(0).node->name(), "c1");  // no TransData between
    EXPECT_EQ(g->FindNode("c3")->input(0).node->name(), "gc");
  } else {
    EXPECT_EQ(g->FindNode("gc")->op_desc().output(0).type.tensor().format,
              c1 == ir::Format::kNHWC ? *after_nhwc : *any);
  }
}

// An image head (few output channels at high resolution, narrow_conv.h)
// after a convolution: its destination is plain and its source stays in
// the layout the convolution before wrote (channels-last on AVX-512,
// channel blocks on AVX2), read in place with no TransData between; a head
// of 16 output channels is oneDNN's and keeps oneDNN's answer.
TEST(LayoutPassTest, AnImageHeadWritesPlainAndReadsItsSourceInPlace) {
  const std::string f = Preferred();
  if (f == "ND") GTEST_SKIP() << "oneDNN prefers plain layouts on this CPU";
  const bool saved = NarrowConvEnabled();
  SetNarrowConvEnabled(true);
  if (!NarrowConvEnabled()) GTEST_SKIP() << "no AVX2: the few-output-channel convolution is off";
  for (int64_t oc : {1, 3, 16}) {
    SCOPED_TRACE(oc);
    const std::string text = absl::StrReplaceAll(R"(graph main {
      x = Data() {index = 0} -> (f32[1,3,40,40])
      w1 = Const() {value = tensor<f32[32,3,3,3]>splat(0.5)} -> (f32[32,3,3,3])
      w2 = Const() {value = tensor<f32[32,32,1,1]>splat(0.5)} -> (f32[32,32,1,1])
      wh = Const() {value = tensor<f32[OC,32,5,5]>splat(0.5)} -> (f32[OC,32,5,5])
      c1 = Conv(x, w1) {_engine_name = "cpu_dense", pads = [1, 1, 1, 1]} -> (f32[1,32,40,40])
      c2 = Conv(c1, w2) {_engine_name = "cpu_dense"} -> (f32[1,32,40,40])
      head = Conv(c2, wh) {_engine_name = "cpu_dense", pads = [2, 2, 2, 2]} -> (f32[1,OC,40,40])
      out = NetOutput(head)
    })",
                                                 {{"OC", std::to_string(oc)}});
    auto g = Parse(text);
    const ir::OpDesc head = g->FindNode("head")->op_desc();
    for (ir::Format arriving : {ir::Format::kND, ir::Format::kNHWC, ir::Format::kNChw8c}) {
      auto preferred = ConvPreferredFormat(head, PassTestEngine().context(), arriving);
      ASSERT_TRUE(preferred.ok()) << preferred.status();
      if (oc < 8) {
        EXPECT_EQ(*preferred, ir::Format::kND) << ir::FormatName(arriving);
      }
    }
    auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
    ASSERT_TRUE(changed.ok()) << changed.status();
    const ir::Format c2 = g->FindNode("c2")->op_desc().output(0).type.tensor().format;
    if (oc < 8) {
      EXPECT_EQ(g->FindNode("head")->op_desc().output(0).type.tensor().format, ir::Format::kND);
      if (c2 == ir::Format::kNHWC || c2 == ir::Format::kNChw8c) {
        EXPECT_EQ(g->FindNode("head")->input(0).node->name(), "c2");  // no TransData between
        EXPECT_EQ(g->FindNode("head")->op_desc().input(0).type.tensor().format, c2);
      }
    }
  }
  SetNarrowConvEnabled(saved);
}

// Resize, Pad and InstanceNormalization follow a channel-blocked input;
// of a channels-last one (oneDNN's choice for AVX-512 convolutions) Resize
// and Pad do: InstanceNormalization's kernel reads plain and blocked tensors
// only, so an NHWC input reaches it through a TransData to plain.
TEST(LayoutPassTest, ResizeAndPadFollowEveryLayoutInstanceNormChannelBlocksOnly) {
  for (const char* layout : {"NHWC", "NChw8c", "NChw16c"}) {
    SCOPED_TRACE(layout);
    auto g = Parse(absl::StrReplaceAll(R"(graph main {
      x = Data() {index = 0} -> (f32[2,16,8,8])
      s = Const() {value = tensor<f32[4]>[1.0, 1.0, 2.0, 2.0]} -> (f32[4])
      pads = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
      scale = Const() {value = tensor<f32[16]>splat(1.0)} -> (f32[16])
      bias = Const() {value = tensor<f32[16]>splat(0.0)} -> (f32[16])
      t = TransData(x) {_engine_name = "cpu_dense", dst_format = "LAYOUT", src_format = "ND"} -> (f32[2,16,8,8]@LAYOUT)
      r = Resize(t, _, s) {_engine_name = "cpu_dense", mode = "linear"} -> (f32[2,16,16,16])
      p = Pad(t, pads) {_engine_name = "cpu_dense", mode = "reflect"} -> (f32[2,16,10,10])
      n = InstanceNormalization(t, scale, bias) {_engine_name = "cpu_dense"} -> (f32[2,16,8,8])
      out = NetOutput(r, p, n)
    })",
                                       {{"LAYOUT", layout}}));
    auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
    ASSERT_TRUE(changed.ok()) << changed.status();
    for (const char* name : {"r", "p", "n"}) {
      const bool blocked = std::string(layout) != "NHWC" || std::string(name) != "n";
      const ir::Node* node = g->FindNode(name);
      EXPECT_EQ(ir::FormatName(node->op_desc().output(0).type.tensor().format), blocked ? layout : "ND") << name;
      EXPECT_EQ(node->input(0).node->name() == "t", blocked) << name;
    }
  }
}

// A channel Concat of channels-last inputs (AVX-512 convolutions' layout)
// stays channels-last, whatever the channel counts; a plain input is
// converted for it.
TEST(LayoutPassTest, ChannelsLastConcatKeepsItsLayout) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,16,8,8])
    y = Data() {index = 1} -> (f32[2,3,8,8])
    t = TransData(x) {_engine_name = "cpu_dense", dst_format = "NHWC", src_format = "ND"} -> (f32[2,16,8,8]@NHWC)
    u = TransData(y) {_engine_name = "cpu_dense", dst_format = "NHWC", src_format = "ND"} -> (f32[2,3,8,8]@NHWC)
    cat = Concat(t, u, y) {_engine_name = "cpu_dense", axis = 1} -> (f32[2,22,8,8])
    out = NetOutput(cat)
  })");
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  const ir::Node* cat = g->FindNode("cat");
  EXPECT_EQ(cat->op_desc().output(0).type.tensor().format, ir::Format::kNHWC);
  EXPECT_EQ(cat->input(0).node->name(), "t");
  EXPECT_EQ(cat->input(1).node->name(), "u");
  EXPECT_EQ(cat->input(2).node->type(), "TransData");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(cat->op_desc().input(i).type.tensor().format, ir::Format::kNHWC) << i;
}

// Squeeze-excite on channels-last activations (AVX-512): the Mul by a plain
// per-channel scale keeps NHWC and reads the scale in place; so does one
// whose scale arrives channels-last.
TEST(LayoutPassTest, ChannelsLastSqueezeExciteMulKeepsItsLayout) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,24,8,8])
    s = Data() {index = 1} -> (f32[2,24,1,1])
    t = TransData(x) {_engine_name = "cpu_dense", dst_format = "NHWC", src_format = "ND"} -> (f32[2,24,8,8]@NHWC)
    u = TransData(s) {_engine_name = "cpu_dense", dst_format = "NHWC", src_format = "ND"} -> (f32[2,24,1,1]@NHWC)
    m = Mul(t, s) {_engine_name = "cpu_dense"} -> (f32[2,24,8,8])
    m2 = Mul(u, m) {_engine_name = "cpu_dense"} -> (f32[2,24,8,8])
    out = NetOutput(m2)
  })");
  auto changed = AssignBlockedLayouts(*g, OnDense, PassTestEngine().context());
  ASSERT_TRUE(changed.ok()) << changed.status();
  for (const char* name : {"m", "m2"}) {
    EXPECT_EQ(g->FindNode(name)->op_desc().output(0).type.tensor().format, ir::Format::kNHWC) << name;
  }
  EXPECT_EQ(g->FindNode("m")->input(1).node->name(), "s");  // read in place
  EXPECT_EQ(g->FindNode("m2")->input(0).node->name(), "u");
  EXPECT_EQ(g->FindNode("m2")->input(1).node->name(), "m");
}

}  // namespace
}  // namespace ge::engine::cpu_dense
