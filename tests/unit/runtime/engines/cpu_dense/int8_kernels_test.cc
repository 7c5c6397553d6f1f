// cpu_dense's int8 kernels beyond the conformance cases: what
// CheckSupported refuses (and why), ResNet-sized convolutions at full range
// on both convolution paths against host_cpu's reference, channels-last
// activations (what the layout pass gives int8 tensors) equal to plain
// ones, `_QLinearAdd` bit for bit against host_cpu's, and weights packed
// once per plan.
#include <cstring>

#include "base/ir/text_format.h"
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

Tensor Filled(DataType dtype, const Shape& shape, uint64_t seed, int64_t lo, int64_t hi) {
  Rng rng(seed);
  Tensor t = *Tensor::Allocate(dtype, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    int64_t v = rng.Int(lo, hi);
    if (i % 3 == 0) v = rng.Bool() ? hi : lo;  // the extremes saturate vpmaddubsw pairs
    if (dtype == DataType::kUint8) t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    if (dtype == DataType::kInt8) t.data<int8_t>()[i] = static_cast<int8_t>(v);
  }
  return t;
}

// ---- CheckSupported ----

absl::Status NodeCheck(const std::string& text) {
  auto g = Parse(text);
  const ir::Node* n = g->FindNode("q");
  if (n == nullptr) return Internal("no node q");
  return PassTestEngine().info_store().CheckSupported(*n);
}

std::string ConvText(const std::string& w_zero) {
  return R"(graph main {
    x = Data() {index = 0} -> (u8[1,2,4,4])
    sx = Const() {value = tensor<f32[]>[0.1]} -> (f32[])
    zx = Const() {value = tensor<u8[]>[3]} -> (u8[])
    w = Const() {value = tensor<i8[2,2,1,1]>[1, -2, 3, -4]} -> (i8[2,2,1,1])
    sw = Const() {value = tensor<f32[2]>[0.5, 0.25]} -> (f32[2])
    )" + w_zero +
         R"(
    sy = Const() {value = tensor<f32[]>[0.2]} -> (f32[])
    zy = Const() {value = tensor<u8[]>[5]} -> (u8[])
    q = QLinearConv(x, sx, zx, w, sw, zw, sy, zy) -> (u8[1,2,4,4])
    out = NetOutput(q)
  })";
}

TEST(CpuDenseInt8, AcceptsAConstantZeroWeightZeroPoint) {
  const absl::Status s = NodeCheck(ConvText("zw = Const() {value = tensor<i8[2]>[0, 0]} -> (i8[2])"));
  EXPECT_TRUE(s.ok()) << s;
}

TEST(CpuDenseInt8, RejectsANonZeroWeightZeroPoint) {
  const absl::Status s = NodeCheck(ConvText("zw = Const() {value = tensor<i8[2]>[0, 7]} -> (i8[2])"));
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(std::string(s.message()).find("non-zero weight zero point 7"), std::string::npos) << s;
}

TEST(CpuDenseInt8, RejectsARunTimeWeightZeroPoint) {
  const absl::Status s = NodeCheck(ConvText("zw = Data() {index = 1} -> (i8[2])"));
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(std::string(s.message()).find("computed at run time"), std::string::npos) << s;
}

TEST(CpuDenseInt8, RejectsU8WeightsAndPerRowActivationParameters) {
  Rng rng(4);
  const Tensor x = Filled(DataType::kUint8, Shape{2, 3}, 1, 0, 255);
  Case u8_weights = MakeCase("MatMulInteger", {x, Filled(DataType::kUint8, Shape{3, 2}, 2, 0, 255)});
  absl::Status s = Rejection(u8_weights);
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(std::string(s.message()).find("u8 weights"), std::string::npos) << s;
  Case per_row = MakeCase("MatMulInteger", {x, Filled(DataType::kInt8, Shape{3, 2}, 3, -128, 127),
                                            Filled(DataType::kUint8, Shape{2}, 4, 0, 255)});
  s = Rejection(per_row);
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(std::string(s.message()).find("not per tensor"), std::string::npos) << s;
}

// ---- Full-range ResNet-sized convolutions ----

