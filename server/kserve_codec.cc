// KServe v2 gRPC tensor decoding and encoding (kserve_codec.h).
#include "server/kserve_codec.h"

#include <cstring>
#include <limits>

#include "base/status.h"
#include "base/strings.h"
#include "server/serving/model_config.h"
#include "server/serving/tensor_codec.h"

namespace ge::server {
namespace {

using Input = inference::ModelInferRequest::InferInputTensor;

bool HasTypedContents(const inference::InferTensorContents& c) {
  return c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() + c.uint_contents_size() +
             c.uint64_contents_size() + c.fp32_contents_size() + c.fp64_contents_size() + c.bytes_contents_size() >
         0;
}

int TypedFieldsSet(const inference::InferTensorContents& c) {
  return (c.bool_contents_size() > 0) + (c.int_contents_size() > 0) + (c.int64_contents_size() > 0) +
         (c.uint_contents_size() > 0) + (c.uint64_contents_size() > 0) + (c.fp32_contents_size() > 0) +
         (c.fp64_contents_size() > 0) + (c.bytes_contents_size() > 0);
}

// Copies a repeated field into the tensor, converting each element to T,
// refusing values T cannot hold.
template <typename T, typename Repeated>
absl::Status CopyTyped(const Repeated& values, Tensor& t, const std::string& what) {
  T* dst = t.data<T>();
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values.Get(i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        return InvalidArgument(what, ": element ", i, " (", v, ") does not fit its datatype");
      }
    }
    dst[i] = static_cast<T>(v);
  }
  return absl::OkStatus();
}

absl::Status FromTyped(const inference::InferTensorContents& c, int64_t count, Tensor& t, const std::string& what) {
  if (TypedFieldsSet(c) > 1) return InvalidArgument(what, ": contents sets more than one typed field");
  auto check = [&](int size, const char* field) -> absl::Status {
    if (size != count) {
      return InvalidArgument(what, ": ", field, " holds ", size, " elements, the shape needs ", count);
    }
    return absl::OkStatus();
  };
  switch (t.dtype()) {
    case DataType::kBool:
      GE_RETURN_IF_ERROR(check(c.bool_contents_size(), "bool_contents"));
      return CopyTyped<bool>(c.bool_contents(), t, what);
    case DataType::kInt8:
      GE_RETURN_IF_ERROR(check(c.int_contents_size(), "int_contents"));
      return CopyTyped<int8_t>(c.int_contents(), t, what);
    case DataType::kInt16:
      GE_RETURN_IF_ERROR(check(c.int_contents_size(), "int_contents"));
      return CopyTyped<int16_t>(c.int_contents(), t, what);
    case DataType::kInt32:
      GE_RETURN_IF_ERROR(check(c.int_contents_size(), "int_contents"));
      return CopyTyped<int32_t>(c.int_contents(), t, what);
    case DataType::kInt64:
      GE_RETURN_IF_ERROR(check(c.int64_contents_size(), "int64_contents"));
      return CopyTyped<int64_t>(c.int64_contents(), t, what);
    case DataType::kUint8:
      GE_RETURN_IF_ERROR(check(c.uint_contents_size(), "uint_contents"));
      return CopyTyped<uint8_t>(c.uint_contents(), t, what);
    case DataType::kUint16:
      GE_RETURN_IF_ERROR(check(c.uint_contents_size(), "uint_contents"));
      return CopyTyped<uint16_t>(c.uint_contents(), t, what);
    case DataType::kUint32:
      GE_RETURN_IF_ERROR(check(c.uint_contents_size(), "uint_contents"));
      return CopyTyped<uint32_t>(c.uint_contents(), t, what);
    case DataType::kUint64:
      GE_RETURN_IF_ERROR(check(c.uint64_contents_size(), "uint64_contents"));
      return CopyTyped<uint64_t>(c.uint64_contents(), t, what);
    case DataType::kFloat:
      GE_RETURN_IF_ERROR(check(c.fp32_contents_size(), "fp32_contents"));
      return CopyTyped<float>(c.fp32_contents(), t, what);
    case DataType::kDouble:
      GE_RETURN_IF_ERROR(check(c.fp64_contents_size(), "fp64_contents"));
      return CopyTyped<double>(c.fp64_contents(), t, what);
    case DataType::kString: {
      GE_RETURN_IF_ERROR(check(c.bytes_contents_size(), "bytes_contents"));
      for (int i = 0; i < c.bytes_contents_size(); ++i) t.data<std::string>()[i] = c.bytes_contents(i);
      return absl::OkStatus();
    }
    default:
      return InvalidArgument(what, ": ", serving::KServeDatatype(t.dtype()),
                             " has no typed contents field; send it in raw_input_contents");
  }
}

}  // namespace

