// ExecutionOrder: slicing the remaining graph point by point and running
// the points with their inputs traced through earlier points.
#include "compiler/partition/execution_order.h"

#include "base/status.h"

namespace ge::partition {

ExecutionOrder::ExecutionOrder(std::unique_ptr<ir::Graph> graph) : remaining_(std::move(graph)) {
  const size_t inputs = remaining_->InputNodes().size();
  for (size_t i = 0; i < inputs; ++i) {
    remaining_inputs_.push_back({ValueSource::Kind::kGraphInput, -1, static_cast<int>(i)});
  }
}

absl::StatusOr<const ExecutionPoint*> ExecutionOrder::AddNewSlice(const std::function<bool(const ir::Node&)>& known) {
  std::vector<const ir::Node*> selected;
  remaining_->ForEachNode([&](ir::Node* n) {
    if (known(*n)) selected.push_back(n);
  });
  GE_ASSIGN_OR_RETURN(BinaryPartition split, BinaryPartitioner::Partition(*remaining_, selected));
  auto point = std::make_unique<ExecutionPoint>();
  point->index = static_cast<int>(points_.size());
  point->graph = std::move(split.sliced);
  point->graph->mutable_attrs()["_execution_point"] = static_cast<int64_t>(point->index);
  // The slice reads inputs of the remaining graph, whose origins are known.
  for (int i : split.linkage.sliced_inputs) point->inputs.push_back(remaining_inputs_[i]);
  std::vector<ValueSource> next_inputs;
  for (const ValueSource& s : split.linkage.remaining_inputs) {
    if (s.kind == ValueSource::Kind::kGraphInput) {
      next_inputs.push_back(remaining_inputs_[s.index]);
    } else {
      next_inputs.push_back({ValueSource::Kind::kSliceOutput, point->index, s.index});
    }
  }
  remaining_ = std::move(split.remaining);
  remaining_inputs_ = std::move(next_inputs);
  points_.push_back(std::move(point));
  return points_.back().get();
}

absl::StatusOr<std::vector<Value>> ExecutionOrder::Run(const std::vector<Value>& inputs, const GraphRunner& run) const {
  std::vector<std::vector<Value>> outputs(points_.size());
  auto gather = [&](const std::vector<ValueSource>& sources) -> absl::StatusOr<std::vector<Value>> {
    std::vector<Value> values;
    for (const ValueSource& s : sources) {
      if (s.kind == ValueSource::Kind::kGraphInput) {
        if (s.index >= static_cast<int>(inputs.size())) return InvalidArgument("missing graph input ", s.index);
        values.push_back(inputs[s.index]);
      } else {
        if (s.slice < 0 || s.slice >= static_cast<int>(outputs.size()) ||
            s.index >= static_cast<int>(outputs[s.slice].size())) {
          return Internal("execution point ", s.slice, " has no output ", s.index);
        }
        values.push_back(outputs[s.slice][s.index]);
      }
    }
    return values;
  };
  for (const auto& point : points_) {
    GE_ASSIGN_OR_RETURN(std::vector<Value> in, gather(point->inputs));
    GE_ASSIGN_OR_RETURN(outputs[point->index], run(*point->graph, std::move(in)));
  }
  GE_ASSIGN_OR_RETURN(std::vector<Value> in, gather(remaining_inputs_));
  return run(*remaining_, std::move(in));
}

}  // namespace ge::partition
