// The text form's values and types: numbers (floats bit-exact, NaN bits
// included), strings, shapes, value types (nesting bounded by
// kMaxTypeDepth so hostile text cannot exhaust the stack), tensors (sizes
// checked against the text before anything is allocated) and lists.
#include <charconv>
#include <cstring>
#include <type_traits>

#include "base/ir/text_format.h"
#include "base/ir/text_format_internal.h"
#include "base/ir/text_format_parser.h"

namespace ge::ir {
namespace text_internal {
namespace {

constexpr int kMaxTypeDepth = 32;
// Largest tensor a `splat(...)` may describe; the text form is for tests.
constexpr int64_t kMaxSplatBytes = int64_t{1} << 30;

template <typename T>
absl::Status StoreInt(const Tensor& t, int64_t i, const Token& tok) {
  T v{};
  auto r = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), v);
  if (!IsIntWord(tok) || r.ec != std::errc() || r.ptr != tok.text.data() + tok.text.size()) {
    if (tok.kind == Tok::kError) return InvalidArgument(tok.text);
    return InvalidArgument(tok.pos.line, ":", tok.pos.col, ": expected a ", DataTypeName(t.dtype()),
                           " integer in range, got ", Describe(tok));
  }
  std::memcpy(static_cast<char*>(t.raw_data()) + i * sizeof(T), &v, sizeof(T));
  return absl::OkStatus();
}

template <typename T>
void Store(const Tensor& t, int64_t i, T v) {
  std::memcpy(static_cast<char*>(t.raw_data()) + i * sizeof(T), &v, sizeof(T));
}

// A typed list from its scalar elements: one kind throughout, except that
// ints and floats mix into floats.
template <typename T>
std::vector<T> Collect(const std::vector<AttrValue>& items) {
  std::vector<T> out;
  out.reserve(items.size());
  for (const AttrValue& v : items) {
    if constexpr (std::is_same_v<T, float>) {
      const int64_t* i = v.get<int64_t>();
      out.push_back(i ? static_cast<float>(*i) : *v.get<float>());
    } else {
      out.push_back(*v.get<T>());
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<int64_t> Parser::ParseInt(std::string_view what) {
  if (!IsIntWord(Peek())) return Expected(Peek(), what);
  const Token t = Take();
  int64_t v = 0;
  auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
    return ErrorAt(t.pos, StrCat("integer ", t.text, " is out of range"));
  }
  return v;
}

absl::StatusOr<Shape> Parser::ParseShape() {
  GE_RETURN_IF_ERROR(ExpectPunct('[', "to open a shape"));
  if (IsPunct(Peek(), '?')) {
    Take();
    GE_RETURN_IF_ERROR(ExpectPunct(']', "after '?' (unknown rank)"));
    return Shape::UnknownRank();
  }
  Shape shape;
  if (IsPunct(Peek(), ']')) {
    Take();
    return shape;
  }
  while (true) {
    const Pos at = Peek().pos;
    GE_ASSIGN_OR_RETURN(int64_t dim, ParseInt("a dim (an integer >= -1)"));
    if (dim < kUnknownDim) return ErrorAt(at, StrCat("dim ", dim, " is below -1"));
    shape.push_back(dim);
    if (IsPunct(Peek(), ']')) break;
    GE_RETURN_IF_ERROR(ExpectPunct(',', "or ']' in a shape"));
  }
  Take();
  return shape;
}

absl::StatusOr<TensorDesc> Parser::ParseTensorDesc() {
  TensorDesc desc;
  const Token& t = Peek();
  if (IsPunct(t, '?')) {
    Take();
    if (IsPunct(Peek(), '[')) {
      GE_ASSIGN_OR_RETURN(desc.shape, ParseShape());
    }
  } else {
    std::optional<DataType> dtype;
    if (t.kind == Tok::kWord) dtype = ParseDataType(t.text);
    if (!dtype) return Expected(t, "a type (like f32[1,3], seq<...>, opt<...> or ?)");
    Take();
    desc.dtype = *dtype;
    GE_ASSIGN_OR_RETURN(desc.shape, ParseShape());
  }
  if (IsPunct(Peek(), '@')) {
    Take();
    std::optional<Format> format;
    if (Peek().kind == Tok::kWord) format = ParseFormat(Peek().text);
    if (!format) return Expected(Peek(), "a format after '@' (ND, NCHW, NHWC, ...)");
    Take();
    desc.format = *format;
  }
  return desc;
}

absl::StatusOr<ValueType> Parser::ParseType(int depth) {
  const Token& t = Peek();
  if ((IsKeyword(t, "seq") || IsKeyword(t, "opt")) && IsPunct(Peek(1), '<')) {
    if (depth >= kMaxTypeDepth) return ErrorAt(t.pos, "types nest too deeply");
    const bool seq = t.text == "seq";
    Take();
    Take();
    GE_ASSIGN_OR_RETURN(ValueType element, ParseType(depth + 1));
    GE_RETURN_IF_ERROR(ExpectPunct('>', "to close the element type"));
    return seq ? ValueType::Sequence(std::move(element)) : ValueType::Optional(std::move(element));
  }
  GE_ASSIGN_OR_RETURN(TensorDesc desc, ParseTensorDesc());
  return ValueType(std::move(desc));
}

// A floating literal of dtype f32 or f64 (F = float or double): a number,
// inf, or nan with optional bits `nan(0x...)`.
template <typename F>
absl::StatusOr<F> Parser::ParseFloating(DataType dtype) {
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr Bits kExp = sizeof(F) == 4 ? 0x7f800000u : 0x7ff0000000000000ull;
  constexpr Bits kSign = Bits{1} << (sizeof(F) * 8 - 1);
  if (!IsFloatWord(Peek()) && !IsIntWord(Peek())) {
    return Expected(Peek(), StrCat("a ", DataTypeName(dtype), " number"));
  }
  const Token t = Take();
  if (IsNanWord(t)) {
    Bits bits = sizeof(F) == 4 ? text_internal::kQuietNanF32 : text_internal::kQuietNanF64;
    if (IsPunct(Peek(), '(')) {
      Take();
      const Token hex = Take();
      uint64_t v = 0;
      const bool is_hex =
          hex.kind == Tok::kWord && hex.text.size() > 2 && hex.text[0] == '0' && hex.text[1] == 'x';
      auto r = is_hex
                   ? std::from_chars(hex.text.data() + 2, hex.text.data() + hex.text.size(), v, 16)
                   : std::from_chars_result{nullptr, std::errc::invalid_argument};
      if (r.ec != std::errc() || r.ptr != hex.text.data() + hex.text.size() || (v & kSign) != 0 ||
          (v & kExp) != kExp || (v & ~kExp) == 0 || v != static_cast<Bits>(v)) {
        return Expected(hex, StrCat("the bits of a ", DataTypeName(dtype), " NaN (like 0x",
                                    sizeof(F) == 4 ? "7fc00001" : "7ff8000000000001", ")"));
      }
      bits = static_cast<Bits>(v);
      GE_RETURN_IF_ERROR(ExpectPunct(')', "after the NaN bits"));
    }
    if (t.text[0] == '-') bits |= kSign;
    F value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  F value = 0;
  auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
  if (r.ec == std::errc::result_out_of_range) {
    return ErrorAt(t.pos, StrCat(t.text, " is out of range for ", DataTypeName(dtype)));
  }
  if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
    return ErrorAt(t.pos, StrCat("bad number '", t.text, "'"));
  }
  return value;
}

absl::StatusOr<uint16_t> Parser::ParseHalf(DataType dtype) {
  const bool f16 = dtype == DataType::kFloat16;
  const uint16_t exp = f16 ? 0x7c00u : 0x7f80u;
  if (IsNanWord(Peek()) && IsPunct(Peek(1), '(')) {
    const Token t = Take();
    Take();
    const Token hex = Take();
    uint32_t v = 0;
    const bool is_hex =
        hex.kind == Tok::kWord && hex.text.size() > 2 && hex.text[0] == '0' && hex.text[1] == 'x';
    auto r = is_hex ? std::from_chars(hex.text.data() + 2, hex.text.data() + hex.text.size(), v, 16)
                    : std::from_chars_result{nullptr, std::errc::invalid_argument};
    if (r.ec != std::errc() || r.ptr != hex.text.data() + hex.text.size() || v > 0x7fffu ||
        (v & exp) != exp || (v & ~exp) == 0) {
      return Expected(hex, StrCat("the bits of a ", DataTypeName(dtype), " NaN"));
    }
    GE_RETURN_IF_ERROR(ExpectPunct(')', "after the NaN bits"));
    return static_cast<uint16_t>(v | (t.text[0] == '-' ? 0x8000u : 0u));
  }
  if (IsNanWord(Peek())) {
    const bool negative = Take().text[0] == '-';
    return static_cast<uint16_t>(
        (f16 ? text_internal::kQuietNanF16 : text_internal::kQuietNanBF16) |
        (negative ? 0x8000u : 0u));
  }
  GE_ASSIGN_OR_RETURN(float value, ParseFloating<float>(dtype));
  return f16 ? Float16(value).bits : BFloat16(value).bits;
}

absl::Status Parser::ParseElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt8:
      return StoreInt<int8_t>(t, i, Take());
    case DataType::kInt16:
      return StoreInt<int16_t>(t, i, Take());
    case DataType::kInt32:
      return StoreInt<int32_t>(t, i, Take());
    case DataType::kInt64:
      return StoreInt<int64_t>(t, i, Take());
    case DataType::kUint8:
      return StoreInt<uint8_t>(t, i, Take());
    case DataType::kUint16:
      return StoreInt<uint16_t>(t, i, Take());
    case DataType::kUint32:
      return StoreInt<uint32_t>(t, i, Take());
    case DataType::kUint64:
      return StoreInt<uint64_t>(t, i, Take());
    case DataType::kBool: {
      if (!IsKeyword(Peek(), "true") && !IsKeyword(Peek(), "false")) {
        return Expected(Peek(), "true or false");
      }
      Store<uint8_t>(t, i, Take().text == "true" ? 1 : 0);
      return absl::OkStatus();
    }
    case DataType::kString:
      if (Peek().kind != Tok::kString) return Expected(Peek(), "a quoted string");
      t.data<std::string>()[i] = Take().text;
      return absl::OkStatus();
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      GE_ASSIGN_OR_RETURN(uint16_t bits, ParseHalf(t.dtype()));
      Store<uint16_t>(t, i, bits);
      return absl::OkStatus();
    }
    case DataType::kFloat: {
      GE_ASSIGN_OR_RETURN(float v, ParseFloating<float>(t.dtype()));
      Store<float>(t, i, v);
      return absl::OkStatus();
    }
    case DataType::kDouble: {
      GE_ASSIGN_OR_RETURN(double v, ParseFloating<double>(t.dtype()));
      Store<double>(t, i, v);
      return absl::OkStatus();
    }
    case DataType::kComplex64:
    case DataType::kComplex128: {
      const bool c64 = t.dtype() == DataType::kComplex64;
      const DataType part = c64 ? DataType::kFloat : DataType::kDouble;
      GE_RETURN_IF_ERROR(ExpectPunct('(', "to open a complex number (re, im)"));
      for (int k = 0; k < 2; ++k) {
        if (k == 1) GE_RETURN_IF_ERROR(ExpectPunct(',', "between re and im"));
        if (c64) {
          GE_ASSIGN_OR_RETURN(float v, ParseFloating<float>(part));
          Store<float>(t, 2 * i + k, v);
        } else {
          GE_ASSIGN_OR_RETURN(double v, ParseFloating<double>(part));
          Store<double>(t, 2 * i + k, v);
        }
      }
      return ExpectPunct(')', "to close a complex number");
    }
    case DataType::kUndefined:
      break;
  }
  return Internal("tensor element of undefined dtype");
}

