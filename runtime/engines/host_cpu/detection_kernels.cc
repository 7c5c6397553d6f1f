// Object-detection kernels: NonMaxSuppression-11 and RoiAlign-16.
//
// NonMaxSuppression runs per batch and class: the boxes scoring above
// score_threshold are visited by descending score (ties by box index; a
// heap, so only the boxes visited are ordered), and
// a box is selected unless it overlaps an already selected box of that
// class by IoU > iou_threshold, until max_output_boxes_per_class are
// selected. O(boxes * selected) per class.
//
// RoiAlign splits each region (scaled by spatial_scale, shifted by half a
// pixel under half_pixel) into output_height x output_width bins and
// averages (or, as ONNX Runtime does, takes the largest weighted corner of)
// a grid of bilinear samples per bin: sampling_ratio per side, or
// ceil(bin size) when it is 0. Samples more than a pixel outside the image
// count as 0; others are clamped to the image's edge.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

struct Box {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
  float Area() const { return (y2 - y1) * (x2 - x1); }
};

float IntersectionOverUnion(const Box& a, const Box& b) {
  const float h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0) return 0;
  const float inter = h * w;
  const float uni = a.Area() + b.Area() - inter;
  return uni > 0 ? inter / uni : 0;
}

class NonMaxSuppressionKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const int64_t center = IntAttr(op, "center_point_box", 0);
    if (center != 0 && center != 1) return NodeError(op, "center_point_box must be 0 or 1, got ", center);
    return std::unique_ptr<Kernel>(new NonMaxSuppressionKernel(op, center == 1));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& boxes = ctx.input(0);
    const Tensor& scores = ctx.input(1);
    const Shape& bs = boxes.shape();
    const Shape& ss = scores.shape();
    if (bs.rank() != 3 || bs.dim(2) != 4 || ss.rank() != 3 || bs.dim(0) != ss.dim(0) || bs.dim(1) != ss.dim(2)) {
      return NodeError(op_, "boxes ", bs.ToString(), " must be [B, N, 4] and scores ", ss.ToString(),
                       " [B, C, N]");
    }
    const auto scalar = [&](int i) -> const Tensor* {
      return ctx.has_input(i) && ctx.input(i).NumElements() > 0 ? &ctx.input(i) : nullptr;
    };
    const Tensor* max_in = scalar(2);
    const Tensor* iou_in = scalar(3);
    const Tensor* score_in = scalar(4);
    const int64_t max_per_class = max_in ? max_in->GetAsInt64(0) : 0;
    const float iou_threshold = iou_in ? static_cast<float>(iou_in->GetAsDouble(0)) : 0.0f;
    if (iou_threshold < 0 || iou_threshold > 1) {
      return NodeError(op_, "iou_threshold ", iou_threshold, " must be in [0, 1]");
    }
    const float score_threshold = score_in ? static_cast<float>(score_in->GetAsDouble(0)) : 0.0f;
    const int64_t batches = bs.dim(0), classes = ss.dim(1), n = bs.dim(1);
    const float* pb = boxes.data<float>();
    const float* ps = scores.data<float>();
    std::vector<int64_t> selected_rows;  // (batch, class, box) triples
    std::vector<Box> corners(static_cast<size_t>(n));
    std::vector<int64_t> order;
    std::vector<int64_t> kept;
    for (int64_t b = 0; b < batches && max_per_class > 0; ++b) {
      for (int64_t i = 0; i < n; ++i) corners[i] = Corners(pb + (b * n + i) * 4);
      for (int64_t c = 0; c < classes; ++c) {
        const float* sc = ps + (b * classes + c) * n;
        order.clear();
        for (int64_t i = 0; i < n; ++i) {
          if (score_in == nullptr || sc[i] > score_threshold) order.push_back(i);
        }
        // A heap yields the boxes best first and only as many as are
        // visited (selection usually stops long before the last box).
        // Order: higher score first, NaN after every number, ties by
        // box index (the order of a stable sort by descending score).
        const auto worse = [sc](int64_t l, int64_t r) {
          const float a = sc[l], b = sc[r];
          if (a < b) return true;
          if (a > b) return false;
          const bool na = std::isnan(a), nb = std::isnan(b);
          if (na != nb) return na;
          return l > r;
        };
        std::make_heap(order.begin(), order.end(), worse);
        kept.clear();
        for (auto end = order.end(); end != order.begin(); --end) {
          if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
          std::pop_heap(order.begin(), end, worse);
          const int64_t i = *(end - 1);
          const bool overlaps = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
            return IntersectionOverUnion(corners[i], corners[k]) > iou_threshold;
          });
          if (overlaps) continue;
          kept.push_back(i);
          selected_rows.insert(selected_rows.end(), {b, c, i});
        }
      }
    }
    const int64_t count = static_cast<int64_t>(selected_rows.size()) / 3;
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{count, 3}));
    std::copy(selected_rows.begin(), selected_rows.end(), y.data<int64_t>());
    return absl::OkStatus();
  }

 private:
  NonMaxSuppressionKernel(const ir::OpDesc& op, bool center_point) : op_(op), center_point_(center_point) {}

  // A box's corners, ordered, from [y1, x1, y2, x2] (either diagonal) or,
  // with center_point_box, [x_center, y_center, width, height].
  Box Corners(const float* v) const {
    if (center_point_) {
      return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
    }
    return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
  }

  ir::OpDesc op_;
  bool center_point_;
};

class RoiAlignKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const std::string mode = StringAttr(op, "mode", "avg");
    const std::string transform = StringAttr(op, "coordinate_transformation_mode", "half_pixel");
    if (mode != "avg" && mode != "max") return NodeError(op, "mode '", mode, "' is not avg or max");
    if (transform != "half_pixel" && transform != "output_half_pixel") {
      return NodeError(op, "coordinate_transformation_mode '", transform, "' is not half_pixel or output_half_pixel");
    }
    auto k = std::unique_ptr<RoiAlignKernel>(new RoiAlignKernel(op));
    k->max_ = mode == "max";
    k->half_pixel_ = transform == "half_pixel";
    k->out_h_ = IntAttr(op, "output_height", 1);
    k->out_w_ = IntAttr(op, "output_width", 1);
    k->ratio_ = IntAttr(op, "sampling_ratio", 0);
    k->scale_ = FloatAttr(op, "spatial_scale", 1.0f);
    if (k->out_h_ < 1 || k->out_w_ < 1 || k->ratio_ < 0) {
      return NodeError(op, "output_height and output_width must be positive and sampling_ratio not negative");
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Shape& xs = ctx.input(0).shape();
    const Shape& rs = ctx.input(1).shape();
    const Tensor& batch = ctx.input(2);
    if (xs.rank() != 4 || rs.rank() != 2 || rs.dim(1) != 4 || batch.NumElements() != rs.dim(0)) {
      return NodeError(op_, "X ", xs.ToString(), " must be [N, C, H, W], rois ", rs.ToString(),
                       " [R, 4] and batch_indices ", batch.shape().ToString(), " [R]");
    }
    const int64_t c = xs.dim(1), h = xs.dim(2), w = xs.dim(3), rois = rs.dim(0);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{rois, c, out_h_, out_w_}));
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(ctx.input(0), DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor rd, ConvertTensor(ctx.input(1), DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor yd, Tensor::Allocate(DataType::kDouble, y.shape()));
    const double* px = xd.data<double>();
    const double* pr = rd.data<double>();
    double* py = yd.data<double>();
    const double offset = half_pixel_ ? 0.5 : 0.0;
    for (int64_t r = 0; r < rois; ++r) {
      const int64_t b = batch.GetAsInt64(r);
      if (b < 0 || b >= xs.dim(0)) return NodeError(op_, "batch index ", b, " is outside X ", xs.ToString());
      const double* roi = pr + r * 4;
      const double x0 = roi[0] * scale_ - offset, y0 = roi[1] * scale_ - offset;
      double rw = roi[2] * scale_ - offset - x0, rh = roi[3] * scale_ - offset - y0;
      if (!half_pixel_) {
        rw = std::max(rw, 1.0);
        rh = std::max(rh, 1.0);
      }
      const double bin_h = rh / static_cast<double>(out_h_), bin_w = rw / static_cast<double>(out_w_);
      const int64_t grid_h = ratio_ > 0 ? ratio_ : static_cast<int64_t>(std::ceil(bin_h));
      const int64_t grid_w = ratio_ > 0 ? ratio_ : static_cast<int64_t>(std::ceil(bin_w));
      const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
      for (int64_t ch = 0; ch < c; ++ch) {
        const double* plane = px + (b * c + ch) * h * w;
        for (int64_t ph = 0; ph < out_h_; ++ph) {
          for (int64_t pw = 0; pw < out_w_; ++pw) {
            double acc = 0;
            bool first = true;
            for (int64_t iy = 0; iy < grid_h; ++iy) {
              const double sy = y0 + static_cast<double>(ph) * bin_h +
                                (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
              for (int64_t ix = 0; ix < grid_w; ++ix) {
                const double sx = x0 + static_cast<double>(pw) * bin_w +
                                  (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
                const double v = Bilinear(plane, h, w, sy, sx);
                acc = max_ ? (first ? v : std::max(acc, v)) : acc + v;
                first = false;
              }
            }
            py[((r * c + ch) * out_h_ + ph) * out_w_ + pw] = max_ ? acc : acc / count;
          }
        }
      }
    }
    return ConvertInto(yd, y);
  }

 private:
  explicit RoiAlignKernel(const ir::OpDesc& op) : op_(op) {}

  // The bilinear sample at (y, x): 0 more than a pixel outside the image,
  // else clamped into it. In max mode, the largest weighted corner.
  double Bilinear(const double* plane, int64_t h, int64_t w, double y, double x) const {
    if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return 0;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
    int64_t y_high = y_low + 1, x_high = x_low + 1;
    if (y_low >= h - 1) {
      y_low = y_high = h - 1;
      y = static_cast<double>(y_low);
    }
    if (x_low >= w - 1) {
      x_low = x_high = w - 1;
      x = static_cast<double>(x_low);
    }
    const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
    const double hy = 1 - ly, hx = 1 - lx;
    const double v1 = hy * hx * plane[y_low * w + x_low], v2 = hy * lx * plane[y_low * w + x_high];
    const double v3 = ly * hx * plane[y_high * w + x_low], v4 = ly * lx * plane[y_high * w + x_high];
    if (max_) return std::max({v1, v2, v3, v4});
    return v1 + v2 + v3 + v4;
  }

  ir::OpDesc op_;
  bool max_ = false, half_pixel_ = true;
  int64_t out_h_ = 1, out_w_ = 1, ratio_ = 0;
  double scale_ = 1.0;
};

}  // namespace

void RegisterDetectionKernels(KernelTable& table) {
  const DataTypeSet f32{DataType::kFloat};
  const DataTypeSet i64{DataType::kInt64};
  table.Add({"NonMaxSuppression", [](const ir::OpDesc& op) { return NonMaxSuppressionKernel::Create(op); },
             {f32, f32, i64, f32, f32}, {i64}});
  const DataTypeSet floats = SetOf(FloatTypes{});
  table.Add({"RoiAlign", [](const ir::OpDesc& op) { return RoiAlignKernel::Create(op); }, {floats, floats, i64},
             {floats}});
}

}  // namespace ge::engine::host_cpu
