// Walks over a graph tree shared by the printers and the serializers.
#pragma once

#include <vector>

#include "base/ir/graph.h"

namespace ge::ir {

// The subgraphs of `top`'s tree that lie below `top`, in the root's order:
// every subgraph for a root; for a subgraph, those whose parent chain passes
// through it. The walk up each chain is bounded, so a corrupt parent loop
// cannot hang it.
std::vector<const Graph*> SubgraphsBelow(const Graph& top);

}  // namespace ge::ir
