// The text form's printer (the parser is in text_format_parser.cc). Output
// is deterministic: graphs root first then subgraphs in the root's order,
// nodes in insertion order, attributes sorted by name, and every float in
// the shortest spelling that reads back bit-exactly.
#include "base/ir/text_format.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "base/ir/graph_walk.h"
#include "base/ir/text_format_internal.h"

namespace ge::ir {
namespace text_internal {

std::string QuoteString(std::string_view bytes) {
  std::string out = "\"";
  for (char c : bytes) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += c;
        } else {
          out += absl::StrFormat("\\x%02x", static_cast<unsigned char>(c));
        }
    }
  }
  out += '"';
  return out;
}

namespace {

// `nan`, `-nan`, or `nan(0x...)` with the bits (sign excluded) when they
// are not the default quiet NaN.
std::string FormatNan(bool negative, uint64_t magnitude_bits, uint64_t quiet, int hex_digits) {
  std::string out = negative ? "-nan" : "nan";
  if (magnitude_bits != quiet) {
    out += absl::StrFormat("(0x%0*x)", hex_digits, magnitude_bits);
  }
  return out;
}

template <typename T>
std::string Shortest(T value) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

}  // namespace

std::string FormatFloat(float value, bool force_float_syntax) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const bool negative = (bits >> 31) != 0;
  if (std::isnan(value)) return FormatNan(negative, bits & 0x7fffffffu, kQuietNanF32, 8);
  if (std::isinf(value)) return negative ? "-inf" : "inf";
  std::string out = Shortest(value);
  if (force_float_syntax && out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string FormatDouble(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const bool negative = (bits >> 63) != 0;
  if (std::isnan(value)) {
    return FormatNan(negative, bits & 0x7fffffffffffffffull, kQuietNanF64, 16);
  }
  if (std::isinf(value)) return negative ? "-inf" : "inf";
  return Shortest(value);
}

std::string FormatHalf(uint16_t bits, DataType dtype) {
  const bool f16 = dtype == DataType::kFloat16;
  const float value = f16 ? static_cast<float>(Float16::FromBits(bits))
                          : static_cast<float>(BFloat16::FromBits(bits));
  if (std::isnan(value)) {
    return FormatNan((bits >> 15) != 0, bits & 0x7fffu, f16 ? kQuietNanF16 : kQuietNanBF16, 4);
  }
  return FormatFloat(value, /*force_float_syntax=*/false);
}

}  // namespace text_internal

namespace {

using text_internal::FormatDouble;
using text_internal::FormatFloat;
using text_internal::FormatHalf;
using text_internal::QuoteString;

std::string TensorDescText(const TensorDesc& desc) {
  std::string out;
  if (desc.dtype == DataType::kUndefined) {
    out.push_back('?');
    if (!desc.shape.is_scalar() || desc.format != Format::kND) out += desc.shape.ToString();
  } else {
    out = StrCat(DataTypeName(desc.dtype), desc.shape.ToString());
  }
  if (desc.format != Format::kND) StrAppend(&out, "@", FormatName(desc.format));
  return out;
}

template <typename T>
T Load(const Tensor& t, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(t.raw_data()) + i * sizeof(T), sizeof(T));
  return v;
}

void AppendElement(std::string* out, const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat:
      *out += FormatFloat(Load<float>(t, i), false);
      return;
    case DataType::kDouble:
      *out += FormatDouble(Load<double>(t, i));
      return;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      *out += FormatHalf(Load<uint16_t>(t, i), t.dtype());
      return;
    case DataType::kComplex64:
      StrAppend(out, "(", FormatFloat(Load<float>(t, 2 * i), false), ", ",
                FormatFloat(Load<float>(t, 2 * i + 1), false), ")");
      return;
    case DataType::kComplex128:
      StrAppend(out, "(", FormatDouble(Load<double>(t, 2 * i)), ", ",
                FormatDouble(Load<double>(t, 2 * i + 1)), ")");
      return;
    case DataType::kBool:
      *out += Load<uint8_t>(t, i) != 0 ? "true" : "false";
      return;
    case DataType::kInt8:
      StrAppend(out, static_cast<int64_t>(Load<int8_t>(t, i)));
      return;
    case DataType::kInt16:
      StrAppend(out, static_cast<int64_t>(Load<int16_t>(t, i)));
      return;
    case DataType::kInt32:
      StrAppend(out, static_cast<int64_t>(Load<int32_t>(t, i)));
      return;
    case DataType::kInt64:
      StrAppend(out, Load<int64_t>(t, i));
      return;
    case DataType::kUint8:
      StrAppend(out, static_cast<uint64_t>(Load<uint8_t>(t, i)));
      return;
    case DataType::kUint16:
      StrAppend(out, static_cast<uint64_t>(Load<uint16_t>(t, i)));
      return;
    case DataType::kUint32:
      StrAppend(out, static_cast<uint64_t>(Load<uint32_t>(t, i)));
      return;
    case DataType::kUint64:
      StrAppend(out, Load<uint64_t>(t, i));
      return;
    case DataType::kString:
      *out += QuoteString(t.data<std::string>()[i]);
      return;
    case DataType::kUndefined:
      *out += "?";
      return;
  }
  *out += "?";
}

