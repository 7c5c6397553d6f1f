// ModelBuilder: GraphCompiler + TaskBuilder into a CompiledModel.
#include "compiler/build/model_builder.h"

#include "base/logging.h"
#include "base/status.h"
#include "compiler/build/graph_compiler.h"
#include "compiler/build/task_builder.h"

namespace ge::compiler {

absl::StatusOr<runtime::CompiledModel> BuildCompiledModel(std::unique_ptr<ir::Graph> graph, const OptionMap& options,
                                                          const engine::EngineRegistry& engines, ThreadPool* pool) {
  GE_RETURN_IF_ERROR(ValidateOptions(options));
  GE_ASSIGN_OR_RETURN(CompileOptions compile_options, CompileOptions::FromOptions(options));
  // A mixed graph keeps its partitioned form, so it loads and runs mixed.
  compile_options.keep_partitioned_graph = true;
  GraphCompiler compiler(engines, pool);
  GE_ASSIGN_OR_RETURN(auto compiled, compiler.Compile(std::move(graph), compile_options));
  runtime::CompiledModel model;
  model.options = options;
  if (IsStaticGraph(*compiled->graph)) {
    const int threads = pool ? pool->num_threads() + 1 : 1;
    absl::StatusOr<runtime::StaticProgram> program = BuildStaticProgram(*compiled->graph, engines, threads);
    if (program.ok()) {
      model.program = *std::move(program);
    } else if (program.status().code() == absl::StatusCode::kUnimplemented) {
      GE_LOG_INFO("compiler", "graph '{}' runs dynamically: {}", compiled->graph->name(), program.status().message());
    } else {
      return program.status();
    }
  }
  if (!model.program) model.partitioned = std::move(compiled->partitioned);
  model.graph = std::move(compiled->graph);
  model.variables = std::move(compiled->variables);
  return model;
}

}  // namespace ge::compiler
