// TensorProto / TypeProto conversions. ONNX stores small integer and 16-bit
// float types widened into int32_data, complex values as pairs of reals, and
// unsigned 32/64-bit values in uint64_data; this file is the one place that
// knows those packings, and it checks every count against the dims so that a
// malformed model fails with a message instead of reading out of bounds.
#include "compiler/frontend/onnx_tensor.h"

#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "base/status.h"

namespace ge::frontend {
namespace {

std::string TensorLabel(const onnx::TensorProto& proto, std::string_view context) {
  if (proto.name().empty()) return std::string(context);
  return StrCat(context, " '", proto.name(), "'");
}

// Which repeated field holds `dtype`'s values, and how many values one
// element takes there.
enum class Field { kFloat, kInt32, kInt64, kUint64, kDouble, kString, kNone };

struct Packing {
  Field field;
  int values_per_element;
};

Packing PackingOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return {Field::kFloat, 1};
    case DataType::kComplex64:
      return {Field::kFloat, 2};
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kBool:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return {Field::kInt32, 1};
    case DataType::kInt64:
      return {Field::kInt64, 1};
    case DataType::kUint32:
    case DataType::kUint64:
      return {Field::kUint64, 1};
    case DataType::kDouble:
      return {Field::kDouble, 1};
    case DataType::kComplex128:
      return {Field::kDouble, 2};
    case DataType::kString:
      return {Field::kString, 1};
    default:
      return {Field::kNone, 0};
  }
}

int64_t TypedValueCount(const onnx::TensorProto& p) {
  return p.float_data_size() + p.int32_data_size() + p.int64_data_size() + p.uint64_data_size() +
         p.double_data_size() + p.string_data_size();
}

int64_t FieldSize(const onnx::TensorProto& p, Field field) {
  switch (field) {
    case Field::kFloat:
      return p.float_data_size();
    case Field::kInt32:
      return p.int32_data_size();
    case Field::kInt64:
      return p.int64_data_size();
    case Field::kUint64:
      return p.uint64_data_size();
    case Field::kDouble:
      return p.double_data_size();
    case Field::kString:
      return p.string_data_size();
    case Field::kNone:
      return 0;
  }
  return 0;
}

// Narrows int32_data values into T, rejecting values T cannot hold.
template <typename T>
absl::Status CopyNarrowed(const onnx::TensorProto& p, const std::string& label, T* out) {
  for (int i = 0; i < p.int32_data_size(); ++i) {
    const int32_t v = p.int32_data(i);
    if constexpr (std::is_same_v<T, bool>) {
      out[i] = v != 0;
    } else {
      if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
        return InvalidArgument(label, ": int32_data[", i, "] = ", v,
                               " does not fit the element type");
      }
      out[i] = static_cast<T>(v);
    }
  }
  return absl::OkStatus();
}

// 16-bit floats travel as their bit patterns in int32_data.
template <typename T>
absl::Status CopyHalfBits(const onnx::TensorProto& p, const std::string& label, T* out) {
  for (int i = 0; i < p.int32_data_size(); ++i) {
    const int32_t v = p.int32_data(i);
    if (v < 0 || v > 0xffff) {
      return InvalidArgument(label, ": int32_data[", i, "] = ", v, " is not a 16-bit pattern");
    }
    out[i] = T::FromBits(static_cast<uint16_t>(v));
  }
  return absl::OkStatus();
}

absl::Status CopyInt32Field(const onnx::TensorProto& p, const std::string& label, Tensor& t) {
  switch (t.dtype()) {
    case DataType::kInt8:
      return CopyNarrowed(p, label, t.data<int8_t>());
    case DataType::kInt16:
      return CopyNarrowed(p, label, t.data<int16_t>());
    case DataType::kInt32:
      return CopyNarrowed(p, label, t.data<int32_t>());
    case DataType::kUint8:
      return CopyNarrowed(p, label, t.data<uint8_t>());
    case DataType::kUint16:
      return CopyNarrowed(p, label, t.data<uint16_t>());
    case DataType::kBool:
      return CopyNarrowed(p, label, t.data<bool>());
    case DataType::kFloat16:
      return CopyHalfBits(p, label, t.data<Float16>());
    case DataType::kBFloat16:
      return CopyHalfBits(p, label, t.data<BFloat16>());
    default:
      return Internal(label, ": no int32_data packing for ", DataTypeName(t.dtype()));
  }
}

