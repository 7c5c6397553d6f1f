// KServe v2 HTTP/JSON tensor decoding and encoding (kserve_json.h).
#include "server/kserve_json.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "base/status.h"
#include "base/strings.h"
#include "server/serving/model_config.h"
#include "server/serving/tensor_codec.h"

namespace ge::server {
namespace {

using nlohmann::json;

// nlohmann's DOM builder behind a SAX filter that counts elements and
// nesting, so a JSON bomb stops at the limit instead of at the allocator.
class BoundedSax {
 public:
  BoundedSax(json& result, const JsonLimits& limits) : dom_(result, false), limits_(limits) {}

  bool null() { return Count() && dom_.null(); }
  bool boolean(bool v) { return Count() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return Count() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return Count() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return Count() && dom_.number_float(v, s); }
  bool string(json::string_t& v) { return Count() && dom_.string(v); }
  bool binary(json::binary_t& v) { return Count() && dom_.binary(v); }
  bool key(json::string_t& v) { return Count() && dom_.key(v); }
  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool end_object() { return --depth_, dom_.end_object(); }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_array() { return --depth_, dom_.end_array(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    if (status_.ok()) status_ = InvalidArgument("the request is not valid JSON: ", e.what());
    return false;
  }
  const absl::Status& status() const { return status_; }

 private:
  bool Count() {
    if (++elements_ <= limits_.max_elements) return true;
    status_ = ResourceExhausted("the request's JSON has more than max_json_elements (", limits_.max_elements,
                                ") elements; send large tensors as binary data");
    return false;
  }
  bool Enter() {
    if (++depth_ > limits_.max_depth) {
      status_ = InvalidArgument("the request's JSON nests deeper than ", limits_.max_depth, " levels");
      return false;
    }
    return Count();
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const JsonLimits& limits_;
  int64_t elements_ = 0;
  int depth_ = 0;
  absl::Status status_;
};

const json* Member(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string Shorten(const std::string& s) { return s.size() <= 64 ? s : s.substr(0, 64) + "..."; }

absl::StatusOr<std::string> StringMember(const json& object, const char* key, std::string_view what, bool required) {
  const json* v = Member(object, key);
  if (v == nullptr) {
    if (required) return InvalidArgument(what, ": '", key, "' is missing");
    return std::string();
  }
  if (!v->is_string()) return InvalidArgument(what, ": '", key, "' must be a string");
  return v->get<std::string>();
}

// A parameter that must be a boolean when present.
absl::StatusOr<std::optional<bool>> BoolParameter(const json* parameters, const char* key, std::string_view what) {
  if (parameters == nullptr) return std::optional<bool>();
  const json* v = Member(*parameters, key);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return InvalidArgument(what, ": parameter '", key, "' must be true or false");
  return std::optional<bool>(v->get<bool>());
}

absl::StatusOr<const json*> Parameters(const json& object, std::string_view what) {
  const json* p = Member(object, "parameters");
  if (p != nullptr && !p->is_object()) return InvalidArgument(what, ": 'parameters' must be an object");
  return p;
}

absl::StatusOr<std::vector<int64_t>> ShapeOf(const json& tensor, std::string_view what) {
  const json* shape = Member(tensor, "shape");
  if (shape == nullptr) return InvalidArgument(what, ": 'shape' is missing");
  if (!shape->is_array()) return InvalidArgument(what, ": 'shape' must be an array of integers");
  if (shape->size() > 16) return InvalidArgument(what, ": rank ", shape->size(), " is above 16");
  std::vector<int64_t> dims;
  for (const json& d : *shape) {
    if (d.is_number_unsigned()) {
      if (d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return InvalidArgument(what, ": shape dim ", d.get<uint64_t>(), " is out of range");
      }
      dims.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    } else if (d.is_number_integer()) {
      dims.push_back(d.get<int64_t>());
    } else {
      return InvalidArgument(what, ": 'shape' must be an array of integers");
    }
  }
  return dims;
}

// The leaves of `data` in row-major order: flat (count scalars) or nested
// to exactly `shape`.
absl::Status Flatten(const json& data, const std::vector<int64_t>& shape, int64_t count, std::string_view what,
                     std::vector<const json*>* leaves) {
  if (!data.is_array()) {
    if (shape.empty()) return leaves->push_back(&data), absl::OkStatus();
    return InvalidArgument(what, ": 'data' must be an array");
  }
  const bool nested = !data.empty() && data.front().is_array();
  if (!nested) {
    if (static_cast<int64_t>(data.size()) != count) {
      return InvalidArgument(what, ": 'data' holds ", data.size(), " elements, the shape needs ", count);
    }
    for (const json& v : data) {
      if (v.is_array() || v.is_object()) return InvalidArgument(what, ": flat 'data' mixes arrays and scalars");
      leaves->push_back(&v);
    }
    return absl::OkStatus();
  }
  // Nested: level k must have shape[k] entries.
  struct Frame {
    const json* node;
    size_t level;
  };
  std::vector<Frame> stack{{&data, 0}};
  while (!stack.empty()) {
    const Frame f = stack.back();
    stack.pop_back();
    if (f.level == shape.size()) {
      if (f.node->is_array() || f.node->is_object()) {
        return InvalidArgument(what, ": 'data' nests deeper than the shape's rank ", shape.size());
      }
      leaves->push_back(f.node);
      continue;
    }
    if (!f.node->is_array() || static_cast<int64_t>(f.node->size()) != shape[f.level]) {
      return InvalidArgument(what, ": nested 'data' does not match the shape at dim ", f.level, " (expected ",
                             shape[f.level], " entries)");
    }
    for (auto it = f.node->rbegin(); it != f.node->rend(); ++it) stack.push_back({&*it, f.level + 1});
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status ToInteger(const json& v, int64_t i, std::string_view what, T* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      return InvalidArgument(what, ": element ", i, " (", u, ") does not fit its datatype");
    }
    *out = static_cast<T>(u);
    return absl::OkStatus();
  }
  if (v.is_number_integer()) {
    const int64_t s = v.get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (s < 0 || static_cast<uint64_t>(s) > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
        return InvalidArgument(what, ": element ", i, " (", s, ") does not fit its datatype");
      }
    } else {
      if (s < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          s > static_cast<int64_t>(std::numeric_limits<T>::max())) {
        return InvalidArgument(what, ": element ", i, " (", s, ") does not fit its datatype");
      }
    }
    *out = static_cast<T>(s);
    return absl::OkStatus();
  }
  return InvalidArgument(what, ": element ", i, " must be an integer");
}

absl::StatusOr<double> ToNumber(const json& v, int64_t i, std::string_view what) {
  if (!v.is_number()) return InvalidArgument(what, ": element ", i, " must be a number");
  return v.get<double>();
}

template <typename T>
absl::Status FillIntegers(const std::vector<const json*>& leaves, Tensor& t, std::string_view what) {
  T* dst = t.data<T>();
  for (size_t i = 0; i < leaves.size(); ++i) {
    GE_RETURN_IF_ERROR(ToInteger<T>(*leaves[i], static_cast<int64_t>(i), what, &dst[i]));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status FillFloats(const std::vector<const json*>& leaves, Tensor& t, std::string_view what) {
  T* dst = t.data<T>();
  for (size_t i = 0; i < leaves.size(); ++i) {
    GE_ASSIGN_OR_RETURN(const double d, ToNumber(*leaves[i], static_cast<int64_t>(i), what));
    if constexpr (std::is_same_v<T, double>) {
      dst[i] = d;
    } else {
      dst[i] = T(static_cast<float>(d));
    }
  }
  return absl::OkStatus();
}

absl::Status FromJsonData(const std::vector<const json*>& leaves, Tensor& t, std::string_view what) {
  switch (t.dtype()) {
    case DataType::kBool:
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (!leaves[i]->is_boolean()) return InvalidArgument(what, ": element ", i, " must be true or false");
        t.data<bool>()[i] = leaves[i]->get<bool>();
      }
      return absl::OkStatus();
    case DataType::kInt8: return FillIntegers<int8_t>(leaves, t, what);
    case DataType::kInt16: return FillIntegers<int16_t>(leaves, t, what);
    case DataType::kInt32: return FillIntegers<int32_t>(leaves, t, what);
    case DataType::kInt64: return FillIntegers<int64_t>(leaves, t, what);
    case DataType::kUint8: return FillIntegers<uint8_t>(leaves, t, what);
    case DataType::kUint16: return FillIntegers<uint16_t>(leaves, t, what);
    case DataType::kUint32: return FillIntegers<uint32_t>(leaves, t, what);
    case DataType::kUint64: return FillIntegers<uint64_t>(leaves, t, what);
    case DataType::kFloat16: return FillFloats<Float16>(leaves, t, what);
    case DataType::kBFloat16: return FillFloats<BFloat16>(leaves, t, what);
    case DataType::kFloat: return FillFloats<float>(leaves, t, what);
    case DataType::kDouble: return FillFloats<double>(leaves, t, what);
    case DataType::kString:
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (!leaves[i]->is_string()) return InvalidArgument(what, ": element ", i, " must be a string (BYTES)");
        t.data<std::string>()[i] = leaves[i]->get<std::string>();
      }
      return absl::OkStatus();
    default: return InvalidArgument(what, ": datatype ", serving::KServeDatatype(t.dtype()), " has no JSON form");
  }
}

// One tensor of a request or reply ("input 'x'"/"output 'y'"); `binary`
// is where its binary data begins (advanced past it).
absl::StatusOr<serving::NamedTensor> DecodeTensor(const json& tensor, std::string_view kind, std::string_view binary,
                                                  size_t* binary_at, const JsonLimits& limits) {
  if (!tensor.is_object()) return InvalidArgument("each ", kind, " must be an object");
  GE_ASSIGN_OR_RETURN(const std::string name, StringMember(tensor, "name", kind, true));
  const std::string what = StrCat(kind, " '", Shorten(name), "'");
  GE_ASSIGN_OR_RETURN(const std::string datatype, StringMember(tensor, "datatype", what, true));
  const std::optional<DataType> dtype = serving::ParseKServeDatatype(datatype);
  if (!dtype) {
    return InvalidArgument(what, ": unknown datatype '", Shorten(datatype),
                           "' (BOOL, UINT8..UINT64, INT8..INT64, FP16, FP32, FP64, BYTES, BF16)");
  }
  GE_ASSIGN_OR_RETURN(const std::vector<int64_t> shape, ShapeOf(tensor, what));
  GE_ASSIGN_OR_RETURN(const int64_t count, serving::CheckedElementCount(what, *dtype, shape, limits.max_tensor_bytes));
  GE_ASSIGN_OR_RETURN(const json* parameters, Parameters(tensor, what));
  const json* size = parameters != nullptr ? Member(*parameters, "binary_data_size") : nullptr;
  const json* data = Member(tensor, "data");
  if (size != nullptr && data != nullptr) {
    return InvalidArgument(what, ": has both 'data' and binary_data_size; send one form only");
  }
  if (size == nullptr && data == nullptr) return InvalidArgument(what, ": no 'data' and no binary_data_size");
  if (size != nullptr) {
    if (!size->is_number_unsigned() && !(size->is_number_integer() && size->get<int64_t>() >= 0)) {
      return InvalidArgument(what, ": binary_data_size must be a non-negative integer");
    }
    const uint64_t n = size->get<uint64_t>();
    if (n > binary.size() - *binary_at) {
      return InvalidArgument(what, ": binary_data_size ", n, " runs past the body's binary data (",
                             binary.size() - *binary_at, " bytes left after the JSON and the tensors before it; ",
                             "the JSON's length goes in ", kInferenceHeaderContentLength, ")");
    }
    // A BYTES element costs at least its 4-byte length, another at least one byte.
    const uint64_t least = *dtype == DataType::kString ? 4 * static_cast<uint64_t>(count)
                                                       : static_cast<uint64_t>(count) * DataTypeSize(*dtype);
    if (n < least) {
      return InvalidArgument(what, ": binary_data_size ", n, " is too small for shape and datatype (", least,
                             " bytes at least)");
    }
    GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*dtype, Shape(absl::Span<const int64_t>(shape))));
    GE_RETURN_IF_ERROR(serving::DecodeRawTensor(binary.substr(*binary_at, n), count, t, what, "binary data"));
    *binary_at += n;
    return serving::NamedTensor{name, std::move(t)};
  }
  std::vector<const json*> leaves;
  GE_RETURN_IF_ERROR(Flatten(*data, shape, count, what, &leaves));
  GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*dtype, Shape(absl::Span<const int64_t>(shape))));
  GE_RETURN_IF_ERROR(FromJsonData(leaves, t, what));
  return serving::NamedTensor{name, std::move(t)};
}

