// GridSample-16 on host_cpu: samples X [N, C, H, W] at the normalized
// (x, y) locations of Grid [N, Ho, Wo, 2] by bilinear, nearest or bicubic
// interpolation, with zeros, border or reflection padding.
//
// A grid value in [-1, 1] maps to pixel coordinates by align_corners
// (-1 and 1 are the centres of the corner pixels) or not (they are the
// pixels' outer edges). Border padding clamps that coordinate into the
// image and reflection mirrors it at the image's borders (the pixel centres
// with align_corners, the outer edges otherwise); the neighbours the
// interpolation reads are then fetched with the same padding (zeros gives 0
// outside the image). Nearest rounds half to even, as ONNX's reference.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

enum class Padding { kZeros, kBorder, kReflection };

// Mirrors x into [lo, hi] as often as needed.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double dx = x < lo ? lo - x : x - hi;
  const double n = std::floor(dx / range);
  const double r = dx - n * range;
  const bool even = std::fmod(n, 2.0) == 0;
  if (x < lo) return even ? lo + r : hi - r;
  return even ? hi - r : lo + r;
}

class GridSampleKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const std::string mode = StringAttr(op, "mode", "bilinear");
    const std::string padding = StringAttr(op, "padding_mode", "zeros");
    if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
      return NodeError(op, "mode '", mode, "' is not bilinear, nearest or bicubic");
    }
    Padding p;
    if (padding == "zeros") {
      p = Padding::kZeros;
    } else if (padding == "border") {
      p = Padding::kBorder;
    } else if (padding == "reflection") {
      p = Padding::kReflection;
    } else {
      return NodeError(op, "padding_mode '", padding, "' is not zeros, border or reflection");
    }
    return std::unique_ptr<Kernel>(new GridSampleKernel(op, mode, p, IntAttr(op, "align_corners", 0) != 0));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    const Shape& xs = x.shape();
    const Shape& gs = grid.shape();
    if (xs.rank() != 4 || gs.rank() != 4 || gs.dim(3) != 2 || gs.dim(0) != xs.dim(0)) {
      return NodeError(op_, "X ", xs.ToString(), " must be [N, C, H, W] and Grid ", gs.ToString(), " [N, Ho, Wo, 2]");
    }
    const int64_t n = xs.dim(0), c = xs.dim(1), h = xs.dim(2), w = xs.dim(3);
    const int64_t ho = gs.dim(1), wo = gs.dim(2);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{n, c, ho, wo}));
    GE_ASSIGN_OR_RETURN(Tensor gridf, ConvertTensor(grid, DataType::kDouble));
    const double* pg = gridf.data<double>();
    return DispatchType<FloatTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t i = 0; i < ho * wo; ++i) {
          const double* g = pg + (b * ho * wo + i) * 2;
          const double sx = Coordinate(g[0], w);
          const double sy = Coordinate(g[1], h);
          for (int64_t ch = 0; ch < c; ++ch) {
            const T* plane = px + (b * c + ch) * h * w;
            py[(b * c + ch) * ho * wo + i] = T(static_cast<ComputeType<T>>(Sample(plane, h, w, sx, sy)));
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  GridSampleKernel(const ir::OpDesc& op, std::string mode, Padding padding, bool align_corners)
      : op_(op), mode_(std::move(mode)), padding_(padding), align_corners_(align_corners) {}

  // The pixel coordinate of normalized `v` along a dim of `size`, after
  // border clamping or reflection.
  double Coordinate(double v, int64_t size) const {
    const double s = static_cast<double>(size);
    double x = align_corners_ ? (v + 1) / 2 * (s - 1) : ((v + 1) * s - 1) / 2;
    if (padding_ == Padding::kBorder) x = std::clamp(x, 0.0, s - 1);
    if (padding_ == Padding::kReflection) x = align_corners_ ? Reflect(x, 0, s - 1) : Reflect(x, -0.5, s - 0.5);
    return x;
  }

  // The pixel (r, col) with the padding applied outside the image.
  template <typename T>
  double Pixel(const T* plane, int64_t h, int64_t w, int64_t r, int64_t col) const {
    if (padding_ == Padding::kZeros) {
      if (r < 0 || r >= h || col < 0 || col >= w) return 0;
    } else if (padding_ == Padding::kReflection) {
      const double lo = align_corners_ ? 0.0 : -0.5;
      col = static_cast<int64_t>(Reflect(static_cast<double>(col), lo, static_cast<double>(w - 1) - lo));
      r = static_cast<int64_t>(Reflect(static_cast<double>(r), lo, static_cast<double>(h - 1) - lo));
    }
    r = std::clamp<int64_t>(r, 0, h - 1);
    col = std::clamp<int64_t>(col, 0, w - 1);
    return static_cast<double>(Widen(plane[r * w + col]));
  }

  template <typename T>
  double Sample(const T* plane, int64_t h, int64_t w, double x, double y) const {
    if (h == 0 || w == 0) return 0;
    if (mode_ == "nearest") {
      return Pixel(plane, h, w, static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
    }
    const double fx = std::floor(x), fy = std::floor(y);
    const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
    const double tx = x - fx, ty = y - fy;
    if (mode_ == "bilinear") {
      return (1 - ty) * ((1 - tx) * Pixel(plane, h, w, y0, x0) + tx * Pixel(plane, h, w, y0, x0 + 1)) +
             ty * ((1 - tx) * Pixel(plane, h, w, y0 + 1, x0) + tx * Pixel(plane, h, w, y0 + 1, x0 + 1));
    }
    double cx[4], cy[4];
    CubicCoefficients(tx, cx);
    CubicCoefficients(ty, cy);
    double sum = 0;
    for (int i = 0; i < 4; ++i) {
      double row = 0;
      for (int j = 0; j < 4; ++j) row += cx[j] * Pixel(plane, h, w, y0 - 1 + i, x0 - 1 + j);
      sum += cy[i] * row;
    }
    return sum;
  }

  // Keys' cubic convolution weights (a = -0.75) of the taps at -1, 0, 1, 2
  // for fractional offset t.
  static void CubicCoefficients(double t, double out[4]) {
    constexpr double a = -0.75;
    const auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < d < 2
    const auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };      // d <= 1
    out[0] = far(t + 1);
    out[1] = near(t);
    out[2] = near(1 - t);
    out[3] = far(2 - t);
  }

  ir::OpDesc op_;
  std::string mode_;
  Padding padding_;
  bool align_corners_;
};

}  // namespace

void RegisterGridSampleKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(FloatTypes{});
  table.Add({"GridSample", [](const ir::OpDesc& op) { return GridSampleKernel::Create(op); }, {floats, floats},
             {floats}});
}

}  // namespace ge::engine::host_cpu
