// The compiler driver: every step from an imported graph to a loadable
// program is one named pass of one PassPipeline, timed, dumped
// (ge.dump_graph), verified (ge.verify_each_step) and, unless required,
// switchable off by name (ge.disable_passes). In order:
//
//   RandomSeedPass*, MultiBatchClonePass*, InferShapesPass*,
//   VarIsInitializedOpPass*, SplitVariableIntoSubgraphPass*,
//   VariablePrepareOpPass*, VariableFormatPass*, VariableRefDeleteOpPass*
//       (the variable passes only when the graph has variables),
//   ConstantFoldingPass (ge.oo.constantFolding),
//   <optimizer>.OptimizeOriginalGraph: each loaded, not excluded engine's
//       graph optimizers on the whole graph, before placement,
//   StagePartition*, EnginePlacer*, SubgraphBackends* (ge.subgraph_backends),
//   DynamicShapePartition*, EnginePlacer2*,
//   CompositeEnginePartition, AtomicEnginePartition: split by engine, run
//       the engines' <optimizer>.OptimizeFusedGraph sub-passes on their
//       subgraphs, merge,
//   KeepPartitioned*, OnPartitioned* (for tools), then unless the
//   compilation stops after partitioning: Flatten*, VerifyFlat*,
//   AssignVariableMemory*, and for a static graph when a program is asked
//   for: MemoryPlanning*, TaskBuilding*.
//
// (* = required.) The driver names no engine: the optimizer passes come
// from the engine registry through the engine API (Engine::graph_optimizers,
// GraphOptimizer::name); an optimizer's sub-passes are named
// `<GraphOptimizer::name()>.OptimizeOriginalGraph` and
// `<GraphOptimizer::name()>.OptimizeFusedGraph`. docs/architecture.md
// ("Compiler driver") has the same list.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/strings.h"
#include "base/thread_pool.h"
#include "compiler/compile_options.h"
#include "compiler/partition/base_partitioner.h"
#include "compiler/passes/graph_dumper.h"
#include "compiler/passes/pass_pipeline.h"
#include "compiler/placement/engine_placer.h"
#include "compiler/build/task_builder.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/model/static_program.h"
#include "runtime/variables/var_manager.h"

namespace ge::compiler {

// What the last placer run said about a node, kept by name (optimizers and
// flattening may replace nodes since).
struct PlacementNotes {
  std::vector<EngineRejection> rejected;
  bool host_exec = false;
  PlacementReason reason = PlacementReason::kPriority;
  std::vector<EngineEstimate> estimates;
};

// The state the passes share while one graph compiles.
struct CompileState {
  CompileState(const engine::EngineRegistry& engines, const CompileOptions& options, ThreadPool* pool)
      : engines(engines), options(options), pool(pool) {}

  const engine::EngineRegistry& engines;
  const CompileOptions& options;
  ThreadPool* pool;
  GraphDumper* dumper = nullptr;  // set by BuildCompilePipeline's caller (may stay null)

  // Whether the input graph has variables (the variable passes' condition).
  bool has_variables = false;
  // StagePartition's stages.
  std::vector<partition::PartitionedSubgraph> stages;
  // The placer's notes by node name, and its warnings.
  StringMap<PlacementNotes> placement_notes;
  std::vector<std::string> placement_warnings;
  // KeepPartitioned's copy.
  std::unique_ptr<ir::Graph> partitioned;
  // AssignVariableMemory's result.
  variables::VarManagerInfo variables;
  // MemoryPlanning's layout and TaskBuilding's program (build_program only).
  std::optional<StaticLayout> layout;
  std::optional<runtime::StaticProgram> program;
  // Build a StaticProgram for a static graph, for this many intra-op threads.
  bool build_program = false;
  int num_threads = 1;
};

// The pipeline over `state` (which must outlive it), with
// ge.disable_passes applied: an unknown or required name is
// InvalidArgument naming it. Also checks the options only the driver can
// check (ge.subgraph_backends names).
absl::StatusOr<std::unique_ptr<PassPipeline>> BuildCompilePipeline(CompileState& state);

}  // namespace ge::compiler