// Splits a body at the JSON part's end; the JSON, parsed.
absl::StatusOr<json> ParseHeader(std::string_view body, std::optional<size_t> header_length, const JsonLimits& limits,
                                 std::string_view* binary) {
  const size_t n = header_length.value_or(body.size());
  if (n > body.size()) {
    return InvalidArgument(kInferenceHeaderContentLength, " ", n, " is beyond the body's ", body.size(), " bytes");
  }
  *binary = body.substr(n);
  GE_ASSIGN_OR_RETURN(json header, ParseJsonBounded(body.substr(0, n), limits));
  if (!header.is_object()) return InvalidArgument("the request's JSON must be an object");
  return header;
}

json TensorJson(const serving::NamedTensor& t) {
  json out = json::object();
  out["name"] = t.name;
  out["datatype"] = std::string(serving::KServeDatatype(t.tensor.dtype()));
  json shape = json::array();
  for (int64_t d : t.tensor.shape().dims()) shape.push_back(d);
  out["shape"] = std::move(shape);
  return out;
}

json DataJson(const Tensor& t) {
  json data = json::array();
  const int64_t n = t.NumElements();
  auto each = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) data.push_back(f(i));
  };
  switch (t.dtype()) {
    case DataType::kBool: each([&](int64_t i) { return t.data<bool>()[i]; }); break;
    case DataType::kInt8: each([&](int64_t i) { return t.data<int8_t>()[i]; }); break;
    case DataType::kInt16: each([&](int64_t i) { return t.data<int16_t>()[i]; }); break;
    case DataType::kInt32: each([&](int64_t i) { return t.data<int32_t>()[i]; }); break;
    case DataType::kInt64: each([&](int64_t i) { return t.data<int64_t>()[i]; }); break;
    case DataType::kUint8: each([&](int64_t i) { return t.data<uint8_t>()[i]; }); break;
    case DataType::kUint16: each([&](int64_t i) { return t.data<uint16_t>()[i]; }); break;
    case DataType::kUint32: each([&](int64_t i) { return t.data<uint32_t>()[i]; }); break;
    case DataType::kUint64: each([&](int64_t i) { return t.data<uint64_t>()[i]; }); break;
    case DataType::kFloat16: each([&](int64_t i) { return static_cast<float>(t.data<Float16>()[i]); }); break;
    case DataType::kBFloat16: each([&](int64_t i) { return static_cast<float>(t.data<BFloat16>()[i]); }); break;
    case DataType::kFloat: each([&](int64_t i) { return t.data<float>()[i]; }); break;
    case DataType::kDouble: each([&](int64_t i) { return t.data<double>()[i]; }); break;
    case DataType::kString: each([&](int64_t i) { return t.data<std::string>()[i]; }); break;
    default: break;
  }
  return data;
}

