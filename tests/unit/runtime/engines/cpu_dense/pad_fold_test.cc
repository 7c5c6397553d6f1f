// PadFold: text in, text out, and a Conv or AveragePool that took a Pad's
// pads computes what Pad + Conv / AveragePool computed.
#include "runtime/engines/cpu_dense/pad_fold.h"

#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

TEST(PadFoldTest, ZeroPadsAreBypassed) {
  // DenseNet's transition: Pad(pads = 0) then AveragePool.
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8,4,4])
    p = Const() {value = tensor<i64[8]>[0, 0, 0, 0, 0, 0, 0, 0]} -> (i64[8])
    pad = Pad(x, p) {mode = "constant"} -> (f32[-1,8,4,4])
    pool = AveragePool(pad) {kernel_shape = [2, 2], strides = [2, 2]} -> (f32[-1,8,2,2])
    out = NetOutput(pool)
  })");
  auto changed = FoldPads(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8,4,4])
    pool = AveragePool(x) {kernel_shape = [2, 2], strides = [2, 2]} -> (f32[-1,8,2,2])
    out = NetOutput(pool)
  })"));
}

TEST(PadFoldTest, SpatialPadsMoveIntoTheConv) {
  const std::string text = R"(graph main {
    x = Data() {index = 0} -> (f32[1,2,4,5])
    p = Const() {value = tensor<i64[8]>[0, 0, 1, 2, 0, 0, 3, 0]} -> (i64[8])
    v = Const() {value = tensor<f32[]>[0.0]} -> (f32[])
    pad = Pad(x, p, v) -> (f32[1,2,8,7])
    w = Const() {value = tensor<f32[3,2,3,3]>splat(0.5)} -> (f32[3,2,3,3])
    conv = Conv(pad, w) {kernel_shape = [3, 3], pads = [1, 0, 0, 1]} -> (f32[1,3,7,6])
    out = NetOutput(conv)
  })";
  auto g = Parse(text);
  auto changed = FoldPads(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[1,2,4,5])
    w = Const() {value = tensor<f32[3,2,3,3]>splat(0.5)} -> (f32[3,2,3,3])
    conv = Conv(x, w) {kernel_shape = [3, 3], pads = [2, 2, 3, 1]} -> (f32[1,3,7,6])
    out = NetOutput(conv)
  })"));

  // The folded Conv against Pad + Conv on host_cpu, with random weights.
  HostCpuEngine host;
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{1, 2, 4, 5}, 3);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{3, 2, 3, 3}, 4);
  const Tensor pads = test::MakeTensor(DataType::kInt64, {0, 0, 1, 2, 0, 0, 3, 0}, Shape{8});
  auto padded = test::RunOp1(host, "Pad", {x, pads});
  ASSERT_TRUE(padded.ok()) << padded.status();
  auto expected = test::RunOp1(host, "Conv", {*padded, w},
                               {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{3, 3})},
                                {"pads", ir::AttrValue(std::vector<int64_t>{1, 0, 0, 1})}});
  auto folded = test::RunOp1(host, "Conv", {x, w},
                             {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{3, 3})},
                              {"pads", ir::AttrValue(std::vector<int64_t>{2, 2, 3, 1})}});
  ASSERT_TRUE(expected.ok() && folded.ok());
  EXPECT_TRUE(test::TensorNear(*folded, *expected, {1e-5, 1e-5}));
}

// torch's AvgPool2d(count_include_pad=True) with padding: Pad + AveragePool
// becomes one AveragePool that counts its pads, and computes the same on
// host_cpu, with and without pads of the pool's own.
TEST(PadFoldTest, SpatialPadsMoveIntoACountingAveragePool) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8,5,5])
    p = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
    pad = Pad(x, p) {mode = "constant"} -> (f32[-1,8,7,7])
    pool = AveragePool(pad) {kernel_shape = [3, 3], strides = [1, 1]} -> (f32[-1,8,5,5])
    out = NetOutput(pool)
  })");
  auto changed = FoldPads(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8,5,5])
    pool = AveragePool(x) {count_include_pad = 1, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]} -> (f32[-1,8,5,5])
    out = NetOutput(pool)
  })"));

  HostCpuEngine host;
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3, 6, 7}, 5);
  const std::vector<int64_t> pad_pads = {0, 0, 1, 2, 0, 0, 2, 0};
  const Tensor pads = test::MakeTensor(DataType::kInt64, {0, 0, 1, 2, 0, 0, 2, 0}, Shape{8});
  auto padded = test::RunOp1(host, "Pad", {x, pads});
  ASSERT_TRUE(padded.ok()) << padded.status();
  {
    for (bool own : {false, true}) {
      ir::AttrMap attrs = {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{3, 2})},
                           {"strides", ir::AttrValue(std::vector<int64_t>{2, 2})},
                           {"count_include_pad", ir::AttrValue(int64_t{1})}};
      if (own) attrs["pads"] = ir::AttrValue(std::vector<int64_t>{1, 0, 0, 1});
      auto expected = test::RunOp1(host, "AveragePool", {*padded}, attrs);
      attrs["pads"] = ir::AttrValue(own ? std::vector<int64_t>{2, 2, 2, 1} : std::vector<int64_t>{1, 2, 2, 0});
      auto folded = test::RunOp1(host, "AveragePool", {x}, attrs);
      ASSERT_TRUE(expected.ok() && folded.ok());
      EXPECT_TRUE(test::TensorNear(*folded, *expected, {1e-6, 1e-6})) << "own pads " << own;
    }
  }
}

