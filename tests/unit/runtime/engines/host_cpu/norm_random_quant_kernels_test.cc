// host_cpu kernels of issue 21 against their definitions: NonZero,
// MeanVarianceNormalization, LpNormalization, LpPool / GlobalLpPool,
// MaxRoiPool; the random ops (the same values for a seed at any thread
// count, fresh values per run, the distributions' moments, refusals of
// hostile sizes before allocating); and the integer ops against direct
// loops (per-tensor, per-row / per-column and per-channel zero points and
// scales, u8 and s8).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/ops/op_registry.h"
#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::TensorEq;
using test::TensorNear;
using Ints = std::vector<int64_t>;

template <typename T>
Tensor Scalar(T v) {
  return Tensor::Scalar<T>(v);
}

// Run options that skip the comparison with the inferred output types
// (value-dependent outputs), optionally with given output types (so that a
// hostile size reaches the kernel instead of stopping in inference).
test::RunOptions Unchecked(std::vector<ir::ValueType> output_types = {}) {
  test::RunOptions options;
  options.output_types = std::move(output_types);
  options.check_output_types = false;
  return options;
}

// ---- NonZero ----

TEST(NonZeroKernel, CoordinatesInRowMajorOrder) {
  EXPECT_TRUE(
      TensorEq(Host("NonZero", {F32({1, 0, 0, 0, 2, 3}, {2, 3})}, {}, Unchecked()), I64({0, 1, 1, 0, 1, 2}, {2, 3})));
  // NaN is non-zero; a scalar lists one coordinate row.
  EXPECT_TRUE(TensorEq(Host("NonZero", {F32({0, NAN}, {2})}, {}, Unchecked()), I64({1}, {1, 1})));
  EXPECT_TRUE(TensorEq(Host("NonZero", {Scalar<bool>(true)}, {}, Unchecked()), I64({0}, {1, 1})));
  EXPECT_TRUE(TensorEq(Host("NonZero", {T1<int32_t>({0, 0}, {2})}, {}, Unchecked()), I64({}, {1, 0})));
}

// ---- Normalization and pooling ----

TEST(MeanVarianceNormalizationKernel, MatchesTheFunctionBody) {
  std::vector<float> v(2 * 3 * 2 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 0.7f) * 3 + static_cast<float>(i % 5);
  const Tensor x = F32(v, {2, 3, 2, 2});
  // Per channel c over (n, h, w): (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9).
  std::vector<float> expected(v.size());
  for (int c = 0; c < 3; ++c) {
    double s = 0, s2 = 0;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) {
        const double e = v[(n * 3 + c) * 4 + i];
        s += e, s2 += e * e;
      }
    const double mean = s / 8, sd = std::sqrt(s2 / 8 - mean * mean) + 1e-9;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i)
        expected[(n * 3 + c) * 4 + i] = static_cast<float>((v[(n * 3 + c) * 4 + i] - mean) / sd);
  }
  EXPECT_TRUE(TensorNear(Host("MeanVarianceNormalization", {x}), F32(expected, {2, 3, 2, 2})));
}

TEST(LpNormalizationKernel, L1L2AndZeroNorm) {
  const Tensor x = F32({3, 4, 0, 0, -1, 1}, {3, 2});
  EXPECT_TRUE(TensorNear(Host("LpNormalization", {x}), F32({0.6f, 0.8f, 0, 0, -0.70710678f, 0.70710678f}, {3, 2})));
  EXPECT_TRUE(TensorNear(Host("LpNormalization", {x}, {{"p", 1}, {"axis", 0}}),
                         F32({0.75f, 0.8f, 0, 0, -0.25f, 0.2f}, {3, 2})));
  EXPECT_NE(RunError("LpNormalization", {x}, {{"p", 3}}).message().find("p must be 1 or 2"), std::string::npos);
}

