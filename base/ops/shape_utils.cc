// Shape arithmetic with unknown dims: broadcasting, merging, axes, window
// geometry for convolution and pooling, matrix products, Slice bounds and
// Reshape targets. Inference and kernels share these so that they agree on
// every concrete shape.
#include "base/ops/shape_utils.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <map>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status.h"

namespace ge::ops {
namespace {

std::string Dims(absl::Span<const int64_t> dims) { return StrCat("[", absl::StrJoin(dims, ","), "]"); }

// Ceiling of a / b for b > 0, without overflow for any a.
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b > 0 ? 1 : 0); }

// Reads a per-spatial-dim attribute, defaulting to `fill` when absent.
absl::StatusOr<std::vector<int64_t>> PerDim(const std::vector<int64_t>& given, size_t n,
                                            int64_t fill, std::string_view name,
                                            int64_t min_value) {
  if (given.empty()) return std::vector<int64_t>(n, fill);
  if (given.size() != n) {
    return InvalidArgument(name, " ", Dims(given), " has ", given.size(), " values, expected ", n,
                           " (one per spatial dim)");
  }
  for (int64_t v : given) {
    if (v < min_value) return InvalidArgument(name, " ", Dims(given), " has a value below ", min_value);
  }
  return given;
}

struct ResolvedWindow {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

absl::StatusOr<ResolvedWindow> ResolveWindow(const WindowAttrs& attrs,
                                             const std::vector<int64_t>& kernel) {
  const size_t n = kernel.size();
  ResolvedWindow r;
  r.kernel = kernel;
  GE_ASSIGN_OR_RETURN(r.strides, PerDim(attrs.strides, n, 1, "strides", 1));
  GE_ASSIGN_OR_RETURN(r.dilations, PerDim(attrs.dilations, n, 1, "dilations", 1));
  GE_ASSIGN_OR_RETURN(r.pads, PerDim(attrs.pads, 2 * n, 0, "pads", 0));
  return r;
}

// Fills the spatial dims of `geometry` from the input's spatial dims.
absl::Status FillSpatial(absl::Span<const int64_t> input_spatial, const ResolvedWindow& w,
                         const WindowAttrs& attrs, WindowGeometry& geometry) {
  const size_t n = w.kernel.size();
  geometry.kernel = w.kernel;
  geometry.strides = w.strides;
  geometry.dilations = w.dilations;
  geometry.pads_begin.resize(n);
  geometry.pads_end.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = input_spatial.empty() ? kUnknownDim : input_spatial[i];
    auto dim = ComputeWindowDim(in, w.kernel[i], w.strides[i], w.dilations[i], w.pads[i],
                                w.pads[i + n], attrs.auto_pad, attrs.ceil_mode);
    if (!dim.ok()) return Annotate(dim.status(), StrCat("spatial dim ", i));
    geometry.output.push_back(dim->output);
    geometry.pads_begin[i] = dim->pad_begin;
    geometry.pads_end[i] = dim->pad_end;
  }
  return absl::OkStatus();
}

}  // namespace

// ---- Broadcasting ----

absl::StatusOr<int64_t> BroadcastDim(int64_t a, int64_t b) {
  if (a == b) return a;
  if (a == 1) return b;
  if (b == 1) return a;
  if (a == kUnknownDim) return b;
  if (b == kUnknownDim) return a;
  return InvalidArgument("dims ", a, " and ", b, " do not broadcast");
}

absl::StatusOr<Shape> BroadcastShapes(absl::Span<const Shape> shapes) {
  bool unknown_rank = false;
  size_t rank = 0;
  for (const Shape& s : shapes) {
    if (s.unknown_rank()) {
      unknown_rank = true;
    } else {
      rank = std::max(rank, s.dims().size());
    }
  }
  Shape out;
  for (size_t i = 0; i < rank; ++i) out.push_back(1);
  for (const Shape& s : shapes) {
    if (s.unknown_rank()) continue;
    const size_t offset = rank - s.dims().size();
    for (size_t i = 0; i < s.dims().size(); ++i) {
      auto d = BroadcastDim(out.dim(offset + i), s.dim(i));
      if (!d.ok()) {
        std::string all;
        for (const Shape& t : shapes) StrAppend(&all, all.empty() ? "" : " ", t.ToString());
        return InvalidArgument("shapes ", all, " do not broadcast: ", StdView(d.status().message()),
                               " at output axis ", offset + i);
      }
      out.set_dim(offset + i, *d);
    }
  }
  if (unknown_rank) return Shape::UnknownRank();
  return out;
}

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const Shape shapes[] = {a, b};
  return BroadcastShapes(absl::MakeConstSpan(shapes));
}

