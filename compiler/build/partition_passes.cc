// The splitting passes of the compile pipeline: stages, placement, subgraph
// backends, dynamic shape partitioning, engine partitioning with the
// engines' optimizers, and flattening for the executor.
#include "compiler/build/partition_passes.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include "base/ir/flatten.h"
#include "base/ir/op_types.h"
#include "base/ir/verifier.h"
#include "base/logging.h"
#include "base/status.h"
#include "compiler/partition/dynamic_shape_partitioner.h"
#include "compiler/partition/engine_partitioner.h"
#include "compiler/partition/partition_attrs.h"
#include "compiler/partition/stage_partitioner.h"
#include "compiler/partition/subgraph_partitioner.h"

namespace ge::compiler {
namespace {

constexpr std::string_view kBoundaryTypes[] = {ir::kPartitionedCall, ir::kInnerData, ir::kInnerNetOutput};

std::string FileSafe(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  return out;
}

// Writes each partitioner's cluster state after its cluster steps.
class ClusterDumper final : public partition::PartitionObserver {
 public:
  ClusterDumper(bool enabled, std::string directory) : enabled_(enabled), directory_(std::move(directory)) {}
  void OnStep(std::string_view partitioner, std::string_view step, bool after, const ir::Graph& graph,
              partition::ClusterSet* clusters) override {
    if (!enabled_ || !after || clusters == nullptr) return;
    if (step != "InitClusters" && step != "MergeClusters" && step != "ProcessUniqueClusters") return;
    const std::string path = (std::filesystem::path(directory_) /
                              StrCat(FileSafe(graph.name()), ".", partitioner, ".", step, ".clusters.txt"))
                                 .string();
    std::ofstream out(path);
    out << clusters->Summary();
    if (!out) GE_LOG_WARN("compiler", "cannot write cluster dump {}", path);
  }

