// Size bounds for ops whose output size comes from an attribute or an
// input's value rather than from another tensor (RandomNormal's `shape`,
// Multinomial's `sample_size`, DFT's `dft_length`, MaxRoiPool's
// `pooled_shape`, MelWeightMatrix's bins): a hostile model names a size and
// ged must refuse it before allocating. Shape inference and the kernels
// both call CheckGeneratedSize, so a size is refused at compile time when it
// is known then, and at run time otherwise.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/status.h"

namespace ge::ops {

// At most 2^36 elements (256 GiB of f32): far above any real model's
// generated tensor, far below what would overflow a byte count.
inline constexpr int64_t kMaxGeneratedElements = int64_t{1} << 36;

// InvalidArgument for a negative dim; ResourceExhausted when the product of
// `dims` exceeds kMaxGeneratedElements (checked without overflowing).
// `what` names the node and the size's source for the message. Unknown dims
// (-1) are skipped only when `allow_unknown`.
inline absl::Status CheckGeneratedSize(std::string_view what, absl::Span<const int64_t> dims,
                                       bool allow_unknown = false) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      if (allow_unknown && d == -1) continue;
      return InvalidArgument(what, ": dim ", d, " is negative");
    }
    if (d != 0 && product > kMaxGeneratedElements / d) {
      return ResourceExhausted(what, ": more than 2^36 elements (", kMaxGeneratedElements,
                               "), ged's bound for generated tensors");
    }
    product *= d;
  }
  return absl::OkStatus();
}

}  // namespace ge::ops
