// Graph helpers shared by cpu_fused's fusion passes.
#pragma once

#include <optional>
#include <string_view>

#include "base/ir/graph.h"
#include "base/ir/node.h"

namespace ge::engine::cpu_fused {

// The type of the value at `port`.
const ir::ValueType& TypeAt(const ir::OutPort& port);

// Whether a pass may absorb `node`: it is an operator of this composite
// subgraph (not a boundary node), not pinned to an engine by the user
// (`_ge_engine`) or to the host, has no control edges, exactly one output
// and, when `single_use`, exactly one consumer of it.
bool Absorbable(const ir::Node& node, bool single_use);

// The single consumer of output `port`, or null when there are none or
// several.
const ir::InPort* SingleConsumer(const ir::Node& node, int port);

// A float32 tensor type with a fully known shape.
bool IsStaticFloat(const ir::ValueType& type);

// The element count of a fully known shape, else nullopt.
std::optional<int64_t> StaticElements(const ir::ValueType& type);

// Attributes every node made by the passes carries: the engine placement
// (cpu_fused) and the stream label of the node it replaces.
void SetFusedNodeAttrs(const ir::Node& replaced, ir::OpDesc& fused);

}  // namespace ge::engine::cpu_fused
