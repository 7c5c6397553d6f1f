// The splitting passes of the compile pipeline (compile_pipeline.h), in
// GE's OptimizeSubgraph order (seeds/01 §3):
//
//   StagePartition -> EnginePlacer (with HostcpuEngineUpdatePass)
//     -> SubgraphBackends (ge.subgraph_backends, after placement so that
//        selectors can read engines)
//     -> DynamicShapePartition (the root, or each stage) -> EnginePlacer2
//     -> CompositeEnginePartition + each engine's OptimizeFusedGraph on its
//        subgraphs in parallel + merge
//     -> AtomicEnginePartition + optimize + merge
//     -> KeepPartitioned, OnPartitioned (tools)
//     -> Flatten (for the executor; see below) -> VerifyFlat
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
// Every pass is dumped before and after (ge.dump_graph) by the pipeline,
// and each partitioner step writes its cluster state next to the dumps.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "compiler/build/compile_pipeline.h"

namespace ge::compiler {

// Adds the passes above to `pipeline`; they read and write `state`.
void AddPartitionPasses(PassPipeline& pipeline, CompileState& state);

// The placement of every node of `root`'s tree, with what the last placer
// run said about each (state.placement_notes, by name).
PlacementReport RebuildPlacement(ir::Graph& root, CompileState& state);

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
