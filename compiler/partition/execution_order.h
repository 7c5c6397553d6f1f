// ExecutionOrder: the JIT "onion peeling" of seeds/01 §5.7.2 (GE's
// ExecutionOrder / ExecutionPoint). It starts with the whole graph
// remaining; each AddNewSlice cuts the nodes whose shapes have become known
// off the remaining graph with BinaryPartitioner, as a new execution point
// appended after the existing ones. Every point's inputs are traced to
// their origin: an input of the original graph or an output of an earlier
// point, so that Run can execute the points in order and then the rest.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/value.h"
#include "compiler/partition/binary_partitioner.h"

namespace ge::partition {

struct ExecutionPoint {
  int index = 0;
  std::unique_ptr<ir::Graph> graph;  // the slice: Data inputs, nodes, NetOutput
  std::vector<ValueSource> inputs;   // per Data index; kSliceOutput names an earlier point
};

class ExecutionOrder {
 public:
  explicit ExecutionOrder(std::unique_ptr<ir::Graph> graph);

  // Slices the remaining graph's nodes for which `known` is true into a new
  // execution point. Errors as BinaryPartitioner::Partition (the remaining
  // graph is then unchanged).
  absl::StatusOr<const ExecutionPoint*> AddNewSlice(const std::function<bool(const ir::Node&)>& known);

  const std::vector<std::unique_ptr<ExecutionPoint>>& points() const { return points_; }
  const ir::Graph& remaining() const { return *remaining_; }
  const std::vector<ValueSource>& remaining_inputs() const { return remaining_inputs_; }

  // Runs one graph on its inputs (by Data index), returning its outputs.
  using GraphRunner =
      std::function<absl::StatusOr<std::vector<Value>>(const ir::Graph& graph, std::vector<Value> inputs)>;
  // Runs every point in order, then the remaining graph, and returns the
  // remaining graph's outputs: the original graph's outputs.
  absl::StatusOr<std::vector<Value>> Run(const std::vector<Value>& inputs, const GraphRunner& run) const;

 private:
  std::unique_ptr<ir::Graph> remaining_;
  std::vector<ValueSource> remaining_inputs_;
  std::vector<std::unique_ptr<ExecutionPoint>> points_;
};

}  // namespace ge::partition