// Appends `header` (dumped) and the binary parts to a body.
HttpBody Assemble(const json& header, const std::string& binary) {
  HttpBody out;
  out.body = header.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!binary.empty()) {
    out.header_length = out.body.size();
    out.body += binary;
  }
  return out;
}

}  // namespace

absl::StatusOr<json> ParseJsonBounded(std::string_view text, const JsonLimits& limits) {
  json result;
  BoundedSax sax(result, limits);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json, true);
  if (!ok) {
    if (!sax.status().ok()) return sax.status();
    return InvalidArgument("the request is not valid JSON");
  }
  return result;
}

absl::StatusOr<std::optional<size_t>> ParseHeaderLength(const std::vector<std::string_view>& values, size_t body_size) {
  if (values.empty()) return std::optional<size_t>();
  if (values.size() > 1) return InvalidArgument("the request carries ", kInferenceHeaderContentLength, " twice");
  const std::string_view v = values.front();
  if (v.empty() || v.size() > 19) {
    return InvalidArgument(kInferenceHeaderContentLength, " '", v.substr(0, 32), "' is not a byte count");
  }
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') {
      return InvalidArgument(kInferenceHeaderContentLength, " '", v.substr(0, 32), "' is not a byte count");
    }
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > body_size) {
    return InvalidArgument(kInferenceHeaderContentLength, " ", n, " is beyond the body's ", body_size, " bytes");
  }
  return std::optional<size_t>(static_cast<size_t>(n));
}

