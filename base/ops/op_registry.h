// OpRegistry: every op schema ged knows, and the functions that check and
// infer nodes against them.
//
// The global registry is filled on first use by RegisterBuiltinOps(), which
// calls one registration function per op family in a fixed order; there is
// no registration through static initializers.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "base/ops/op_schema.h"

namespace ge::ops {

class OpRegistry {
 public:
  // The process-wide registry with every built-in op.
  static OpRegistry& Global();

  // InvalidArgument when (domain, type) is already registered.
  absl::Status Register(OpSchema schema);
  const OpSchema* Find(std::string_view type, std::string_view domain = "") const;
  // Every schema sorted by (domain, type).
  std::vector<const OpSchema*> All() const;
  size_t size() const { return schemas_.size(); }

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<OpSchema>> schemas_;  // "domain::type"
};

// Fills `registry` with ged's built-in ops (defined in the op family files).
void RegisterBuiltinOps(OpRegistry& registry);

// Checks `op` against its schema: known type, input and output counts,
// required attributes present, attribute kinds, and input dtypes allowed by
// the type constraints (where known). Messages name the node.
absl::Status ValidateOp(const ir::OpDesc& op, const OpRegistry& registry = OpRegistry::Global());

// Infers the output types of `node` from its producers' output types (and
// Const producers' values) and writes them into the node's OpDesc outputs.
// A dim already known in the OpDesc that contradicts the inference is an
// error; unknown dims are refined.
absl::Status InferNode(ir::Node& node, const OpRegistry& registry = OpRegistry::Global());

// Runs InferNode over `graph` in topological order, then over every subgraph
// reached through the nodes that own them.
absl::Status InferShapes(ir::Graph& graph, const OpRegistry& registry = OpRegistry::Global());

// Infers the output types of `op` from the given input types, without a
// graph around it: what InferNode does for one node, and what the dynamic
// executor calls at run time with concrete shapes. Checks the input and
// output counts, the attributes, that every required input is present, and
// the input dtypes against the type constraints, then runs the schema's
// inference. `input_types[i]` is null for an absent optional input.
// `input_values[i]` (the vector may be shorter than the inputs) is the
// value of input i when known; only the inputs listed in the schema's
// value_inputs are passed on to the inference, the rest are ignored. With
// every input shape concrete and every value input known, the result is
// concrete (except for value_dependent_output_shape ops). `graph` resolves
// subgraph names (If, Case, While, PartitionedCall); without it those ops
// keep their declared output types.
absl::StatusOr<std::vector<ir::ValueType>> InferOutputTypes(
    const ir::OpDesc& op, const std::vector<const ir::ValueType*>& input_types,
    const std::vector<const Tensor*>& input_values, const ir::Graph* graph = nullptr,
    const OpRegistry& registry = OpRegistry::Global());

}  // namespace ge::ops
