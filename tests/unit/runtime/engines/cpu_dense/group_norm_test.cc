// `_GroupNorm` (group_norm.h): the kernel against the definition computed in
// double on every layout it reads (plain, channels-last, channel-blocked),
// group counts from 1 to C, channel counts that fill no 16-block, batch
// above 1, one position, a team, NaN; and FuseGroupNorms on torch's export
// of nn.GroupNorm (text in, text out; what it leaves alone).
#include "runtime/engines/cpu_dense/group_norm.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/ops/op_registry.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

// The offset of logical (n, c, s) of an [N, C, S] tensor in layout `f`.
int64_t At(ir::Format f, int64_t c_total, int64_t s_total, int64_t n, int64_t c, int64_t s) {
  const int64_t b = f == ir::Format::kNChw16c                             ? 16
                    : f == ir::Format::kNChw8c                            ? 8
                    : (f == ir::Format::kNHWC || f == ir::Format::kNDHWC) ? c_total
                                                                          : 1;
  return n * c_total * s_total + (c / b) * s_total * b + s * b + c % b;
}

// `plain` ([N, C, S...]) stored in layout `f` (to_layout) or back.
Tensor Relayout(const Tensor& t, ir::Format f, bool to_layout) {
  const Shape& shape = t.shape();
  const int64_t n = shape.dim(0), c = shape.dim(1), s = t.NumElements() / std::max<int64_t>(1, n * c);
  Tensor out = *Tensor::Allocate(DataType::kFloat, shape);
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < s; ++p) {
        const int64_t plain = (i * c + ch) * s + p, laid = At(f, c, s, i, ch, p);
        if (to_layout) {
          dst[laid] = src[plain];
        } else {
          dst[plain] = src[laid];
        }
      }
    }
  }
  return out;
}

// The definition, in double.
Tensor Reference(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t groups, double eps, bool silu) {
  const Shape& shape = x.shape();
  const int64_t n = shape.dim(0), c = shape.dim(1), s = x.NumElements() / std::max<int64_t>(1, n * c);
  const int64_t per = c / groups;
  Tensor y = *Tensor::Allocate(DataType::kFloat, shape);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* base = xp + (i * c + g * per) * s;
      double mean = 0, var = 0;
      for (int64_t k = 0; k < per * s; ++k) mean += base[k];
      mean /= static_cast<double>(per * s);
      for (int64_t k = 0; k < per * s; ++k) var += (base[k] - mean) * (base[k] - mean);
      var /= static_cast<double>(per * s);
      for (int64_t ch = g * per; ch < (g + 1) * per; ++ch) {
        for (int64_t p = 0; p < s; ++p) {
          const int64_t at = (i * c + ch) * s + p;
          double v = (xp[at] - mean) / std::sqrt(var + eps) * scale.data<float>()[ch] + bias.data<float>()[ch];
          if (silu) v = v / (1.0 + std::exp(-v));
          yp[at] = static_cast<float>(v);
        }
      }
    }
  }
  return y;
}

struct Case {
  std::vector<int64_t> dims;
  int64_t groups;
  ir::Format format;
  bool silu;
  bool team;
};