TEST(LpPoolKernel, PNormOfEachWindowWithPadding) {
  const Tensor x = F32({1, -2, 3, 4, 5, -6}, {1, 1, 6});
  // kernel 3, stride 2, pads 1: windows [pad,1,-2], [-2,3,4], [4,5,-6].
  EXPECT_TRUE(TensorNear(Host("LpPool", {x}, {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}}),
                         F32({std::sqrt(5.0f), std::sqrt(29.0f), std::sqrt(77.0f)}, {1, 1, 3})));
  EXPECT_TRUE(TensorNear(Host("LpPool", {x}, {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"p", 1}}),
                         F32({3, 7, 11}, {1, 1, 3})));
  EXPECT_TRUE(TensorNear(Host("GlobalLpPool", {F32({1, 2, 2, 3, 4, 12}, {2, 1, 3})}), F32({3, 13}, {2, 1, 1})));
  EXPECT_TRUE(TensorNear(Host("GlobalLpPool", {F32({1, 2, 2, 3, 4, 12}, {2, 1, 3})}, {{"p", 3}}),
                         F32({std::cbrt(17.0f), std::cbrt(1819.0f)}, {2, 1, 1})));
}

TEST(MaxRoiPoolKernel, BinsOfEachRegion) {
  std::vector<float> v(1 * 1 * 4 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const Tensor x = F32(v, {1, 1, 4, 4});
  // The whole image into 2x2 bins: each bin's bottom-right value; an
  // x2 < x1 roi still covers one column (width at least 1).
  const Tensor rois = F32({0, 0, 0, 3, 3, 0, 1, 1, 0, 2}, {2, 5});
  EXPECT_TRUE(TensorEq(Host("MaxRoiPool", {x, rois}, {{"pooled_shape", Ints{2, 2}}}),
                       F32({5, 7, 13, 15, 5, 5, 9, 9}, {2, 1, 2, 2})));
  // spatial_scale halves the coordinates (rounded half away from zero).
  EXPECT_TRUE(TensorEq(
      Host("MaxRoiPool", {x, F32({0, 0, 0, 3, 3}, {1, 5})}, {{"pooled_shape", Ints{1, 1}}, {"spatial_scale", 0.5f}}),
      F32({10}, {1, 1, 1, 1})));
  const absl::Status bad_batch =
      RunError("MaxRoiPool", {x, F32({1, 0, 0, 1, 1}, {1, 5})}, {{"pooled_shape", Ints{1, 1}}});
  EXPECT_NE(bad_batch.message().find("outside X"), std::string::npos) << bad_batch;
  const absl::Status nan = RunError("MaxRoiPool", {x, F32({0, NAN, 0, 1, 1}, {1, 5})}, {{"pooled_shape", Ints{1, 1}}});
  EXPECT_NE(nan.message().find("not a finite number"), std::string::npos) << nan;
}

TEST(MaxRoiPoolKernel, HostilePooledShapeIsRefusedBeforeAllocating) {
  ir::OpDesc op("roi", "MaxRoiPool");
  op.SetAttr("pooled_shape", Ints{int64_t{1} << 20, int64_t{1} << 20});
  auto kernel = Engine().kernel_factory().CreateKernel(op);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kResourceExhausted) << kernel.status();
}

// ---- Random ops ----

// One kernel, computed `runs` times with `pool`; the outputs of each run.
std::vector<Tensor> RunRandom(const ir::OpDesc& op, const std::vector<Value>& inputs, int runs, ThreadPool* pool) {
  auto types = test::InferOutputTypes(op, inputs);
  EXPECT_TRUE(types.ok()) << types.status();
  auto kernel = Engine().kernel_factory().CreateKernel(op);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  std::vector<Tensor> out;
  if (!types.ok() || !kernel.ok()) return out;
  for (int r = 0; r < runs; ++r) {
    test::TestExecuteContext ctx(inputs, *types, pool, 0);
    const absl::Status s = (*kernel)->Compute(ctx);
    EXPECT_TRUE(s.ok()) << s;
    if (s.ok()) out.push_back(ctx.outputs()[0].tensor());
  }
  return out;
}

ir::OpDesc RandomOp(const std::string& type, ir::AttrMap attrs, int num_inputs = 0) {
  ir::OpDesc op("rand", type);
  for (auto& [k, v] : attrs) op.SetAttr(k, v);
  for (int i = 0; i < num_inputs; ++i) op.AddInput({});
  op.AddOutput({});
  return op;
}