bool OutputForms::Binary(const std::string& name) const {
  auto it = binary.find(name);
  return it != binary.end() ? it->second : binary_default;
}

absl::Status DecodeHttpInferRequest(std::string_view body, std::optional<size_t> header_length,
                                    const JsonLimits& limits, HttpInferRequest* out) {
  std::string_view binary;
  GE_ASSIGN_OR_RETURN(const json header, ParseHeader(body, header_length, limits, &binary));
  GE_ASSIGN_OR_RETURN(out->request.id, StringMember(header, "id", "the request", false));
  GE_ASSIGN_OR_RETURN(const json* parameters, Parameters(header, "the request"));
  GE_ASSIGN_OR_RETURN(const std::optional<bool> binary_output,
                      BoolParameter(parameters, "binary_data_output", "the request"));
  out->forms.binary_default = binary_output.value_or(false);
  if (parameters != nullptr) {
    if (const json* timeout = Member(*parameters, "timeout"); timeout != nullptr) {
      if (!timeout->is_number_integer() || timeout->get<int64_t>() < 0) {
        return InvalidArgument("the request: parameter 'timeout' must be a non-negative integer (microseconds)");
      }
      out->timeout_us = timeout->get<int64_t>();
    }
  }
  const json* inputs = Member(header, "inputs");
  if (inputs == nullptr || !inputs->is_array()) return InvalidArgument("the request: 'inputs' must be an array");
  size_t at = 0;
  for (const json& input : *inputs) {
    GE_ASSIGN_OR_RETURN(serving::NamedTensor t, DecodeTensor(input, "input", binary, &at, limits));
    out->request.inputs.push_back(std::move(t));
  }
  if (at != binary.size()) {
    return InvalidArgument("the inputs' binary_data_size sum to ", at, " bytes, the body carries ", binary.size(),
                           " after the JSON (", kInferenceHeaderContentLength, ")");
  }
  if (const json* outputs = Member(header, "outputs"); outputs != nullptr) {
    if (!outputs->is_array()) return InvalidArgument("the request: 'outputs' must be an array");
    for (const json& o : *outputs) {
      if (!o.is_object()) return InvalidArgument("each output must be an object");
      GE_ASSIGN_OR_RETURN(const std::string name, StringMember(o, "name", "output", true));
      const std::string what = StrCat("output '", Shorten(name), "'");
      GE_ASSIGN_OR_RETURN(const json* p, Parameters(o, what));
      if (p != nullptr && Member(*p, "classification") != nullptr) {
        return InvalidArgument(what, ": the classification extension is not supported by ged");
      }
      GE_ASSIGN_OR_RETURN(const std::optional<bool> b, BoolParameter(p, "binary_data", what));
      if (b) out->forms.binary[name] = *b;
      out->request.outputs.push_back(name);
    }
  }
  return absl::OkStatus();
}

