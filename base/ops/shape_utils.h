// Shape arithmetic shared by shape inference and the kernels.
//
// Every function here accepts shapes with unknown dims (-1) and, where it
// makes sense, unknown rank, and never invents a dim: an output dim is known
// only when every concrete input consistent with the known ones gives that
// dim. With fully known inputs the results are exact, and the cpu kernels use
// the same functions (window geometry, slice bounds, reshape targets) so that
// inference and computation can never disagree. Errors are InvalidArgument
// and name the offending axis, dim or shape; callers prefix the node.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/ir/op_desc.h"
#include "base/ir/types.h"
#include "base/shape.h"

namespace ge::ops {

// ---- Broadcasting ----

// Numpy broadcasting of two dims with unknowns: equal dims stay; 1 yields to
// the other; an unknown dim against a known d != 1 gives d (the unknown must
// be 1 or d), against 1 or unknown gives unknown. Two known dims that differ
// and are not 1 are an error.
absl::StatusOr<int64_t> BroadcastDim(int64_t a, int64_t b);
// Multidirectional broadcasting of any number of shapes (ONNX Add, Where,
// Max, Expand). Unknown rank in any input gives unknown rank (the known
// shapes are still checked against each other).
absl::StatusOr<Shape> BroadcastShapes(absl::Span<const Shape> shapes);
absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);
// Unidirectional broadcasting: OK when `from` can broadcast to `to` (Gemm's
// C, PRelu's slope); unknown dims pass.
absl::Status CheckUnidirectionalBroadcast(const Shape& from, const Shape& to);

// ---- Combining knowledge ----

// The most precise shape consistent with both (a known dim refines an
// unknown one); InvalidArgument when they contradict (rank or a dim).
absl::StatusOr<Shape> MergeShapes(const Shape& a, const Shape& b);
// The least precise shape covering both: equal dims are kept, differing
// dims become -1, differing ranks give unknown rank (If's branches, While's
// loop-carried values).
Shape GeneralizeShapes(const Shape& a, const Shape& b);
// MergeShapes for value types: an undefined dtype takes the other's; kinds
// and defined dtypes must match; a non-ND format of `a` wins.
absl::StatusOr<ir::ValueType> MergeValueTypes(const ir::ValueType& a, const ir::ValueType& b);
// GeneralizeShapes for value types; dtypes must match, and kinds too, except
// that an optional and a value it may hold generalize to the optional.
absl::StatusOr<ir::ValueType> GeneralizeValueTypes(const ir::ValueType& a,
                                                    const ir::ValueType& b);

// ---- Axes and dims ----

// `axis` in [-rank, rank) mapped to [0, rank); the error names the axis and
// the rank.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank);
// Each axis normalized, in the given order; duplicates are an error.
absl::StatusOr<std::vector<int64_t>> NormalizeAxes(absl::Span<const int64_t> axes, int64_t rank);
// Product of the dims; -1 when any is unknown (0 wins: a zero dim makes the
// product 0 even next to unknown dims).
int64_t DimProduct(absl::Span<const int64_t> dims);
// A shape of `rank` unknown dims, or unknown rank when rank < 0.
Shape UnknownShape(int64_t rank);

// ---- Convolution and pooling windows ----

enum class AutoPad : uint8_t { kNotSet, kSameUpper, kSameLower, kValid };
absl::StatusOr<AutoPad> ParseAutoPad(std::string_view text);

// The window attributes of Conv, MaxPool and AveragePool, as ONNX spells
// them. Empty vectors mean the defaults (strides and dilations 1, pads 0,
// kernel_shape from W for Conv).
struct WindowAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // begin pads of every spatial dim, then end pads
  int64_t group = 1;
  bool ceil_mode = false;
  std::vector<int64_t> output_padding;  // ConvTranspose only
  std::vector<int64_t> output_shape;    // ConvTranspose only (spatial dims)
};
// Reads auto_pad, kernel_shape, strides, dilations, pads, group, ceil_mode.
absl::StatusOr<WindowAttrs> WindowAttrsFromOp(const ir::OpDesc& op);

// The resolved geometry of a window op: the output shape and, per spatial
// dim, the kernel, stride, dilation and the begin/end pads actually used
// (for SAME_UPPER / SAME_LOWER these depend on the input dim: -1 while it is
// unknown).
struct WindowGeometry {
  Shape output;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
};
// One spatial dim: output size and pads. NOTSET uses the given pads and
// floor (ceil with ceil_mode; a last window starting past the input and the
// begin pad is dropped, as PyTorch and ONNX Runtime do); VALID uses no pads;
// SAME_* gives ceil(in / stride) with the total pad split evenly, the odd
// one at the end (UPPER) or the beginning (LOWER).
struct WindowDim {
  int64_t output = kUnknownDim;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
};
absl::StatusOr<WindowDim> ComputeWindowDim(int64_t input, int64_t kernel, int64_t stride,
                                           int64_t dilation, int64_t pad_begin, int64_t pad_end,
                                           AutoPad auto_pad, bool ceil_mode);