absl::Status CheckUnidirectionalBroadcast(const Shape& from, const Shape& to) {
  if (from.unknown_rank() || to.unknown_rank()) return absl::OkStatus();
  if (from.rank() > to.rank()) {
    return InvalidArgument("shape ", from.ToString(), " has a higher rank than ", to.ToString(),
                           " and cannot broadcast to it");
  }
  const size_t offset = to.dims().size() - from.dims().size();
  for (size_t i = 0; i < from.dims().size(); ++i) {
    const int64_t f = from.dim(i), t = to.dim(offset + i);
    if (f == 1 || f == kUnknownDim || t == kUnknownDim || f == t) continue;
    return InvalidArgument("shape ", from.ToString(), " cannot broadcast to ", to.ToString(),
                           " (dim ", f, " against ", t, ")");
  }
  return absl::OkStatus();
}

// ---- Combining knowledge ----

absl::StatusOr<Shape> MergeShapes(const Shape& a, const Shape& b) {
  if (a.unknown_rank()) return b;
  if (b.unknown_rank()) return a;
  if (a.rank() != b.rank()) {
    return InvalidArgument("shapes ", a.ToString(), " and ", b.ToString(), " differ in rank");
  }
  Shape out = a;
  for (size_t i = 0; i < a.dims().size(); ++i) {
    const int64_t x = a.dim(i), y = b.dim(i);
    if (x == kUnknownDim) {
      out.set_dim(i, y);
    } else if (y != kUnknownDim && x != y) {
      return InvalidArgument("shapes ", a.ToString(), " and ", b.ToString(), " differ at axis ", i);
    }
  }
  return out;
}

Shape GeneralizeShapes(const Shape& a, const Shape& b) {
  if (a.unknown_rank() || b.unknown_rank() || a.rank() != b.rank()) return Shape::UnknownRank();
  Shape out = a;
  for (size_t i = 0; i < a.dims().size(); ++i) {
    if (a.dim(i) != b.dim(i)) out.set_dim(i, kUnknownDim);
  }
  return out;
}

absl::StatusOr<ir::ValueType> MergeValueTypes(const ir::ValueType& a, const ir::ValueType& b) {
  // A tensor type with no dtype is a type nobody has set: it says nothing.
  const bool a_undefined = a.is_tensor() && a.dtype() == DataType::kUndefined;
  const bool b_undefined = b.is_tensor() && b.dtype() == DataType::kUndefined;
  if (b_undefined) return a;
  if (a_undefined) {
    ir::ValueType out = b;
    if (a.tensor().format != ir::Format::kND) out.mutable_tensor().format = a.tensor().format;
    return out;
  }
  if (a.kind() != b.kind()) {
    return InvalidArgument("types ", a.ToString(), " and ", b.ToString(), " differ in kind");
  }
  if (!a.is_tensor()) {
    GE_ASSIGN_OR_RETURN(ir::ValueType element, MergeValueTypes(*a.element(), *b.element()));
    return a.kind() == ir::ValueType::Kind::kSequence ? ir::ValueType::Sequence(std::move(element))
                                                      : ir::ValueType::Optional(std::move(element));
  }
  const ir::TensorDesc& x = a.tensor();
  const ir::TensorDesc& y = b.tensor();
  if (x.dtype != DataType::kUndefined && y.dtype != DataType::kUndefined && x.dtype != y.dtype) {
    return InvalidArgument("types ", a.ToString(), " and ", b.ToString(), " differ in dtype");
  }
  auto shape = MergeShapes(x.shape, y.shape);
  if (!shape.ok()) {
    return InvalidArgument("types ", a.ToString(), " and ", b.ToString(), " contradict: ",
                           StdView(shape.status().message()));
  }
  ir::TensorDesc out(x.dtype != DataType::kUndefined ? x.dtype : y.dtype, *std::move(shape),
                     x.format != ir::Format::kND ? x.format : y.format);
  return ir::ValueType(std::move(out));
}