TEST(RandomKernels, SameSeedSameValuesAtAnyThreadCountAndFreshValuesPerRun) {
  ThreadPool none(0, "none");
  for (const char* type : {"RandomNormal", "RandomUniform"}) {
    SCOPED_TRACE(type);
    const ir::OpDesc op = RandomOp(type, {{"shape", Ints{300, 70}}, {"seed", 3.0f}});
    const std::vector<Tensor> a = RunRandom(op, {}, 3, &none);
    const std::vector<Tensor> b = RunRandom(op, {}, 3, test::TestThreadPool());
    ASSERT_EQ(a.size(), 3u);
    ASSERT_EQ(b.size(), 3u);
    for (int r = 0; r < 3; ++r) EXPECT_TRUE(TensorEq(a[r], b[r])) << "run " << r;
    EXPECT_FALSE(TensorEq(a[0], a[1]));
    // Another seed, or the session's seed instead of the attribute, differs.
    const ir::OpDesc other = RandomOp(type, {{"shape", Ints{300, 70}}, {"seed", 4.0f}});
    EXPECT_FALSE(TensorEq(RunRandom(other, {}, 1, &none)[0], a[0]));
    const ir::OpDesc session = RandomOp(type, {{"shape", Ints{300, 70}}, {"_ge_seed", int64_t{3}}});
    const std::vector<Tensor> s1 = RunRandom(session, {}, 1, &none);
    EXPECT_TRUE(TensorEq(s1[0], RunRandom(session, {}, 1, test::TestThreadPool())[0]));
    // The node key (stamped by RandomSeedPass) separates two nodes.
    ir::OpDesc keyed = session;
    keyed.SetAttr("_ge_random_key", int64_t{12345});
    EXPECT_FALSE(TensorEq(RunRandom(keyed, {}, 1, &none)[0], s1[0]));
  }
}

TEST(RandomKernels, Moments) {
  const ir::OpDesc normal =
      RandomOp("RandomNormal", {{"shape", Ints{40000}}, {"mean", 2.0f}, {"scale", 3.0f}, {"seed", 1.0f}});
  const Tensor n = RunRandom(normal, {}, 1, test::TestThreadPool())[0];
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < n.NumElements(); ++i) {
    const double v = n.data<float>()[i];
    s += v, s2 += v * v;
  }
  const double mean = s / 40000, sd = std::sqrt(s2 / 40000 - mean * mean);
  EXPECT_NEAR(mean, 2.0, 0.05);
  EXPECT_NEAR(sd, 3.0, 0.05);
  const ir::OpDesc uniform =
      RandomOp("RandomUniform", {{"shape", Ints{40000}}, {"low", -1.0f}, {"high", 3.0f}, {"dtype", int64_t{11}}});
  const Tensor u = RunRandom(uniform, {}, 1, nullptr)[0];
  ASSERT_EQ(u.dtype(), DataType::kDouble);
  s = 0;
  for (int64_t i = 0; i < u.NumElements(); ++i) {
    const double v = u.data<double>()[i];
    ASSERT_TRUE(v >= -1.0 && v < 3.0) << v;
    s += v;
  }
  EXPECT_NEAR(s / 40000, 1.0, 0.05);
}

