// host_cpu kernels added for the ONNX vision, detection and selection ops,
// on the edges the ONNX backend tests leave out: ConvTranspose with groups
// and strides against a direct loop, Pad's repeated reflection / wrap /
// cropping, NonMaxSuppression's defaults and thresholds and its visiting
// order (a stable sort's), Unique on strings and without sorting,
// Compress with a short condition, Einsum on integers with broadcast
// ellipses, Det of singular matrices, MaxUnpool's index checks; a detection
// head's many boxes through NonMaxSuppression's grid, RoiAlign against its
// definition in float and double.
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

TEST(NonMaxSuppressionKernel, ManyBoxesAsBatchedDetectionHeadsSendThem) {
  // torchvision's batched NMS: one class, every box offset into a region of
  // its own class; plus boxes of every size, degenerate and non-finite
  // boxes, in center-point form too. Enough boxes for the kernel's grid.
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int64_t n = 1500;
  std::vector<float> boxes(n * 4), scores(n);
  for (int64_t i = 0; i < n; ++i) {
    const float region = static_cast<float>(i % 12) * 101.0f;
    const float size = i % 50 == 0 ? 90.0f : 4.0f + 20.0f * unit(rng);
    const float y = region + 70.0f * unit(rng), x = region + 70.0f * unit(rng);
    float* b = &boxes[i * 4];
    b[0] = y;
    b[1] = x;
    b[2] = i % 97 == 0 ? y : y + size;  // a few without area
    b[3] = x + size * (0.5f + unit(rng));
    if (i % 13 == 0) std::swap(b[0], b[2]);  // the other diagonal
    scores[i] = static_cast<float>(static_cast<int>(unit(rng) * 40)) / 40.0f;
  }
  boxes[7 * 4 + 2] = NAN;
  boxes[11 * 4 + 3] = INFINITY;
  boxes[19 * 4 + 0] = -INFINITY;
  const Tensor tb = F32(boxes, {1, n, 4});
  const Tensor ts = F32(scores, {1, 1, n});
  for (float iou : {0.0f, 0.2f, 0.5f, 0.9f}) {
    const std::vector<int64_t> want = NaiveNms(boxes, scores, 1, 1, n, n, iou);
    const Tensor got = Host("NonMaxSuppression", {tb, ts, I64s({n}), F32({iou}, {1})});
    EXPECT_TRUE(TensorEq(got, I64(want, {static_cast<int64_t>(want.size() / 3), 3}))) << "iou " << iou;
  }
  // Center-point boxes: the same boxes as corners.
  std::vector<float> centers(n * 4);
  for (int64_t i = 0; i < n; ++i) {
    const float* b = &boxes[i * 4];
    float* c = &centers[i * 4];
    c[0] = (b[1] + b[3]) / 2;
    c[1] = (b[0] + b[2]) / 2;
    c[2] = std::abs(b[3] - b[1]);
    c[3] = std::abs(b[2] - b[0]);
  }
  const Tensor got = Host("NonMaxSuppression", {F32(centers, {1, n, 4}), ts, I64s({n}), F32({0.5f}, {1})},
                          {{"center_point_box", int64_t{1}}});
  const Tensor corners = Host("NonMaxSuppression", {tb, ts, I64s({n}), F32({0.5f}, {1})});
  EXPECT_GT(got.shape().dim(0), 100);
  EXPECT_LT(std::abs(got.shape().dim(0) - corners.shape().dim(0)), 10);  // rounding of the centers only
}