TEST(GroupNormKernelTest, EveryLayoutMatchesTheDefinition) {
  ASSERT_TRUE(RegisterGroupNormOp(ops::OpRegistry::Global()).ok());
  const ir::Format nhwc = ir::Format::kNHWC, plain = ir::Format::kND;
  const std::vector<Case> cases = {
      {{2, 32, 5, 7}, 8, nhwc, true, false},
      {{1, 128, 16, 16}, 32, nhwc, true, true},
      {{3, 24, 4, 4}, 3, nhwc, false, true},
      {{2, 20, 1, 1}, 5, nhwc, true, false},
      {{2, 20, 1, 1}, 5, plain, false, false},
      {{2, 36, 9, 5}, 1, plain, true, true},
      {{1, 12, 7, 3}, 12, plain, false, false},
      {{2, 48, 6, 6}, 6, ir::Format::kNChw16c, true, true},
      {{1, 16, 3, 5}, 4, ir::Format::kNChw8c, false, false},
      {{2, 10, 3, 4, 5}, 2, ir::Format::kNDHWC, true, true},
      {{2, 10, 3, 4, 5}, 5, plain, false, true},
      {{2, 6, 33}, 3, plain, true, false},
      {{4, 64, 40, 40}, 32, nhwc, false, true},
      {{1, 64, 1000}, 16, plain, true, true},
  };
  uint64_t seed = 7;
  for (const Case& cs : cases) {
    const Shape shape(cs.dims);
    const int64_t c = cs.dims[1];
    Tensor x = test::RandomTensor(DataType::kFloat, shape, seed++);
    // Channels far from zero (the shifted sums) and of different scales.
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const int64_t ch = i / (x.NumElements() / (cs.dims[0] * c)) % c;
      x.data<float>()[i] = x.data<float>()[i] * static_cast<float>(1 + ch % 3) + (ch % 4 == 1 ? 300.0f : 0.0f);
    }
    const Tensor scale = test::RandomTensor(DataType::kFloat, Shape{c}, seed++, 0.5, 1.5);
    const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{c}, seed++);
    ir::OpDesc op("gn", std::string(kGroupNormOp));
    op.AddInput({"", ir::ValueType(ir::TensorDesc(DataType::kFloat, shape, cs.format))});
    op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape{c})});
    op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape{c})});
    op.AddOutput({"", ir::ValueType(ir::TensorDesc(DataType::kFloat, shape, cs.format))});
    op.SetAttr("num_groups", ir::AttrValue(cs.groups));
    op.SetAttr("epsilon", ir::AttrValue(1e-5f));
    if (cs.silu) op.SetAttr("activation", ir::AttrValue(std::string("silu")));
    test::RunOptions options;
    options.output_types = {op.output(0).type};
    if (cs.team) options.thread_pool = test::TestThreadPool();
    auto got = test::RunKernel(PassTestEngine(), op, {Value(Relayout(x, cs.format, true)), Value(scale), Value(bias)},
                               options);
    ASSERT_TRUE(got.ok()) << got.status() << " " << shape.ToString();
    const Tensor want = Reference(x, scale, bias, cs.groups, 1e-5, cs.silu);
    EXPECT_TRUE(test::TensorNear(Relayout((*got)[0].tensor(), cs.format, false), want, {2e-4, 2e-4}))
        << shape.ToString() << " groups " << cs.groups << " " << ir::FormatName(cs.format) << (cs.silu ? " silu" : "");
  }
}

// A NaN poisons its own group only; an empty batch produces an empty output.
TEST(GroupNormKernelTest, NanStaysInItsGroupAndEmptyBatchesWork) {
  ASSERT_TRUE(RegisterGroupNormOp(ops::OpRegistry::Global()).ok());
  for (ir::Format f : {ir::Format::kND, ir::Format::kNHWC}) {
    const Shape shape{2, 8, 3, 3};
    Tensor x = test::RandomTensor(DataType::kFloat, shape, 3);
    x.data<float>()[(1 * 8 + 5) * 9 + 4] = std::numeric_limits<float>::quiet_NaN();  // sample 1, group 2 of 4
    const Tensor scale = test::RandomTensor(DataType::kFloat, Shape{8}, 4, 0.5, 1.5);
    const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{8}, 5);
    ir::OpDesc op("gn", std::string(kGroupNormOp));
    op.AddInput({"", ir::ValueType(ir::TensorDesc(DataType::kFloat, shape, f))});
    op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape{8})});
    op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape{8})});
    op.AddOutput({"", ir::ValueType(ir::TensorDesc(DataType::kFloat, shape, f))});
    op.SetAttr("num_groups", ir::AttrValue(int64_t{4}));
    op.SetAttr("activation", ir::AttrValue(std::string("silu")));
    test::RunOptions options;
    options.output_types = {op.output(0).type};
    auto got = test::RunKernel(PassTestEngine(), op, {Value(Relayout(x, f, true)), Value(scale), Value(bias)}, options);
    ASSERT_TRUE(got.ok()) << got.status();
    const Tensor y = Relayout((*got)[0].tensor(), f, false);
    const Tensor want = Reference(x, scale, bias, 4, 1e-5, true);
    for (int64_t i = 0; i < y.NumElements(); ++i) {
      const bool poisoned = i / 72 == 1 && i % 72 / 9 / 2 == 2;
      EXPECT_EQ(std::isnan(y.data<float>()[i]), poisoned) << i;
      if (!poisoned) {
        EXPECT_NEAR(y.data<float>()[i], want.data<float>()[i], 2e-4) << i;
      }
    }
    const Shape empty{0, 8, 3, 3};
    op.mutable_input(0).type = ir::ValueType(ir::TensorDesc(DataType::kFloat, empty, f));
    op.mutable_output(0).type = op.input(0).type;
    options.output_types = {op.output(0).type};
    auto none = test::RunKernel(
        PassTestEngine(), op, {Value(*Tensor::Allocate(DataType::kFloat, empty)), Value(scale), Value(bias)}, options);
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_EQ((*none)[0].tensor().shape(), empty);
  }
}

