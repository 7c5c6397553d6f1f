// Object-detection kernels: NonMaxSuppression-11 and RoiAlign-16.
//
// NonMaxSuppression runs per batch and class: the boxes scoring above
// score_threshold are visited by descending score (ties by box index; a
// heap, so only the boxes visited are ordered), and
// a box is selected unless it overlaps an already selected box of that
// class by IoU > iou_threshold, until max_output_boxes_per_class are
// selected. A grid over the class's boxes (KeptBoxes) limits the overlap
// tests to the kept boxes near each candidate.
//
// RoiAlign splits each region (scaled by spatial_scale, shifted by half a
// pixel under half_pixel) into output_height x output_width bins and
// averages (or, as ONNX Runtime does, takes the largest weighted corner of)
// a grid of bilinear samples per bin: sampling_ratio per side, or
// ceil(bin size) when it is 0. Samples more than a pixel outside the image
// count as 0; others are clamped to the image's edge. A region's samples
// (corner offsets and weights) are computed once for all its channels, and
// regions run in parallel; float tensors are pooled in float (as ONNX
// Runtime does), others in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

bool Finite(const Box& b) {
  return std::isfinite(b.y1) && std::isfinite(b.x1) && std::isfinite(b.y2) && std::isfinite(b.x2);
}

// The boxes one class has kept so far, bucketed on a uniform grid over the
// candidates' extent, so that a candidate is tested only against the kept
// boxes that share a cell with it. Exact: with iou_threshold >= 0 only boxes
// whose intersection has positive height and width can suppress each other,
// and two such boxes share a cell (a box goes into every cell its corners
// span, and the cell of a coordinate is monotone in it). Boxes spanning many
// cells and boxes with a non-finite coordinate go into a list every query
// tests; a candidate spanning many cells tests every kept box.
//
// Cells are about the candidates' mean box size, at most kMaxSide per side:
// detection heads keep thousands of boxes per class, and torchvision's
// batched NMS offsets each class's boxes into a region of its own and runs
// one NMS over all of them, so the quadratic scan dominated such models.
class KeptBoxes {
 public:
  void Reset(const std::vector<Box>& corners, const std::vector<int64_t>& candidates) {
    kept_.clear();
    wide_.clear();
    for (std::vector<int32_t>& cell : cells_) cell.clear();
    float y_lo = INFINITY, y_hi = -INFINITY, x_lo = INFINITY, x_hi = -INFINITY;
    double sum_h = 0, sum_w = 0;
    int64_t finite = 0;
    for (int64_t i : candidates) {
      const Box& b = corners[i];
      if (!Finite(b)) continue;
      y_lo = std::min(y_lo, b.y1);
      y_hi = std::max(y_hi, b.y2);
      x_lo = std::min(x_lo, b.x1);
      x_hi = std::max(x_hi, b.x2);
      sum_h += static_cast<double>(b.y2) - b.y1;
      sum_w += static_cast<double>(b.x2) - b.x1;
      ++finite;
    }
    rows_ = cols_ = 1;
    y0_ = x0_ = 0;
    inv_h_ = inv_w_ = 0;
    if (finite > 0 && candidates.size() >= kMinCandidates) {
      rows_ = Side(static_cast<double>(y_hi) - y_lo, sum_h / static_cast<double>(finite));
      cols_ = Side(static_cast<double>(x_hi) - x_lo, sum_w / static_cast<double>(finite));
      y0_ = y_lo;
      x0_ = x_lo;
      inv_h_ = rows_ > 1 ? static_cast<float>(rows_) / (y_hi - y_lo) : 0.0f;
      inv_w_ = cols_ > 1 ? static_cast<float>(cols_) / (x_hi - x_lo) : 0.0f;
    }
    if (cells_.size() < static_cast<size_t>(rows_ * cols_)) cells_.resize(static_cast<size_t>(rows_ * cols_));
  }

  // True when a kept box overlaps `b` by IoU above the threshold.
  bool Suppresses(const Box& b, float iou_threshold, const std::vector<Box>& corners) const {
    const auto over = [&](int32_t k) { return IntersectionOverUnion(b, corners[k]) > iou_threshold; };
    if (!Finite(b)) return std::any_of(kept_.begin(), kept_.end(), over);
    const Span s = Cells(b);
    if (s.Count() > kMaxCells) return std::any_of(kept_.begin(), kept_.end(), over);
    if (std::any_of(wide_.begin(), wide_.end(), over)) return true;
    for (int64_t r = s.r0; r <= s.r1; ++r) {
      for (int64_t c = s.c0; c <= s.c1; ++c) {
        const std::vector<int32_t>& cell = cells_[static_cast<size_t>(r * cols_ + c)];
        if (std::any_of(cell.begin(), cell.end(), over)) return true;
      }
    }
    return false;
  }

