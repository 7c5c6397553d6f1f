// Object-detection kernels: NonMaxSuppression-11.
//
// NonMaxSuppression runs per batch and class: the boxes scoring above
// score_threshold are visited by descending score (ties by box index), and
// a box is selected unless it overlaps an already selected box of that
// class by IoU > iou_threshold, until max_output_boxes_per_class are
// selected. O(boxes * selected) per class.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/host_cpu/kernel_util.h"

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
          if (score_in == nullptr || sc[i] > static_cast<float>(score_in->GetAsDouble(0))) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [sc](int64_t l, int64_t r) { return sc[l] > sc[r]; });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
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

}  // namespace

void RegisterDetectionKernels(KernelTable& table) {
  const DataTypeSet f32{DataType::kFloat};
  const DataTypeSet i64{DataType::kInt64};
  table.Add({"NonMaxSuppression", [](const ir::OpDesc& op) { return NonMaxSuppressionKernel::Create(op); },
             {f32, f32, i64, f32, f32}, {i64}});
}

}  // namespace ge::engine::host_cpu
