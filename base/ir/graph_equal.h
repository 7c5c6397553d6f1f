// Structural equality of graphs, for tests: "is the graph a pass produced
// the graph the test expected", and "did a round trip through text or proto
// keep everything".
#pragma once

#include <string>

#include "base/ir/graph.h"

namespace ge::ir {

// True when `a` and `b` have the same name, attributes, parent (by graph
// and node name), and the same nodes in the same order with equal names,
// types, attributes, input and output descriptions (tensor names and
// types), subgraph names, data inputs (producer name and port, or absent)
// and control inputs (in order). Consumer lists and control outputs are
// compared as sets, since their order only records edge creation order. For
// two roots, the subgraphs are compared too, pairwise in order. Node ids are
// not compared. Floats compare by bits (NaN equals the same NaN, 0.0 differs
// from -0.0). On a difference, `*diff` (when not null) names the first one.
bool GraphsEqual(const Graph& a, const Graph& b, std::string* diff);

// Bitwise equality of attribute values (AttrValue's operator== compares
// floats by value).
bool AttrValuesIdentical(const AttrValue& a, const AttrValue& b);

}  // namespace ge::ir
