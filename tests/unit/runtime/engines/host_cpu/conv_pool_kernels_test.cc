// Conv and pooling kernels of host_cpu against direct loops written here
// (independent of the kernels' im2col and tap-range logic), for 1-D, 2-D
// and 3-D windows with groups, strides, dilations, pads and auto_pad.
#include <cmath>
#include <limits>

#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::TensorNear;
using test::TensorEq;

struct ConvCase {
  std::vector<int64_t> x_shape = {};  // [N, C, spatial...]
  int64_t m = 0;  // output channels
  std::vector<int64_t> kernel = {};
  int64_t group = 1;
  std::vector<int64_t> strides = {}, dilations = {}, pads = {};  // empty: defaults
  std::string auto_pad = "NOTSET";
  bool bias = true;
};

int64_t At(const std::vector<int64_t>& v, size_t i, int64_t def) { return v.empty() ? def : v[i]; }

// The direct definition: y[n,m,o] = b[m] + sum_{c,k} x[n, g*C/G + c, o*s - p + k*d] w[m,c,k].
// Computes explicit pads for SAME_* from the formula in the ONNX spec.
Tensor NaiveConv(const ConvCase& cc, const Tensor& x, const Tensor& w, const Tensor* b) {
  const size_t nd = cc.kernel.size();
  std::vector<int64_t> in(3, 1), k(3, 1), s(3, 1), d(3, 1), pb(3, 0), out(3, 1);
  for (size_t i = 0; i < nd; ++i) {
    const size_t j = 3 - nd + i;
    in[j] = cc.x_shape[2 + i];
    k[j] = cc.kernel[i];
    s[j] = At(cc.strides, i, 1);
    d[j] = At(cc.dilations, i, 1);
    const int64_t eff = (k[j] - 1) * d[j] + 1;
    if (cc.auto_pad == "NOTSET") {
      pb[j] = At(cc.pads, i, 0);
      out[j] = (in[j] + pb[j] + At(cc.pads, i + nd, 0) - eff) / s[j] + 1;
    } else if (cc.auto_pad == "VALID") {
      out[j] = (in[j] - eff) / s[j] + 1;
    } else {
      out[j] = (in[j] + s[j] - 1) / s[j];
      const int64_t total = std::max<int64_t>(0, (out[j] - 1) * s[j] + eff - in[j]);
      pb[j] = cc.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
  }
  const int64_t n_count = cc.x_shape[0], c_count = cc.x_shape[1], cg = c_count / cc.group;
  const int64_t mg = cc.m / cc.group;
  Shape y_shape{n_count, cc.m};
  for (size_t i = 0; i < nd; ++i) y_shape.push_back(out[3 - nd + i]);
  Tensor y = *Tensor::Allocate(DataType::kFloat, y_shape);
  const float* px = x.data<float>();
  const float* pw = w.data<float>();
  float* py = y.data<float>();
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t m = 0; m < cc.m; ++m)
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            double acc = b ? b->data<float>()[m] : 0.0;
            const int64_t g = m / mg;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i0 = o0 * s[0] - pb[0] + k0 * d[0];
                    const int64_t i1 = o1 * s[1] - pb[1] + k1 * d[1];
                    const int64_t i2 = o2 * s[2] - pb[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    const float xv = px[(((n * c_count + g * cg + c) * in[0] + i0) * in[1] + i1) * in[2] + i2];
                    const float wv = pw[(((m * cg + c) * k[0] + k0) * k[1] + k1) * k[2] + k2];
                    acc += static_cast<double>(xv) * wv;
                  }
            py[(((n * cc.m + m) * out[0] + o0) * out[1] + o1) * out[2] + o2] = static_cast<float>(acc);
          }
  return y;
}

ir::AttrMap ConvAttrs(const ConvCase& cc) {
  ir::AttrMap attrs{{"group", cc.group}, {"auto_pad", cc.auto_pad}, {"kernel_shape", cc.kernel}};
  if (!cc.strides.empty()) attrs["strides"] = cc.strides;
  if (!cc.dilations.empty()) attrs["dilations"] = cc.dilations;
  if (!cc.pads.empty()) attrs["pads"] = cc.pads;
  return attrs;
}

void CheckConv(const ConvCase& cc, uint64_t seed) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape(absl::MakeConstSpan(cc.x_shape)), seed);
  Shape w_shape{cc.m, cc.x_shape[1] / cc.group};
  for (int64_t k : cc.kernel) w_shape.push_back(k);
  const Tensor w = test::RandomTensor(DataType::kFloat, w_shape, seed + 1);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{cc.m}, seed + 2);
  std::vector<Value> inputs{x, w};
  if (cc.bias) inputs.push_back(b);
  test::RunOptions parallel;
  parallel.thread_pool = test::TestThreadPool();
  const Tensor y = Host("Conv", inputs, ConvAttrs(cc), parallel);
  EXPECT_TRUE(TensorNear(y, NaiveConv(cc, x, w, cc.bias ? &b : nullptr), {1e-4, 1e-4}))
      << "x " << Shape(absl::MakeConstSpan(cc.x_shape)).ToString() << " group " << cc.group
      << " auto_pad " << cc.auto_pad;
}

