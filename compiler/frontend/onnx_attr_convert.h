// ONNX attributes to ged attributes, and the value of an ONNX Constant node.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/attr_value.h"
#include "base/tensor.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

// Converts every attribute kind except GRAPH / GRAPHS (the importer builds
// subgraphs itself): FLOAT -> float, INT -> int, STRING -> string, TENSOR ->
// Tensor, the list kinds to the vector kinds, TYPE_PROTO(S) -> the
// ValueType's text form ("f32[?]", "seq<i64[-1]>"). Sparse tensors and
// attribute references (ref_attr_name, used only inside functions) are
// InvalidArgument naming the attribute and `node_label`.
absl::StatusOr<ir::AttrValue> ConvertAttribute(const onnx::AttributeProto& attr,
                                               std::string_view node_label);

// The tensor an ONNX Constant node produces, from whichever of its forms is
// set: value (a tensor), value_float / value_int / value_string (scalars),
// value_floats / value_ints / value_strings (1-D). sparse_value, no value or
// more than one are InvalidArgument naming the node.
absl::StatusOr<Tensor> ConstantNodeValue(const onnx::NodeProto& node, std::string_view node_label);

}  // namespace ge::frontend