// torch's nn.GroupNorm(4, 8) and SiLU: one `_GroupNorm` whose Scale and
// Bias hold the folded weight and bias; the Reshapes, their shape
// computation and the constants go.
TEST(FuseGroupNormsTest, TorchGroupNormAndSiluBecomeOneNode) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8,3,5])
    shape = Const() {value = tensor<i64[3]>[0, 4, -1]} -> (i64[3])
    r1 = Reshape(x, shape) -> (f32[-1,4,30])
    ones = Const() {value = tensor<f32[4]>splat(1)} -> (f32[4])
    zeros = Const() {value = tensor<f32[4]>splat(0)} -> (f32[4])
    norm = InstanceNormalization(r1, ones, zeros) {epsilon = 0.001} -> (f32[-1,4,30])
    xs = Shape(x) -> (i64[4])
    r2 = Reshape(norm, xs) -> (f32[-1,8,3,5])
    w = Const() {value = tensor<f32[8,1,1]>splat(2)} -> (f32[8,1,1])
    m = Mul(r2, w) -> (f32[-1,8,3,5])
    b = Const() {value = tensor<f32[8,1,1]>splat(0.5)} -> (f32[8,1,1])
    a = Add(m, b) -> (f32[-1,8,3,5])
    s = Sigmoid(a) -> (f32[-1,8,3,5])
    y = Mul(a, s) -> (f32[-1,8,3,5])
    out = NetOutput(y)
  })");
  auto changed = FuseGroupNorms(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[-1,8,3,5])
    out = NetOutput(y)
    y_gn_scale = Const() {value = tensor<f32[8]>splat(2)} -> (f32[8])
    y_gn_bias = Const() {value = tensor<f32[8]>splat(0.5)} -> (f32[8])
    y = _GroupNorm(x, y_gn_scale, y_gn_bias) {activation = "silu", epsilon = 0.001, num_groups = 4} -> (f32[-1,8,3,5])
  })"));
}