absl::StatusOr<ir::ValueType> GeneralizeValueTypes(const ir::ValueType& a,
                                                    const ir::ValueType& b) {
  // An optional and what it may hold generalize to the optional.
  if (a.kind() == ir::ValueType::Kind::kOptional && b.kind() != ir::ValueType::Kind::kOptional) {
    GE_ASSIGN_OR_RETURN(ir::ValueType element, GeneralizeValueTypes(*a.element(), b));
    return ir::ValueType::Optional(std::move(element));
  }
  if (b.kind() == ir::ValueType::Kind::kOptional && a.kind() != ir::ValueType::Kind::kOptional) {
    return GeneralizeValueTypes(b, a);
  }
  if (a.kind() != b.kind()) {
    return InvalidArgument("types ", a.ToString(), " and ", b.ToString(), " differ in kind");
  }
  if (!a.is_tensor()) {
    GE_ASSIGN_OR_RETURN(ir::ValueType element, GeneralizeValueTypes(*a.element(), *b.element()));
    return a.kind() == ir::ValueType::Kind::kSequence ? ir::ValueType::Sequence(std::move(element))
                                                      : ir::ValueType::Optional(std::move(element));
  }
  if (a.dtype() != b.dtype()) {
    return InvalidArgument("types ", a.ToString(), " and ", b.ToString(), " differ in dtype");
  }
  ir::TensorDesc out(a.dtype(), GeneralizeShapes(a.shape(), b.shape()),
                     a.tensor().format == b.tensor().format ? a.tensor().format : ir::Format::kND);
  return ir::ValueType(std::move(out));
}

// ---- Axes and dims ----

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    if (rank == 0) return InvalidArgument("axis ", axis, " is out of range for a rank-0 tensor");
    return InvalidArgument("axis ", axis, " is out of range for rank ", rank, " (allowed ", -rank,
                           "..", rank - 1, ")");
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<std::vector<int64_t>> NormalizeAxes(absl::Span<const int64_t> axes, int64_t rank) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t axis : axes) {
    GE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(axis, rank));
    if (std::find(out.begin(), out.end(), a) != out.end()) {
      return InvalidArgument("axes ", Dims(axes), " repeat axis ", a, " (rank ", rank, ")");
    }
    out.push_back(a);
  }
  return out;
}

int64_t DimProduct(absl::Span<const int64_t> dims) {
  int64_t product = 1;
  bool unknown = false;
  for (int64_t d : dims) {
    if (d == 0) return 0;
    if (d < 0) {
      unknown = true;
    } else if (__builtin_mul_overflow(product, d, &product)) {
      unknown = true;  // no real tensor has that many elements; do not guess
    }
  }
  return unknown ? kUnknownDim : product;
}

Shape UnknownShape(int64_t rank) {
  if (rank < 0) return Shape::UnknownRank();
  Shape s;
  for (int64_t i = 0; i < rank; ++i) s.push_back(kUnknownDim);
  return s;
}

// ---- Convolution and pooling windows ----