TEST(PadFoldTest, LeavesPadsThatAreNotZeroFill) {
  const char* cases[] = {
      // reflect mode
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
        pad = Pad(x, p) {mode = "reflect"} -> (f32[1,2,6,6])
        w = Const() {value = tensor<f32[1,2,3,3]>splat(1.0)} -> (f32[1,2,3,3])
        conv = Conv(pad, w) {kernel_shape = [3, 3]} -> (f32[1,1,4,4])
        out = NetOutput(conv)
      })",
      // a non-zero fill value
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
        v = Const() {value = tensor<f32[]>[1.0]} -> (f32[])
        pad = Pad(x, p, v) -> (f32[1,2,6,6])
        w = Const() {value = tensor<f32[1,2,3,3]>splat(1.0)} -> (f32[1,2,3,3])
        conv = Conv(pad, w) {kernel_shape = [3, 3]} -> (f32[1,1,4,4])
        out = NetOutput(conv)
      })",
      // channel pads
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 1, 0, 0, 0, 0, 0, 0]} -> (i64[8])
        pad = Pad(x, p) -> (f32[1,3,4,4])
        w = Const() {value = tensor<f32[1,3,1,1]>splat(1.0)} -> (f32[1,3,1,1])
        conv = Conv(pad, w) {kernel_shape = [1, 1]} -> (f32[1,1,4,4])
        out = NetOutput(conv)
      })",
      // auto_pad on the Conv
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
        pad = Pad(x, p) -> (f32[1,2,6,6])
        w = Const() {value = tensor<f32[1,2,3,3]>splat(1.0)} -> (f32[1,2,3,3])
        conv = Conv(pad, w) {kernel_shape = [3, 3], auto_pad = "SAME_UPPER"} -> (f32[1,1,6,6])
        out = NetOutput(conv)
      })",
      // a non-zero pad before a pooling (not a Conv)
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
        pad = Pad(x, p) -> (f32[1,2,6,6])
        pool = MaxPool(pad) {kernel_shape = [2, 2]} -> (f32[1,2,5,5])
        out = NetOutput(pool)
      })",
      // an AveragePool with pads of its own it does not count
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
        pad = Pad(x, p) -> (f32[1,2,6,6])
        pool = AveragePool(pad) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} -> (f32[1,2,6,6])
        out = NetOutput(pool)
      })",
      // ceil_mode: a window could cover only pads after folding
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 0, 1, 1, 0, 0, 1, 1]} -> (i64[8])
        pad = Pad(x, p) -> (f32[1,2,6,6])
        pool = AveragePool(pad) {kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1} -> (f32[1,2,3,3])
        out = NetOutput(pool)
      })",
      // a pad as wide as the window
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 0, 2, 2, 0, 0, 2, 2]} -> (i64[8])
        pad = Pad(x, p) -> (f32[1,2,8,8])
        pool = AveragePool(pad) {kernel_shape = [2, 2], strides = [2, 2]} -> (f32[1,2,4,4])
        out = NetOutput(pool)
      })",
      // a zero Pad whose tensor is a graph output
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        p = Const() {value = tensor<i64[8]>[0, 0, 0, 0, 0, 0, 0, 0]} -> (i64[8])
        pad = Pad(x, p) -> (f32[1,2,4,4] as "y")
        out = NetOutput(pad)
      })",
  };
  for (const char* text : cases) {
    auto g = Parse(text);
    const std::string before = ir::PrintGraph(*g);
    auto changed = FoldPads(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
    EXPECT_EQ(ir::PrintGraph(*g), before);
  }
}

TEST(PadFoldTest, RespectsTheFilter) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[1,8,4,4])
    p = Const() {value = tensor<i64[8]>[0, 0, 0, 0, 0, 0, 0, 0]} -> (i64[8])
    pad = Pad(x, p) -> (f32[1,8,4,4])
    pool = AveragePool(pad) {kernel_shape = [2, 2], strides = [2, 2]} -> (f32[1,8,2,2])
    out = NetOutput(pool)
  })");
  auto changed = FoldPads(*g, [](const ir::Node& n) { return n.type() != "Pad"; });
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace ge::engine::cpu_dense
