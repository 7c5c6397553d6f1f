// ConvertTensor and ConvertInto, the dtype conversion every engine's kernels
// use (kernel_util.h). Conversions follow ONNX Cast: numeric and bool convert
// both ways (float to integer truncates toward zero, NaN becomes 0 and values
// out of range wrap or saturate without undefined behaviour; anything
// non-zero, NaN included, is true), strings parse plain and scientific
// numbers plus "INF", "+INF", "-INF" and "NaN" (case-insensitive), and
// numbers format as the shortest string that reads back to the same value.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::sdk {
namespace {

using NonStringTypes = NumericAndBoolTypes;

template <typename D, typename S>
inline D ConvertValue(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    return Widen(v) != ComputeType<S>(0);
  } else if constexpr (std::is_same_v<S, bool>) {
    return D(v ? 1.0f : 0.0f);
  } else if constexpr (kIsFloat<S> && std::is_integral_v<D>) {
    return FloatToInt<D>(Widen(v));
  } else if constexpr (kIsHalf<D>) {
    return D(static_cast<float>(Widen(v)));
  } else {
    return static_cast<D>(Widen(v));
  }
}

// ---- Strings ----

std::string FormatValue(double v, bool is_float32) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  char buf[64];
  std::to_chars_result r = is_float32 ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                                      : std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

template <typename S>
std::string ToString(S v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_integral_v<S>) {
    return std::to_string(v);
  } else {
    return FormatValue(static_cast<double>(Widen(v)), !std::is_same_v<S, double>);
  }
}

// Parses a number as double; nullopt when `s` is not entirely a number.
std::optional<double> ParseDouble(const std::string& s) {
  const std::string lower = absl::AsciiStrToLower(s);
  if (lower == "inf" || lower == "+inf") return HUGE_VAL;
  if (lower == "-inf") return -HUGE_VAL;
  if (lower == "nan") return std::nan("");
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

template <typename D>
absl::Status FromString(const std::string& s, int64_t index, D* out) {
  if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool>) {
    // Exact integers first (no rounding through double for large int64).
    D v{};
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
      *out = v;
      return absl::OkStatus();
    }
  }
  std::optional<double> v = ParseDouble(s);
  if (!v) {
    return InvalidArgument("cannot convert string \"", s, "\" (element ", index, ") to ",
                           DataTypeName(DataTypeOf<D>::value));
  }
  *out = ConvertValue<D>(*v);
  return absl::OkStatus();
}

template <typename S, typename D>
absl::Status ConvertLoop(const Tensor& src, const Tensor& dst) {
  const S* s = src.data<S>();
  D* d = dst.data<D>();
  const int64_t n = src.NumElements();
  if constexpr (std::is_same_v<D, std::string> && std::is_same_v<S, std::string>) {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
  } else if constexpr (std::is_same_v<D, std::string>) {
    for (int64_t i = 0; i < n; ++i) d[i] = ToString(s[i]);
  } else if constexpr (std::is_same_v<S, std::string>) {
    for (int64_t i = 0; i < n; ++i) GE_RETURN_IF_ERROR(FromString(s[i], i, &d[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = ConvertValue<D>(s[i]);
  }
  return absl::OkStatus();
}

template <typename S>
absl::Status ConvertFrom(const Tensor& src, const Tensor& dst) {
  absl::Status status;
  auto visit = [&](auto tag) {
    using D = typename decltype(tag)::type;
    return ConvertLoop<S, D>(src, dst);
  };
  if (!internal::VisitType(AllTypes{}, dst.dtype(), visit, &status)) {
    return InvalidArgument("cannot convert to dtype ", DataTypeName(dst.dtype()));
  }
  return status;
}

}  // namespace

absl::StatusOr<Tensor> ConvertTensor(const Tensor& src, DataType dtype) {
  if (src.dtype() == dtype) return src;
  GE_ASSIGN_OR_RETURN(Tensor dst, Tensor::Allocate(dtype, src.shape()));
  GE_RETURN_IF_ERROR(ConvertInto(src, dst));
  return dst;
}

absl::Status ConvertInto(const Tensor& src, const Tensor& dst) {
  if (src.NumElements() != dst.NumElements()) {
    return Internal("ConvertInto: ", src.NumElements(), " elements into ", dst.NumElements());
  }
  absl::Status status;
  auto visit = [&](auto tag) {
    using S = typename decltype(tag)::type;
    return ConvertFrom<S>(src, dst);
  };
  if (!internal::VisitType(AllTypes{}, src.dtype(), visit, &status)) {
    return InvalidArgument("cannot convert from dtype ", DataTypeName(src.dtype()));
  }
  return status;
}

}  // namespace ge::engine::sdk
