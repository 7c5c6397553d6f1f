// The splitting steps of the compile pipeline: stages, placement, subgraph
// backends, dynamic shape partitioning, engine partitioning with the
// engines' optimizers, and flattening for the executor.
#include "compiler/partition/partition_pipeline.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "base/ir/flatten.h"
#include "base/ir/op_types.h"
#include "base/ir/verifier.h"
#include "base/logging.h"
#include "base/status.h"
#include "compiler/partition/dynamic_shape_partitioner.h"
#include "compiler/partition/engine_partitioner.h"
#include "compiler/partition/partition_report.h"
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

struct Rejections {
  std::vector<EngineRejection> rejected;
  bool host_exec = false;
  PlacementReason reason = PlacementReason::kPriority;
  std::vector<EngineEstimate> estimates;
};

// The placement of the final graph, with what the last placer run said
// about each node (by name: optimizers and flattening may have replaced
// nodes since).
PlacementReport RebuildPlacement(ir::Graph& root, StringMap<Rejections>& by_name, std::vector<std::string> warnings) {
  PlacementReport report;
  report.warnings = std::move(warnings);
  size_t total = root.num_nodes();
  for (ir::Graph* sub : root.subgraphs()) total += sub->num_nodes();
  report.nodes.reserve(total);
  auto add = [&](ir::Node* n) {
    NodePlacement p;
    p.node = n;
    const ir::AttrValue* engine = n->op_desc().FindAttr(ir::kAttrEngineName);
    if (const std::string* name = engine == nullptr ? nullptr : engine->get<std::string>()) p.engine = *name;
    auto it = by_name.find(n->name());
    if (it != by_name.end()) {
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

absl::StatusOr<SplitResult> RunSplitSteps(ir::Graph& graph, const engine::EngineRegistry& engines,
                                          const CompileOptions& options, ThreadPool* pool, GraphDumper& dumper) {
  ClusterDumper clusters(dumper.enabled(), options.dump_path);
  auto step = [&](std::string_view name, const std::function<absl::Status()>& fn) -> absl::Status {
    GE_RETURN_IF_ERROR(dumper.Before(graph, name));
    const auto start = std::chrono::steady_clock::now();
    GE_RETURN_IF_ERROR(Annotate(fn(), name));
    GE_LOG_INFO("compiler", "{}: {:.1f} ms", name,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    return dumper.After(graph, name);
  };
  std::vector<partition::PartitionedSubgraph> stages;
  GE_RETURN_IF_ERROR(step("StagePartition", [&]() -> absl::Status {
    partition::StagePartitioner stage;
    stage.set_observer(&clusters);
    GE_ASSIGN_OR_RETURN(stages, stage.Partition(graph));
    return absl::OkStatus();
  }));
  PlacementReport placement;
  GE_RETURN_IF_ERROR(step("EnginePlacer", [&]() -> absl::Status {
    GE_ASSIGN_OR_RETURN(placement, PlaceWithBoundaryNodes(graph, engines, options, pool));
    return absl::OkStatus();
  }));
  if (!options.subgraph_backends.empty()) {
    GE_RETURN_IF_ERROR(step("SubgraphBackends", [&]() {
      return partition::ApplySubgraphBackends(graph, options.subgraph_backends,
                                              partition::SubgraphBackendRegistry::Builtin(), &clusters)
          .status();
    }));
  }
  GE_RETURN_IF_ERROR(step("DynamicShapePartition", [&]() -> absl::Status {
    partition::DynamicShapeOptions dso;
    dso.static_model_ops_lower_limit = options.static_model_ops_lower_limit;
    dso.host_scheduling_max_threshold = options.host_scheduling_max_threshold;
    dso.tiling_offload = options.tiling_schedule_optimize;
    if (const engine::Engine* reference = engines.Reference()) dso.reference_engine = reference->attributes().name;
    std::vector<ir::Graph*> targets;
    if (stages.empty()) targets.push_back(&graph);
    for (const auto& s : stages) targets.push_back(s.subgraph);
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
  }));
  GE_RETURN_IF_ERROR(step("EnginePlacer2", [&]() -> absl::Status {
    GE_ASSIGN_OR_RETURN(placement, PlaceWithBoundaryNodes(graph, engines, options, pool));
    return absl::OkStatus();
  }));
  // What the placer said, by name, before optimizers may replace nodes.
  // Only nodes with something to say: a node without an entry gets the
  // defaults (nothing rejected it, not host_exec), and a small table keeps
  // the per-node lookups in cache.
  StringMap<Rejections> by_name;
  for (NodePlacement& p : placement.nodes) {
    if (p.rejected.empty() && !p.host_exec && p.reason == PlacementReason::kPriority) continue;
    by_name.try_emplace(p.node->name(),
                        Rejections{std::move(p.rejected), p.host_exec, p.reason, std::move(p.estimates)});
  }
  std::vector<std::string> warnings = std::move(placement.warnings);
  placement.nodes.clear();
  partition::EnginePartitioner engine_partitioner(engines, pool, options.exclude_engines);
  for (auto mode : {partition::EnginePartitionMode::kComposite, partition::EnginePartitionMode::kAtomic}) {
    GE_RETURN_IF_ERROR(step(partition::EnginePartitionModeName(mode),
                            [&]() { return engine_partitioner.Run(graph, mode).status(); }));
  }
  // The flat graph is verified below in any case; the partitioned form
  // only when asked (a second full pass over a million nodes).
  if (options.verify_each_step) {
    GE_RETURN_IF_ERROR(step("Verify", [&]() { return Annotate(ir::VerifyGraph(graph), "after partitioning"); }));
  }
  SplitResult result;
  if (options.keep_partitioned_graph) {
    GE_RETURN_IF_ERROR(step("KeepPartitioned", [&]() {
      result.partitioned = graph.Clone();
      return absl::OkStatus();
    }));
  }
  if (options.on_partitioned) {
    const auto start = std::chrono::steady_clock::now();
    GE_RETURN_IF_ERROR(options.on_partitioned(graph));
    GE_LOG_INFO("compiler", "on_partitioned: {:.1f} ms",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  if (options.stop_after_partitioning) {
    result.placement = RebuildPlacement(graph, by_name, std::move(warnings));
    return result;
  }
  GE_RETURN_IF_ERROR(step("Flatten", [&]() -> absl::Status {
    ir::FlattenOptions flatten;
    const std::string noop_engine = NoOpEngine(engines, options);
    if (!noop_engine.empty()) flatten.noop_attrs[std::string(ir::kAttrEngineName)] = noop_engine;
    flatten.inherited_attrs = partition::PartitionAttrRegistry::Builtin().CallToNodeNames();
    GE_RETURN_IF_ERROR(ir::FlattenPartitionedCalls(graph, flatten).status());
    for (ir::Graph* branch : MultiBatchBranches(graph)) {
      GE_RETURN_IF_ERROR(ir::FlattenPartitionedCalls(*branch, flatten).status());
    }
    return absl::OkStatus();
  }));
  GE_RETURN_IF_ERROR(step("VerifyFlat", [&]() { return Annotate(ir::VerifyGraph(graph), "after flattening"); }));
  const auto start = std::chrono::steady_clock::now();
  result.placement = RebuildPlacement(graph, by_name, std::move(warnings));
  GE_LOG_INFO("compiler", "placement report: {:.1f} ms",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return result;
}

}  // namespace ge::compiler