 private:
  bool enabled_;
  std::string directory_;
};

std::vector<engine::Engine*> Candidates(const engine::EngineRegistry& engines, const CompileOptions& options) {
  std::vector<engine::Engine*> out;
  for (engine::Engine* e : engines.ByCost()) {
    const engine::EngineAttributes* attrs = engines.FindAttributes(e->attributes().name);
    const auto& ex = options.exclude_engines;
    if (attrs->atomic && std::find(ex.begin(), ex.end(), attrs->name) == ex.end()) out.push_back(e);
  }
  return out;
}

bool SomeEngineAccepts(const std::vector<engine::Engine*>& candidates, const ir::Node& node) {
  for (engine::Engine* e : candidates) {
    if (e->info_store().CheckSupported(node).ok()) return true;
  }
  return false;
}

// The engine that takes the NoOps flattening creates.
std::string NoOpEngine(const engine::EngineRegistry& engines, const CompileOptions& options) {
  ir::Graph probe("noop_probe");
  auto node = probe.AddNode(ir::OpDesc("noop", std::string(ir::kNoOp)));
  if (!node.ok()) return "";
  for (engine::Engine* e : Candidates(engines, options)) {
    if (e->info_store().CheckSupported(**node).ok()) return e->attributes().name;
  }
  return "";
}

}  // namespace

std::vector<ir::Graph*> MultiBatchBranches(const ir::Graph& root) {
  std::vector<ir::Graph*> out;
  auto collect = [&](const ir::Node* n) {
    if (n->type() != ir::kCase || !n->op_desc().GetAttrOr<bool>(ir::kAttrMultiBatchCase, false)) return;
    for (const std::string& name : n->op_desc().subgraph_names()) {
      if (ir::Graph* g = root.FindSubgraph(name)) out.push_back(g);
    }
  };
  root.ForEachNode(collect);
  for (ir::Graph* sub : root.subgraphs()) sub->ForEachNode(collect);
  return out;
}

absl::StatusOr<PlacementReport> PlaceWithBoundaryNodes(ir::Graph& root, const engine::EngineRegistry& engines,
                                                       const CompileOptions& options, ThreadPool* pool) {
  const std::vector<engine::Engine*> candidates = Candidates(engines, options);
  StringMap<bool> placeable;
  std::vector<std::pair<ir::Node*, std::string>> masked;
  auto consider = [&](ir::Node* n) {
    const std::string& type = n->type();
    if (std::find(std::begin(kBoundaryTypes), std::end(kBoundaryTypes), type) == std::end(kBoundaryTypes)) return;
    auto [it, fresh] = placeable.try_emplace(type, false);
    if (fresh) it->second = SomeEngineAccepts(candidates, *n);
    if (!it->second) masked.emplace_back(n, type);
  };
  root.ForEachNode(consider);
  for (ir::Graph* sub : root.subgraphs()) sub->ForEachNode(consider);
  for (auto& [n, type] : masked) n->mutable_op_desc().set_type(std::string(ir::kNoOp));
  EnginePlacer placer(engines, options, pool);
  absl::StatusOr<PlacementReport> report = placer.Run(root);
  for (auto& [n, type] : masked) n->mutable_op_desc().set_type(type);
  return report;
}

PlacementReport RebuildPlacement(ir::Graph& root, CompileState& state) {
  PlacementReport report;
  report.warnings = state.placement_warnings;
  size_t total = root.num_nodes();
  for (ir::Graph* sub : root.subgraphs()) total += sub->num_nodes();
  report.nodes.reserve(total);
  auto add = [&](ir::Node* n) {
    NodePlacement p;
    p.node = n;
    const ir::AttrValue* engine = n->op_desc().FindAttr(ir::kAttrEngineName);
    if (const std::string* name = engine == nullptr ? nullptr : engine->get<std::string>()) p.engine = *name;
    auto it = state.placement_notes.find(n->name());
    if (it != state.placement_notes.end()) {
      p.rejected = it->second.rejected;
      p.host_exec = it->second.host_exec;
      p.reason = it->second.reason;
      p.estimates = it->second.estimates;
    }
    report.nodes.push_back(std::move(p));
  };
  root.ForEachNode(add);
  for (ir::Graph* sub : root.subgraphs()) sub->ForEachNode(add);
  return report;
}

namespace {

// What the placer said, by name, before optimizers may replace nodes.
// Only nodes with something to say: a node without an entry gets the
// defaults (nothing rejected it, not host_exec), and a small table keeps
// the per-node lookups in cache.
void KeepPlacementNotes(PlacementReport placement, CompileState& state) {
  state.placement_notes.clear();
  for (NodePlacement& p : placement.nodes) {
    if (p.rejected.empty() && !p.host_exec && p.reason == PlacementReason::kPriority) continue;
    state.placement_notes.try_emplace(
        p.node->name(), PlacementNotes{std::move(p.rejected), p.host_exec, p.reason, std::move(p.estimates)});
  }
  state.placement_warnings = std::move(placement.warnings);
}

absl::Status PartitionDynamicShapes(ir::Graph& graph, CompileState& state, ClusterDumper& clusters) {
  const CompileOptions& options = state.options;
  partition::DynamicShapeOptions dso;
  dso.static_model_ops_lower_limit = options.static_model_ops_lower_limit;
  dso.host_scheduling_max_threshold = options.host_scheduling_max_threshold;
  dso.tiling_offload = options.tiling_schedule_optimize;
  if (const engine::Engine* reference = state.engines.Reference()) dso.reference_engine = reference->attributes().name;
  std::vector<ir::Graph*> targets;
  if (state.stages.empty()) targets.push_back(&graph);
  for (const auto& s : state.stages) targets.push_back(s.subgraph);
  // Each branch of a multi-batch Case is a graph of its own: a gear's
  // static copy splits into its own static units.
  const std::vector<ir::Graph*> branches = MultiBatchBranches(graph);
  targets.insert(targets.end(), branches.begin(), branches.end());
  for (ir::Graph* target : targets) {
    const bool branch = std::find(branches.begin(), branches.end(), target) != branches.end();
    dso.wrap_static_graph = branch && options.static_model_ops_lower_limit != -1;
    partition::DynamicShapePartitioner dsp(dso);
    dsp.set_observer(&clusters);
    GE_RETURN_IF_ERROR(dsp.Partition(*target).status());
  }
  return absl::OkStatus();
}

absl::Status Flatten(ir::Graph& graph, const CompileState& state) {
  ir::FlattenOptions flatten;
  const std::string noop_engine = NoOpEngine(state.engines, state.options);
  if (!noop_engine.empty()) flatten.noop_attrs[std::string(ir::kAttrEngineName)] = noop_engine;
  flatten.inherited_attrs = partition::PartitionAttrRegistry::Builtin().CallToNodeNames();
  GE_RETURN_IF_ERROR(ir::FlattenPartitionedCalls(graph, flatten).status());
  for (ir::Graph* branch : MultiBatchBranches(graph)) {
    GE_RETURN_IF_ERROR(ir::FlattenPartitionedCalls(*branch, flatten).status());
  }
  return absl::OkStatus();
}

// The names of the graph optimizers of the loaded engines of one kind
// (composite or atomic), each once.
std::vector<std::string> OptimizerNames(const engine::EngineRegistry& engines, bool atomic) {
  std::vector<std::string> out;
  for (const std::string& name : engines.Names()) {
    const engine::EngineAttributes* attrs = engines.FindAttributes(name);
    engine::Engine* e = engines.Find(name);
    if (attrs == nullptr || e == nullptr || attrs->atomic != atomic) continue;
    for (const engine::GraphOptimizer* o : e->graph_optimizers()) {
      if (std::find(out.begin(), out.end(), o->name()) == out.end()) out.emplace_back(o->name());
    }
  }
  return out;
}

}  // namespace

void AddPartitionPasses(PassPipeline& pipeline, CompileState& state) {
  const CompileOptions& options = state.options;
  auto clusters =
      std::make_shared<ClusterDumper>(state.dumper != nullptr && state.dumper->enabled(), options.dump_path);
  // Errors name the pass.
  auto add = [&](std::string name, bool required, std::function<bool()> condition, std::string description,
                 FunctionPass::Fn fn) {
    PassTraits traits{required, std::move(condition), std::move(description)};
    std::string pass_name = name;
    pipeline.AddPassWithTraits<FunctionPass>(
        std::move(traits), std::move(pass_name),
        [name = std::move(name), fn = std::move(fn)](ir::Graph& g) -> absl::StatusOr<bool> {
          absl::StatusOr<bool> changed = fn(g);
          if (!changed.ok()) return Annotate(changed.status(), name);
          return changed;
        });
  };
  add("StagePartition", true, {}, "cut the graph into pipeline stages (_stage_level)",
      [&state, clusters](ir::Graph& g) -> absl::StatusOr<bool> {
        partition::StagePartitioner stage;
        stage.set_observer(clusters.get());
        GE_ASSIGN_OR_RETURN(state.stages, stage.Partition(g));
        return !state.stages.empty();
      });
  auto place = [&state](ir::Graph& g) -> absl::StatusOr<bool> {
    GE_ASSIGN_OR_RETURN(PlacementReport report, PlaceWithBoundaryNodes(g, state.engines, state.options, state.pool));
    KeepPlacementNotes(std::move(report), state);
    return true;
  };
  add("EnginePlacer", true, {}, "choose every node's engine (priority, cost tables, host execution)", place);
  add(
      "SubgraphBackends", true, [&options] { return !options.subgraph_backends.empty(); },
      "apply the subgraph-API backends of ge.subgraph_backends",
      [&state, clusters](ir::Graph& g) -> absl::StatusOr<bool> {
        GE_RETURN_IF_ERROR(partition::ApplySubgraphBackends(g, state.options.subgraph_backends,
                                                            partition::SubgraphBackendRegistry::Builtin(),
                                                            clusters.get())
                               .status());
        return true;
      });
  add("DynamicShapePartition", true, {}, "split static from dynamic-shape units (the root, each stage, each gear)",
      [&state, clusters](ir::Graph& g) -> absl::StatusOr<bool> {
        GE_RETURN_IF_ERROR(PartitionDynamicShapes(g, state, *clusters));
        return true;
      });
  add("EnginePlacer2", true, {}, "place again: the nodes partitioning created", place);
  for (auto mode : {partition::EnginePartitionMode::kComposite, partition::EnginePartitionMode::kAtomic}) {
    const bool atomic = mode == partition::EnginePartitionMode::kAtomic;
    const std::string name(partition::EnginePartitionModeName(mode));
    const std::vector<std::string> optimizers = OptimizerNames(state.engines, atomic);
    add(name, false, {},
        atomic ? "split by engine, run each engine's optimizers on its subgraphs, merge"
               : "split by composite engine, run its optimizers on its subgraphs, merge",
        [&state, &pipeline, mode, optimizers](ir::Graph& g) -> absl::StatusOr<bool> {
          partition::EnginePartitioner partitioner(state.engines, state.pool, state.options.exclude_engines);
          std::vector<std::string> skipped;
          for (const std::string& o : optimizers) {
            if (pipeline.IsDisabled(StrCat(o, ".OptimizeFusedGraph"))) skipped.push_back(o);
          }
          partitioner.set_skipped_optimizers(std::move(skipped));
          return partitioner.Run(g, mode);
        });
    for (const std::string& o : optimizers) {
      pipeline.AddSubPass(StrCat(o, ".OptimizeFusedGraph"), name,
                          StrCat("optimizer '", o, "' on each subgraph its engine gets"));
    }
  }
  // Each engine's optimizers on the merged graph, in the registry's engine
  // order (an excluded engine's do not run).
  std::vector<std::string> before_build;
  for (const std::string& engine_name : state.engines.Names()) {
    engine::Engine* e = state.engines.Find(engine_name);
    const auto& excluded = options.exclude_engines;
    if (e == nullptr || std::find(excluded.begin(), excluded.end(), engine_name) != excluded.end()) continue;
    for (engine::GraphOptimizer* optimizer : e->graph_optimizers()) {
      std::string name = StrCat(optimizer->name(), ".OptimizeGraphBeforeBuild");
      if (std::find(before_build.begin(), before_build.end(), name) != before_build.end()) continue;
      before_build.push_back(name);
      add(name, false, {},
          StrCat("engine '", engine_name, "': its optimizer '", optimizer->name(), "' on the merged graph"),
          [optimizer](ir::Graph& g) -> absl::StatusOr<bool> {
            GE_ASSIGN_OR_RETURN(bool changed, optimizer->OptimizeGraphBeforeBuild(g));
            for (ir::Graph* sub : g.subgraphs()) {
              GE_ASSIGN_OR_RETURN(bool c, optimizer->OptimizeGraphBeforeBuild(*sub));
              changed = changed || c;
            }
            return changed;
          });
    }
  }
  add(
      "KeepPartitioned", true, [&options] { return options.keep_partitioned_graph; },
      "keep a copy of the partitioned tree (mixed static/dynamic loading, reports)",
      [&state](ir::Graph& g) -> absl::StatusOr<bool> {
        state.partitioned = g.Clone();
        return false;
      });
  add(
      "OnPartitioned", true, [&options] { return static_cast<bool>(options.on_partitioned); },
      "hand the partitioned tree to the tool that asked (gectl partition)",
      [&options](ir::Graph& g) -> absl::StatusOr<bool> {
        GE_RETURN_IF_ERROR(options.on_partitioned(g));
        return false;
      });
  auto flat = [&options] { return !options.stop_after_partitioning; };
  add("Flatten", true, flat, "expand every PartitionedCall for the executor",
      [&state](ir::Graph& g) -> absl::StatusOr<bool> {
        GE_RETURN_IF_ERROR(Flatten(g, state));
        return true;
      });
  add("VerifyFlat", true, flat, "verify the flat graph", [](ir::Graph& g) -> absl::StatusOr<bool> {
    GE_RETURN_IF_ERROR(Annotate(ir::VerifyGraph(g), "after flattening"));
    return false;
  });
}

}  // namespace ge::compiler
