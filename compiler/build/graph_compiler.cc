// The compile pipeline, built in one function in order.
#include "compiler/build/graph_compiler.h"

#include "base/ir/op_types.h"
#include "base/ir/verifier.h"
#include "base/status.h"
#include "compiler/partition/partition_pipeline.h"
#include "compiler/passes/compile_deadline.h"
#include "compiler/passes/constant_folding_pass.h"
#include "compiler/passes/graph_dumper.h"
#include "compiler/passes/infer_shapes_pass.h"
#include "compiler/passes/multi_batch_clone_pass.h"
#include "compiler/passes/pass_pipeline.h"
#include "compiler/passes/qdq_fusion_pass.h"
#include "compiler/passes/random_seed_pass.h"
#include "compiler/passes/split_variable_into_subgraph_pass.h"
#include "compiler/passes/var_is_initialized_op_pass.h"
#include "compiler/passes/variable_format_pass.h"
#include "compiler/passes/variable_prepare_op_pass.h"
#include "compiler/passes/variable_ref_delete_op_pass.h"
#include "compiler/build/var_mem_assign.h"

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

  // Graph optimization before placement. Shape inference comes first: every
  // later step (placement's CheckSupported, partitioning) reads types.
  PassPipeline optimize("optimize");
  optimize.set_dumper(&dumper);
  // The input graph is verified once; after each pass only when asked.
  optimize.set_verify_each_pass(options.verify_each_step);
  // Gears first: each branch is a static copy that inference then types.
  // Random ops' identities before anything clones or renames them.
  optimize.AddPass<RandomSeedPass>(options.random_seed);
  optimize.AddPass<MultiBatchClonePass>(options.gears);
  optimize.AddPass<InferShapesPass>();
  optimize.AddPass<QdqFusionPass>();  // reads types; before folding turns DQ(weights) into floats
  // Variables. VarIsInitializedOpPass first: the reads it removes must not
  // get read-before-write edges. SplitVariableIntoSubgraphPass before
  // VariablePrepareOpPass, so that subgraphs read their own VarRefs and only
  // the owner's writers are chained. VariableFormatPass after prepare (it
  // leaves written variables alone, and VarRefs mark what it must not fold)
  // and before VariableRefDeleteOpPass, which drops the writers' VarRefs last.
  // They act only on Variable and VarIsInitializedOp nodes: a graph without
  // any (most graphs) skips them, one scan instead of five walks.
  if (HasVariableOps(*graph)) {
    optimize.AddPass<VarIsInitializedOpPass>();
    optimize.AddPass<SplitVariableIntoSubgraphPass>();
    optimize.AddPass<VariablePrepareOpPass>();
    optimize.AddPass<VariableFormatPass>();
    optimize.AddPass<VariableRefDeleteOpPass>();
  }
  // After the variable passes: their reads are not Consts and never fold.
  if (options.constant_folding) optimize.AddPass<ConstantFoldingPass>(engines_);
  GE_RETURN_IF_ERROR(optimize.Run(*graph).status());
  GE_RETURN_IF_ERROR(CheckCompileDeadline("placement and partitioning"));

  // StagePartition -> EnginePlacer -> DynamicShapePartition -> EnginePlacer
  // -> engine partitioning and optimization -> flattening.
  GE_ASSIGN_OR_RETURN(SplitResult split, RunSplitSteps(*graph, engines_, options, pool_, dumper));
  compiled->placement = std::move(split.placement);
  compiled->partitioned = std::move(split.partitioned);
  GE_RETURN_IF_ERROR(CheckCompileDeadline("variable memory assignment"));
  // Model-local logical addresses, resolved by key in the session at load.
  GE_ASSIGN_OR_RETURN(compiled->variables, AssignVariableMemory(*graph));
  compiled->graph = std::move(graph);
  return compiled;
}

}  // namespace ge::compiler
