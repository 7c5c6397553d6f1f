// CompileOptions: the typed form of the option keys the compiler reads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/options.h"
#include "compiler/gear_options.h"

namespace ge::ir {
class Graph;
}  // namespace ge::ir

namespace ge::compiler {

struct CompileOptions {
  // ge.exec.exclude_engines
  std::vector<std::string> exclude_engines;
  // ge.engineType: empty for `auto` (engines with cost tables compete by
  // estimated cost), else the engine that wins every node it runs where the
  // priority winner has a cost table (compiler/placement/engine_placer.h).
  std::string preferred_engine;
  // ge.exec.host_exec_ops
  std::vector<std::string> host_exec_ops;
  // ge.exec.disable_host_cpu_fallback
  bool disable_host_cpu_fallback = false;
  // ge.dump_graph / ge.dump_path
  int dump_graph_level = 0;
  std::string dump_path = ".";
  // ge.exec.static_model_ops_lower_limit: static subgraphs with fewer ops
  // become dynamic; -1 puts everything into one dynamic subgraph.
  int64_t static_model_ops_lower_limit = 4;
  // ge.host_scheduling_max_threshold: an all-static graph with fewer ops
  // runs dynamically as a whole; 0 never.
  int64_t host_scheduling_max_threshold = 0;
  // ge.tiling_schedule_optimize: tiling may be offloaded to run time, so
  // nodes with a tiling dependency may stay static.
  bool tiling_schedule_optimize = false;
  // ge.oo.constantFolding
  bool constant_folding = true;
  // ge.exec.seed: the seed of random ops without a `seed` attribute
  // (RandomSeedPass); unset, each loaded graph draws its own.
  std::optional<int64_t> random_seed;
  // ge.subgraph_backends: subgraph-API backends to apply, in order.
  std::vector<std::string> subgraph_backends;
  // ge.disable_passes: names of compile pipeline passes not to run
  // (compiler/build/compile_pipeline.h checks them).
  std::vector<std::string> disabled_passes;
  // ge.verify_each_step: verify the graph after every optimize pass and
  // after partitioning, not only the input graph and the final flat graph.
  // Always true in debug builds (NDEBUG unset).
  bool verify_each_step = false;

  // ge.dynamicBatchSize / ge.dynamicImageSize / ge.dynamicDims,
  // ge.inputShape, ge.compileHybridMode (compiler/gear_options.h).
  GearOptions gears;

  // Not an option key: tools that report on partitioning (gectl partition)
  // ask the compiler to keep the partitioned graph next to the flat one.
  bool keep_partitioned_graph = false;
  // Not an option key: when set, called once with the partitioned graph
  // tree (after the partitioning steps, before flattening). Tools that only
  // report on the partitioned form (gectl partition) read it here instead of
  // asking for a kept copy; an error fails the compilation.
  std::function<absl::Status(const ir::Graph&)> on_partitioned;
  // Not an option key: end the compilation right after partitioning (and
  // on_partitioned): no flattening and no final verification of a flat
  // graph. The CompiledGraph's graph is then the partitioned tree, placed
  // and typed, for tools that report on it and run nothing (gectl partition).
  bool stop_after_partitioning = false;
  // Not an option key: run only these passes of the pipeline, in pipeline
  // order (gectl opt --passes); empty runs them all.
  std::vector<std::string> only_passes;
  // Not an option key: plan memory and build the StaticProgram of a static
  // graph (CompiledGraph::program) for this many intra-op threads.
  bool build_program = false;
  int num_threads = 1;

  // Validates `options` (unknown keys and bad values are errors) and parses
  // the keys above; keys for other layers are ignored here.
  static absl::StatusOr<CompileOptions> FromOptions(const OptionMap& options);
};

}  // namespace ge::compiler