TEST(RandomKernels, LikeBernoulliAndMultinomial) {
  const Tensor like = RunRandom(RandomOp("RandomNormalLike", {{"seed", 2.0f}, {"dtype", int64_t{10}}}, 1),
                                {T1<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})}, 1, nullptr)[0];
  EXPECT_EQ(like.dtype(), DataType::kFloat16);
  EXPECT_EQ(like.shape(), (Shape{2, 3}));
  // Probabilities 0 and 1 are certain; the dtype attribute picks the output.
  const Tensor p = F32({0, 1, 1, 0, 1}, {5});
  EXPECT_TRUE(TensorEq(RunRandom(RandomOp("Bernoulli", {}, 1), {p}, 1, nullptr)[0], p));
  EXPECT_TRUE(TensorEq(RunRandom(RandomOp("Bernoulli", {{"dtype", int64_t{9}}}, 1), {p}, 1, nullptr)[0],
                       T1<bool>({false, true, true, false, true}, {5})));
  // Bernoulli(0.3) draws about 30% ones.
  const Tensor many = RunRandom(RandomOp("Bernoulli", {{"seed", 5.0f}}, 1),
                                {F32(std::vector<float>(20000, 0.3f), {20000})}, 1, test::TestThreadPool())[0];
  double ones = 0;
  for (int64_t i = 0; i < many.NumElements(); ++i) ones += many.data<float>()[i];
  EXPECT_NEAR(ones / 20000, 0.3, 0.02);
  // Multinomial: a row with one finite log-probability always draws it.
  const Tensor logits = F32({-INFINITY, 0, -INFINITY, 0, 0, 0}, {2, 3});
  const Tensor drawn =
      RunRandom(RandomOp("Multinomial", {{"sample_size", int64_t{500}}, {"dtype", int64_t{7}}, {"seed", 1.0f}}, 1),
                {logits}, 1, nullptr)[0];
  ASSERT_EQ(drawn.shape(), (Shape{2, 500}));
  int counts[3] = {0, 0, 0};
  for (int64_t j = 0; j < 500; ++j) {
    EXPECT_EQ(drawn.data<int64_t>()[j], 1);
    ++counts[drawn.data<int64_t>()[500 + j]];
  }
  for (int c : counts) EXPECT_NEAR(c, 500 / 3.0, 60);
}

TEST(RandomKernels, HostileSizesAreRefusedBeforeAllocating) {
  auto normal = Engine().kernel_factory().CreateKernel(RandomOp("RandomNormal", {{"shape", Ints{1000000, 1000000}}}));
  ASSERT_FALSE(normal.ok());
  EXPECT_EQ(normal.status().code(), absl::StatusCode::kResourceExhausted) << normal.status();
  auto negative = Engine().kernel_factory().CreateKernel(RandomOp("RandomUniform", {{"shape", Ints{4, -3}}}));
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument) << negative.status();
  auto samples =
      Engine().kernel_factory().CreateKernel(RandomOp("Multinomial", {{"sample_size", int64_t{1000000000000}}}, 1));
  ASSERT_FALSE(samples.ok());
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kResourceExhausted) << samples.status();
  // A batch that makes the output too large is refused at run time.
  const absl::Status s = RunError("Multinomial", {F32(std::vector<float>(200000, 0.0f), {200000, 1})},
                                  {{"sample_size", int64_t{1} << 20}}, 1, Unchecked({ir::ValueType()}));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  const absl::Status nan = RunError("Multinomial", {F32({NAN, 0}, {1, 2})});
  EXPECT_NE(nan.message().find("no finite probability mass"), std::string::npos) << nan;
}

// ---- Integer and quantized ops ----

std::vector<Tensor> Outputs(const absl::StatusOr<std::vector<Value>>& out) {
  std::vector<Tensor> t;
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) {
    for (const Value& v : *out) t.push_back(v.tensor());
  }
  return t;
}