  void Add(int64_t i, const Box& b) {
    const auto k = static_cast<int32_t>(i);
    kept_.push_back(k);
    if (!Finite(b)) {
      wide_.push_back(k);
      return;
    }
    const Span s = Cells(b);
    if (s.Count() > kMaxCells) {
      wide_.push_back(k);
      return;
    }
    for (int64_t r = s.r0; r <= s.r1; ++r) {
      for (int64_t c = s.c0; c <= s.c1; ++c) cells_[static_cast<size_t>(r * cols_ + c)].push_back(k);
    }
  }

 private:
  static constexpr int64_t kMaxSide = 128;
  static constexpr int64_t kMaxCells = 16;
  static constexpr size_t kMinCandidates = 64;  // below, one cell: the scan is cheap

  struct Span {
    int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    int64_t Count() const { return (r1 - r0 + 1) * (c1 - c0 + 1); }
  };

  static int64_t Side(double extent, double mean_size) {
    if (!(extent > 0) || !(mean_size > 0)) return 1;
    return std::clamp<int64_t>(static_cast<int64_t>(extent / mean_size), 1, kMaxSide);
  }

  static int64_t Index(float v, float origin, float inv, int64_t n) {
    const float t = (v - origin) * inv;
    if (!(t > 0)) return 0;
    return t >= static_cast<float>(n) ? n - 1 : static_cast<int64_t>(t);
  }

  // The cells b spans. Every box queried or added is a candidate, so inside
  // the grid's extent; the clamping only absorbs rounding.
  Span Cells(const Box& b) const {
    Span s;
    s.r0 = Index(b.y1, y0_, inv_h_, rows_);
    s.r1 = Index(b.y2, y0_, inv_h_, rows_);
    s.c0 = Index(b.x1, x0_, inv_w_, cols_);
    s.c1 = Index(b.x2, x0_, inv_w_, cols_);
    return s;
  }

