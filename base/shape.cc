// Shape arithmetic and the "[d0,d1,...]" spelling.
#include "base/shape.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status.h"

namespace ge {

bool Shape::IsFullyKnown() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

absl::StatusOr<int64_t> Shape::NumElements() const {
  if (unknown_rank_) return InvalidArgument("shape ", ToString(), " has unknown rank");
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0) return InvalidArgument("shape ", ToString(), " has an unknown or negative dim");
    if (d != 0 && n > INT64_MAX / d) {
      return InvalidArgument("element count of shape ", ToString(), " overflows int64");
    }
    n *= d;
  }
  return n;
}

int64_t Shape::NumElementsUnchecked() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::string Shape::ToString() const {
  if (unknown_rank_) return "[?]";
  return StrCat("[", absl::StrJoin(dims_, ","), "]");
}

absl::StatusOr<Shape> Shape::Parse(std::string_view text) {
  absl::string_view body = AbslView(text);
  if (!absl::ConsumePrefix(&body, "[") || !absl::ConsumeSuffix(&body, "]")) {
    return InvalidArgument("bad shape '", text, "': expected [d0,d1,...]");
  }
  if (body == "?") return UnknownRank();
  Shape shape;
  if (body.empty()) return shape;
  for (absl::string_view piece : absl::StrSplit(body, ',')) {
    int64_t d;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(piece), &d) || d < kUnknownDim) {
      return InvalidArgument("bad dim '", StdView(piece), "' in shape '", text, "'");
    }
    shape.push_back(d);
  }
  return shape;
}

std::vector<int64_t> Shape::ToGeDims() const {
  if (unknown_rank_) return {kUnknownRank};
  return std::vector<int64_t>(dims_.begin(), dims_.end());
}

Shape Shape::FromGeDims(absl::Span<const int64_t> dims) {
  if (dims.size() == 1 && dims[0] == kUnknownRank) return UnknownRank();
  return Shape(dims);
}

Shape::Dims ContiguousStrides(absl::Span<const int64_t> dims) {
  Shape::Dims strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims[i];
  }
  return strides;
}

}  // namespace ge
