// Conversions between the graph IR and its protobuf form (proto/ge/v1/
// graph.proto): graphs, tensors, value types, shapes and attributes.
//
// To proto: a root graph carries every subgraph of its tree in
// GraphDef.subgraphs, in the root's order, each naming its parent graph and
// node. A non-root graph is written as the root of its own subtree (itself
// plus the subgraphs below it), with no parent. Tensor raw_data is the
// host's little-endian bytes. The writers fail (FailedPrecondition or
// InvalidArgument) only for what the format cannot carry: dangling
// cross-graph edges and tensors without storage.
//
// From proto: everything is validated and nothing a sender writes can crash
// the reader (a fuzzer drives it): unknown enum values, bad dtypes, dims
// below -1 in shapes or below 0 in tensors, an unknown_rank shape with dims,
// element counts that overflow, raw_data / string_data sizes that do not
// match the dims, bool bytes other than 0 and 1, attributes with no value,
// empty or duplicate node and graph names, inputs naming missing nodes or
// ports out of range, absent inputs with a port, self or repeated control
// inputs, type and name lists of the wrong length, nested value types
// deeper than 32, subgraphs inside subgraphs, parents that do not exist or
// do not lead to the root, and subgraph names on nodes that do not resolve
// or disagree with the subgraph's recorded parent. Errors are
// InvalidArgument naming the graph, node, input or attribute.
//
// Round trip is exact: GraphFromProto(GraphToProto(g)) is GraphsEqual to g
// for every graph whose subgraph tree is consistent (as VerifyGraph checks).
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "ge/v1/graph.pb.h"

namespace ge::ir {

absl::Status GraphToProto(const Graph& graph, ge::v1::GraphDef* proto);
absl::StatusOr<std::unique_ptr<Graph>> GraphFromProto(const ge::v1::GraphDef& proto);

absl::Status TensorToProto(const Tensor& tensor, ge::v1::TensorDef* proto);
absl::StatusOr<Tensor> TensorFromProto(const ge::v1::TensorDef& proto);

void ShapeToProto(const Shape& shape, ge::v1::ShapeDef* proto);
absl::StatusOr<Shape> ShapeFromProto(const ge::v1::ShapeDef& proto);

void ValueTypeToProto(const ValueType& type, ge::v1::ValueTypeDef* proto);
absl::StatusOr<ValueType> ValueTypeFromProto(const ge::v1::ValueTypeDef& proto);

absl::Status AttrValueToProto(const AttrValue& value, ge::v1::AttrValueDef* proto);
absl::StatusOr<AttrValue> AttrValueFromProto(const ge::v1::AttrValueDef& proto);

}  // namespace ge::ir
