// GraphCompiler: the compile pipeline from an imported graph to a placed,
// typed graph the runtime can load (seeds/01 §3's OptimizeSubgraph order).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/thread_pool.h"
#include "compiler/compile_options.h"
#include "compiler/placement/engine_placer.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/variables/var_manager.h"

namespace ge::compiler {

struct CompiledGraph {
  // Verified, typed, every node placed; partitioned, then flattened for the
  // executor (compiler/partition/partition_pipeline.h); the partitioned
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
};

class GraphCompiler {
 public:
  // `pool` may be null.
  GraphCompiler(const engine::EngineRegistry& engines, ThreadPool* pool);

  // Runs the pipeline: verify, infer shapes, then the splitting steps
  // (stages, placement, subgraph backends, dynamic shape partitioning,
  // placement again, engine partitioning with the engines' optimizers,
  // flattening), with dumps between steps when asked. Errors name the step
  // and the node.
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(std::unique_ptr<ir::Graph> graph,
                                                         const CompileOptions& options) const;

 private:
  const engine::EngineRegistry& engines_;
  ThreadPool* pool_;
};

}  // namespace ge::compiler