HttpBody EncodeHttpInferResult(const serving::InferResult& result, const OutputForms& forms) {
  json header = json::object();
  header["model_name"] = result.model;
  header["model_version"] = result.version;
  if (!result.id.empty()) header["id"] = result.id;
  json outputs = json::array();
  std::string binary;
  for (const serving::NamedTensor& t : result.outputs) {
    json o = TensorJson(t);
    if (forms.Binary(t.name)) {
      const size_t size = serving::RawTensorSize(t.tensor);
      o["parameters"] = {{"binary_data_size", size}};
      serving::AppendRawTensor(t.tensor, &binary);
    } else {
      o["data"] = DataJson(t.tensor);
    }
    outputs.push_back(std::move(o));
  }
  header["outputs"] = std::move(outputs);
  return Assemble(header, binary);
}

HttpBody EncodeHttpInferRequest(const serving::InferRequest& request, bool binary_inputs, const OutputForms& forms) {
  json header = json::object();
  if (!request.id.empty()) header["id"] = request.id;
  if (forms.binary_default) header["parameters"] = {{"binary_data_output", true}};
  json inputs = json::array();
  std::string binary;
  for (const serving::NamedTensor& t : request.inputs) {
    json i = TensorJson(t);
    if (binary_inputs) {
      i["parameters"] = {{"binary_data_size", serving::RawTensorSize(t.tensor)}};
      serving::AppendRawTensor(t.tensor, &binary);
    } else {
      i["data"] = DataJson(t.tensor);
    }
    inputs.push_back(std::move(i));
  }
  header["inputs"] = std::move(inputs);
  std::vector<std::string> names = request.outputs;
  for (const auto& [name, b] : forms.binary) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (!names.empty()) {
    json outputs = json::array();
    for (const std::string& name : names) {
      json o = {{"name", name}};
      if (auto it = forms.binary.find(name); it != forms.binary.end()) o["parameters"] = {{"binary_data", it->second}};
      outputs.push_back(std::move(o));
    }
    header["outputs"] = std::move(outputs);
  }
  return Assemble(header, binary);
}