absl::StatusOr<AutoPad> ParseAutoPad(std::string_view text) {
  if (text == "NOTSET" || text.empty()) return AutoPad::kNotSet;
  if (text == "SAME_UPPER") return AutoPad::kSameUpper;
  if (text == "SAME_LOWER") return AutoPad::kSameLower;
  if (text == "VALID") return AutoPad::kValid;
  return InvalidArgument("auto_pad '", text, "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

absl::StatusOr<WindowAttrs> WindowAttrsFromOp(const ir::OpDesc& op) {
  WindowAttrs attrs;
  GE_ASSIGN_OR_RETURN(attrs.auto_pad, ParseAutoPad(op.GetAttrOr<std::string>("auto_pad", "NOTSET")));
  attrs.kernel_shape = op.GetAttrOr<std::vector<int64_t>>("kernel_shape", {});
  attrs.strides = op.GetAttrOr<std::vector<int64_t>>("strides", {});
  attrs.dilations = op.GetAttrOr<std::vector<int64_t>>("dilations", {});
  attrs.pads = op.GetAttrOr<std::vector<int64_t>>("pads", {});
  attrs.group = op.GetAttrOr<int64_t>("group", 1);
  attrs.ceil_mode = op.GetAttrOr<int64_t>("ceil_mode", 0) != 0;
  attrs.output_padding = op.GetAttrOr<std::vector<int64_t>>("output_padding", {});
  attrs.output_shape = op.GetAttrOr<std::vector<int64_t>>("output_shape", {});
  return attrs;
}

absl::StatusOr<WindowDim> ComputeWindowDim(int64_t input, int64_t kernel, int64_t stride,
                                           int64_t dilation, int64_t pad_begin, int64_t pad_end,
                                           AutoPad auto_pad, bool ceil_mode) {
  WindowDim out;
  const bool same = auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower;
  if (auto_pad == AutoPad::kNotSet) {
    out.pad_begin = pad_begin;
    out.pad_end = pad_end;
  }
  if (same) out.pad_begin = out.pad_end = kUnknownDim;
  if (input < 0 || kernel < 0) {
    if (same && input >= 0 && stride > 0) out.output = CeilDiv(input, stride);
    return out;
  }
  if (stride < 1 || dilation < 1 || kernel < 1) {
    return InvalidArgument("window with kernel ", kernel, ", stride ", stride, " and dilation ", dilation,
                           ": each must be at least 1");
  }
  int64_t effective;
  constexpr int64_t kHuge = int64_t{1} << 62;  // keeps the sums below from overflowing
  if (__builtin_mul_overflow(dilation, kernel - 1, &effective) || effective >= kHuge || input >= kHuge) {
    return InvalidArgument("window of kernel ", kernel, " and dilation ", dilation, " over input ", input,
                           " is too large");
  }
  effective += 1;
  if (same) {
    out.output = CeilDiv(input, stride);
    const int64_t total = std::max<int64_t>(0, (out.output - 1) * stride + effective - input);
    out.pad_begin = auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    out.pad_end = total - out.pad_begin;
    return out;
  }
  int64_t span;
  if (__builtin_add_overflow(out.pad_begin, out.pad_end, &span) || span >= kHuge) {
    return InvalidArgument("pads ", out.pad_begin, "+", out.pad_end, " are too large");
  }
  span += input - effective;
  if (span < 0) {
    return InvalidArgument("input ", input, " with pads ", out.pad_begin, "+", out.pad_end,
                           " is smaller than the dilated kernel ", effective);
  }
  const bool use_ceil = ceil_mode && auto_pad == AutoPad::kNotSet;
  out.output = (use_ceil ? CeilDiv(span, stride) : span / stride) + 1;
  // A last window that would start in the end padding covers no input.
  if (use_ceil && (out.output - 1) * stride >= input + out.pad_begin) --out.output;
  return out;
}

namespace {

// The rank of a Conv or ConvTranspose from X, W and kernel_shape (-1 when
// none says); InvalidArgument for a bad group or X and W of other ranks.
absl::StatusOr<int64_t> ConvRank(const Shape& x, const Shape& w, const WindowAttrs& attrs) {
  if (attrs.group < 1) return InvalidArgument("group ", attrs.group, " must be at least 1");
  int64_t rank = x.rank() >= 0 ? x.rank() : w.rank();
  if (!x.unknown_rank() && !w.unknown_rank() && x.rank() != w.rank()) {
    return InvalidArgument("X ", x.ToString(), " and W ", w.ToString(), " differ in rank");
  }
  if (rank < 0 && !attrs.kernel_shape.empty()) rank = static_cast<int64_t>(attrs.kernel_shape.size()) + 2;
  return rank;
}

}  // namespace

absl::StatusOr<WindowGeometry> ConvOutputShape(const Shape& x, const Shape& w,
                                               const WindowAttrs& attrs) {
  GE_ASSIGN_OR_RETURN(const int64_t rank, ConvRank(x, w, attrs));
  WindowGeometry geometry;
  if (rank < 0) {
    geometry.output = Shape::UnknownRank();
    return geometry;
  }
  if (rank < 3) return InvalidArgument("Conv needs rank >= 3, got X ", x.ToString(), " W ", w.ToString());
  const size_t n = static_cast<size_t>(rank - 2);
  std::vector<int64_t> kernel(n, kUnknownDim);
  if (!w.unknown_rank()) kernel.assign(w.dims().begin() + 2, w.dims().end());
  if (!attrs.kernel_shape.empty()) {
    if (attrs.kernel_shape.size() != n) {
      return InvalidArgument("kernel_shape ", Dims(attrs.kernel_shape), " has ",
                             attrs.kernel_shape.size(), " dims, expected ", n);
    }
    for (size_t i = 0; i < n; ++i) {
      if (kernel[i] >= 0 && kernel[i] != attrs.kernel_shape[i]) {
        return InvalidArgument("kernel_shape ", Dims(attrs.kernel_shape),
                               " contradicts W ", w.ToString());
      }
      kernel[i] = attrs.kernel_shape[i];
    }
  }
  const int64_t channels = x.unknown_rank() ? kUnknownDim : x.dim(1);
  const int64_t m = w.unknown_rank() ? kUnknownDim : w.dim(0);
  const int64_t w_channels = w.unknown_rank() ? kUnknownDim : w.dim(1);
  if (channels >= 0 && w_channels >= 0 && channels != w_channels * attrs.group) {
    return InvalidArgument("X ", x.ToString(), " has ", channels, " channels but W ", w.ToString(),
                           " with group ", attrs.group, " expects ", w_channels * attrs.group);
  }
  if (m >= 0 && m % attrs.group != 0) {
    return InvalidArgument("W ", w.ToString(), " has ", m, " output channels, not divisible by group ",
                           attrs.group);
  }
  GE_ASSIGN_OR_RETURN(ResolvedWindow window, ResolveWindow(attrs, kernel));
  geometry.output = Shape{x.unknown_rank() ? kUnknownDim : x.dim(0), m};
  absl::Span<const int64_t> spatial;
  if (!x.unknown_rank()) spatial = x.span().subspan(2);
  GE_RETURN_IF_ERROR(FillSpatial(spatial, window, attrs, geometry));
  return geometry;
}

namespace {

// One spatial dim of ConvTranspose: output size and pads (see the header).
absl::StatusOr<WindowDim> TransposedWindowDim(int64_t input, int64_t kernel, int64_t stride, int64_t dilation,
                                              int64_t output_padding, int64_t pad_begin, int64_t pad_end,
                                              int64_t output_shape, AutoPad auto_pad) {
  if (stride < 1 || dilation < 1 || (kernel >= 0 && kernel < 1)) {
    return InvalidArgument("window with kernel ", kernel, ", stride ", stride, " and dilation ", dilation,
                           ": each must be at least 1");
  }
  if (output_padding < 0 || output_padding >= std::max(stride, dilation)) {
    return InvalidArgument("output_padding ", output_padding, " must be in [0, max(stride, dilation))");
  }
  constexpr int64_t kHuge = int64_t{1} << 40;
  if (input >= kHuge || kernel >= kHuge || stride >= kHuge || dilation >= kHuge || output_shape >= kHuge ||
      std::abs(pad_begin) >= kHuge || std::abs(pad_end) >= kHuge) {
    return InvalidArgument("window of input ", input, ", kernel ", kernel, " and stride ", stride, " is too large");
  }
  WindowDim out;
  const bool same = auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower;
  if (auto_pad == AutoPad::kNotSet && output_shape < 0) {
    out.pad_begin = pad_begin;
    out.pad_end = pad_end;
  }
  if (output_shape >= 0) {
    out.output = output_shape;
  } else if (same && input >= 0) {
    out.output = input * stride;
  }
  if (input < 0 || kernel < 0) {
    if (same || output_shape >= 0) out.pad_begin = out.pad_end = kUnknownDim;
    return out;
  }
  const int64_t full = stride * (input - 1) + output_padding + (kernel - 1) * dilation + 1;
  if (same || output_shape >= 0) {
    const int64_t total = full - out.output;
    const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
    out.pad_begin = auto_pad == AutoPad::kSameUpper ? half : total - half;
    out.pad_end = total - out.pad_begin;
    return out;
  }
  out.output = full - out.pad_begin - out.pad_end;
  if (out.output < 0) {
    return InvalidArgument("input ", input, " with pads ", out.pad_begin, "+", out.pad_end,
                           " gives a negative output size ", out.output);
  }
  return out;
}

}  // namespace

absl::StatusOr<WindowGeometry> ConvTransposeOutputShape(const Shape& x, const Shape& w,
                                                        const WindowAttrs& attrs) {
  GE_ASSIGN_OR_RETURN(const int64_t rank, ConvRank(x, w, attrs));
  WindowGeometry geometry;
  if (rank < 0) {
    geometry.output = Shape::UnknownRank();
    return geometry;
  }
  if (rank < 3) {
    return InvalidArgument("ConvTranspose needs rank >= 3, got X ", x.ToString(), " W ", w.ToString());
  }
  const size_t n = static_cast<size_t>(rank - 2);
  std::vector<int64_t> kernel(n, kUnknownDim);
  if (!w.unknown_rank()) kernel.assign(w.dims().begin() + 2, w.dims().end());
  if (!attrs.kernel_shape.empty()) {
    if (attrs.kernel_shape.size() != n) {
      return InvalidArgument("kernel_shape ", Dims(attrs.kernel_shape), " has ", attrs.kernel_shape.size(),
                             " dims, expected ", n);
    }
    for (size_t i = 0; i < n; ++i) {
      if (kernel[i] >= 0 && kernel[i] != attrs.kernel_shape[i]) {
        return InvalidArgument("kernel_shape ", Dims(attrs.kernel_shape), " contradicts W ", w.ToString());
      }
      kernel[i] = attrs.kernel_shape[i];
    }
  }
  const int64_t channels = x.unknown_rank() ? kUnknownDim : x.dim(1);
  const int64_t w_channels = w.unknown_rank() ? kUnknownDim : w.dim(0);
  const int64_t mg = w.unknown_rank() ? kUnknownDim : w.dim(1);
  if (channels >= 0 && w_channels >= 0 && channels != w_channels) {
    return InvalidArgument("X ", x.ToString(), " has ", channels, " channels but W ", w.ToString(), " expects ",
                           w_channels);
  }
  const int64_t c = channels >= 0 ? channels : w_channels;
  if (c >= 0 && c % attrs.group != 0) {
    return InvalidArgument("X has ", c, " channels, not divisible by group ", attrs.group);
  }
  GE_ASSIGN_OR_RETURN(ResolvedWindow window, ResolveWindow(attrs, kernel));
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                      PerDim(attrs.output_padding, n, 0, "output_padding", 0));
  std::vector<int64_t> output_shape(n, kUnknownDim);
  if (!attrs.output_shape.empty()) {
    // Either the spatial dims or the whole output shape.
    if (attrs.output_shape.size() != n && attrs.output_shape.size() != n + 2) {
      return InvalidArgument("output_shape ", Dims(attrs.output_shape), " has ", attrs.output_shape.size(),
                             " values, expected ", n);
    }
    const size_t skip = attrs.output_shape.size() - n;
    for (size_t i = 0; i < n; ++i) {
      output_shape[i] = attrs.output_shape[skip + i];
      if (output_shape[i] < 0) return InvalidArgument("output_shape ", Dims(attrs.output_shape), " is negative");
    }
  }
  geometry.output = Shape{x.unknown_rank() ? kUnknownDim : x.dim(0), mg < 0 ? kUnknownDim : mg * attrs.group};
  geometry.kernel = kernel;
  geometry.strides = window.strides;
  geometry.dilations = window.dilations;
  geometry.pads_begin.resize(n);
  geometry.pads_end.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.unknown_rank() ? kUnknownDim : x.dim(i + 2);
    auto dim = TransposedWindowDim(in, kernel[i], window.strides[i], window.dilations[i], output_padding[i],
                                   window.pads[i], window.pads[i + n], output_shape[i], attrs.auto_pad);
    if (!dim.ok()) return Annotate(dim.status(), StrCat("spatial dim ", i));
    geometry.output.push_back(dim->output);
    geometry.pads_begin[i] = dim->pad_begin;
    geometry.pads_end[i] = dim->pad_end;
  }
  return geometry;
}