bool ElementsEqual(const Tensor& t, int64_t a, int64_t b) {
  if (t.dtype() == DataType::kString) return t.data<std::string>()[a] == t.data<std::string>()[b];
  const size_t size = DataTypeSize(t.dtype());
  const char* base = static_cast<const char*>(t.raw_data());
  return std::memcmp(base + a * size, base + b * size, size) == 0;
}

bool HasStorage(const Tensor& t) {
  if (t.NumElements() == 0) return true;
  if (t.raw_data() == nullptr || !t.shape().IsFullyKnown()) return false;
  return t.buffer()->size() >= t.byte_offset() + t.SizeInBytes();
}

void AppendTensor(std::string* out, const Tensor& t, const PrintOptions& options) {
  if (!t.defined()) {
    *out += "tensor<?>";
    return;
  }
  StrAppend(out, "tensor<", TensorDescText(TensorDesc(t.dtype(), t.shape())), ">");
  if (!HasStorage(t)) {
    *out += "[<missing data>]";
    return;
  }
  const int64_t n = t.NumElements();
  bool splat = n > 1;
  for (int64_t i = 1; splat && i < n; ++i) splat = ElementsEqual(t, 0, i);
  if (splat) {
    *out += "splat(";
    AppendElement(out, t, 0);
    *out += ")";
    return;
  }
  const bool elide = options.max_tensor_elements >= 0 && n > options.max_tensor_elements;
  const int64_t shown = elide ? options.max_tensor_elements : n;
  *out += "[";
  for (int64_t i = 0; i < shown; ++i) {
    if (i > 0) *out += ", ";
    AppendElement(out, t, i);
  }
  if (elide) *out += shown > 0 ? ", ..." : "...";
  *out += "]";
}

template <typename T, typename Fn>
void AppendList(std::string* out, const std::vector<T>& items, Fn&& each) {
  *out += "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) *out += ", ";
    each(items[i]);
  }
  *out += "]";
}

void AppendAttrValue(std::string* out, const AttrValue& value, const PrintOptions& options) {
  using Kind = AttrValue::Kind;
  const auto& v = value.variant();
  auto list = [&](const auto& items, auto&& each) {
    if (items.empty()) {
      StrAppend(out, AttrKindName(value.kind()), "[]");
    } else {
      AppendList(out, items, each);
    }
  };
  switch (value.kind()) {
    case Kind::kInt:
      StrAppend(out, std::get<int64_t>(v));
      return;
    case Kind::kFloat:
      *out += FormatFloat(std::get<float>(v), true);
      return;
    case Kind::kString:
      *out += QuoteString(std::get<std::string>(v));
      return;
    case Kind::kBool:
      *out += std::get<bool>(v) ? "true" : "false";
      return;
    case Kind::kTensor:
      AppendTensor(out, std::get<Tensor>(v), options);
      return;
    case Kind::kGraph:
      StrAppend(out, "@", QuoteNameIfNeeded(std::get<GraphRef>(v).name));
      return;
    case Kind::kShape:
      StrAppend(out, "shape", std::get<Shape>(v).ToString());
      return;
    case Kind::kInts:
      list(std::get<std::vector<int64_t>>(v), [&](int64_t x) { StrAppend(out, x); });
      return;
    case Kind::kFloats:
      list(std::get<std::vector<float>>(v), [&](float x) { *out += FormatFloat(x, true); });
      return;
    case Kind::kStrings:
      list(std::get<std::vector<std::string>>(v),
           [&](const std::string& x) { *out += QuoteString(x); });
      return;
    case Kind::kBools:
      list(std::get<std::vector<bool>>(v), [&](bool x) { *out += x ? "true" : "false"; });
      return;
    case Kind::kTensors:
      list(std::get<std::vector<Tensor>>(v),
           [&](const Tensor& x) { AppendTensor(out, x, options); });
      return;
    case Kind::kGraphs:
      list(std::get<std::vector<GraphRef>>(v),
           [&](const GraphRef& x) { StrAppend(out, "@", QuoteNameIfNeeded(x.name)); });
      return;
    case Kind::kShapes:
      list(std::get<std::vector<Shape>>(v),
           [&](const Shape& x) { StrAppend(out, "shape", x.ToString()); });
      return;
  }
}

void AppendAttrs(std::string* out, const AttrMap& attrs, const PrintOptions& options) {
  *out += "{";
  bool first = true;
  for (const auto& [name, value] : attrs) {
    if (!first) *out += ", ";
    first = false;
    StrAppend(out, QuoteNameIfNeeded(name), " = ");
    AppendAttrValue(out, value, options);
  }
  *out += "}";
}