// Per-group affine in the InstanceNormalization, no Mul / Add, no SiLU;
// a one-element Mul.
TEST(FuseGroupNormsTest, AffineOfTheGroupsAndOneElementScales) {
  auto g = Parse(R"(graph main {
    x = Data() {index = 0} -> (f32[2,4,6])
    shape = Const() {value = tensor<i64[3]>[2, 2, 12]} -> (i64[3])
    r1 = Reshape(x, shape) -> (f32[2,2,12])
    gs = Const() {value = tensor<f32[2]>[2, 3]} -> (f32[2])
    gb = Const() {value = tensor<f32[2]>[1, -1]} -> (f32[2])
    norm = InstanceNormalization(r1, gs, gb) -> (f32[2,2,12])
    back = Const() {value = tensor<i64[3]>[2, 4, 6]} -> (i64[3])
    r2 = Reshape(norm, back) -> (f32[2,4,6])
    k = Const() {value = tensor<f32[]>[10]} -> (f32[])
    y = Mul(k, r2) -> (f32[2,4,6])
    out = NetOutput(y)
  })");
  auto changed = FuseGroupNorms(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    x = Data() {index = 0} -> (f32[2,4,6])
    out = NetOutput(y)
    y_gn_scale = Const() {value = tensor<f32[4]>[20, 20, 30, 30]} -> (f32[4])
    y_gn_bias = Const() {value = tensor<f32[4]>[10, 10, -10, -10]} -> (f32[4])
    y = _GroupNorm(x, y_gn_scale, y_gn_bias) {epsilon = 1e-05, num_groups = 2} -> (f32[2,4,6])
  })"));
}

TEST(FuseGroupNormsTest, LeavesOtherChains) {
  const char* cases[] = {
      // the normalized groups read elsewhere
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,3,5])
        shape = Const() {value = tensor<i64[3]>[0, 4, -1]} -> (i64[3])
        r1 = Reshape(x, shape) -> (f32[2,4,30])
        ones = Const() {value = tensor<f32[4]>splat(1)} -> (f32[4])
        norm = InstanceNormalization(r1, ones, ones) -> (f32[2,4,30])
        back = Const() {value = tensor<i64[4]>[2, 8, 3, 5]} -> (i64[4])
        r2 = Reshape(norm, back) -> (f32[2,8,3,5])
        out = NetOutput(r2, norm)
      })",
      // not back to X's shape
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,3,5])
        shape = Const() {value = tensor<i64[3]>[0, 4, -1]} -> (i64[3])
        r1 = Reshape(x, shape) -> (f32[2,4,30])
        ones = Const() {value = tensor<f32[4]>splat(1)} -> (f32[4])
        norm = InstanceNormalization(r1, ones, ones) -> (f32[2,4,30])
        back = Const() {value = tensor<i64[4]>[2, 8, 15, 1]} -> (i64[4])
        r2 = Reshape(norm, back) -> (f32[2,8,15,1])
        out = NetOutput(r2)
      })",
      // groups that cut through a channel
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,6,4,5])
        shape = Const() {value = tensor<i64[3]>[0, 4, -1]} -> (i64[3])
        r1 = Reshape(x, shape) -> (f32[2,4,30])
        ones = Const() {value = tensor<f32[4]>splat(1)} -> (f32[4])
        norm = InstanceNormalization(r1, ones, ones) -> (f32[2,4,30])
        back = Const() {value = tensor<i64[4]>[2, 6, 4, 5]} -> (i64[4])
        r2 = Reshape(norm, back) -> (f32[2,6,4,5])
        out = NetOutput(r2)
      })",
      // run-time scale
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,3,5])
        sc = Data() {index = 1} -> (f32[4])
        shape = Const() {value = tensor<i64[3]>[0, 4, -1]} -> (i64[3])
        r1 = Reshape(x, shape) -> (f32[2,4,30])
        norm = InstanceNormalization(r1, sc, sc) -> (f32[2,4,30])
        back = Const() {value = tensor<i64[4]>[2, 8, 3, 5]} -> (i64[4])
        r2 = Reshape(norm, back) -> (f32[2,8,3,5])
        out = NetOutput(r2)
      })",
      // an InstanceNormalization of the channels themselves
      R"(graph main {
        x = Data() {index = 0} -> (f32[2,8,3,5])
        ones = Const() {value = tensor<f32[8]>splat(1)} -> (f32[8])
        norm = InstanceNormalization(x, ones, ones) -> (f32[2,8,3,5])
        out = NetOutput(norm)
      })",
  };
  for (const char* text : cases) {
    auto g = Parse(text);
    const std::string before = ir::PrintGraph(*g);
    auto changed = FuseGroupNorms(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
    EXPECT_EQ(ir::PrintGraph(*g), before);
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