absl::StatusOr<WindowGeometry> PoolOutputShape(const Shape& x, const WindowAttrs& attrs) {
  const size_t n = attrs.kernel_shape.size();
  if (n == 0) return InvalidArgument("kernel_shape is required and must not be empty");
  for (int64_t k : attrs.kernel_shape) {
    if (k < 1) return InvalidArgument("kernel_shape ", Dims(attrs.kernel_shape), " has a dim below 1");
  }
  if (!x.unknown_rank() && x.rank() != static_cast<int64_t>(n) + 2) {
    return InvalidArgument("X ", x.ToString(), " has rank ", x.rank(), " but kernel_shape ",
                           Dims(attrs.kernel_shape), " needs rank ", n + 2);
  }
  GE_ASSIGN_OR_RETURN(ResolvedWindow window, ResolveWindow(attrs, attrs.kernel_shape));
  WindowGeometry geometry;
  geometry.output = x.unknown_rank() ? Shape{kUnknownDim, kUnknownDim} : Shape{x.dim(0), x.dim(1)};
  absl::Span<const int64_t> spatial;
  if (!x.unknown_rank()) spatial = x.span().subspan(2);
  GE_RETURN_IF_ERROR(FillSpatial(spatial, window, attrs, geometry));
  return geometry;
}