// RoiAlign's definition in double: bilinear samples, averaged or the
// largest weighted corner, per bin.
std::vector<double> NaiveRoiAlign(const std::vector<float>& x, int64_t c, int64_t h, int64_t w,
                                  const std::vector<float>& rois, const std::vector<int64_t>& batch, int64_t oh,
                                  int64_t ow, int64_t ratio, double scale, bool half_pixel, bool max_mode) {
  std::vector<double> y;
  const auto sample = [&](const float* plane, double sy, double sx) {
    if (sy < -1.0 || sy > static_cast<double>(h) || sx < -1.0 || sx > static_cast<double>(w)) return 0.0;
    sy = std::max(sy, 0.0);
    sx = std::max(sx, 0.0);
    int64_t y0 = static_cast<int64_t>(sy), x0 = static_cast<int64_t>(sx), y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= h - 1) y0 = y1 = h - 1, sy = static_cast<double>(y0);
    if (x0 >= w - 1) x0 = x1 = w - 1, sx = static_cast<double>(x0);
    const double ly = sy - static_cast<double>(y0), lx = sx - static_cast<double>(x0);
    const double v[4] = {(1 - ly) * (1 - lx) * plane[y0 * w + x0], (1 - ly) * lx * plane[y0 * w + x1],
                         ly * (1 - lx) * plane[y1 * w + x0], ly * lx * plane[y1 * w + x1]};
    return max_mode ? *std::max_element(v, v + 4) : v[0] + v[1] + v[2] + v[3];
  };
  for (size_t r = 0; r < batch.size(); ++r) {
    const double off = half_pixel ? 0.5 : 0.0;
    const double x0 = rois[r * 4] * scale - off, y0 = rois[r * 4 + 1] * scale - off;
    double rw = rois[r * 4 + 2] * scale - off - x0, rh = rois[r * 4 + 3] * scale - off - y0;
    if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    const int64_t gh = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(bh));
    const int64_t gw = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(bw));
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* plane = &x[(batch[r] * c + ch) * h * w];
      for (int64_t ph = 0; ph < oh; ++ph) {
        for (int64_t pw = 0; pw < ow; ++pw) {
          double acc = 0;
          for (int64_t iy = 0; iy < gh; ++iy) {
            for (int64_t ix = 0; ix < gw; ++ix) {
              const double v = sample(plane, y0 + ph * bh + (iy + 0.5) * bh / gh, x0 + pw * bw + (ix + 0.5) * bw / gw);
              acc = max_mode ? (iy + ix == 0 ? v : std::max(acc, v)) : acc + v;
            }
          }
          y.push_back(max_mode ? acc : acc / static_cast<double>(std::max<int64_t>(gh * gw, 1)));
        }
      }
    }
  }
  return y;
}

TEST(RoiAlignKernel, MatchesTheDefinitionInFloatAndDouble) {
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int64_t n = 2, c = 5, h = 13, w = 17, r = 40;
  std::vector<float> x(n * c * h * w), rois(r * 4);
  for (float& v : x) v = unit(rng) * 4 - 2;
  std::vector<int64_t> batch(r);
  for (int64_t i = 0; i < r; ++i) {
    // Regions inside, across and outside the image (scale 0.5), some tiny.
    const float x1 = unit(rng) * 40 - 6, y1 = unit(rng) * 32 - 6;
    const float size = i % 7 == 0 ? 0.3f : 2.0f + unit(rng) * 20;
    rois[i * 4] = x1;
    rois[i * 4 + 1] = y1;
    rois[i * 4 + 2] = x1 + size;
    rois[i * 4 + 3] = y1 + size * (0.5f + unit(rng));
    batch[i] = i % n;
  }
  for (const char* mode : {"avg", "max"}) {
    for (const char* transform : {"half_pixel", "output_half_pixel"}) {
      for (int64_t ratio : {0, 2}) {
        const ir::AttrMap attrs = {
            {"mode", std::string(mode)},   {"coordinate_transformation_mode", std::string(transform)},
            {"output_height", int64_t{3}}, {"output_width", int64_t{4}},
            {"sampling_ratio", ratio},     {"spatial_scale", 0.5f}};
        const std::vector<double> want =
            NaiveRoiAlign(x, c, h, w, rois, batch, 3, 4, ratio, 0.5, std::string(transform) == "half_pixel",
                          std::string(mode) == "max");
        const Shape out{r, c, 3, 4};
        const Tensor got = Host("RoiAlign", {F32(x, {n, c, h, w}), F32(rois, {r, 4}), I64(batch, {r})}, attrs);
        EXPECT_TRUE(TensorNear(got, test::MakeTensor(DataType::kFloat, want, out), test::Tolerance{1e-5, 1e-5}))
            << mode << " " << transform << " ratio " << ratio;
        // Doubles take the other path: the same values to double precision.
        std::vector<double> xd(x.begin(), x.end()), rd(rois.begin(), rois.end());
        const Tensor got_d = Host("RoiAlign",
                                  {test::MakeTensor(DataType::kDouble, xd, Shape{n, c, h, w}),
                                   test::MakeTensor(DataType::kDouble, rd, Shape{r, 4}), I64(batch, {r})},
                                  attrs);
        EXPECT_TRUE(TensorNear(got_d, test::MakeTensor(DataType::kDouble, want, out), test::Tolerance{1e-12, 1e-12}))
            << mode << " " << transform << " ratio " << ratio << " (double)";
      }
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
