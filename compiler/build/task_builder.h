// TaskBuilder: turns a placed, known-shape graph into a StaticProgram —
// the memory plan (compiler/memory) plus each node's task from its engine's
// KernelBuilder (GE's GraphBuilder::BuildForKnownShapeGraph).
//
// A graph can run statically when its root was not split as dynamic
// (`_is_unknown_shape` is true neither on the graph nor on a node, as the
// flattened form keeps it), every value is a tensor
// of fully known shape and a fixed-size dtype, no node owns subgraphs, and
// every weight is a Const. Data nodes become graph inputs, Const nodes
// weights, NoOps nothing; the NetOutput's (or, in a partitioned subgraph,
// the InnerNetOutput's) inputs are the outputs; InnerData nodes are inputs
// like Data (order: StaticInputNodes). A graph
// output whose arena buffer holds no other value is marked dedicated so a
// user buffer can take its place.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "compiler/memory/memory_planner.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/model/static_program.h"

namespace ge::compiler {

// The input nodes of a (sub)graph in the order of StaticProgram::inputs:
// Data and InnerData nodes by `_parent_index` when set, else `index`.
std::vector<const ir::Node*> StaticInputNodes(const ir::Graph& graph);
// That key of one input node.
int64_t StaticInputKey(const ir::Node& node);

// Whether the partition pipeline left `graph` as one static unit (no
// `_is_unknown_shape = true` on the graph or its nodes) and no node owns a
// subgraph.
bool IsStaticGraph(const ir::Graph& graph);

// The execution order of a static graph (topological, pipeline stages in
// ascending order) and its memory plan: the compile pipeline's
// MemoryPlanning pass. Unimplemented naming the node when the graph cannot
// run statically.
struct StaticLayout {
  std::vector<ir::Node*> order;
  MemoryPlan plan;
};
absl::StatusOr<StaticLayout> PlanStaticMemory(const ir::Graph& graph);
// The TaskBuilding pass: the program of `graph` on a layout
// PlanStaticMemory made for it.
absl::StatusOr<runtime::StaticProgram> BuildStaticProgram(const ir::Graph& graph, const engine::EngineRegistry& engines,
                                                          int num_threads, StaticLayout layout);

// Both at once: the program of `graph` (see above); Unimplemented naming the node and the
// reason when the graph cannot run statically; other errors come from the
// engines' builders and name the node. `num_threads` is the intra-op thread
// budget kernels are prepared for.
absl::StatusOr<runtime::StaticProgram> BuildStaticProgram(const ir::Graph& graph,
                                                          const engine::EngineRegistry& engines, int num_threads);

}  // namespace ge::compiler
