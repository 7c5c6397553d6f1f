// ConvTapTrim: which convolutions lose taps, the geometry they get, and a
// trimmed Conv computes what the full one computed (host_cpu, random
// weights and inputs).
#include "runtime/engines/cpu_dense/conv_tap_trim.h"

#include <string>
#include <vector>

#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

using Ints = std::vector<int64_t>;

struct Case {
  Shape x;  // the run's input shape (the graph's batch dim is dynamic)
  Shape w;
  Ints strides, dilations, pads;
  // Expected after the pass.
  Ints kernel, new_pads, new_dilations;
};

std::string Dims(const Shape& s, bool dynamic_batch) {
  std::string out;
  for (int64_t i = 0; i < s.rank(); ++i) {
    out += (i ? "," : "") + std::to_string(i == 0 && dynamic_batch ? -1 : s.dim(i));
  }
  return out;
}

std::string List(const Ints& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + out + "]";
}

ir::AttrMap ConvAttrs(const Ints& kernel, const Ints& strides, const Ints& dilations, const Ints& pads) {
  return {{"kernel_shape", ir::AttrValue(kernel)},
          {"strides", ir::AttrValue(strides)},
          {"dilations", ir::AttrValue(dilations)},
          {"pads", ir::AttrValue(pads)}};
}

