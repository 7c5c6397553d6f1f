// GraphCompiler: compiles an imported graph to a placed, typed graph the
// runtime can load (seeds/01 §3's OptimizeSubgraph order) by running the
// compiler driver's pipeline (compiler/build/compile_pipeline.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/thread_pool.h"
#include "compiler/compile_options.h"
#include "compiler/passes/pass_pipeline.h"
#include "compiler/placement/engine_placer.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/model/static_program.h"
#include "runtime/variables/var_manager.h"

namespace ge::compiler {

struct CompiledGraph {
  // Verified, typed, every node placed; partitioned, then flattened for the
  // executor (compiler/build/partition_passes.h); the partitioned
  // tree itself with CompileOptions::stop_after_partitioning.
  std::unique_ptr<ir::Graph> graph;
  PlacementReport placement;  // points into `graph`
  // The graph before flattening: PartitionedCall nodes and their subgraphs
  // (only with CompileOptions::keep_partitioned_graph).
  std::unique_ptr<ir::Graph> partitioned;
  CompileOptions options;
  // Variables and FileConstants with their model-local logical addresses
  // (AssignVariableMemory, compiler/build/var_mem_assign.h).
  variables::VarManagerInfo variables;
  // The static graph's program (CompileOptions::build_program, when the
  // graph is static and the static path takes it).
  std::optional<runtime::StaticProgram> program;
};

class GraphCompiler {
 public:
  // `pool` may be null.
  GraphCompiler(const engine::EngineRegistry& engines, ThreadPool* pool);

  // Runs the pipeline: verify the input, then every pass in order (optimize,
  // the engines' optimizers, placement and partitioning, flattening,
  // variable memory, memory planning and tasks), with dumps between passes
  // when asked. Errors name the step and the node; ge.disable_passes naming
  // an unknown or required pass is InvalidArgument.
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(std::unique_ptr<ir::Graph> graph,
                                                         const CompileOptions& options) const;

  // The pipeline's passes for `options` on these engines, in order.
  absl::StatusOr<std::vector<PassListing>> ListPasses(const CompileOptions& options) const;

 private:
  const engine::EngineRegistry& engines_;
  ThreadPool* pool_;
};

}  // namespace ge::compiler