TEST(QuantizedKernels, OnnxExamples) {
  // The ONNX backend tests' values.
  const Tensor a = T1<uint8_t>({11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}, {4, 3});
  const Tensor b = T1<uint8_t>({1, 4, 2, 5, 3, 6}, {3, 2});
  EXPECT_TRUE(TensorEq(Host("MatMulInteger", {a, b, T1<uint8_t>({12}, {1}), T1<uint8_t>({0}, {1})}),
                       T1<int32_t>({-38, -83, -44, -98, -50, -113, -56, -128}, {4, 2})));
  const Tensor x = T1<uint8_t>({2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 1, 3, 3});
  const Tensor w = T1<uint8_t>({1, 1, 1, 1}, {1, 1, 2, 2});
  EXPECT_TRUE(TensorEq(Host("ConvInteger", {x, w, Scalar<uint8_t>(1)}), T1<int32_t>({12, 16, 24, 28}, {1, 1, 2, 2})));
  EXPECT_TRUE(TensorEq(Host("ConvInteger", {x, w, Scalar<uint8_t>(1)}, {{"pads", Ints{1, 1, 1, 1}}}),
                       T1<int32_t>({1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}, {1, 1, 4, 4})));
  const Tensor qa = T1<uint8_t>({208, 236, 0, 238, 3, 214, 255, 29}, {2, 4});
  const Tensor qb = T1<uint8_t>({152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}, {4, 3});
  EXPECT_TRUE(
      TensorEq(Host("QLinearMatMul", {qa, F32({0.0066f}, {1}), T1<uint8_t>({113}, {1}), qb, F32({0.00705f}, {1}),
                                      T1<uint8_t>({114}, {1}), F32({0.0107f}, {1}), T1<uint8_t>({118}, {1})}),
               T1<uint8_t>({168, 115, 255, 1, 66, 151}, {2, 3})));
  auto dq = Outputs(test::RunOp(Engine(), "DynamicQuantizeLinear", {F32({0, 2, -3, -2.5f, 1.34f, 0.5f}, {6})}, {}, 3));
  ASSERT_EQ(dq.size(), 3u);
  EXPECT_TRUE(TensorEq(dq[0], T1<uint8_t>({153, 255, 0, 26, 221, 179}, {6})));
  EXPECT_TRUE(TensorNear(dq[1], Scalar<float>(5.0f / 255)));
  EXPECT_TRUE(TensorEq(dq[2], Scalar<uint8_t>(153)));
  dq = Outputs(test::RunOp(Engine(), "DynamicQuantizeLinear", {F32({0, 0}, {2})}, {}, 3));
  ASSERT_EQ(dq.size(), 3u);
  EXPECT_TRUE(TensorEq(dq[0], T1<uint8_t>({0, 0}, {2})));
}

// The definition in double, for random s8 / u8 operands.
TEST(QuantizedKernels, PerRowPerColumnAndPerChannelAgainstTheDefinition) {
  std::mt19937 rng(7);
  auto bytes = [&](DataType dtype, const Shape& shape) {
    std::vector<double> v(shape.NumElementsUnchecked());
    for (double& e : v)
      e = dtype == DataType::kInt8 ? static_cast<int>(rng() % 256) - 128 : static_cast<int>(rng() % 256);
    return test::MakeTensor(dtype, v, shape);
  };
  // MatMulInteger: s8 A [2, 3, 5] with a per-row zero point [2, 3, 1], u8 B
  // [5, 4] with per-column [4].
  const Tensor a = bytes(DataType::kInt8, {2, 3, 5}), b = bytes(DataType::kUint8, {5, 4});
  const Tensor za = bytes(DataType::kInt8, {2, 3, 1}), zb = bytes(DataType::kUint8, {4});
  std::vector<int32_t> expected(2 * 3 * 4);
  for (int bt = 0; bt < 2; ++bt)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        int32_t acc = 0;
        for (int k = 0; k < 5; ++k) {
          acc += (static_cast<int32_t>(a.GetAsInt64((bt * 3 + i) * 5 + k)) -
                  static_cast<int32_t>(za.GetAsInt64(bt * 3 + i))) *
                 (static_cast<int32_t>(b.GetAsInt64(k * 4 + j)) - static_cast<int32_t>(zb.GetAsInt64(j)));
        }
        expected[(bt * 3 + i) * 4 + j] = acc;
      }
  EXPECT_TRUE(TensorEq(Host("MatMulInteger", {a, b, za, zb}), T1<int32_t>(expected, {2, 3, 4})));
  // QLinearConv: u8 x, s8 w with per-channel scales and zero points, a bias,
  // stride 2 and pads; y within one step of the float definition.
  const Tensor x = bytes(DataType::kUint8, {1, 2, 6, 6}), w = bytes(DataType::kInt8, {3, 2, 3, 3});
  const Tensor zw = bytes(DataType::kInt8, {3});
  const Tensor sw = F32({0.01f, 0.02f, 0.005f}, {3});
  const Tensor bias = T1<int32_t>({100, -50, 7}, {3});
  const float sx = 0.05f, sy = 0.7f;
  const int zx = 120, zy = 5;
  const Tensor y =
      Host("QLinearConv",
           {x, Scalar<float>(sx), Scalar<uint8_t>(zx), w, sw, zw, Scalar<float>(sy), Scalar<uint8_t>(zy), bias},
           {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  ASSERT_EQ(y.shape(), (Shape{1, 3, 3, 3}));
  for (int m = 0; m < 3; ++m)
    for (int oh = 0; oh < 3; ++oh)
      for (int ow = 0; ow < 3; ++ow) {
        double acc = static_cast<double>(bias.GetAsInt64(m));
        for (int c = 0; c < 2; ++c)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              const int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
              if (ih < 0 || ih >= 6 || iw < 0 || iw >= 6) continue;
              acc += (x.GetAsDouble((c * 6 + ih) * 6 + iw) - zx) *
                     (w.GetAsDouble(((m * 2 + c) * 3 + kh) * 3 + kw) - zw.GetAsDouble(m));
            }
        const double q = std::clamp(std::nearbyint(acc * sx * sw.GetAsDouble(m) / sy) + zy, 0.0, 255.0);
        EXPECT_NEAR(y.GetAsDouble((m * 3 + oh) * 3 + ow), q, 1.0) << m << "," << oh << "," << ow;
      }
  const absl::Status s = RunError("QLinearConv", {x, Scalar<float>(sx), Scalar<uint8_t>(zx), w, F32({1, 2}, {2}), zw,
                                                  Scalar<float>(sy), Scalar<uint8_t>(zy)});
  EXPECT_NE(s.message().find("w_scale must have one element or [3]"), std::string::npos) << s;
}

