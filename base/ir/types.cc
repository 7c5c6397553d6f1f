// Spelling and parsing of TensorDesc and ValueType.
#include "base/ir/types.h"

#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status.h"

namespace ge::ir {
namespace {

constexpr std::array<std::string_view, 8> kFormatNames = {
    "ND", "NCHW", "NHWC", "NCDHW", "NDHWC", "NChw8c", "NChw16c", "Blocked"};

}  // namespace

std::string_view FormatName(Format format) { return kFormatNames[static_cast<size_t>(format)]; }

std::optional<Format> ParseFormat(std::string_view name) {
  for (size_t i = 0; i < kFormatNames.size(); ++i) {
    if (kFormatNames[i] == name) return static_cast<Format>(i);
  }
  return std::nullopt;
}

std::string TensorDesc::ToString() const {
  std::string out = StrCat(DataTypeName(dtype), shape.ToString());
  if (format != Format::kND) StrAppend(&out, "@", FormatName(format));
  return out;
}

ValueType ValueType::Sequence(ValueType element) {
  ValueType t;
  t.kind_ = Kind::kSequence;
  t.element_ = std::make_shared<const ValueType>(std::move(element));
  return t;
}

ValueType ValueType::Optional(ValueType element) {
  ValueType t;
  t.kind_ = Kind::kOptional;
  t.element_ = std::make_shared<const ValueType>(std::move(element));
  return t;
}

const TensorDesc& ValueType::tensor() const {
  return element_ ? element_->tensor() : tensor_;
}

TensorDesc& ValueType::mutable_tensor() {
  if (element_) {
    // Copy on write: elements are shared between copies of a ValueType.
    auto copy = std::make_shared<ValueType>(*element_);
    TensorDesc& desc = copy->mutable_tensor();
    element_ = copy;
    return desc;
  }
  return tensor_;
}

std::string ValueType::ToString() const {
  switch (kind_) {
    case Kind::kTensor: return tensor_.ToString();
    case Kind::kSequence: return StrCat("seq<", element_->ToString(), ">");
    case Kind::kOptional: return StrCat("opt<", element_->ToString(), ">");
  }
  return "";
}

absl::StatusOr<ValueType> ValueType::Parse(std::string_view text_view) {
  const absl::string_view text = AbslView(text_view);
  absl::string_view body = text;
  if (absl::ConsumePrefix(&body, "seq<") && absl::ConsumeSuffix(&body, ">")) {
    GE_ASSIGN_OR_RETURN(ValueType element, Parse(StdView(body)));
    return Sequence(std::move(element));
  }
  body = text;
  if (absl::ConsumePrefix(&body, "opt<") && absl::ConsumeSuffix(&body, ">")) {
    GE_ASSIGN_OR_RETURN(ValueType element, Parse(StdView(body)));
    return Optional(std::move(element));
  }
  body = text;
  Format format = Format::kND;
  if (size_t at = body.rfind('@'); at != absl::string_view::npos) {
    auto f = ParseFormat(StdView(body.substr(at + 1)));
    if (!f) return InvalidArgument("unknown format in type '", text_view, "'");
    format = *f;
    body = body.substr(0, at);
  }
  size_t bracket = body.find('[');
  if (bracket == absl::string_view::npos) {
    return InvalidArgument("bad type '", text_view, "': expected like f32[1,3]");
  }
  auto dtype = ParseDataType(StdView(body.substr(0, bracket)));
  if (!dtype) return InvalidArgument("unknown data type in type '", text_view, "'");
  GE_ASSIGN_OR_RETURN(Shape shape, Shape::Parse(StdView(body.substr(bracket))));
  return ValueType(TensorDesc(*dtype, std::move(shape), format));
}

bool operator==(const ValueType& a, const ValueType& b) {
  if (a.kind_ != b.kind_) return false;
  if (a.kind_ == ValueType::Kind::kTensor) return a.tensor_ == b.tensor_;
  return *a.element_ == *b.element_;
}

}  // namespace ge::ir
