// ONNX Resize's coordinate transformation, shared by every engine's Resize
// kernel (host_cpu's reference and cpu_dense's): the source coordinate of
// an output index along one axis, by `coordinate_transformation_mode`.
// `scale` is output/input along the axis and `in` the input length; the
// scaled length (scale * in), not the rounded output size, enters the
// formulas, as ONNX defines them. `roi_start` and `roi_end` (fractions of
// the input) matter only for tf_crop_and_resize. Modes other than ONNX's
// fall back to half_pixel; kernels validate the attribute when created.
#pragma once

#include <cstdint>
#include <string_view>

namespace ge::engine::sdk {

inline double ResizeSourceCoordinate(std::string_view mode, int64_t o, int64_t in, double scale, double roi_start = 0.0,
                                     double roi_end = 1.0) {
  const double x = static_cast<double>(o);
  const double length = scale * static_cast<double>(in);
  if (mode == "align_corners") return length == 1 ? 0.0 : x * static_cast<double>(in - 1) / (length - 1);
  if (mode == "asymmetric") return x / scale;
  if (mode == "pytorch_half_pixel") return length == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (mode == "tf_crop_and_resize") {
    const double span = static_cast<double>(in - 1);
    const double base = roi_start * span;
    return length == 1 ? base + (roi_end - roi_start) * span / 2
                       : base + x * (roi_end - roi_start) * span / (length - 1);
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

}  // namespace ge::engine::sdk
