// Element-wise fusion: cpu_vector's graph optimizer (OptimizeFusedGraph, on
// each subgraph the engine partitioner gives cpu_vector, a sub-pass of the
// compiler's engine partition pass) groups connected float32 element-wise
// ops (elementwise_ops.h) into `_FusedElementwise` nodes
// (fused_elementwise.h), one kernel per group.
//
// A group grows from a root (the ops visited in reverse topological order)
// through the producers of its members: a producer joins when it is a
// fusable op (float32 tensors, one output, no control edges, not pinned by
// `_ge_engine` or to the host), is in no group yet, every consumer of its
// output is already in the group, and its output has the root's element
// count (static shapes) or the root's very shape (unknown dims), so no op
// runs over more elements than it had. Only the root's value leaves the
// group, so replacing it by one node cannot make a cycle; values read
// several times inside the group (SiLU's x * Sigmoid(x)) are fine. Inputs
// from outside (constants, other engines' values) may broadcast. Groups of
// one op stay as they are. The fused node takes the root's name, output
// descriptor, engine and stream label.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/api/engine.h"

namespace ge::engine::cpu_vector {

// Whether `node` is an op element-wise fusion may absorb (type, dtypes,
// arity, edges and pins as above).
bool FusableNode(const ir::Node& node);

// Rewrites every group of two or more ops in `graph`; true when it changed.
absl::StatusOr<bool> FuseElementwise(ir::Graph& graph);

class ElementwiseFusionOptimizer final : public GraphOptimizer {
 public:
  std::string_view name() const override { return "cpu_vector"; }
  absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) override { return FuseElementwise(graph); }
  bool MayOptimizeFused(const ir::Node& node) const override;
};

}  // namespace ge::engine::cpu_vector