// ---- Matrix products ----

absl::StatusOr<Shape> MatMulShape(const Shape& a, const Shape& b) {
  if (a.is_scalar() || b.is_scalar()) {
    return InvalidArgument("MatMul operands must have rank >= 1, got ", a.ToString(), " and ",
                           b.ToString());
  }
  if (a.unknown_rank() || b.unknown_rank()) return Shape::UnknownRank();
  Shape pa = a, pb = b;
  if (a.rank() == 1) pa = Shape{1, a.dim(0)};
  if (b.rank() == 1) pb = Shape{b.dim(0), 1};
  const int64_t ka = pa.dim(pa.dims().size() - 1), kb = pb.dim(pb.dims().size() - 2);
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return InvalidArgument("MatMul inner dims differ: ", a.ToString(), " x ", b.ToString(), " (", ka,
                           " vs ", kb, ")");
  }
  Shape batch_a(pa.span().subspan(0, pa.dims().size() - 2));
  Shape batch_b(pb.span().subspan(0, pb.dims().size() - 2));
  auto batch = BroadcastShapes(batch_a, batch_b);
  if (!batch.ok()) {
    return InvalidArgument("MatMul batch dims of ", a.ToString(), " and ", b.ToString(),
                           " do not broadcast");
  }
  Shape out = *std::move(batch);
  if (a.rank() != 1) out.push_back(pa.dim(pa.dims().size() - 2));
  if (b.rank() != 1) out.push_back(pb.dim(pb.dims().size() - 1));
  return out;
}