// A 3x3 convolution of 64 -> 64 channels at 14x14 (ResNet's layer shapes),
// x over the full u8 / s8 range, weights full-range or within 7 bits.
Case ResNetConv(DataType x_dtype, bool full_range_weights, bool per_channel) {
  const int64_t m = 64;
  std::vector<float> sw(per_channel ? m : 1);
  for (size_t i = 0; i < sw.size(); ++i) sw[i] = 0.002f + 0.0001f * static_cast<float>(i % 7);
  const bool u8 = x_dtype == DataType::kUint8;
  std::vector<Value> inputs = {
      Filled(x_dtype, Shape{1, 64, 14, 14}, 11, u8 ? 0 : -128, u8 ? 255 : 127),
      Tensor::Scalar<float>(0.02f),
      u8 ? Tensor::Scalar<uint8_t>(120) : Tensor(Tensor::Scalar<int8_t>(-7)),
      Filled(DataType::kInt8, Shape{m, 64, 3, 3}, 12, full_range_weights ? -128 : -64, full_range_weights ? 127 : 64),
      Tensor::FromVector<float>(sw, per_channel ? Shape{m} : Shape{}),
      Tensor::Scalar<int8_t>(0),
      Tensor::Scalar<float>(full_range_weights ? 60.0f : 30.0f),
      Tensor::Scalar<uint8_t>(128),
      Tensor::FromVector<int32_t>(std::vector<int32_t>(m, 1000), Shape{m})};
  ir::AttrMap attrs = {{"pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1})}};
  Case c = MakeCase("QLinearConv", inputs, attrs, test::Tolerance{1, 0});
  c.const_inputs = {1, 2, 3, 4, 5, 6, 7, 8};
  return c;
}

TEST(CpuDenseInt8, FullRangeConvolutionsMatchTheReference) {
  for (DataType x : {DataType::kUint8, DataType::kInt8}) {
    for (bool full : {true, false}) {
      for (bool per_channel : {true, false}) {
        Case c = ResNetConv(x, full, per_channel);
        EXPECT_TRUE(Conforms(c)) << DataTypeName(x) << (full ? " full-range" : " 7-bit") << " weights";
        c.const_inputs.clear();  // weights computed at run time: the split path
        EXPECT_TRUE(Conforms(c)) << DataTypeName(x) << " run-time weights";
      }
    }
  }
}

TEST(CpuDenseInt8, ConstantWeightsArePackedOncePerPlan) {
  Case c = ResNetConv(DataType::kUint8, false, true);
  const int64_t before = WeightPacks().load();
  test::RunOptions options;
  options.const_inputs = c.const_inputs;
  ASSERT_TRUE(test::RunKernel(Dense(), c.op, c.inputs, options).ok());
  EXPECT_EQ(WeightPacks().load() - before, 1);
}

TEST(CpuDenseInt8, FullRangeMatMulsMatchTheReference) {
  for (DataType a : {DataType::kUint8, DataType::kInt8}) {
    const bool u8 = a == DataType::kUint8;
    std::vector<Value> inputs = {Filled(a, Shape{16, 512}, 21, u8 ? 0 : -128, u8 ? 255 : 127),
                                 Tensor::Scalar<float>(0.02f),
                                 u8 ? Tensor::Scalar<uint8_t>(200) : Tensor(Tensor::Scalar<int8_t>(100)),
                                 Filled(DataType::kInt8, Shape{512, 96}, 22, -128, 127),
                                 Tensor::Scalar<float>(0.003f),
                                 Tensor::Scalar<int8_t>(0),
                                 Tensor::Scalar<float>(40.0f),
                                 Tensor::Scalar<int8_t>(-3)};
    Case c = MakeCase("QLinearMatMul", inputs, {}, test::Tolerance{1, 0});
    c.const_inputs = {3};
    EXPECT_TRUE(Conforms(c)) << DataTypeName(a);
    Case integer = MakeCase("MatMulInteger", {inputs[0], inputs[3], inputs[2]});
    EXPECT_TRUE(Conforms(integer)) << DataTypeName(a);
  }
}

// ---- Channels-last activations ----

// `t` ([N, C, H, W], any 1-byte or 4-byte dtype) with its bytes in NHWC
// order (to_nhwc) or back.
Tensor Permuted(const Tensor& t, bool to_nhwc) {
  Tensor out = *Tensor::Allocate(t.dtype(), t.shape());
  const int64_t n = t.shape().dim(0), c = t.shape().dim(1), hw = t.shape().dim(2) * t.shape().dim(3);
  const size_t size = DataTypeSize(t.dtype());
  const auto* src = static_cast<const char*>(t.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t nchw = (b * c + ch) * hw + p, nhwc = (b * hw + p) * c + ch;
        std::memcpy(dst + (to_nhwc ? nhwc : nchw) * size, src + (to_nhwc ? nchw : nhwc) * size, size);
      }
    }
  }
  return out;
}

TEST(CpuDenseInt8, ChannelsLastConvolutionsEqualPlainOnes) {
  for (bool full : {true, false}) {
    for (bool constant : {true, false}) {
      Case c = ResNetConv(DataType::kUint8, full, true);
      if (!constant) c.const_inputs.clear();
      test::RunOptions options;
      options.const_inputs = c.const_inputs;
      auto plain = test::RunKernel(Dense(), c.op, c.inputs, options);
      ASSERT_TRUE(plain.ok()) << plain.status();
      ir::OpDesc nhwc = c.op;
      nhwc.mutable_input(0).type.mutable_tensor().format = ir::Format::kNHWC;
      nhwc.mutable_output(0).type.mutable_tensor().format = ir::Format::kNHWC;
      std::vector<Value> inputs = c.inputs;
      inputs[0] = Permuted(c.inputs[0].tensor(), true);
      // RunKernel types the outputs itself: give it the NHWC one.
      ir::ValueType y = ir::ValueType::Tensor(DataType::kUint8, (*plain)[0].tensor().shape());
      y.mutable_tensor().format = ir::Format::kNHWC;
      options.output_types = {y};
      auto last = test::RunKernel(Dense(), nhwc, inputs, options);
      ASSERT_TRUE(last.ok()) << last.status();
      const Tensor back = Permuted((*last)[0].tensor(), false);
      const Tensor& want = (*plain)[0].tensor();
      EXPECT_EQ(std::memcmp(back.raw_data(), want.raw_data(), want.SizeInBytes()), 0)
          << (full ? "full-range" : "7-bit") << (constant ? " constant" : " run-time") << " weights";
    }
  }
}

