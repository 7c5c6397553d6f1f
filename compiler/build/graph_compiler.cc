// GraphCompiler: runs the compiler driver's pipeline on one graph.
#include "compiler/build/graph_compiler.h"

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/build/compile_pipeline.h"
#include "compiler/build/partition_passes.h"
#include "compiler/passes/graph_dumper.h"

namespace ge::compiler {
namespace {

bool HasVariableOps(const ir::Graph& root) {
  bool found = false;
  auto scan = [&](const ir::Node* n) {
    found = found || n->type() == ir::kVariable || n->type() == "VarIsInitializedOp";
  };
  root.ForEachNode(scan);
  for (const ir::Graph* sub : root.subgraphs()) sub->ForEachNode(scan);
  return found;
}

}  // namespace

GraphCompiler::GraphCompiler(const engine::EngineRegistry& engines, ThreadPool* pool)
    : engines_(engines), pool_(pool) {}

absl::StatusOr<std::unique_ptr<CompiledGraph>> GraphCompiler::Compile(std::unique_ptr<ir::Graph> graph,
                                                                      const CompileOptions& options) const {
  auto compiled = std::make_unique<CompiledGraph>();
  compiled->options = options;
  GraphDumper dumper(options.dump_graph_level, options.dump_path);
  CompileState state(engines_, compiled->options, pool_);
  state.dumper = &dumper;
  state.has_variables = HasVariableOps(*graph);
  state.build_program = options.build_program;
  state.num_threads = options.num_threads;
  GE_ASSIGN_OR_RETURN(std::unique_ptr<PassPipeline> pipeline, BuildCompilePipeline(state));
  if (!options.only_passes.empty()) GE_RETURN_IF_ERROR(pipeline->RunOnly(options.only_passes));
  GE_RETURN_IF_ERROR(pipeline->Run(*graph).status());
  compiled->placement = RebuildPlacement(*graph, state);
  compiled->partitioned = std::move(state.partitioned);
  compiled->variables = std::move(state.variables);
  compiled->program = std::move(state.program);
  compiled->graph = std::move(graph);
  return compiled;
}

absl::StatusOr<std::vector<PassListing>> GraphCompiler::ListPasses(const CompileOptions& options) const {
  CompileState state(engines_, options, pool_);
  GE_ASSIGN_OR_RETURN(std::unique_ptr<PassPipeline> pipeline, BuildCompilePipeline(state));
  return pipeline->List();
}

}  // namespace ge::compiler
