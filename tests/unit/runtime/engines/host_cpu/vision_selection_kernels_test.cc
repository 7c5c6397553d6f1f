// host_cpu kernels added for the ONNX vision, detection and selection ops,
// on the edges the ONNX backend tests leave out: ConvTranspose with groups
// and strides against a direct loop, Pad's repeated reflection / wrap /
// cropping, NonMaxSuppression's defaults and thresholds, Unique on strings
// and without sorting, Compress with a short condition, Einsum on integers
// with broadcast ellipses, Det of singular matrices, MaxUnpool's index
// checks.
#include <string>
#include <vector>

#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::TensorEq;
using test::TensorNear;
using Ints = std::vector<int64_t>;

Tensor Iota(DataType dtype, const Shape& shape) {
  std::vector<double> v(shape.NumElementsUnchecked());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 7) - 3;
  return test::MakeTensor(dtype, v, shape);
}

std::vector<Tensor> Outputs(const absl::StatusOr<std::vector<Value>>& out) {
  std::vector<Tensor> t;
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) {
    for (const Value& v : *out) t.push_back(v.tensor());
  }
  return t;
}

// The definition, 1-D: y[n, g*mg + m, i*s + k*d - pb] += x[n, g*cg + c, i] * w[g*cg + c, m, k].
Tensor NaiveConvTranspose1D(const Tensor& x, const Tensor& w, int64_t group, int64_t stride, int64_t dilation,
                            int64_t pad_begin, int64_t out_len) {
  const int64_t n_count = x.shape().dim(0), c = x.shape().dim(1), in = x.shape().dim(2);
  const int64_t mg = w.shape().dim(1), k_len = w.shape().dim(2), cg = c / group;
  Tensor y = *Tensor::Allocate(DataType::kFloat, Shape{n_count, mg * group, out_len});
  float* py = y.data<float>();
  std::fill(py, py + y.NumElements(), 0.0f);
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t g = 0; g < group; ++g)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t m = 0; m < mg; ++m)
          for (int64_t i = 0; i < in; ++i)
            for (int64_t k = 0; k < k_len; ++k) {
              const int64_t o = i * stride + k * dilation - pad_begin;
              if (o < 0 || o >= out_len) continue;
              py[(n * mg * group + g * mg + m) * out_len + o] +=
                  x.data<float>()[(n * c + g * cg + ci) * in + i] *
                  w.data<float>()[((g * cg + ci) * mg + m) * k_len + k];
            }
  return y;
}

TEST(ConvTransposeKernel, GroupsStridesDilationsAgainstTheDefinition) {
  const Tensor x = Iota(DataType::kFloat, Shape{2, 4, 5});
  const Tensor w = Iota(DataType::kFloat, Shape{4, 3, 3});
  // out = 2 * 4 + 1 + 2 * 2 + 1 - 1 - 2 = 11
  const Tensor y = Host("ConvTranspose", {x, w},
                        {{"group", 2}, {"strides", Ints{2}}, {"dilations", Ints{2}}, {"pads", Ints{1, 2}},
                         {"output_padding", Ints{1}}});
  EXPECT_TRUE(TensorNear(y, NaiveConvTranspose1D(x, w, 2, 2, 2, 1, 11)));
}

TEST(PadKernel, RepeatedReflectionWrapAndCropping) {
  const Tensor x = T1<int32_t>({1, 2, 3}, {3});
  // Reflection past the dim repeats (as np.pad does).
  EXPECT_TRUE(TensorEq(Host("Pad", {x, I64s({4, 4})}, {{"mode", "reflect"}}),
                       T1<int32_t>({1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}, {11})));
  EXPECT_TRUE(TensorEq(Host("Pad", {x, I64s({2, 3})}, {{"mode", "wrap"}}),
                       T1<int32_t>({2, 3, 1, 2, 3, 1, 2, 3}, {8})));
  EXPECT_TRUE(TensorEq(Host("Pad", {x, I64s({-1, 2})}, {{"mode", "edge"}}), T1<int32_t>({2, 3, 3, 3}, {4})));
  EXPECT_TRUE(TensorEq(Host("Pad", {T1<std::string>({"a", "b"}, {1, 2}), I64s({0, 1, 1, 0}),
                                    T1<std::string>({"z"}, {})}),
                       T1<std::string>({"z", "a", "b", "z", "z", "z"}, {2, 3})));
  const absl::Status s = RunError("Pad", {T1<int32_t>({}, {0}), I64s({1, 0})}, {{"mode", "edge"}});
  EXPECT_NE(s.message().find("non-empty"), absl::string_view::npos) << s;
}

