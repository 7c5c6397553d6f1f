// ModelBuilder: compiles a graph into a runtime::CompiledModel — the form a
// .gem holds (GE's ModelBuilder: graph, task list, memory plan, options).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "base/thread_pool.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/model/gem.h"

namespace ge::compiler {

// Runs the GraphCompiler with `options` (validated), then, when the
// compiled graph is static (IsStaticGraph), builds its StaticProgram for
// `num_threads` intra-op threads. A static graph the static path cannot
// take (BuildStaticProgram's Unimplemented) is kept dynamic; a graph
// without a program keeps its partitioned form (CompiledModel::partitioned)
// so a mixed graph loads and runs mixed. `pool` may be null.
absl::StatusOr<runtime::CompiledModel> BuildCompiledModel(std::unique_ptr<ir::Graph> graph, const OptionMap& options,
                                                          const engine::EngineRegistry& engines, ThreadPool* pool);

}  // namespace ge::compiler
