// host_cpu kernels added for the ONNX vision, detection and selection ops,
// on the edges the ONNX backend tests leave out: ConvTranspose with groups
// and strides against a direct loop, Pad's repeated reflection / wrap /
// cropping, NonMaxSuppression's defaults and thresholds and its visiting
// order (a stable sort's), Unique on strings and without sorting,
// Compress with a short condition, Einsum on integers with broadcast
// ellipses, Det of singular matrices, MaxUnpool's index checks.
#include <algorithm>
#include <cmath>
#include <random>
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

// The definition, visiting boxes in the order of a stable sort by
// descending score: [batch, class, box] rows.
std::vector<int64_t> NaiveNms(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t batches,
                              int64_t classes, int64_t n, int64_t max_per_class, float iou_threshold) {
  const auto iou = [&](int64_t b, int64_t i, int64_t j) {
    const float* p = &boxes[(b * n + i) * 4];
    const float* q = &boxes[(b * n + j) * 4];
    const float h =
        std::min(std::max(p[0], p[2]), std::max(q[0], q[2])) - std::max(std::min(p[0], p[2]), std::min(q[0], q[2]));
    const float w =
        std::min(std::max(p[1], p[3]), std::max(q[1], q[3])) - std::max(std::min(p[1], p[3]), std::min(q[1], q[3]));
    if (h <= 0 || w <= 0) return 0.0f;
    const float area_p = std::abs((p[2] - p[0]) * (p[3] - p[1]));
    const float area_q = std::abs((q[2] - q[0]) * (q[3] - q[1]));
    const float uni = area_p + area_q - h * w;
    return uni > 0 ? h * w / uni : 0.0f;
  };
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const float* sc = &scores[(b * classes + c) * n];
      std::vector<int64_t> order(n);
      for (int64_t i = 0; i < n; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [sc](int64_t l, int64_t r) { return sc[l] > sc[r]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        bool overlaps = false;
        for (int64_t k : kept) overlaps = overlaps || iou(b, i, k) > iou_threshold;
        if (overlaps) continue;
        kept.push_back(i);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  }
  return rows;
}

TEST(NonMaxSuppressionKernel, VisitsBoxesByScoreThenIndexLikeAStableSort) {
  // Scores from a few levels (many ties), boxes on a small grid (many
  // overlaps), cut at several max_output_boxes_per_class.
  const int64_t batches = 2, classes = 3, n = 200;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(0, 9), cell(0, 15);
  std::vector<float> boxes(batches * n * 4), scores(batches * classes * n);
  for (size_t i = 0; i < boxes.size(); i += 4) {
    const float y = static_cast<float>(cell(rng)), x = static_cast<float>(cell(rng));
    boxes[i] = y;
    boxes[i + 1] = x;
    boxes[i + 2] = y + 1.0f + static_cast<float>(level(rng) % 3);
    boxes[i + 3] = x + 1.0f + static_cast<float>(level(rng) % 3);
  }
  for (float& s : scores) s = static_cast<float>(level(rng)) / 10.0f;
  const Tensor tb = F32(boxes, {batches, n, 4});
  const Tensor ts = F32(scores, {batches, classes, n});
  for (int64_t max_per_class : {1, 3, 17, 1000}) {
    for (float iou : {0.0f, 0.3f, 0.7f}) {
      const std::vector<int64_t> want = NaiveNms(boxes, scores, batches, classes, n, max_per_class, iou);
      const Tensor got = Host("NonMaxSuppression", {tb, ts, I64s({max_per_class}), F32({iou}, {1})});
      EXPECT_TRUE(TensorEq(got, I64(want, {static_cast<int64_t>(want.size() / 3), 3})))
          << "max " << max_per_class << " iou " << iou;
    }
  }
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