// The type an input has when the text gives none.
ValueType DefaultInputType(const Node& node, int i) {
  const OutPort src = node.input(i);
  if (src.node == nullptr || src.index < 0 || src.index >= src.node->num_outputs()) {
    return ValueType();
  }
  return src.node->op_desc().output(src.index).type;
}

void AppendInputs(std::string* out, const Node& node) {
  *out += "(";
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (i > 0) *out += ", ";
    const OutPort src = node.input(i);
    if (src.node == nullptr) {
      *out += "_";
    } else {
      StrAppend(out, QuoteNameIfNeeded(src.node->name()), ":", src.index);
    }
    const IoDesc& io = node.op_desc().input(i);
    if (io.type != DefaultInputType(node, i)) StrAppend(out, " : ", PrintValueType(io.type));
    if (!io.name.empty()) StrAppend(out, " as ", QuoteNameIfNeeded(io.name));
  }
  *out += ")";
}

// True when the parser's rule for a missing `-> (...)` rebuilds the outputs.
bool OutputsImplied(const Node& node) {
  int implied = 0;
  for (int o = 0; o < node.num_outputs(); ++o) {
    if (!node.consumers(o).empty()) implied = o + 1;
  }
  if (implied != node.num_outputs()) return false;
  for (const IoDesc& io : node.op_desc().outputs()) {
    if (!io.name.empty() || io.type != ValueType()) return false;
  }
  return true;
}

void AppendNodeLine(std::string* out, const Node& node, const PrintOptions& options) {
  StrAppend(out, QuoteNameIfNeeded(node.name()), " = ", QuoteNameIfNeeded(node.type()));
  AppendInputs(out, node);
  for (const Node* c : node.control_inputs()) StrAppend(out, " ^", QuoteNameIfNeeded(c->name()));
  if (!node.op_desc().attrs().empty()) {
    *out += " ";
    AppendAttrs(out, node.op_desc().attrs(), options);
  }
  const auto& subgraphs = node.op_desc().subgraph_names();
  if (!subgraphs.empty()) {
    *out += " subgraphs(";
    for (size_t i = 0; i < subgraphs.size(); ++i) {
      StrAppend(out, i > 0 ? ", " : "", QuoteNameIfNeeded(subgraphs[i]));
    }
    *out += ")";
  }
  if (OutputsImplied(node)) return;
  *out += " -> (";
  for (int o = 0; o < node.num_outputs(); ++o) {
    if (o > 0) *out += ", ";
    const IoDesc& io = node.op_desc().output(o);
    *out += PrintValueType(io.type);
    if (!io.name.empty()) StrAppend(out, " as ", QuoteNameIfNeeded(io.name));
  }
  *out += ")";
}

void AppendGraphBlock(std::string* out, const Graph& graph, bool with_parent,
                      const PrintOptions& options) {
  StrAppend(out, "graph ", QuoteNameIfNeeded(graph.name()));
  if (with_parent && graph.parent_graph() != nullptr) {
    StrAppend(out, " parent(", QuoteNameIfNeeded(graph.parent_graph()->name()), ", ",
              graph.parent_node() ? QuoteNameIfNeeded(graph.parent_node()->name()) : "_", ")");
  }
  *out += " {\n";
  for (const auto& [name, value] : graph.attrs()) {
    StrAppend(out, "  attr ", QuoteNameIfNeeded(name), " = ");
    AppendAttrValue(out, value, options);
    *out += "\n";
  }
  graph.ForEachNode([&](const Node* node) {
    *out += "  ";
    AppendNodeLine(out, *node, options);
    *out += "\n";
  });
  *out += "}\n";
}

}  // namespace

std::string QuoteNameIfNeeded(std::string_view name) {
  bool bare = !name.empty() && name != "_";
  for (char c : name) bare = bare && text_internal::IsBareNameChar(c);
  return bare ? std::string(name) : QuoteString(name);
}

std::string PrintValueType(const ValueType& type) {
  switch (type.kind()) {
    case ValueType::Kind::kTensor:
      return TensorDescText(type.tensor());
    case ValueType::Kind::kSequence:
      return StrCat("seq<", PrintValueType(*type.element()), ">");
    case ValueType::Kind::kOptional:
      return StrCat("opt<", PrintValueType(*type.element()), ">");
  }
  return "?";
}

std::string PrintAttrValue(const AttrValue& value, const PrintOptions& options) {
  std::string out;
  AppendAttrValue(&out, value, options);
  return out;
}

std::string PrintNode(const Node& node, const PrintOptions& options) {
  std::string out;
  AppendNodeLine(&out, node, options);
  return out;
}

std::string PrintGraph(const Graph& graph) { return PrintGraph(graph, PrintOptions()); }

std::string PrintGraph(const Graph& graph, const PrintOptions& options) {
  std::string out;
  AppendGraphBlock(&out, graph, /*with_parent=*/false, options);
  for (const Graph* sub : SubgraphsBelow(graph)) {
    out += "\n";
    AppendGraphBlock(&out, *sub, /*with_parent=*/true, options);
  }
  return out;
}

}  // namespace ge::ir
