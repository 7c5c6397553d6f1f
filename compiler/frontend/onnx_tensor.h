// Conversions between ONNX's TensorProto / TypeProto and ged's Tensor /
// ValueType.
//
// TensorFromProto reads every ONNX element type from either encoding:
// raw_data (little-endian bytes) or the typed repeated fields as ONNX packs
// them — float_data (f32, and c64 as interleaved pairs), int32_data (i8, i16,
// i32, u8, u16, bool, and the bit patterns of f16 / bf16), int64_data (i64),
// uint64_data (u32, u64), double_data (f64, and c128 as pairs), string_data
// (string). The number of values must match the dims exactly; every error
// names the tensor. Tensors stored as external data are not read here (see
// onnx_external_data.h): TensorFromProto rejects them.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/types.h"
#include "base/tensor.h"
#include "compiler/frontend/onnx_external_data.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

// The tensor's value. `context` (for example "initializer" or "attribute
// 'value' of node 'n'") prefixes error messages together with the name.
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto,
                                       std::string_view context = "tensor");

// The shape in `proto.dims`, checked (no negative dims, element count fits
// int64).
absl::StatusOr<Shape> ShapeFromProto(const onnx::TensorProto& proto, std::string_view context);

// The ged dtype of an ONNX elem_type value; InvalidArgument for values ged
// does not know (for example the float8 types of later ONNX versions).
absl::StatusOr<DataType> DataTypeFromOnnx(int32_t elem_type, std::string_view context);

// Where an initializer stored as external data keeps its bytes: the
// "location", "offset" and "length" keys (no length: the tensor's byte
// size), its dtype and shape, with `model_dir` as the base. Only parses;
// CheckExternalData checks the file. InvalidArgument naming the tensor for
// a malformed key.
absl::StatusOr<ExternalDataRef> ExternalDataRefFromProto(const onnx::TensorProto& proto,
                                                         const std::string& model_dir);

// Serializes `tensor` as `name`: raw_data for every numeric dtype,
// string_data for strings.
onnx::TensorProto TensorToProto(const Tensor& tensor, std::string_view name);

// ged's static type of an ONNX TypeProto: tensor(T) with shape (a dim_param
// or missing dim value becomes -1, a missing shape an unknown rank),
// sequence(...) and optional(...) nest. A TypeProto with no value set is an
// undefined tensor of unknown rank. Maps, sparse tensors and opaque types
// are InvalidArgument naming `context`.
absl::StatusOr<ir::ValueType> OnnxTypeToValueType(const onnx::TypeProto& type,
                                                  std::string_view context = "value");

// The undefined tensor type of unknown rank, for values with no known type.
ir::ValueType UnknownValueType();

}  // namespace ge::frontend