// Conv: X [N, C, D1..Dn], W [M, C/group, k1..kn] -> [N, M, O1..On]. Checks
// ranks, C against W and group, M divisible by group, kernel_shape against W.
absl::StatusOr<WindowGeometry> ConvOutputShape(const Shape& x, const Shape& w,
                                               const WindowAttrs& attrs);
// ConvTranspose: X [N, C, D1..Dn], W [C, M/group, k1..kn] -> [N, M, O1..On]
// with O = stride * (D - 1) + output_padding + (k - 1) * dilation + 1 -
// pads. SAME_* gives O = D * stride; an explicit output_shape fixes O. In
// both cases the total pad is derived and split (floor division, so it may
// be negative: extra output at the end), floor(total / 2) at the beginning
// for SAME_UPPER, at the end otherwise (ONNX's formulas).
absl::StatusOr<WindowGeometry> ConvTransposeOutputShape(const Shape& x, const Shape& w,
                                                        const WindowAttrs& attrs);
// MaxPool / AveragePool: X [N, C, D1..Dn] -> [N, C, O1..On]; kernel_shape
// is required.
absl::StatusOr<WindowGeometry> PoolOutputShape(const Shape& x, const WindowAttrs& attrs);

// ---- Einsum ----

// A parsed Einsum equation. Labels are the letters' character codes; the
// dims an ellipsis stands for get labels -E..-1 (right-aligned, so inputs
// with fewer ellipsis dims broadcast against the longest one).
struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // one label per dim of each input
  std::vector<int> output;
};
// Parses `equation` (whitespace ignored) for inputs of the given ranks. An
// equation without "->" has the implicit output: the ellipsis dims, then
// the letters used once, alphabetically.
absl::StatusOr<EinsumSpec> ParseEinsum(std::string_view equation, absl::Span<const int64_t> ranks);
// The size of every label for inputs of `inputs`' shapes (known ranks):
// letters must agree (unknown dims give way), ellipsis dims broadcast.
absl::StatusOr<std::map<int, int64_t>> EinsumLabelSizes(const EinsumSpec& spec, absl::Span<const Shape> inputs);

// ---- Matrix products ----

// numpy.matmul: 1-D operands are promoted (a to [1,K], b to [K,1]) and the
// promoted dim removed from the result; batch dims broadcast; K must agree.
absl::StatusOr<Shape> MatMulShape(const Shape& a, const Shape& b);
// Gemm: 2-D A and B, optionally transposed: [M, K] x [K, N] -> [M, N].
absl::StatusOr<Shape> GemmShape(const Shape& a, const Shape& b, bool trans_a, bool trans_b);

// ---- Slice ----

// Slice's bounds per data dim after ONNX's rules: negative starts and ends
// count from the end; then for a positive step start and end clamp to
// [0, dim], for a negative step start clamps to [0, dim-1] and end to
// [-1, dim-1]. Dims not sliced get (0, dim, 1). Where a dim is unknown the
// start and end are left as given and the output dim is -1.
struct SliceBounds {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<int64_t> steps;
  Shape output;
};
// `axes` empty means 0..starts.size()-1 and `steps` empty means all 1.
// Errors: starts/ends/axes/steps lengths differ, an axis out of range or
// repeated, a zero step. `data` must have known rank.
absl::StatusOr<SliceBounds> ResolveSlice(const Shape& data, absl::Span<const int64_t> starts,
                                         absl::Span<const int64_t> ends,
                                         absl::Span<const int64_t> axes,
                                         absl::Span<const int64_t> steps);

// ---- Reshape ----

// Reshape-14's target: 0 copies the input dim at the same index (unless
// allow_zero, where 0 is a zero dim), one -1 is inferred from the element
// count. Unknown input dims copied by 0 cancel out, so [N,3,4] with target
// [0,-1] gives [N,12]. Errors: two -1s, 0 and -1 together with allow_zero,
// a dim < -1, a 0 past the input rank, element counts that cannot match.
absl::StatusOr<Shape> ResolveReshape(const Shape& input, absl::Span<const int64_t> target,
                                     bool allow_zero);

}  // namespace ge::ops