TEST(ConvKernel, TwoDimensionalAgainstDirectLoop) {
  CheckConv({{1, 3, 7, 7}, 4, {3, 3}}, 1);
  CheckConv({{2, 4, 9, 8}, 6, {3, 2}, 1, {2, 1}, {1, 1}, {1, 0, 2, 1}}, 2);
  CheckConv({{1, 4, 10, 10}, 4, {3, 3}, 2, {1, 1}, {2, 2}, {2, 2, 2, 2}}, 3);  // groups, dilation
  CheckConv({{1, 6, 8, 8}, 6, {3, 3}, 6, {2, 2}, {}, {1, 1, 1, 1}}, 4);        // depthwise
  CheckConv({{2, 8, 5, 5}, 16, {1, 1}}, 5);                                    // pointwise fast path
  CheckConv({{1, 3, 11, 13}, 5, {5, 5}, 1, {3, 2}, {}, {}, "NOTSET", false}, 6);
}

TEST(ConvKernel, AutoPadModes) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    CheckConv({{1, 2, 7, 6}, 3, {4, 3}, 1, {2, 2}, {}, {}, mode}, 7);
    CheckConv({{1, 2, 5, 5}, 2, {2, 2}, 1, {1, 1}, {2, 1}, {}, mode}, 8);
  }
}

TEST(ConvKernel, OneAndThreeDimensional) {
  CheckConv({{2, 3, 17}, 4, {5}, 1, {2}, {2}, {3, 1}}, 9);
  CheckConv({{1, 2, 5, 6, 7}, 4, {3, 2, 3}, 2, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 1, 1, 0}}, 10);
}

TEST(ConvKernel, OtherFloatTypes) {
  const ConvCase cc{{1, 2, 6, 6}, 3, {3, 3}, 1, {}, {}, {1, 1, 1, 1}};
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{1, 2, 6, 6}, 11);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{3, 2, 3, 3}, 12);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{3}, 13);
  const Tensor expected = NaiveConv(cc, x, w, &b);
  auto to = [](const Tensor& t, DataType d) {
    return *test::RunOp1(Engine(), "Cast", {t}, {{"to", static_cast<int64_t>(d)}});
  };
  for (DataType dtype : {DataType::kDouble, DataType::kFloat16, DataType::kBFloat16}) {
    const Tensor y = Host("Conv", {to(x, dtype), to(w, dtype), to(b, dtype)}, ConvAttrs(cc));
    ASSERT_EQ(y.dtype(), dtype);
    const test::Tolerance tol =
        dtype == DataType::kDouble ? test::Tolerance{1e-5, 1e-5} : test::Tolerance{0.1, 0.05};
    EXPECT_TRUE(TensorNear(to(y, DataType::kFloat), expected, tol)) << DataTypeName(dtype);
  }
}

TEST(ConvKernel, ZeroBatchAndErrors) {
  const Tensor x = *Tensor::Allocate(DataType::kFloat, Shape{0, 2, 5, 5});
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{3, 2, 3, 3}, 1);
  EXPECT_EQ(Host("Conv", {x, w}).shape(), (Shape{0, 3, 3, 3}));
  // Channels do not match W: caught by inference or the kernel, naming the node.
  const absl::Status s = RunError("Conv", {test::RandomTensor(DataType::kFloat, Shape{1, 4, 5, 5}, 2), w});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("channels"), absl::string_view::npos) << s;
  // A bad auto_pad is rejected when the kernel is created.
  ir::OpDesc op = test::OpBuilder("Conv", "conv7").Attr("auto_pad", "SIDEWAYS").Build();
  auto kernel = Engine().kernel_factory().CreateKernel(op);
  EXPECT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("conv7"), absl::string_view::npos) << kernel.status();
}

// ---- Pooling ----