absl::StatusOr<Shape> GemmShape(const Shape& a, const Shape& b, bool trans_a, bool trans_b) {
  if (!a.unknown_rank() && a.rank() != 2) return InvalidArgument("Gemm A ", a.ToString(), " must be 2-D");
  if (!b.unknown_rank() && b.rank() != 2) return InvalidArgument("Gemm B ", b.ToString(), " must be 2-D");
  const int64_t m = a.unknown_rank() ? kUnknownDim : a.dim(trans_a ? 1 : 0);
  const int64_t ka = a.unknown_rank() ? kUnknownDim : a.dim(trans_a ? 0 : 1);
  const int64_t kb = b.unknown_rank() ? kUnknownDim : b.dim(trans_b ? 1 : 0);
  const int64_t n = b.unknown_rank() ? kUnknownDim : b.dim(trans_b ? 0 : 1);
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return InvalidArgument("Gemm inner dims differ: A ", a.ToString(), (trans_a ? " (transposed)" : ""),
                           " x B ", b.ToString(), (trans_b ? " (transposed)" : ""));
  }
  return Shape{m, n};
}

// ---- Slice ----

absl::StatusOr<SliceBounds> ResolveSlice(const Shape& data, absl::Span<const int64_t> starts,
                                         absl::Span<const int64_t> ends,
                                         absl::Span<const int64_t> axes,
                                         absl::Span<const int64_t> steps) {
  const size_t n = starts.size();
  if (ends.size() != n || (!axes.empty() && axes.size() != n) || (!steps.empty() && steps.size() != n)) {
    return InvalidArgument("starts ", Dims(starts), ", ends ", Dims(ends), ", axes ", Dims(axes),
                           " and steps ", Dims(steps), " must have the same length");
  }
  if (data.unknown_rank()) return InvalidArgument("Slice needs the data rank");
  const int64_t rank = data.rank();
  std::vector<int64_t> default_axes;
  if (axes.empty()) {
    for (size_t i = 0; i < n; ++i) default_axes.push_back(static_cast<int64_t>(i));
    axes = default_axes;
  }
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(axes, rank));
  SliceBounds b;
  b.output = data;
  for (int64_t i = 0; i < rank; ++i) {
    b.starts.push_back(0);
    b.ends.push_back(data.dim(i));
    b.steps.push_back(1);
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t axis = normalized[i];
    // Steps past -INT64_MAX would overflow on negation; they select one element anyway.
    const int64_t step = steps.empty() ? 1 : std::max(steps[i], -std::numeric_limits<int64_t>::max());
    if (step == 0) return InvalidArgument("step of axis ", axes[i], " is 0");
    const int64_t dim = data.dim(axis);
    int64_t start = starts[i], end = ends[i];
    b.steps[axis] = step;
    if (dim <= 0) {  // unknown, or empty: nothing to clamp against
      b.starts[axis] = dim == 0 ? 0 : start;
      b.ends[axis] = dim == 0 ? 0 : end;
      b.output.set_dim(axis, dim);
      continue;
    }
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    b.starts[axis] = start;
    b.ends[axis] = end;
    const int64_t count = step > 0 ? CeilDiv(end - start, step) : CeilDiv(start - end, -step);
    b.output.set_dim(axis, std::max<int64_t>(0, count));
  }
  return b;
}