void CheckCase(const Case& c) {
  SCOPED_TRACE("x " + c.x.ToString() + " w " + c.w.ToString() + " dilations " + List(c.dilations));
  const Tensor w = test::RandomTensor(DataType::kFloat, c.w, 7);
  Ints kernel;
  for (int64_t i = 2; i < c.w.rank(); ++i) kernel.push_back(c.w.dim(i));
  std::string weights = "[";
  for (int64_t i = 0; i < w.NumElements(); ++i) weights += (i ? ", " : "") + std::to_string(w.data<float>()[i]);
  weights += "]";
  auto g = Parse("graph main {\n x = Data() {index = 0} -> (f32[" + Dims(c.x, true) +
                 "])\n w = Const() {value = tensor<f32[" + Dims(c.w, false) + "]>" + weights + "} -> (f32[" +
                 Dims(c.w, false) + "])\n conv = Conv(x, w) {dilations = " + List(c.dilations) +
                 ", kernel_shape = " + List(kernel) + ", pads = " + List(c.pads) + ", strides = " + List(c.strides) +
                 "}\n out = NetOutput(conv)\n}");
  auto changed = TrimConvTaps(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(*changed);
  const ir::Node* conv = g->FindNode("conv");
  ASSERT_NE(conv, nullptr);
  const ir::OpDesc& op = conv->op_desc();
  EXPECT_EQ(op.GetAttrOr<Ints>("kernel_shape", {}), c.kernel);
  EXPECT_EQ(op.GetAttrOr<Ints>("pads", {}), c.new_pads);
  EXPECT_EQ(op.GetAttrOr<Ints>("dilations", {}), c.new_dilations);
  EXPECT_EQ(g->FindNode("w"), nullptr) << "the old weights stay";
  const Tensor* trimmed = ConstInput(*conv, 1);
  ASSERT_NE(trimmed, nullptr);
  Shape trimmed_shape = c.w;
  for (size_t i = 0; i < c.kernel.size(); ++i) trimmed_shape.set_dim(i + 2, c.kernel[i]);
  EXPECT_EQ(trimmed->shape(), trimmed_shape);
  EXPECT_EQ(op.input(1).type.shape(), trimmed_shape);

  HostCpuEngine host;
  const Tensor x = test::RandomTensor(DataType::kFloat, c.x, 8);
  auto expected = test::RunOp1(host, "Conv", {x, w}, ConvAttrs(kernel, c.strides, c.dilations, c.pads));
  auto actual = test::RunOp1(host, "Conv", {x, *trimmed}, ConvAttrs(c.kernel, c.strides, c.new_dilations, c.new_pads));
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_TRUE(test::TensorNear(*actual, *expected, {1e-5, 1e-5}));
}

TEST(ConvTapTrimTest, AsppDilationPastTheInputBecomesOneByOne) {
  // DeepLabV3's ASPP branch: padding = dilation, larger than the map.
  CheckCase({Shape{2, 3, 5, 5}, Shape{4, 3, 3, 3}, {1, 1}, {6, 6}, {6, 6, 6, 6}, {1, 1}, {0, 0, 0, 0}, {1, 1}});
}

TEST(ConvTapTrimTest, OuterTapsOfAFiveTapKernelDrop) {
  // 5 taps, dilation 2, pads 4 on a 4-wide map: taps 0 and 4 only read padding.
  CheckCase({Shape{1, 2, 4, 4}, Shape{3, 2, 5, 5}, {1, 1}, {2, 2}, {4, 4, 4, 4}, {3, 3}, {2, 2, 2, 2}, {2, 2}});
}

TEST(ConvTapTrimTest, OneAxisOnly) {
  // Height 2 with dilation 4 keeps the middle row; width keeps its 3 taps.
  CheckCase({Shape{2, 4, 2, 6}, Shape{5, 4, 3, 3}, {1, 1}, {4, 1}, {4, 1, 4, 1}, {1, 3}, {0, 1, 0, 1}, {1, 1}});
}

TEST(ConvTapTrimTest, StridedOneSidedTrim) {
  // Stride 2 over 7 with dilation 3 and pads [3, 0]: outputs 0..1 read
  // taps at o*2 - 3 + 3k: tap 0 at -3 and -1 (dead), taps 1, 2 live.
  CheckCase({Shape{1, 1, 7}, Shape{2, 1, 3}, {2}, {3}, {3, 0}, {2}, {0, 0}, {3}});
}

TEST(ConvTapTrimTest, LeavesConvolutionsWhoseTapsAllRead) {
  const char* cases[] = {
      // an ordinary padded 3x3
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,8,8])
        w = Const() {value = tensor<f32[1,2,3,3]>splat(1.0)} -> (f32[1,2,3,3])
        conv = Conv(x, w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
        out = NetOutput(conv)
      })",
      // dilation 12 on 16: the outer taps read rows 12..15 and 0..3
      R"(graph main {
        x = Data() {index = 0} -> (f32[-1,2,16,16])
        w = Const() {value = tensor<f32[1,2,3,3]>splat(1.0)} -> (f32[1,2,3,3])
        conv = Conv(x, w) {dilations = [12, 12], kernel_shape = [3, 3], pads = [12, 12, 12, 12]}
        out = NetOutput(conv)
      })",
      // unknown spatial dims
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,-1,-1])
        w = Const() {value = tensor<f32[1,2,3,3]>splat(1.0)} -> (f32[1,2,3,3])
        conv = Conv(x, w) {dilations = [24, 24], kernel_shape = [3, 3], pads = [24, 24, 24, 24]}
        out = NetOutput(conv)
      })",
      // weights computed at run time
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        w = Data() {index = 1} -> (f32[1,2,3,3])
        conv = Conv(x, w) {dilations = [24, 24], kernel_shape = [3, 3], pads = [24, 24, 24, 24]}
        out = NetOutput(conv)
      })",
      // auto_pad
      R"(graph main {
        x = Data() {index = 0} -> (f32[1,2,4,4])
        w = Const() {value = tensor<f32[1,2,3,3]>splat(1.0)} -> (f32[1,2,3,3])
        conv = Conv(x, w) {auto_pad = "SAME_UPPER", dilations = [24, 24], kernel_shape = [3, 3]}
        out = NetOutput(conv)
      })",
  };
  for (const char* text : cases) {
    auto g = Parse(text);
    const std::string before = ir::PrintGraph(*g);
    auto changed = TrimConvTaps(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
    EXPECT_EQ(ir::PrintGraph(*g), before);
  }
}

TEST(ConvTapTrimTest, RespectsTheFilter) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[1,2,4,4])
    w = Const() {value = tensor<f32[1,2,3,3]>splat(1.0)} -> (f32[1,2,3,3])
    conv = Conv(x, w) {dilations = [24, 24], kernel_shape = [3, 3], pads = [24, 24, 24, 24]}
    out = NetOutput(conv)
  })");
  auto changed = TrimConvTaps(*g, [](const ir::Node& n) { return n.type() != "Conv"; });
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace ge::engine::cpu_dense