TEST(MaxPoolKernel, TwoDimensionalWithIndices) {
  // 1x1x4x4, 2x2 window, stride 2.
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>((i * 7) % 16);
  const Tensor x = F32(v, {1, 1, 4, 4});
  auto out = test::RunOp(Engine(), "MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                                    {"strides", std::vector<int64_t>{2, 2}}}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  // Windows: {0,7,12,3}=12@4... computed by hand from v = i*7 mod 16.
  // v: 0 7 14 5 / 12 3 10 1 / 8 15 6 13 / 4 11 2 9
  EXPECT_TRUE(TensorEq((*out)[0].tensor(), F32({12, 14, 15, 13}, {1, 1, 2, 2})));
  EXPECT_TRUE(TensorEq((*out)[1].tensor(), I64({4, 2, 9, 11}, {1, 1, 2, 2})));
  // Column-major indices.
  out = test::RunOp(Engine(), "MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                               {"strides", std::vector<int64_t>{2, 2}},
                                               {"storage_order", 1}}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(TensorEq((*out)[1].tensor(), I64({1, 8, 6, 14}, {1, 1, 2, 2})));
}

TEST(MaxPoolKernel, PadsCeilModeDilationAndIntegers) {
  const Tensor x = F32({1, 2, 3, 4, 5}, {1, 1, 5});
  // k=2, s=2, ceil_mode: windows [0,1] [2,3] [4]: 3 outputs.
  EXPECT_TRUE(TensorEq(Host("MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2}},
                                             {"strides", std::vector<int64_t>{2}}, {"ceil_mode", 1}}),
                       F32({2, 4, 5}, {1, 1, 3})));
  // Pads are never the maximum (they act as -inf).
  EXPECT_TRUE(TensorEq(Host("MaxPool", {F32({-5, -3}, {1, 1, 2})}, {{"kernel_shape", std::vector<int64_t>{2}},
                                                                   {"pads", std::vector<int64_t>{1, 1}}}),
                       F32({-5, -3, -3}, {1, 1, 3})));
  // Dilation 2: windows {0,2}, {1,3}, {2,4}.
  EXPECT_TRUE(TensorEq(Host("MaxPool", {F32({5, 1, 2, 9, 3}, {1, 1, 5})},
                            {{"kernel_shape", std::vector<int64_t>{2}}, {"dilations", std::vector<int64_t>{2}}}),
                       F32({5, 9, 3}, {1, 1, 3})));
  EXPECT_TRUE(TensorEq(Host("MaxPool", {T1<uint8_t>({1, 200, 3, 4}, {1, 1, 4})}, {{"kernel_shape", std::vector<int64_t>{2}}}),
                       T1<uint8_t>({200, 200, 4}, {1, 1, 3})));
}

// The direct definition of AveragePool over one dim with the ONNX divisor
// rules, for a 1-D input.
std::vector<float> NaiveAvg1D(const std::vector<float>& x, int64_t k, int64_t s, int64_t pb, int64_t pe,
                              bool ceil_mode, bool include_pad) {
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t span = n + pb + pe - k;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= n + pb) --out;
  std::vector<float> y;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * s - pb;
    double sum = 0;
    int64_t valid = 0, padded = 0;
    for (int64_t i = start; i < start + k; ++i) {
      if (i < n + pe) ++padded;
      if (i >= 0 && i < n) sum += x[i], ++valid;
    }
    y.push_back(static_cast<float>(sum / (include_pad ? padded : valid)));
  }
  return y;
}

TEST(AveragePoolKernel, CountIncludePadAndCeilMode) {
  const std::vector<float> v{1, 2, 3, 4, 5, 6, 7};
  for (bool ceil_mode : {false, true}) {
    for (bool include_pad : {false, true}) {
      const std::vector<float> expected = NaiveAvg1D(v, 3, 2, 1, 1, ceil_mode, include_pad);
      const Tensor y = Host("AveragePool", {F32(v, {1, 1, 7})},
                            {{"kernel_shape", std::vector<int64_t>{3}}, {"strides", std::vector<int64_t>{2}},
                             {"pads", std::vector<int64_t>{1, 1}}, {"ceil_mode", int64_t{ceil_mode}},
                             {"count_include_pad", int64_t{include_pad}}});
      EXPECT_TRUE(TensorNear(y, F32(expected, {1, 1, static_cast<int64_t>(expected.size())})))
          << "ceil_mode " << ceil_mode << " count_include_pad " << include_pad;
    }
  }
}

TEST(AveragePoolKernel, TwoDimensionalSameUpper) {
  // 3x3 input, k=2, SAME_UPPER: pad only at the end; the divisor counts
  // valid elements.
  const Tensor x = F32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  const Tensor y = Host("AveragePool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"auto_pad", "SAME_UPPER"}});
  EXPECT_TRUE(TensorNear(y, F32({3, 4, 4.5f, 6, 7, 7.5f, 7.5f, 8.5f, 9}, {1, 1, 3, 3})));
}

TEST(GlobalPoolKernels, AverageAndMax) {
  const Tensor x = F32({1, 2, 3, 4, -1, -2, -3, -8}, {1, 2, 2, 2});
  EXPECT_TRUE(TensorNear(Host("GlobalAveragePool", {x}), F32({2.5f, -3.5f}, {1, 2, 1, 1})));
  EXPECT_TRUE(TensorEq(Host("GlobalMaxPool", {x}), F32({4, -1}, {1, 2, 1, 1})));
  const Tensor big = test::RandomTensor(DataType::kFloat, Shape{4, 64, 7, 7}, 3);
  test::RunOptions parallel;
  parallel.thread_pool = test::TestThreadPool();
  EXPECT_TRUE(TensorEq(Host("GlobalAveragePool", {big}, {}, parallel), Host("GlobalAveragePool", {big})));
}

}  // namespace
}  // namespace ge::engine::host_cpu
