// The compiler driver: builds the one pipeline of named passes (see
// compile_pipeline.h for the order and what is required).
#include "compiler/build/compile_pipeline.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "base/logging.h"
#include "base/status.h"
#include "compiler/build/partition_passes.h"
#include "compiler/build/var_mem_assign.h"
#include "compiler/partition/subgraph_property.h"
#include "compiler/passes/constant_folding_pass.h"
#include "compiler/passes/infer_shapes_pass.h"
#include "compiler/passes/multi_batch_clone_pass.h"
#include "compiler/passes/qdq_fusion_pass.h"
#include "compiler/passes/random_seed_pass.h"
#include "compiler/passes/split_const_into_subgraph_pass.h"
#include "compiler/passes/split_variable_into_subgraph_pass.h"
#include "compiler/passes/var_is_initialized_op_pass.h"
#include "compiler/passes/variable_format_pass.h"
#include "compiler/passes/variable_prepare_op_pass.h"
#include "compiler/passes/variable_ref_delete_op_pass.h"

namespace ge::compiler {
namespace {

PassTraits Required(std::string description, std::function<bool()> condition = {}) {
  return PassTraits{true, std::move(condition), std::move(description)};
}

PassTraits Optional(std::string description, std::function<bool()> condition = {}) {
  return PassTraits{false, std::move(condition), std::move(description)};
}

absl::Status CheckSubgraphBackends(const CompileOptions& options) {
  const auto& backends = partition::SubgraphBackendRegistry::Builtin();
  for (const std::string& name : options.subgraph_backends) {
    if (backends.Find(name) == nullptr) {
      return InvalidArgument("bad value for option 'ge.subgraph_backends': unknown backend '", name,
                             "' (known: ", absl::StrJoin(backends.Names(), ", "), ")");
    }
  }
  return absl::OkStatus();
}

// Each loaded engine's optimizers on the whole graph before placement, in
// the registry's engine order. An excluded engine's optimizers do not run:
// they may create nodes only their engine runs.
void AddOriginalGraphOptimizers(PassPipeline& pipeline, const CompileState& state) {
  std::vector<std::string> added;
  for (const std::string& engine_name : state.engines.Names()) {
    engine::Engine* e = state.engines.Find(engine_name);
    if (e == nullptr) continue;
    const auto& excluded = state.options.exclude_engines;
    const bool is_excluded = std::find(excluded.begin(), excluded.end(), engine_name) != excluded.end();
    for (engine::GraphOptimizer* optimizer : e->graph_optimizers()) {
      std::string name = StrCat(optimizer->name(), ".OptimizeOriginalGraph");
      if (std::find(added.begin(), added.end(), name) != added.end()) continue;
      added.push_back(name);
      pipeline.AddPassWithTraits<FunctionPass>(
          Optional(StrCat("engine '", engine_name, "': its optimizer '", optimizer->name(),
                          "' on the whole graph before placement"),
                   [is_excluded] { return !is_excluded; }),
          name, [optimizer, name](ir::Graph& g) -> absl::StatusOr<bool> {
            absl::StatusOr<bool> changed = optimizer->OptimizeOriginalGraph(g);
            if (!changed.ok()) return Annotate(changed.status(), name);
            return changed;
          });
    }
  }
}

void AddBuildPasses(PassPipeline& pipeline, CompileState& state) {
  const CompileOptions& options = state.options;
  // With the partitioned tree as the result there is nothing flat to build.
  auto flat = [&options] { return !options.stop_after_partitioning; };
  pipeline.AddPassWithTraits<FunctionPass>(Required("model-local addresses of Variables and FileConstants"),
                                           "AssignVariableMemory", [&state](ir::Graph& g) -> absl::StatusOr<bool> {
                                             GE_ASSIGN_OR_RETURN(state.variables, AssignVariableMemory(g));
                                             return false;
                                           });
  pipeline.AddPassWithTraits<FunctionPass>(Required("execution order and arena offsets of a static graph",
                                                    [&state, flat] { return flat() && state.build_program; }),
                                           "MemoryPlanning", [&state](ir::Graph& g) -> absl::StatusOr<bool> {
                                             state.layout.reset();
                                             if (!IsStaticGraph(g)) return false;
                                             absl::StatusOr<StaticLayout> layout = PlanStaticMemory(g);
                                             if (layout.ok()) {
                                               state.layout = *std::move(layout);
                                             } else if (layout.status().code() == absl::StatusCode::kUnimplemented) {
                                               GE_LOG_INFO("compiler", "graph '{}' runs dynamically: {}", g.name(),
                                                           layout.status().message());
                                             } else {
                                               return Annotate(layout.status(), "MemoryPlanning");
                                             }
                                             return false;
                                           });
  pipeline.AddPassWithTraits<FunctionPass>(
      Required("each node's task from its engine's kernel builder (static graphs)",
               [&state, flat] { return flat() && state.layout.has_value(); }),
      "TaskBuilding", [&state](ir::Graph& g) -> absl::StatusOr<bool> {
        absl::StatusOr<runtime::StaticProgram> program =
            BuildStaticProgram(g, state.engines, state.num_threads, *std::move(state.layout));
        state.layout.reset();
        if (program.ok()) {
          state.program = *std::move(program);
        } else if (program.status().code() == absl::StatusCode::kUnimplemented) {
          GE_LOG_INFO("compiler", "graph '{}' runs dynamically: {}", g.name(), program.status().message());
        } else {
          return Annotate(program.status(), "TaskBuilding");
        }
        return false;
      });
}

}  // namespace

absl::StatusOr<std::unique_ptr<PassPipeline>> BuildCompilePipeline(CompileState& state) {
  const CompileOptions& options = state.options;
  GE_RETURN_IF_ERROR(CheckSubgraphBackends(options));
  auto pipeline = std::make_unique<PassPipeline>("compile");
  pipeline->set_dumper(state.dumper);
  // The input graph is verified once; after each pass only when asked.
  pipeline->set_verify_each_pass(options.verify_each_step);
  // Gears first: each branch is a static copy that inference then types.
  // Random ops' identities before anything clones or renames them.
  pipeline->AddPassWithTraits<RandomSeedPass>(Required("a seed for every random op without one"), options.random_seed);
  pipeline->AddPassWithTraits<MultiBatchClonePass>(Required("one static branch per gear (ge.dynamicBatchSize, ...)"),
                                                   options.gears);
  // Every later step (placement's CheckSupported, partitioning) reads types.
  pipeline->AddPassWithTraits<InferShapesPass>(Required("types and shapes of every value"));
  // Reads types; before folding, which would turn DQ(weights) into floats.
  pipeline->AddPassWithTraits<QdqFusionPass>(
      Optional("QDQ chains (DQ -> Conv/MatMul/Gemm -> Q) into int8 operators (QLinearConv, QLinearMatMul)"));
  // Variables. VarIsInitializedOpPass first: the reads it removes must not
  // get read-before-write edges. SplitVariableIntoSubgraphPass before
  // VariablePrepareOpPass, so that subgraphs read their own VarRefs and only
  // the owner's writers are chained. VariableFormatPass after prepare (it
  // leaves written variables alone, and VarRefs mark what it must not fold)
  // and before VariableRefDeleteOpPass, which drops the writers' VarRefs last.
  // They act only on Variable and VarIsInitializedOp nodes: a graph without
  // any (most graphs) skips them, one scan instead of five walks.
  auto vars = [&state] { return state.has_variables; };
  pipeline->AddPassWithTraits<VarIsInitializedOpPass>(Required("fold VarIsInitializedOp", vars));
  pipeline->AddPassWithTraits<SplitVariableIntoSubgraphPass>(Required("subgraphs read their own VarRefs", vars));
  pipeline->AddPassWithTraits<VariablePrepareOpPass>(Required("order variable writers and readers", vars));
  pipeline->AddPassWithTraits<VariableFormatPass>(Required("fold format changes of read-only variables", vars));
  pipeline->AddPassWithTraits<VariableRefDeleteOpPass>(Required("drop the writers' VarRefs", vars));
  // After the variable passes: their reads are not Consts and never fold.
  pipeline->AddPassWithTraits<ConstantFoldingPass>(
      Optional("evaluate what does not depend on the inputs (ge.oo.constantFolding)",
               [&options] { return options.constant_folding; }),
      state.engines);
  // After folding (the constants it made), before the optimizers: a loop
  // body's small weights become its own Consts, which engines prepare once.
  pipeline->AddPassWithTraits<SplitConstIntoSubgraphPass>(
      Optional("subgraphs hold the small constants their owners pass in"));
  // After folding: the optimizers see the constants it made.
  AddOriginalGraphOptimizers(*pipeline, state);
  AddPartitionPasses(*pipeline, state);
  AddBuildPasses(*pipeline, state);
  GE_RETURN_IF_ERROR(pipeline->DisablePasses(options.disabled_passes));
  return pipeline;
}

}  // namespace ge::compiler