// ---- Signal ops (their values: the ONNX node tests, run by
// host_cpu_onnx_conformance_test) ----

TEST(SignalKernels, DftRoundTripsAndRefusesHostileLengths) {
  // A complex signal [1, 5, 2] through DFT and the inverse DFT comes back.
  const Tensor x = F32({1, 0, 2, -1, 0.5f, 3, -2, 0, 4, 1}, {1, 5, 2});
  const Tensor spectrum = Host("DFT", {x}, {{"axis", 1}});
  EXPECT_TRUE(TensorNear(Host("DFT", {spectrum}, {{"axis", 1}, {"inverse", 1}}), x, {1e-5, 1e-5}));
  // DFT of a unit impulse is all ones; dft_length zero-pads.
  EXPECT_TRUE(TensorNear(Host("DFT", {F32({1}, {1, 1, 1}), I64({4}, {})}, {}, Unchecked()),
                         F32({1, 0, 1, 0, 1, 0, 1, 0}, {1, 4, 2})));
  const absl::Status huge =
      RunError("DFT", {F32({1}, {1, 1, 1}), I64({int64_t{1} << 40}, {})}, {}, 1, Unchecked({ir::ValueType()}));
  EXPECT_EQ(huge.code(), absl::StatusCode::kResourceExhausted) << huge;
  // 2^20 points on 2^12 signals: within the generated-size bound, but the
  // FFTs' work (2^12 * 2^19 * 20 butterflies) is refused.
  const absl::Status slow = RunError("DFT", {F32(std::vector<float>(4096 * 1024), {4096, 1024, 1}), I64({1 << 20}, {})},
                                     {}, 1, Unchecked({ir::ValueType()}));
  EXPECT_EQ(slow.code(), absl::StatusCode::kResourceExhausted) << slow;
  EXPECT_NE(slow.message().find("multiply-adds"), std::string::npos) << slow;
  const absl::Status mel = RunError("MelWeightMatrix", {T1<int32_t>({8}, {}), T1<int32_t>({16}, {}),
                                                        T1<int32_t>({8192}, {}), F32({0}, {}), F32({8192}, {})});
  EXPECT_NE(mel.message().find("outside the 9 bins"), std::string::npos) << mel;
}

}  // namespace
}  // namespace ge::engine::host_cpu