// ---- Reshape ----

absl::StatusOr<Shape> ResolveReshape(const Shape& input, absl::Span<const int64_t> target,
                                     bool allow_zero) {
  int inferred = -1;
  bool has_zero = false;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] < -1) return InvalidArgument("target shape ", Dims(target), " has dim ", target[i]);
    if (target[i] == 0) has_zero = true;
    if (target[i] != -1) continue;
    if (inferred >= 0) return InvalidArgument("target shape ", Dims(target), " has more than one -1");
    inferred = static_cast<int>(i);
  }
  if (allow_zero && has_zero && inferred >= 0) {
    return InvalidArgument("target shape ", Dims(target), " mixes 0 and -1 with allowzero=1");
  }
  Shape out;
  std::vector<bool> copied(input.unknown_rank() ? 0 : input.dims().size(), false);
  int64_t target_product = 1;  // over the literal dims
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allow_zero) {
      if (!input.unknown_rank() && i >= input.dims().size()) {
        return InvalidArgument("target shape ", Dims(target), " copies dim ", i, " (0) but input ",
                               input.ToString(), " has rank ", input.rank());
      }
      d = input.unknown_rank() ? kUnknownDim : input.dim(i);
      if (!input.unknown_rank()) copied[i] = true;
    } else if (d >= 0 && __builtin_mul_overflow(target_product, d, &target_product)) {
      return InvalidArgument("target shape ", Dims(target), " has more elements than int64 holds");
    }
    out.push_back(d);
  }
  // Input dims copied to the output cancel out of both element counts.
  int64_t input_product = input.unknown_rank() ? kUnknownDim : 1;
  for (size_t i = 0; i < copied.size() && input_product != kUnknownDim; ++i) {
    if (copied[i]) continue;
    if (input.dim(i) < 0 || __builtin_mul_overflow(input_product, input.dim(i), &input_product)) {
      input_product = kUnknownDim;
    }
  }
  if (inferred >= 0) {
    if (input_product == kUnknownDim) return out;
    if (target_product == 0 || input_product % target_product != 0) {
      return InvalidArgument("cannot reshape ", input.ToString(), " to ", Dims(target));
    }
    out.set_dim(inferred, input_product / target_product);
    return out;
  }
  if (input_product != kUnknownDim && input_product != target_product) {
    return InvalidArgument("cannot reshape ", input.ToString(), " to ", Dims(target),
                           ": the element counts differ");
  }
  return out;
}

}  // namespace ge::ops