absl::StatusOr<Tensor> Parser::ParseTensor() {
  Take();  // tensor
  GE_RETURN_IF_ERROR(ExpectPunct('<', "after 'tensor'"));
  const Pos type_pos = Peek().pos;
  GE_ASSIGN_OR_RETURN(TensorDesc desc, ParseTensorDesc());
  GE_RETURN_IF_ERROR(ExpectPunct('>', "to close the tensor type"));
  if (desc.dtype == DataType::kUndefined) {
    if (desc.shape.is_scalar() && desc.format == Format::kND) return Tensor();
    return ErrorAt(type_pos, "the undefined tensor is written tensor<?>");
  }
  if (desc.format != Format::kND) return ErrorAt(type_pos, "tensor values carry no format");
  auto count = desc.shape.NumElements();
  if (!count.ok()) {
    return ErrorAt(type_pos, StrCat("a tensor value needs a known shape: ",
                                    StdView(count.status().message())));
  }
  const bool splat = IsKeyword(Peek(), "splat");
  const size_t elem_size =
      desc.dtype == DataType::kString ? sizeof(std::string) : DataTypeSize(desc.dtype);
  if (splat ? *count > kMaxSplatBytes / static_cast<int64_t>(elem_size)
            : *count > static_cast<int64_t>(lexer_.remaining() + ahead_.size())) {
    return ErrorAt(type_pos,
                   StrCat("tensor of ", *count, " elements is too large for the text form"));
  }
  GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(desc.dtype, desc.shape));
  if (splat) {
    Take();
    GE_RETURN_IF_ERROR(ExpectPunct('(', "after 'splat'"));
    if (*count == 0) return ErrorAt(type_pos, "splat of a tensor with no elements");
    GE_RETURN_IF_ERROR(ParseElement(t, 0));
    for (int64_t i = 1; i < *count; ++i) {
      if (desc.dtype == DataType::kString) {
        t.data<std::string>()[i] = t.data<std::string>()[0];
      } else {
        std::memcpy(static_cast<char*>(t.raw_data()) + i * elem_size, t.raw_data(), elem_size);
      }
    }
    GE_RETURN_IF_ERROR(ExpectPunct(')', "to close 'splat('"));
    return t;
  }
  GE_RETURN_IF_ERROR(ExpectPunct('[', "or 'splat(' with the tensor's elements"));
  for (int64_t i = 0; i < *count; ++i) {
    if (i > 0)
      GE_RETURN_IF_ERROR(ExpectPunct(',', StrCat("between elements (", *count, " expected)")));
    if (IsKeyword(Peek(), "...")) return ErrorAt(Peek().pos, "an elided tensor cannot be parsed");
    GE_RETURN_IF_ERROR(ParseElement(t, i));
  }
  GE_RETURN_IF_ERROR(ExpectPunct(']', StrCat("after ", *count, " elements")));
  return t;
}