absl::Status DecodeInferRequest(const inference::ModelInferRequest& request, int64_t max_tensor_bytes,
                                serving::InferRequest* out) {
  out->model = request.model_name();
  out->version = request.model_version();
  out->id = request.id();
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size()) {
    return InvalidArgument("raw_input_contents has ", request.raw_input_contents_size(), " entries for ",
                           request.inputs_size(), " inputs (one per input, in order)");
  }
  for (int i = 0; i < request.inputs_size(); ++i) {
    const Input& in = request.inputs(i);
    const std::string what = StrCat("input '", in.name(), "'");
    if (raw && HasTypedContents(in.contents())) {
      return InvalidArgument(what, ": typed contents and raw_input_contents are mixed; send one form only");
    }
    const std::optional<DataType> dtype = serving::ParseKServeDatatype(in.datatype());
    if (!dtype) {
      return InvalidArgument(what, ": unknown datatype '", in.datatype().substr(0, 32),
                             "' (BOOL, UINT8..UINT64, INT8..INT64, FP16, FP32, FP64, BYTES, BF16)");
    }
    GE_ASSIGN_OR_RETURN(
        const int64_t count,
        serving::CheckedElementCount(what, *dtype, absl::Span<const int64_t>(in.shape().data(), in.shape_size()),
                                     max_tensor_bytes));
    if (*dtype == DataType::kString) {
      // Each element costs at least its 4-byte length (raw) or one field.
      const int64_t carried =
          raw ? static_cast<int64_t>(request.raw_input_contents(i).size()) / 4 : in.contents().bytes_contents_size();
      if (count > carried) {
        return InvalidArgument(what, ": the shape needs ", count, " BYTES elements, the request carries fewer");
      }
    }
    if (!raw && !HasTypedContents(in.contents()) && count > 0) {
      return InvalidArgument(what, ": no data (set contents or raw_input_contents)");
    }
    std::vector<int64_t> dims(in.shape().begin(), in.shape().end());
    GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*dtype, Shape(absl::Span<const int64_t>(dims))));
    if (raw) {
      GE_RETURN_IF_ERROR(serving::DecodeRawTensor(request.raw_input_contents(i), count, t, what, "raw_input_contents"));
    } else if (count > 0) {
      GE_RETURN_IF_ERROR(FromTyped(in.contents(), count, t, what));
    }
    out->inputs.push_back({in.name(), std::move(t)});
  }
  for (const auto& o : request.outputs()) {
    if (o.parameters().count("classification") != 0) {
      return InvalidArgument("output '", o.name(), "': the classification extension is not supported by ged");
    }
    out->outputs.push_back(o.name());
  }
  return absl::OkStatus();
}

void EncodeInferResult(const serving::InferResult& result, inference::ModelInferResponse* response) {
  response->set_model_name(result.model);
  response->set_model_version(result.version);
  response->set_id(result.id);
  for (const serving::NamedTensor& t : result.outputs) {
    auto* o = response->add_outputs();
    o->set_name(t.name);
    o->set_datatype(std::string(serving::KServeDatatype(t.tensor.dtype())));
    for (int64_t d : t.tensor.shape().dims()) o->add_shape(d);
    std::string* raw = response->add_raw_output_contents();
    raw->reserve(serving::RawTensorSize(t.tensor));
    serving::AppendRawTensor(t.tensor, raw);
  }
}

}  // namespace ge::server
