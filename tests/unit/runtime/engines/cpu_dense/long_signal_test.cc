// cpu_dense's kernels on 1-D signals: a Conv whose output rows are at least
// kLongSignalWidth long runs on oneDNN's direct JIT kernel rather than
// brgconv (dense_ops.h: brgconv's primitive holds about 1 KB per output
// sample), and a BatchNormalization over a plain [N, C, W] runs as
// [N, C, 1, W] (oneDNN 2.6 has only its reference kernel for the 3-D form).
// Both against host_cpu: widths at and around the threshold, dilations and
// pads, bias, an add and a LeakyRelu post-op, batches; which convolutions
// take the direct kernel; BatchNorm shapes with W of 1 and 0 images.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/engines/cpu_dense/dense_ops.h"
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

TEST(LongSignalConv, OnlyOneDimensionalRowsOfTheThresholdOrLonger) {
  EXPECT_TRUE(LongSignalConv(Shape{1, 8, kLongSignalWidth}));
  EXPECT_TRUE(LongSignalConv(Shape{4, 3, 65536}));
  EXPECT_FALSE(LongSignalConv(Shape{1, 8, kLongSignalWidth - 1}));
  EXPECT_FALSE(LongSignalConv(Shape{1, 8, 1, 8192}));  // 2-D: not measured
  EXPECT_FALSE(LongSignalConv(Shape{1, 8, 4, 4, 8192}));
  EXPECT_FALSE(LongSignalConv(Shape{1, 8, -1}));
}

struct ConvSpec1d {
  int64_t n, ic, oc, w, k, dilation, pad, stride;
  bool bias, fused;
};

// The output of `s` on cpu_dense against host_cpu, and whether the kernel's
// primitive was built by the long-signal rule.
void CheckConv(const ConvSpec1d& s, Rng& rng) {
  SCOPED_TRACE(::testing::Message() << "n" << s.n << " " << s.ic << "->" << s.oc << " w" << s.w << " k" << s.k << " d"
                                    << s.dilation << " p" << s.pad << " s" << s.stride << (s.fused ? " fused" : ""));
  ir::AttrMap attrs = {{"pads", ir::AttrValue(std::vector<int64_t>{s.pad, s.pad})},
                       {"dilations", ir::AttrValue(std::vector<int64_t>{s.dilation})},
                       {"strides", ir::AttrValue(std::vector<int64_t>{s.stride})}};
  std::vector<Value> inputs = {rng.Random(DataType::kFloat, Shape{s.n, s.ic, s.w}),
                               rng.Random(DataType::kFloat, Shape{s.oc, s.ic, s.k}, -0.3, 0.3)};
  if (s.bias) inputs.push_back(rng.Random(DataType::kFloat, Shape{s.oc}));
  Case plain = MakeCase("Conv", inputs, attrs);
  auto conv = test::RunKernel(Host(), plain.op, plain.inputs);
  ASSERT_TRUE(conv.ok()) << conv.status();
  Tensor want = (*conv)[0].tensor();
  ir::OpDesc op = plain.op;
  std::vector<Value> dense_inputs = inputs;
  if (s.fused) {
    const Tensor residual = rng.Random(DataType::kFloat, want.shape());
    auto sum = HostOp("Add", {Value(want), Value(residual)});
    ASSERT_TRUE(sum.ok()) << sum.status();
    auto leaky = HostOp("LeakyRelu", {Value(*sum)}, {{"alpha", ir::AttrValue(0.1f)}});
    ASSERT_TRUE(leaky.ok()) << leaky.status();
    want = *leaky;
    attrs["base"] = ir::AttrValue(std::string("Conv"));
    attrs["post_ops"] = ir::AttrValue(std::vector<std::string>{"add", "relu"});  // relu with alpha: LeakyRelu
    attrs["post_alpha"] = ir::AttrValue(std::vector<float>{0.0f, 0.1f});
    attrs["post_beta"] = ir::AttrValue(std::vector<float>{0.0f, 0.0f});
    dense_inputs.push_back(Value(residual));
    op = MakeCase("_DenseFused", dense_inputs, attrs).op;
  }
  test::RunOptions options;
  auto types = test::InferOutputTypes(plain.op, plain.inputs);
  ASSERT_TRUE(types.ok()) << types.status();
  options.output_types = *types;
  options.const_inputs = {1};
  const int64_t builds = LongSignalConvBuilds().load();
  auto got = test::RunKernel(Dense(), op, dense_inputs, options);
  ASSERT_TRUE(got.ok()) << got.status();
  const int64_t ow = (*types)[0].tensor().shape.dim(2);
  // oneDNN picks brgconv (then replaced) on AVX-512 hosts only.
  if (LongSignalConvBuilds().load() > builds) {
    EXPECT_GE(ow, kLongSignalWidth);
  }
  EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), want, test::Tolerance{1e-4, 1e-4}));
}

TEST(LongSignalConv, MatchesTheReferenceAroundTheThreshold) {
  Rng rng(41);
  const std::vector<ConvSpec1d> specs = {
      {1, 8, 8, kLongSignalWidth, 3, 1, 1, 1, true, false},      // at the threshold
      {1, 8, 8, kLongSignalWidth - 1, 3, 1, 1, 1, true, false},  // one short of it
      {1, 8, 8, 8192, 11, 5, 25, 1, true, true},                 // a vocoder's dilated residual unit
      {2, 16, 16, 4100, 7, 3, 9, 1, false, false},               // batch 2, odd width, no bias
      {1, 3, 32, 9000, 5, 1, 0, 2, true, false},                 // strided, unpadded, 3 input channels
      {1, 32, 13, 2048 + 6, 7, 1, 0, 1, true, true},             // unpadded to exactly 2048 outputs
  };
  for (const ConvSpec1d& s : specs) CheckConv(s, rng);
}

TEST(LongSignalConv, TakesTheDirectKernelWhereBrgconvWouldRun) {
  Rng rng(43);
  const int64_t before = LongSignalConvBuilds().load();
  CheckConv({1, 8, 8, 8192, 3, 1, 1, 1, true, false}, rng);
  const bool replaced = LongSignalConvBuilds().load() > before;
  // Where oneDNN offers brgconv (AVX-512) a long row must not stay on it; a
  // short one never counts.
  if (replaced) {
    const int64_t mid = LongSignalConvBuilds().load();
    CheckConv({1, 8, 8, 1024, 3, 1, 1, 1, true, false}, rng);
    EXPECT_EQ(LongSignalConvBuilds().load(), mid);
  } else {
    GTEST_SKIP() << "oneDNN runs no brgconv here";
  }
}

TEST(BatchNorm1d, PlainThreeDimensionalInputsMatchTheReference) {
  Rng rng(47);
  const std::vector<Shape> shapes = {{7, 128, 42}, {2, 3, 1}, {1, 5, 300}, {0, 4, 3}, {3, 1, 17}};
  for (const Shape& x : shapes) {
    const Shape c{x.dim(1)};
    for (float epsilon : {1e-5f, 0.1f}) {
      Case bn = MakeCase(
          "BatchNormalization",
          {rng.Random(DataType::kFloat, x, -3, 3), rng.Random(DataType::kFloat, c), rng.Random(DataType::kFloat, c),
           rng.Random(DataType::kFloat, c), rng.Random(DataType::kFloat, c, 0.1, 2.0)},
          {{"epsilon", ir::AttrValue(epsilon)}});
      EXPECT_TRUE(Conforms(bn)) << x.ToString() << " epsilon " << epsilon;
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