absl::Status DecodeHttpInferResult(std::string_view body, std::optional<size_t> header_length, const JsonLimits& limits,
                                   serving::InferResult* out) {
  std::string_view binary;
  GE_ASSIGN_OR_RETURN(const json header, ParseHeader(body, header_length, limits, &binary));
  if (const json* error = Member(header, "error"); error != nullptr && error->is_string()) {
    return absl::UnknownError(error->get<std::string>());
  }
  GE_ASSIGN_OR_RETURN(out->model, StringMember(header, "model_name", "the reply", true));
  GE_ASSIGN_OR_RETURN(out->version, StringMember(header, "model_version", "the reply", false));
  GE_ASSIGN_OR_RETURN(out->id, StringMember(header, "id", "the reply", false));
  const json* outputs = Member(header, "outputs");
  if (outputs == nullptr || !outputs->is_array()) return InvalidArgument("the reply: 'outputs' must be an array");
  size_t at = 0;
  for (const json& o : *outputs) {
    GE_ASSIGN_OR_RETURN(serving::NamedTensor t, DecodeTensor(o, "output", binary, &at, limits));
    out->outputs.push_back(std::move(t));
  }
  if (at != binary.size()) {
    return InvalidArgument("the outputs' binary_data_size sum to ", at, " bytes, the reply carries ", binary.size());
  }
  return absl::OkStatus();
}

std::string JsonError(std::string_view message) {
  return json{{"error", std::string(message)}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kCancelled: return 499;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

}  // namespace ge::server
