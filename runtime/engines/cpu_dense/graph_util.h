// Small graph helpers of cpu_dense's optimizer passes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/ir/graph.h"
#include "base/ir/node.h"
#include "base/tensor.h"

namespace ge::engine::cpu_dense {

// Whether a pass may rewrite a node (it is, or will be, on cpu_dense).
using NodeFilter = std::function<bool(const ir::Node& node)>;
// cpu_dense's CheckSupported on an OpDesc.
using SupportCheck = std::function<absl::Status(const ir::OpDesc& op)>;

// The value of input `i` when its producer is a Const (directly or through
// view ops that keep the storage: Identity, Reshape, Squeeze, Unsqueeze,
// Flatten); null otherwise. A view changes the shape, so callers read
// the returned tensor's elements, not its shape.
const Tensor* ConstInput(const ir::Node& node, int i);
// Whether input `i` is fed by constant storage (as ConstInput).
bool IsConstInput(const ir::Node& node, int i);

// The single consumer of output `port`, or null when there are none or
// several.
const ir::InPort* SingleConsumer(const ir::Node& node, int port);

// A constant scalar input's value (any element count of one) as a float.
std::optional<float> ConstScalar(const ir::Node& node, int i);

// Adds a Const node holding `value`; its output is typed from the value.
absl::StatusOr<ir::Node*> AddConst(ir::Graph& graph, std::string_view name_prefix, Tensor value);

// Removes `node` when nothing consumes it any more.
void RemoveIfUnused(ir::Graph& graph, ir::Node* node);

// Removes the nodes named `names` that nothing reads any more, and their
// producers up the graph likewise (a rewritten chain's constants and shape
// computations); graph inputs (Data, PlaceHolder, InnerData) stay. Names,
// not pointers: one producer may be listed twice (a shape constant read by
// two Reshapes), and a removed node's name finds nothing.
void RemoveDeadProducers(ir::Graph& graph, std::vector<std::string> names);

}  // namespace ge::engine::cpu_dense