// ---- _QLinearAdd ----

TEST(CpuDenseInt8, QLinearAddMatchesTheReferenceBitForBit) {
  // Enough 16K chunks for a parallel loop and a tail that is not a multiple
  // of 8; scales whose ratios put many sums on a half.
  const Shape shape{1, 3, 211, 117};
  for (DataType d : {DataType::kUint8, DataType::kInt8}) {
    const bool u8 = d == DataType::kUint8;
    std::vector<Value> inputs = {Filled(d, shape, 31, u8 ? 0 : -128, u8 ? 255 : 127),
                                 Tensor::Scalar<float>(0.5f),
                                 u8 ? Tensor::Scalar<uint8_t>(3) : Tensor(Tensor::Scalar<int8_t>(-3)),
                                 Filled(d, shape, 32, u8 ? 0 : -128, u8 ? 255 : 127),
                                 Tensor::Scalar<float>(0.25f),
                                 u8 ? Tensor::Scalar<uint8_t>(130) : Tensor(Tensor::Scalar<int8_t>(2)),
                                 Tensor::Scalar<float>(1.0f),
                                 u8 ? Tensor::Scalar<uint8_t>(0) : Tensor(Tensor::Scalar<int8_t>(5))};
    Case c = MakeCase("_QLinearAdd", inputs, {}, test::Tolerance{0, 0});
    EXPECT_TRUE(Conforms(c)) << DataTypeName(d);
    // Scales of a calibrated network (not powers of two).
    inputs[1] = Tensor::Scalar<float>(0.0371f);
    inputs[4] = Tensor::Scalar<float>(0.0213f);
    inputs[6] = Tensor::Scalar<float>(0.0459f);
    EXPECT_TRUE(Conforms(MakeCase("_QLinearAdd", inputs, {}, test::Tolerance{0, 0}))) << DataTypeName(d);
  }
}

// B a bias over A's last axes or a scalar: read cyclically (tiled when
// shorter than 256 elements), bit for bit the reference's broadcast.
TEST(CpuDenseInt8, QLinearAddBroadcastsASuffixBitForBit) {
  const Shape a_shape{1, 3, 211, 117};
  for (DataType d : {DataType::kUint8, DataType::kInt8}) {
    const bool u8 = d == DataType::kUint8;
    for (const Shape& b_shape : {Shape{117}, Shape{1, 211, 117}, Shape{1}, Shape{}, Shape{3, 211, 117}}) {
      std::vector<Value> inputs = {Filled(d, a_shape, 41, u8 ? 0 : -128, u8 ? 255 : 127),
                                   Tensor::Scalar<float>(0.0371f),
                                   u8 ? Tensor::Scalar<uint8_t>(255) : Tensor(Tensor::Scalar<int8_t>(-128)),
                                   Filled(d, b_shape, 42, u8 ? 0 : -128, u8 ? 255 : 127),
                                   Tensor::Scalar<float>(0.0213f),
                                   u8 ? Tensor::Scalar<uint8_t>(0) : Tensor(Tensor::Scalar<int8_t>(127)),
                                   Tensor::Scalar<float>(0.0459f),
                                   u8 ? Tensor::Scalar<uint8_t>(128) : Tensor(Tensor::Scalar<int8_t>(0))};
      EXPECT_TRUE(Conforms(MakeCase("_QLinearAdd", inputs, {}, test::Tolerance{0, 0})))
          << DataTypeName(d) << " B " << b_shape.ToString();
    }
  }
}

TEST(CpuDenseInt8, QLinearAddRefusesOperandsOfTwoShapes) {
  Case c = MakeCase("_QLinearAdd", {Filled(DataType::kUint8, Shape{2, 4}, 1, 0, 255), Tensor::Scalar<float>(0.5f),
                                    Tensor::Scalar<uint8_t>(0), Filled(DataType::kUint8, Shape{2, 1}, 2, 0, 255),
                                    Tensor::Scalar<float>(0.5f), Tensor::Scalar<uint8_t>(0),
                                    Tensor::Scalar<float>(1.0f), Tensor::Scalar<uint8_t>(0)});
  const absl::Status s = Rejection(c);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace ge::engine::cpu_dense