absl::StatusOr<AttrValue> Parser::ParseScalarValue() {
  const Token& t = Peek();
  if (t.kind == Tok::kString) return AttrValue(Take().text);
  if (IsPunct(t, '@')) {
    Take();
    GE_ASSIGN_OR_RETURN(std::string name, ParseName("a graph name after '@'"));
    return AttrValue(GraphRef{std::move(name)});
  }
  if (IsKeyword(t, "true") || IsKeyword(t, "false")) return AttrValue(Take().text == "true");
  if (IsKeyword(t, "shape") && IsPunct(Peek(1), '[')) {
    Take();
    GE_ASSIGN_OR_RETURN(Shape shape, ParseShape());
    return AttrValue(std::move(shape));
  }
  if (IsKeyword(t, "tensor") && IsPunct(Peek(1), '<')) {
    GE_ASSIGN_OR_RETURN(Tensor tensor, ParseTensor());
    return AttrValue(std::move(tensor));
  }
  if (IsIntWord(t)) {
    GE_ASSIGN_OR_RETURN(int64_t v, ParseInt("an integer"));
    return AttrValue(v);
  }
  if (IsFloatWord(t)) {
    GE_ASSIGN_OR_RETURN(float v, ParseFloating<float>(DataType::kFloat));
    return AttrValue(v);
  }
  return Expected(t,
                  "a value (number, string, true/false, @graph, shape[...], tensor<...>, [...])");
}

