// Tensor encodings both KServe v2 transports share (the gRPC codec,
// server/kserve_codec.h, and the HTTP/JSON one, server/kserve_json.h): the
// element count of a request's shape, checked against max_tensor_bytes
// before anything is allocated, and the raw form of a tensor (its bytes,
// little-endian; BYTES as a 4-byte little-endian length, then the bytes, per
// element) both ways.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/tensor.h"

namespace ge::server::serving {

// The element count of `shape` for `dtype`: INVALID_ARGUMENT for a negative
// dim or a rank above 16, RESOURCE_EXHAUSTED naming max_tensor_bytes when
// the count times the element size (1 for BYTES) is above it. `what` names
// the tensor in messages.
absl::StatusOr<int64_t> CheckedElementCount(std::string_view what, DataType dtype, absl::Span<const int64_t> shape,
                                            int64_t max_tensor_bytes);

// Fills `t` (allocated, `count` elements) from its raw form; INVALID_ARGUMENT
// naming `what` and `field` (where the bytes came from) when `raw` does not
// hold exactly that.
absl::Status DecodeRawTensor(std::string_view raw, int64_t count, Tensor& t, std::string_view what,
                             std::string_view field);

// Appends the raw form of `t` to `out`.
void AppendRawTensor(const Tensor& t, std::string* out);
// The size of that form.
size_t RawTensorSize(const Tensor& t);

}  // namespace ge::server::serving