absl::Status CopyTypedField(const onnx::TensorProto& p, const std::string& label, Tensor& t) {
  switch (PackingOf(t.dtype()).field) {
    case Field::kFloat:
      std::copy(p.float_data().begin(), p.float_data().end(), t.data<float>());
      return absl::OkStatus();
    case Field::kDouble:
      std::copy(p.double_data().begin(), p.double_data().end(), t.data<double>());
      return absl::OkStatus();
    case Field::kInt64:
      std::copy(p.int64_data().begin(), p.int64_data().end(), t.data<int64_t>());
      return absl::OkStatus();
    case Field::kUint64:
      if (t.dtype() == DataType::kUint64) {
        std::copy(p.uint64_data().begin(), p.uint64_data().end(), t.data<uint64_t>());
        return absl::OkStatus();
      }
      for (int i = 0; i < p.uint64_data_size(); ++i) {
        if (p.uint64_data(i) > std::numeric_limits<uint32_t>::max()) {
          return InvalidArgument(label, ": uint64_data[", i, "] = ", p.uint64_data(i),
                                 " does not fit u32");
        }
        t.data<uint32_t>()[i] = static_cast<uint32_t>(p.uint64_data(i));
      }
      return absl::OkStatus();
    case Field::kString:
      for (int i = 0; i < p.string_data_size(); ++i) t.data<std::string>()[i] = p.string_data(i);
      return absl::OkStatus();
    case Field::kInt32:
      return CopyInt32Field(p, label, t);
    case Field::kNone:
      break;
  }
  return InvalidArgument(label, ": element type ", DataTypeName(t.dtype()), " has no data field");
}

absl::Status CopyRawData(const onnx::TensorProto& p, const std::string& label, Tensor& t) {
  if (t.dtype() == DataType::kString) {
    return InvalidArgument(label, ": string tensors cannot use raw_data (use string_data)");
  }
  if (TypedValueCount(p) != 0) {
    return InvalidArgument(label, ": has both raw_data and typed data fields");
  }
  if (p.raw_data().size() != t.SizeInBytes()) {
    return InvalidArgument(label, ": raw_data has ", p.raw_data().size(), " bytes but ",
                           DataTypeName(t.dtype()), t.shape().ToString(), " needs ",
                           t.SizeInBytes());
  }
  if (t.SizeInBytes() > 0) std::memcpy(t.raw_data(), p.raw_data().data(), t.SizeInBytes());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DataType> DataTypeFromOnnx(int32_t elem_type, std::string_view context) {
  if (elem_type == 0 || !IsValidDataType(elem_type)) {
    return InvalidArgument(context, ": unsupported ONNX element type ", elem_type);
  }
  return static_cast<DataType>(elem_type);
}

absl::StatusOr<Shape> ShapeFromProto(const onnx::TensorProto& proto, std::string_view context) {
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) return InvalidArgument(TensorLabel(proto, context), ": negative dim ", d);
    shape.push_back(d);
  }
  auto count = shape.NumElements();
  if (!count.ok()) {
    return InvalidArgument(TensorLabel(proto, context), ": ", StdView(count.status().message()));
  }
  return shape;
}

absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, std::string_view context) {
  const std::string label = TensorLabel(proto, context);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return InvalidArgument(label, ": is stored as external data, which is not allowed here");
  }
  if (proto.has_segment()) return InvalidArgument(label, ": segmented tensors are not supported");
  GE_ASSIGN_OR_RETURN(DataType dtype, DataTypeFromOnnx(proto.data_type(), label));
  GE_ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(proto, context));
  auto allocated = Tensor::Allocate(dtype, shape);
  if (!allocated.ok()) return Annotate(allocated.status(), label);
  Tensor tensor = *std::move(allocated);
  if (proto.has_raw_data()) {
    GE_RETURN_IF_ERROR(CopyRawData(proto, label, tensor));
    return tensor;
  }
  const Packing packing = PackingOf(dtype);
  const int64_t expected = tensor.NumElements() * packing.values_per_element;
  const int64_t found = FieldSize(proto, packing.field);
  if (found != expected || TypedValueCount(proto) != found) {
    return InvalidArgument(label, ": ", DataTypeName(dtype), shape.ToString(), " needs ", expected,
                           " values in its data field but the tensor holds ",
                           TypedValueCount(proto), " (", found, " in the field for its type)");
  }
  GE_RETURN_IF_ERROR(CopyTypedField(proto, label, tensor));
  return tensor;
}

