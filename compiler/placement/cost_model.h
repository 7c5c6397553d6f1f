// Placement cost estimates (issue 20): what a node costs on an engine with a
// cost table (engine.h CostTable), and what a data edge between two engines
// costs. Pure functions of the node's op type and tensor shapes and of the
// tables, so placement stays deterministic for a host and build.
#pragma once

#include "base/ir/graph.h"
#include "runtime/engines/api/engine.h"

namespace ge::compiler {

// Elements of output `index` of `node`; unknown dims count as 1 (the
// estimate of a dynamic dim is its smallest useful value), an unknown rank
// as 1 element.
double OutputElements(const ir::Node& node, int index);

// The node's own cost on the engine of `table`: the entry of its op type
// (else "*") applied to the elements of all its outputs; false when the table
// has neither.
bool EstimateNode(const ir::Node& node, const engine::CostTable& table, double& ns);

// A tensor of `elements` elements crossing from an engine with table `a` to
// one with table `b` (or back): both boundary costs; 0 on one engine.
double EstimateBoundary(const engine::CostTable& a, const engine::CostTable& b, double elements);

}  // namespace ge::compiler
