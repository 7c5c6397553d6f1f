// Tree walks over a root's subgraph table.
#include "base/ir/graph_walk.h"

namespace ge::ir {

std::vector<const Graph*> SubgraphsBelow(const Graph& top) {
  const Graph* root = &top;
  // Bounded climb: a parent loop must not spin forever.
  for (size_t steps = 0; root->parent_graph() != nullptr && steps < (size_t{1} << 20); ++steps) {
    root = root->parent_graph();
  }
  const std::vector<Graph*> all = root->subgraphs();
  if (&top == root) return {all.begin(), all.end()};
  std::vector<const Graph*> out;
  for (const Graph* sub : all) {
    const Graph* g = sub->parent_graph();
    for (size_t steps = 0; g != nullptr && g != &top && steps <= all.size(); ++steps) {
      g = g->parent_graph();
    }
    if (g == &top) out.push_back(sub);
  }
  return out;
}

}  // namespace ge::ir
