// Raw tensor forms and checked element counts (tensor_codec.h).
#include "server/serving/tensor_codec.h"

#include <cstring>

#include "base/status.h"

namespace ge::server::serving {

absl::StatusOr<int64_t> CheckedElementCount(std::string_view what, DataType dtype, absl::Span<const int64_t> shape,
                                            int64_t max_tensor_bytes) {
  if (shape.size() > 16) return InvalidArgument(what, ": rank ", shape.size(), " is above 16");
  const int64_t element = dtype == DataType::kString ? 1 : static_cast<int64_t>(DataTypeSize(dtype));
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument(what, ": shape dim ", d, " is negative");
    if (d != 0 && count > max_tensor_bytes / d) {
      return ResourceExhausted(what, ": shape of more than max_tensor_bytes (", max_tensor_bytes,
                               ") elements; refused (max_tensor_bytes)");
    }
    count *= d;
  }
  if (count > max_tensor_bytes / element) {
    return ResourceExhausted(what, ": ", count, " elements of ", element, " bytes are above max_tensor_bytes (",
                             max_tensor_bytes, ")");
  }
  return count;
}

absl::Status DecodeRawTensor(std::string_view raw, int64_t count, Tensor& t, std::string_view what,
                             std::string_view field) {
  if (t.dtype() != DataType::kString) {
    const int64_t need = count * static_cast<int64_t>(DataTypeSize(t.dtype()));
    if (static_cast<int64_t>(raw.size()) != need) {
      return InvalidArgument(what, ": ", field, " holds ", raw.size(), " bytes, the shape and datatype need ", need);
    }
    if (need > 0) std::memcpy(t.raw_data(), raw.data(), raw.size());
    return absl::OkStatus();
  }
  size_t at = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (raw.size() - at < 4) return InvalidArgument(what, ": ", field, " (BYTES) end inside the length of element ", i);
    const auto* p = reinterpret_cast<const unsigned char*>(raw.data() + at);
    const uint64_t n = uint64_t{p[0]} | uint64_t{p[1]} << 8 | uint64_t{p[2]} << 16 | uint64_t{p[3]} << 24;
    at += 4;
    if (n > raw.size() - at) {
      return InvalidArgument(what, ": ", field, " (BYTES) element ", i, " claims ", n, " bytes, ", raw.size() - at,
                             " remain");
    }
    t.data<std::string>()[i].assign(raw.data() + at, n);
    at += n;
  }
  if (at != raw.size()) {
    return InvalidArgument(what, ": ", field, " (BYTES) hold ", raw.size() - at, " bytes beyond the shape's ", count,
                           " elements");
  }
  return absl::OkStatus();
}

size_t RawTensorSize(const Tensor& t) {
  if (t.dtype() != DataType::kString) return t.SizeInBytes();
  size_t n = 0;
  for (int64_t i = 0; i < t.NumElements(); ++i) n += 4 + t.data<std::string>()[i].size();
  return n;
}

void AppendRawTensor(const Tensor& t, std::string* out) {
  if (t.dtype() != DataType::kString) {
    out->append(static_cast<const char*>(t.raw_data()), t.SizeInBytes());
    return;
  }
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    const std::string& s = t.data<std::string>()[i];
    const uint32_t n = static_cast<uint32_t>(s.size());
    const char len[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                         static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
    out->append(len, 4);
    out->append(s);
  }
}

}  // namespace ge::server::serving
