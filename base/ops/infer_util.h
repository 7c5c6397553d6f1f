// Helpers for the op family files: dtype lists for type constraints,
// registration, reading value inputs, setting outputs, and resolving the
// subgraphs of control-flow ops. Internal to base/ops (kernels use
// shape_utils.h instead).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ops/op_registry.h"
#include "base/ops/op_schema.h"

namespace ge::ops {

// ---- Type lists of ONNX's type constraints ----
const std::vector<DataType>& FloatTypes();          // f16, f32, f64, bf16
const std::vector<DataType>& SignedNumericTypes();  // floats and i8..i64
const std::vector<DataType>& NumericTypes();        // floats and every integer
const std::vector<DataType>& IntegerTypes();        // i8..i64, u8..u64
const std::vector<DataType>& UnsignedTypes();       // u8..u64
const std::vector<DataType>& AllTensorTypes();      // numeric, bool and string
const std::vector<DataType>& IndexTypes();          // i32, i64
std::vector<DataType> Types(std::initializer_list<DataType> dtypes);
std::vector<DataType> Union(const std::vector<DataType>& a, const std::vector<DataType>& b);

// Registers `builder`'s schema (consuming the builder); a duplicate is a
// programmer error. Takes the builder chains' lvalues and temporaries alike.
void MustRegister(OpRegistry& registry, OpSchemaBuilder& builder);
inline void MustRegister(OpRegistry& registry, OpSchemaBuilder&& builder) {
  MustRegister(registry, builder);
}

// ---- Reading inputs ----

// The value of input `i` as int64s when it is known; nullopt otherwise.
std::optional<std::vector<int64_t>> IntsValue(const InferenceContext& ctx, int i);
// The length of 1-D input `i` when known from its type or value, else -1.
int64_t Length1D(const InferenceContext& ctx, int i);
// The shape of input `i`, or unknown rank when the input is absent.
Shape InputShape(const InferenceContext& ctx, int i);

// ---- Writing outputs ----

// Sets output `i` when the node has that output (optional outputs may be
// missing).
void SetOutput(InferenceContext& ctx, int i, DataType dtype, Shape shape);
void SetOutput(InferenceContext& ctx, int i, ir::ValueType type);
// Output 0 gets input 0's type (element-wise unary ops, Identity).
absl::Status SameAsInput0(InferenceContext& ctx);

// ---- Subgraphs of control-flow ops ----

// The name of subgraph `slot` of `op`: the GraphRef attribute `attr` when
// present, else subgraph_names()[slot]; empty when neither exists.
std::string SubgraphName(const ir::OpDesc& op, size_t slot, std::string_view attr);
// Every branch of a Case: the GraphRefs of attribute `attr` when present,
// else subgraph_names().
std::vector<std::string> SubgraphNames(const ir::OpDesc& op, std::string_view attr);
// The NetOutput (or InnerNetOutput) of `graph`, or null.
const ir::Node* SubgraphOutputNode(const ir::Graph& graph);
// The types of the subgraph's results: the producers' output types of its
// output node's inputs (the input descs where unconnected).
absl::StatusOr<std::vector<ir::ValueType>> SubgraphOutputTypes(const ir::Graph& graph);

}  // namespace ge::ops
