// ModelBuilder: the compile pipeline with memory planning and task
// building, into a CompiledModel.
#include "compiler/build/model_builder.h"

#include "base/status.h"
#include "compiler/build/graph_compiler.h"

namespace ge::compiler {

absl::StatusOr<runtime::CompiledModel> BuildCompiledModel(std::unique_ptr<ir::Graph> graph, const OptionMap& options,
                                                          const engine::EngineRegistry& engines, ThreadPool* pool) {
  GE_RETURN_IF_ERROR(ValidateOptions(options));
  GE_ASSIGN_OR_RETURN(CompileOptions compile_options, CompileOptions::FromOptions(options));
  // A mixed graph keeps its partitioned form, so it loads and runs mixed.
  compile_options.keep_partitioned_graph = true;
  // Memory planning and task building are the pipeline's last passes.
  compile_options.build_program = true;
  compile_options.num_threads = pool ? pool->num_threads() + 1 : 1;
  GraphCompiler compiler(engines, pool);
  GE_ASSIGN_OR_RETURN(auto compiled, compiler.Compile(std::move(graph), compile_options));
  runtime::CompiledModel model;
  model.options = options;
  model.program = std::move(compiled->program);
  if (!model.program) model.partitioned = std::move(compiled->partitioned);
  model.graph = std::move(compiled->graph);
  model.variables = std::move(compiled->variables);
  return model;
}

}  // namespace ge::compiler
