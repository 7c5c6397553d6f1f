// ge::Value <-> ge.v1.Value: raw little-endian bytes for numeric dtypes,
// repeated bytes for strings, a TensorList for sequences, nothing for none.
#include "proto/value_convert.h"

#include <cstring>
#include <string>

#include "base/status.h"
#include "base/strings.h"

namespace ge::rpc {

absl::Status TensorToProto(const Tensor& tensor, v1::Tensor* proto) {
  if (!tensor.defined()) return InvalidArgument("cannot send an undefined tensor");
  proto->set_dtype(static_cast<v1::DataType>(tensor.dtype()));
  proto->clear_dims();
  for (int64_t d : tensor.shape().dims()) proto->add_dims(d);
  proto->clear_raw_data();
  proto->clear_string_data();
  if (tensor.dtype() == DataType::kString) {
    const std::string* items = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.NumElements(); ++i) proto->add_string_data(items[i]);
    return absl::OkStatus();
  }
  proto->set_raw_data(static_cast<const char*>(tensor.raw_data()), tensor.SizeInBytes());
  return absl::OkStatus();
}

absl::StatusOr<Tensor> TensorFromProto(const v1::Tensor& proto, std::string_view what,
                                       const SharedMemoryResolver* shared_memory) {
  if (!IsValidDataType(proto.dtype()) || proto.dtype() == v1::DT_UNDEFINED) {
    return InvalidArgument(what, ": unknown dtype ", static_cast<int>(proto.dtype()));
  }
  const auto dtype = static_cast<DataType>(proto.dtype());
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) return InvalidArgument(what, ": negative dim ", d, " in its shape");
    shape.push_back(d);
  }
  absl::StatusOr<int64_t> count = shape.NumElements();
  if (!count.ok()) return InvalidArgument(what, ": ", StdView(count.status().message()));
  if (proto.has_shared_memory()) {
    if (shared_memory == nullptr) {
      return InvalidArgument(what, ": shared-memory tensors are not accepted here");
    }
    if (dtype == DataType::kString) return InvalidArgument(what, ": a string tensor cannot be in shared memory");
    if (!proto.raw_data().empty() || proto.string_data_size() != 0) {
      return InvalidArgument(what, ": a shared-memory tensor carries data in the message too");
    }
    absl::StatusOr<size_t> bytes = ByteSizeOf(dtype, *count);
    if (!bytes.ok()) return InvalidArgument(what, ": ", StdView(bytes.status().message()));
    GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer,
                        (*shared_memory)(proto.shared_memory(), *bytes, std::string(what)));
    return Tensor(dtype, shape, std::move(buffer));
  }
  if (dtype == DataType::kString) {
    if (!proto.raw_data().empty()) return InvalidArgument(what, ": a string tensor carries raw_data");
    if (static_cast<int64_t>(proto.string_data_size()) != *count) {
      return InvalidArgument(what, ": shape ", shape.ToString(), " needs ", *count, " strings, got ",
                             proto.string_data_size());
    }
    GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
    std::string* items = t.data<std::string>();
    for (int64_t i = 0; i < *count; ++i) items[i] = proto.string_data(static_cast<int>(i));
    return t;
  }
  if (proto.string_data_size() != 0) return InvalidArgument(what, ": a numeric tensor carries string_data");
  absl::StatusOr<size_t> bytes = ByteSizeOf(dtype, *count);
  if (!bytes.ok()) return InvalidArgument(what, ": ", StdView(bytes.status().message()));
  if (proto.raw_data().size() != *bytes) {
    return InvalidArgument(what, ": ", DataTypeName(dtype), shape.ToString(), " needs ", *bytes, " bytes, got ",
                           proto.raw_data().size());
  }
  GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  if (*bytes > 0) std::memcpy(t.raw_data(), proto.raw_data().data(), *bytes);
  return t;
}

absl::Status ValueToProto(const Value& value, v1::Value* proto) {
  proto->Clear();
  if (value.is_tensor()) return TensorToProto(value.tensor(), proto->mutable_tensor());
  if (value.is_sequence()) {
    v1::TensorList* list = proto->mutable_sequence();
    list->set_element_dtype(static_cast<v1::DataType>(value.element_dtype()));
    for (const Tensor& t : value.sequence()) GE_RETURN_IF_ERROR(TensorToProto(t, list->add_tensors()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Value> ValueFromProto(const v1::Value& proto, std::string_view what,
                                     const SharedMemoryResolver* shared_memory) {
  switch (proto.kind_case()) {
    case v1::Value::kTensor: {
      GE_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(proto.tensor(), what, shared_memory));
      return Value(std::move(t));
    }
    case v1::Value::kSequence: {
      std::vector<Tensor> items;
      for (int i = 0; i < proto.sequence().tensors_size(); ++i) {
        GE_ASSIGN_OR_RETURN(Tensor t,
                            TensorFromProto(proto.sequence().tensors(i), StrCat(what, " item ", i), shared_memory));
        items.push_back(std::move(t));
      }
      const int32_t dtype = proto.sequence().element_dtype();
      if (!IsValidDataType(dtype)) return InvalidArgument(what, ": unknown sequence element dtype ", dtype);
      return Value::Sequence(std::move(items), static_cast<DataType>(dtype));
    }
    default: return Value();
  }
}

}  // namespace ge::rpc
