// The splitting part of the compile pipeline, in GE's OptimizeSubgraph
// order (seeds/01 §3):
//
//   StagePartition -> EnginePlacer (with HostcpuEngineUpdatePass)
//     -> SubgraphBackends (ge.subgraph_backends, after placement so that
//        selectors can read engines)
//     -> DynamicShapePartition (the root, or each stage) -> EnginePlacer again
//     -> CompositeEnginePartition + each engine's OptimizeFusedGraph on its
//        subgraphs in parallel + merge
//     -> AtomicEnginePartition + optimize + merge
//     -> Flatten (for the executor; see below)
//
// Until the executor runs PartitionedCall subgraphs through the
// control_flow engine, the compiled graph is handed over flattened: every
// PartitionedCall is expanded back (ir::FlattenPartitionedCalls), with NoOps
// placed on the engine that accepts NoOp. The partitioned form is kept for
// reports when CompileOptions::keep_partitioned_graph is set.
//
// Placement of partition boundary nodes: the loaded engines may not accept
// PartitionedCall / InnerData / InnerNetOutput yet (ge_local and
// control_flow will). Node types no loaded engine accepts are shown to the
// placer as NoOp (bookkeeping that ge_local runs) and restored afterwards;
// once an engine accepts them they are placed like any other node.
//
// Every step is dumped before and after (ge.dump_graph), and each
// partitioner step writes its cluster state next to the dumps.
// This file is part of ge_compiler (it drives the placer).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/thread_pool.h"
#include "compiler/compile_options.h"
#include "compiler/passes/graph_dumper.h"
#include "compiler/placement/engine_placer.h"
#include "runtime/engines/engine_registry.h"

namespace ge::compiler {

struct SplitResult {
  // Placement of every node of the final (flattened) graph.
  PlacementReport placement;
  // The partitioned tree before flattening (keep_partitioned_graph only).
  std::unique_ptr<ir::Graph> partitioned;
};

// Runs the steps above on `graph` in place. Errors name the step.
absl::StatusOr<SplitResult> RunSplitSteps(ir::Graph& graph, const engine::EngineRegistry& engines,
                                          const CompileOptions& options, ThreadPool* pool, GraphDumper& dumper);

// The branches of every multi-batch Case of the tree (`_multi_batch_case`,
// compiler/passes/multi_batch_clone_pass.h). The dynamic shape partitioner
// splits each by itself, and flattening expands their calls too, so that
// each gear branch runs its static units on static executors.
std::vector<ir::Graph*> MultiBatchBranches(const ir::Graph& root);

// The placer run used by the pipeline: boundary node types no engine
// accepts are masked as NoOp during placement (see above).
absl::StatusOr<PlacementReport> PlaceWithBoundaryNodes(ir::Graph& root, const engine::EngineRegistry& engines,
                                                       const CompileOptions& options, ThreadPool* pool);

}  // namespace ge::compiler