absl::StatusOr<AttrValue> Parser::ParseList() {
  using Kind = AttrValue::Kind;
  const Pos open = Take().pos;
  std::vector<AttrValue> items;
  std::optional<Kind> kind;
  while (!IsPunct(Peek(), ']')) {
    if (!items.empty()) GE_RETURN_IF_ERROR(ExpectPunct(',', "or ']' in a list"));
    const Pos at = Peek().pos;
    GE_ASSIGN_OR_RETURN(AttrValue item, ParseScalarValue());
    const Kind k = item.kind();
    const bool numeric = k == Kind::kInt || k == Kind::kFloat;
    if (kind && *kind != k && !(numeric && (*kind == Kind::kInt || *kind == Kind::kFloat))) {
      return ErrorAt(
          at, StrCat("a list of ", AttrKindName(*kind), " values cannot hold a ", AttrKindName(k)));
    }
    if (!kind || k == Kind::kFloat) kind = k;
    items.push_back(std::move(item));
  }
  Take();
  if (items.empty()) {
    return ErrorAt(open,
                   "an empty list needs its kind: ints[], floats[], strings[], bools[], "
                   "tensors[], graphs[] or shapes[]");
  }
  switch (*kind) {
    case Kind::kInt:
      return AttrValue(Collect<int64_t>(items));
    case Kind::kFloat:
      return AttrValue(Collect<float>(items));
    case Kind::kString:
      return AttrValue(Collect<std::string>(items));
    case Kind::kBool:
      return AttrValue(Collect<bool>(items));
    case Kind::kTensor:
      return AttrValue(Collect<Tensor>(items));
    case Kind::kGraph:
      return AttrValue(Collect<GraphRef>(items));
    case Kind::kShape:
      return AttrValue(Collect<Shape>(items));
    default:
      break;
  }
  return Internal("list of list");
}