  int64_t rows_ = 1, cols_ = 1;
  float y0_ = 0, x0_ = 0, inv_h_ = 0, inv_w_ = 0;
  std::vector<int32_t> kept_, wide_;
  std::vector<std::vector<int32_t>> cells_;
};

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
    if (bs.dim(1) > std::numeric_limits<int32_t>::max()) {
      return NodeError(op_, "boxes ", bs.ToString(), " has more than 2^31 - 1 boxes");
    }
    const auto scalar = [&](int i) -> const Tensor* {
      return ctx.has_input(i) && ctx.input(i).NumElements() > 0 ? &ctx.input(i) : nullptr;
    };
    const Tensor* max_in = scalar(2);
    const Tensor* iou_in = scalar(3);
    const Tensor* score_in = scalar(4);
    const int64_t max_per_class = max_in ? max_in->GetAsInt64(0) : 0;
    const float iou_threshold = iou_in ? static_cast<float>(iou_in->GetAsDouble(0)) : 0.0f;
    if (!(iou_threshold >= 0 && iou_threshold <= 1)) {
      return NodeError(op_, "iou_threshold ", iou_threshold, " must be in [0, 1]");
    }
    const float score_threshold = score_in ? static_cast<float>(score_in->GetAsDouble(0)) : 0.0f;
    const int64_t batches = bs.dim(0), classes = ss.dim(1), n = bs.dim(1);
    const float* pb = boxes.data<float>();
    const float* ps = scores.data<float>();
    std::vector<int64_t> selected_rows;  // (batch, class, box) triples
    std::vector<Box> corners(static_cast<size_t>(n));
    std::vector<int64_t> order;
    KeptBoxes kept;
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
        kept.Reset(corners, order);
        std::make_heap(order.begin(), order.end(), worse);
        int64_t count = 0;
        for (auto end = order.end(); end != order.begin() && count < max_per_class; --end) {
          std::pop_heap(order.begin(), end, worse);
          const int64_t i = *(end - 1);
          if (kept.Suppresses(corners[i], iou_threshold, corners)) continue;
          kept.Add(i, corners[i]);
          ++count;
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
    if (xs.dim(2) * xs.dim(3) > std::numeric_limits<int32_t>::max()) {
      return NodeError(op_, "X ", xs.ToString(), " has planes of more than 2^31 - 1 elements");
    }
    std::vector<int64_t> images(static_cast<size_t>(rs.dim(0)));
    for (int64_t r = 0; r < rs.dim(0); ++r) {
      images[r] = batch.GetAsInt64(r);
      if (images[r] < 0 || images[r] >= xs.dim(0)) {
        return NodeError(op_, "batch index ", images[r], " is outside X ", xs.ToString());
      }
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{rs.dim(0), xs.dim(1), out_h_, out_w_}));
    if (ctx.input(0).dtype() == DataType::kFloat && ctx.input(1).dtype() == DataType::kFloat) {
      Pool<float>(ctx.num_threads(), ctx.input(0).data<float>(), xs, ctx.input(1).data<float>(), images,
                  y.data<float>());
      return absl::OkStatus();
    }
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(ctx.input(0), DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor rd, ConvertTensor(ctx.input(1), DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor yd, Tensor::Allocate(DataType::kDouble, y.shape()));
    Pool<double>(ctx.num_threads(), xd.data<double>(), xs, rd.data<double>(), images, yd.data<double>());
    return ConvertInto(yd, y);
  }

 private:
  explicit RoiAlignKernel(const ir::OpDesc& op) : op_(op) {}

  // One bilinear sample of a plane: four element offsets and their weights
  // (all zero for a sample more than a pixel outside the image).
  template <typename T>
  struct Sample {
    int32_t at[4];
    T w[4];
  };

  // Every region in parallel: its samples (the same for every channel) are
  // computed once, then each channel's bins read them.
  template <typename T>
  void Pool(int threads, const T* x, const Shape& xs, const T* rois, const std::vector<int64_t>& images, T* y) const {
    const int64_t c = xs.dim(1), h = xs.dim(2), w = xs.dim(3);
    const int64_t bins = out_h_ * out_w_;
    ParallelFor(threads, static_cast<int64_t>(images.size()), c * bins * 16, [&](int64_t begin, int64_t end) {
      std::vector<Sample<T>> samples;
      std::vector<int64_t> first(static_cast<size_t>(bins + 1));
      for (int64_t r = begin; r < end; ++r) {
        const double count = RegionSamples(rois + r * 4, h, w, samples, first);
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* plane = x + (images[r] * c + ch) * h * w;
          T* out = y + (r * c + ch) * bins;
          for (int64_t bin = 0; bin < bins; ++bin) {
            T acc = 0;
            for (int64_t k = first[bin]; k < first[bin + 1]; ++k) {
              const Sample<T>& s = samples[k];
              const T v1 = s.w[0] * plane[s.at[0]], v2 = s.w[1] * plane[s.at[1]];
              const T v3 = s.w[2] * plane[s.at[2]], v4 = s.w[3] * plane[s.at[3]];
              if (max_) {
                const T v = std::max({v1, v2, v3, v4});
                acc = k == first[bin] ? v : std::max(acc, v);
              } else {
                acc += v1 + v2 + v3 + v4;
              }
            }
            out[bin] = max_ ? acc : static_cast<T>(acc / static_cast<T>(count));
          }
        }
      }
    });
  }

  // The samples of one region, bin by bin (bin i's are [first[i],
  // first[i + 1])); returns the samples per bin (at least 1).
  template <typename T>
  double RegionSamples(const T* roi, int64_t h, int64_t w, std::vector<Sample<T>>& samples,
                       std::vector<int64_t>& first) const {
    const double offset = half_pixel_ ? 0.5 : 0.0;
    const double x0 = static_cast<double>(roi[0]) * scale_ - offset, y0 = static_cast<double>(roi[1]) * scale_ - offset;
    double rw = static_cast<double>(roi[2]) * scale_ - offset - x0,
           rh = static_cast<double>(roi[3]) * scale_ - offset - y0;
    if (!half_pixel_) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bin_h = rh / static_cast<double>(out_h_), bin_w = rw / static_cast<double>(out_w_);
    const int64_t grid_h = ratio_ > 0 ? ratio_ : static_cast<int64_t>(std::ceil(bin_h));
    const int64_t grid_w = ratio_ > 0 ? ratio_ : static_cast<int64_t>(std::ceil(bin_w));
    samples.clear();
    for (int64_t ph = 0; ph < out_h_; ++ph) {
      for (int64_t pw = 0; pw < out_w_; ++pw) {
        first[ph * out_w_ + pw] = static_cast<int64_t>(samples.size());
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const double sy = y0 + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const double sx = x0 + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
            samples.push_back(Bilinear<T>(h, w, sy, sx));
          }
        }
      }
    }
    first[out_h_ * out_w_] = static_cast<int64_t>(samples.size());
    return static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
  }

  // The bilinear sample at (y, x): 0 more than a pixel outside the image,
  // else clamped into it.
  template <typename T>
  static Sample<T> Bilinear(int64_t h, int64_t w, double y, double x) {
    if (h == 0 || w == 0 || y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) {
      return {{0, 0, 0, 0}, {0, 0, 0, 0}};
    }
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
    const auto at = [w](int64_t yy, int64_t xx) { return static_cast<int32_t>(yy * w + xx); };
    return {{at(y_low, x_low), at(y_low, x_high), at(y_high, x_low), at(y_high, x_high)},
            {static_cast<T>(hy * hx), static_cast<T>(hy * lx), static_cast<T>(ly * hx), static_cast<T>(ly * lx)}};
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