TEST(NonMaxSuppressionKernel, DefaultsAndThresholds) {
  const Tensor boxes = F32({0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 5, 1, 6}, {1, 3, 4});
  const Tensor scores = F32({0.9f, 0.8f, 0.5f}, {1, 1, 3});
  // No max_output_boxes_per_class: nothing is selected.
  EXPECT_EQ(Host("NonMaxSuppression", {boxes, scores}).shape(), (Shape{0, 3}));
  const Tensor max = I64s({10});
  // iou_threshold 0 (default): box 1 overlaps box 0 and goes.
  EXPECT_TRUE(TensorEq(Host("NonMaxSuppression", {boxes, scores, max}), I64({0, 0, 0, 0, 0, 2}, {2, 3})));
  // A score equal to the threshold is not above it.
  EXPECT_TRUE(TensorEq(Host("NonMaxSuppression", {boxes, scores, max, F32({0.9f}, {1}), F32({0.5f}, {1})}),
                       I64({0, 0, 0, 0, 0, 1}, {2, 3})));
  const absl::Status s = RunError("NonMaxSuppression", {boxes, scores, max, F32({1.5f}, {1})});
  EXPECT_NE(s.message().find("iou_threshold"), absl::string_view::npos) << s;
}

TEST(UniqueKernel, StringsUnsortedAndAxis) {
  std::vector<Tensor> out = Outputs(
      test::RunOp(Engine(), "Unique", {T1<std::string>({"b", "a", "b", "c", "a"}, {5})}, {{"sorted", 0}}, 4));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(TensorEq(out[0], T1<std::string>({"b", "a", "c"}, {3})));
  EXPECT_TRUE(TensorEq(out[1], I64s({0, 1, 3})));
  EXPECT_TRUE(TensorEq(out[2], I64s({0, 1, 0, 2, 1})));
  EXPECT_TRUE(TensorEq(out[3], I64s({2, 2, 1})));
  // Columns along axis 1, sorted lexicographically.
  out = Outputs(test::RunOp(Engine(), "Unique", {T1<int32_t>({2, 1, 2, 0, 5, 0}, {2, 3})}, {{"axis", 1}}, 4));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(TensorEq(out[0], T1<int32_t>({1, 2, 5, 0}, {2, 2})));
  EXPECT_TRUE(TensorEq(out[2], I64s({1, 0, 1})));
}

TEST(CompressKernel, ShortConditionAndNoAxis) {
  const Tensor x = Iota(DataType::kFloat, Shape{3, 2});
  const Tensor y = Host("Compress", {x, T1<bool>({false, true}, {2})}, {{"axis", 0}});
  EXPECT_TRUE(TensorEq(y, F32({-1, 0}, {1, 2})));
  EXPECT_TRUE(TensorEq(Host("Compress", {x, T1<bool>({true, false, false, true}, {4})}), F32({-3, 0}, {2})));
  const absl::Status s = RunError("Compress", {x, T1<bool>({true, true, true, true}, {4})}, {{"axis", 0}});
  EXPECT_NE(s.message().find("condition has 4 values"), absl::string_view::npos) << s;
}

TEST(EinsumKernel, IntegersBroadcastEllipsisAndImplicitOutput) {
  const Tensor a = T1<int32_t>({1, 2, 3, 4}, {2, 2});
  const Tensor b = T1<int32_t>({5, 6, 7, 8}, {2, 2});
  EXPECT_TRUE(TensorEq(Host("Einsum", {a, b}, {{"equation", "ij,jk"}}), T1<int32_t>({19, 22, 43, 50}, {2, 2})));
  EXPECT_TRUE(TensorEq(Host("Einsum", {a}, {{"equation", "ii"}}), T1<int32_t>({5}, {})));
  // [1, 2] broadcasts against [3, 2] in the ellipsis.
  const Tensor c = F32({1, 2}, {1, 2});
  const Tensor d = F32({1, 1, 2, 2, 3, 3}, {3, 2});
  EXPECT_TRUE(TensorNear(Host("Einsum", {c, d}, {{"equation", "...i,...i->..."}}), F32({3, 6, 9}, {3})));
}

TEST(DetKernel, SingularAndDoubles) {
  EXPECT_TRUE(TensorNear(Host("Det", {F32({1, 2, 2, 4}, {2, 2})}), F32({0}, {})));
  EXPECT_TRUE(TensorNear(Host("Det", {T1<double>({7, 2}, {2, 1, 1})}), T1<double>({7, 2}, {2})));
  // A row swap flips the sign.
  EXPECT_TRUE(TensorNear(Host("Det", {F32({0, 1, 1, 0}, {2, 2})}), F32({-1}, {})));
}

TEST(MaxUnpoolKernel, IndexOutsideTheOutputIsAnError) {
  const absl::Status s = RunError("MaxUnpool", {F32({1, 2}, {1, 1, 1, 2}), I64({0, 9}, {1, 1, 1, 2})},
                                  {{"kernel_shape", Ints{1, 2}}, {"strides", Ints{1, 2}}});
  EXPECT_NE(s.message().find("index 9"), absl::string_view::npos) << s;
}

}  // namespace
}  // namespace ge::engine::host_cpu