absl::StatusOr<ExternalDataRef> ExternalDataRefFromProto(const onnx::TensorProto& proto,
                                                         const std::string& model_dir) {
  const std::string label = TensorLabel(proto, "initializer");
  ExternalDataRef ref;
  ref.tensor_name = proto.name();
  ref.model_dir = model_dir;
  GE_ASSIGN_OR_RETURN(ref.dtype, DataTypeFromOnnx(proto.data_type(), label));
  GE_ASSIGN_OR_RETURN(ref.shape, ShapeFromProto(proto, "initializer"));
  bool has_length = false;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() != "offset" && entry.key() != "length") {
      if (entry.key() == "location") ref.location = entry.value();
      continue;  // "checksum" and unknown keys carry nothing ged needs
    }
    int64_t value = 0;
    if (!absl::SimpleAtoi(entry.value(), &value) || value < 0) {
      return InvalidArgument(label, ": external data ", entry.key(), " '", entry.value(),
                             "' is not a non-negative integer");
    }
    (entry.key() == "offset" ? ref.offset : ref.length) = value;
    has_length |= entry.key() == "length";
  }
  if (!has_length && ref.dtype != DataType::kString) {
    GE_ASSIGN_OR_RETURN(int64_t count, ref.shape.NumElements());
    GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(ref.dtype, count));
    ref.length = static_cast<int64_t>(bytes);
  }
  return ref;
}

onnx::TensorProto TensorToProto(const Tensor& tensor, std::string_view name) {
  onnx::TensorProto proto;
  proto.set_name(std::string(name));
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape().dims()) proto.add_dims(d);
  if (tensor.dtype() == DataType::kString) {
    for (int64_t i = 0; i < tensor.NumElements(); ++i) {
      proto.add_string_data(tensor.data<std::string>()[i]);
    }
  } else {
    proto.set_raw_data(static_cast<const char*>(tensor.raw_data()), tensor.SizeInBytes());
  }
  return proto;
}

ir::ValueType UnknownValueType() {
  return ir::ValueType(ir::TensorDesc(DataType::kUndefined, Shape::UnknownRank()));
}

absl::StatusOr<ir::ValueType> OnnxTypeToValueType(const onnx::TypeProto& type,
                                                  std::string_view context) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& t = type.tensor_type();
      DataType dtype = DataType::kUndefined;
      if (t.elem_type() != 0) {
        GE_ASSIGN_OR_RETURN(dtype, DataTypeFromOnnx(t.elem_type(), context));
      }
      if (!t.has_shape()) return ir::ValueType::Tensor(dtype, Shape::UnknownRank());
      Shape shape;
      for (const auto& dim : t.shape().dim()) {
        // A declared dim is >= 0 (or a dim_param); -1 is some exporters'
        // "unknown". Anything below is a malformed model, not an unknown dim.
        if (dim.has_dim_value() && dim.dim_value() < kUnknownDim) {
          return InvalidArgument(context, ": dim ", shape.rank(), " is declared as ", dim.dim_value(),
                                 " (a dim is >= 0, a dim_param, or -1 for unknown)");
        }
        const bool known = dim.has_dim_value() && dim.dim_value() >= 0;
        shape.push_back(known ? dim.dim_value() : kUnknownDim);
      }
      return ir::ValueType::Tensor(dtype, std::move(shape));
    }
    case onnx::TypeProto::kSequenceType: {
      if (!type.sequence_type().has_elem_type()) return ir::ValueType::Sequence(UnknownValueType());
      GE_ASSIGN_OR_RETURN(ir::ValueType elem,
                          OnnxTypeToValueType(type.sequence_type().elem_type(), context));
      return ir::ValueType::Sequence(std::move(elem));
    }
    case onnx::TypeProto::kOptionalType: {
      if (!type.optional_type().has_elem_type()) return ir::ValueType::Optional(UnknownValueType());
      GE_ASSIGN_OR_RETURN(ir::ValueType elem,
                          OnnxTypeToValueType(type.optional_type().elem_type(), context));
      return ir::ValueType::Optional(std::move(elem));
    }
    case onnx::TypeProto::kMapType:
      return InvalidArgument(context, ": ONNX map types are not supported");
    case onnx::TypeProto::kSparseTensorType:
      return InvalidArgument(context, ": sparse tensor types are not supported");
    case onnx::TypeProto::VALUE_NOT_SET:
      return UnknownValueType();
    default:
      return InvalidArgument(context, ": unsupported ONNX type kind ", type.value_case());
  }
}

}  // namespace ge::frontend
