// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Every dtype numpy writes without pickling is read: bool, int8..int64,
// uint8..uint64, float16/32/64, complex64/128, fixed-width unicode ('<U') and
// byte strings ('|S') as ged strings; either byte order; Fortran order is
// converted to C order. Object arrays (pickles) are refused.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/tensor.h"

namespace ge::io {

absl::StatusOr<Tensor> ParseNpy(std::string_view bytes, std::string_view source_name = "<memory>");
absl::StatusOr<Tensor> ReadNpyFile(const std::string& path);

// Serializes `tensor` (strings as '<U' with the longest string's width;
// bfloat16 widened to float32, which numpy has no type for).
absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor);
absl::Status WriteNpyFile(const std::string& path, const Tensor& tensor);

}  // namespace ge::io