absl::StatusOr<AttrValue> Parser::ParseValue() {
  if (IsPunct(Peek(), '[')) return ParseList();
  const Token& t = Peek();
  if (t.kind == Tok::kWord && IsPunct(Peek(1), '[') && IsPunct(Peek(2), ']')) {
    using Kind = AttrValue::Kind;
    static constexpr Kind kListKinds[] = {Kind::kInts,  Kind::kFloats,  Kind::kStrings,
                                          Kind::kBools, Kind::kTensors, Kind::kGraphs,
                                          Kind::kShapes};
    for (Kind k : kListKinds) {
      if (t.text != AttrKindName(k)) continue;
      Take();
      Take();
      Take();
      switch (k) {
        case Kind::kInts:
          return AttrValue(std::vector<int64_t>());
        case Kind::kFloats:
          return AttrValue(std::vector<float>());
        case Kind::kStrings:
          return AttrValue(std::vector<std::string>());
        case Kind::kBools:
          return AttrValue(std::vector<bool>());
        case Kind::kTensors:
          return AttrValue(std::vector<Tensor>());
        case Kind::kGraphs:
          return AttrValue(std::vector<GraphRef>());
        default:
          return AttrValue(std::vector<Shape>());
      }
    }
  }
  return ParseScalarValue();
}

absl::Status Parser::ParseAttrEntry(AttrMap* attrs) {
  const Pos at = Peek().pos;
  GE_ASSIGN_OR_RETURN(std::string name, ParseName("an attribute name"));
  GE_RETURN_IF_ERROR(ExpectPunct('=', StrCat("after attribute '", name, "'")));
  GE_ASSIGN_OR_RETURN(AttrValue value, ParseValue());
  if (!attrs->emplace(name, std::move(value)).second) {
    return ErrorAt(at, StrCat("attribute '", name, "' is given twice"));
  }
  return absl::OkStatus();
}

}  // namespace text_internal

absl::StatusOr<AttrValue> ParseAttrValue(std::string_view text) {
  text_internal::Parser parser(text);
  GE_ASSIGN_OR_RETURN(AttrValue value, parser.ParseValue());
  GE_RETURN_IF_ERROR(parser.ExpectEnd());
  return value;
}

absl::StatusOr<ValueType> ParseValueType(std::string_view text) {
  text_internal::Parser parser(text);
  GE_ASSIGN_OR_RETURN(ValueType type, parser.ParseType());
  GE_RETURN_IF_ERROR(parser.ExpectEnd());
  return type;
}

}  // namespace ge::ir
