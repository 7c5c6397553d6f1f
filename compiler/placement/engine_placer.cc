// EnginePlacer: cost-ordered engine selection, reassignment and strict mode.
#include "compiler/placement/engine_placer.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/status.h"

namespace ge::compiler {
namespace {

constexpr std::string_view kHostCpu = "host_cpu";
constexpr std::string_view kCpuDense = "cpu_dense";
constexpr std::string_view kCpuVector = "cpu_vector";

bool IsCoreEngine(std::string_view name) { return name == kCpuDense || name == kCpuVector; }

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Ops that are bookkeeping rather than compute: strict mode ignores them.
bool IsStructural(const ir::Node& node) {
  const std::string& t = node.type();
  return t == ir::kData || t == ir::kNetOutput || t == ir::kConst || t == ir::kNoOp ||
         t == ir::kInnerData || t == ir::kInnerNetOutput || t == ir::kPlaceHolder || t == ir::kEnd;
}

void CollectNodes(ir::Graph& root, std::vector<ir::Node*>& out) {
  root.ForEachNode([&](ir::Node* n) { out.push_back(n); });
  for (ir::Graph* sub : root.subgraphs()) sub->ForEachNode([&](ir::Node* n) { out.push_back(n); });
}

}  // namespace

const NodePlacement* PlacementReport::Find(std::string_view node_name) const {
  for (const NodePlacement& p : nodes) {
    if (p.node->name() == node_name) return &p;
  }
  return nullptr;
}

absl::Status HostcpuEngineUpdatePass::Run(PlacementReport& report) {
  const bool host_cpu_present = engines_.Find(kHostCpu) != nullptr && !Contains(options_.exclude_engines, kHostCpu);
  for (NodePlacement& p : report.nodes) {
    const ir::OpDesc& op = p.node->op_desc();
    const bool flagged = op.GetAttrOr<bool>(ir::kAttrHostExec, false) || Contains(options_.host_exec_ops, op.type());
    if (!flagged || p.engine == kHostCpu) {
      p.host_exec = p.host_exec || flagged;
      continue;
    }
    if (!host_cpu_present) {
      return FailedPrecondition("node '", p.node->name(), "' (", op.type(),
                                ") is flagged for host execution but host_cpu is excluded or not loaded");
    }
    absl::Status supported = engines_.Find(kHostCpu)->info_store().CheckSupported(*p.node);
    if (!supported.ok()) {
      return FailedPrecondition("node '", p.node->name(), "' (", op.type(),
                                ") is flagged for host execution but host_cpu rejects it: ",
                                StdView(supported.message()));
    }
    p.rejected.push_back({p.engine, "moved to host_cpu by host execution request"});
    p.engine = std::string(kHostCpu);
    p.host_exec = true;
    p.node->mutable_op_desc().SetAttr(ir::kAttrEngineName, std::string(kHostCpu));
  }
  return absl::OkStatus();
}

EnginePlacer::EnginePlacer(const engine::EngineRegistry& engines, const CompileOptions& options,
                           ThreadPool* pool)
    : engines_(engines), options_(options), pool_(pool) {}

NodePlacement EnginePlacer::Select(ir::Node& node, const std::vector<engine::Engine*>& candidates) const {
  NodePlacement placement;
  placement.node = &node;
  if (auto forced = node.op_desc().GetAttr<std::string>(ir::kAttrEngine)) {
    engine::Engine* e = engines_.Find(*forced);
    if (e == nullptr || Contains(options_.exclude_engines, *forced)) {
      placement.rejected.push_back({*forced, e == nullptr ? "engine not loaded" : "engine excluded by ge.exec.exclude_engines"});
      return placement;
    }
    absl::Status s = e->info_store().CheckSupported(node);
    if (s.ok()) {
      placement.engine = *forced;
    } else {
      placement.rejected.push_back({*forced, std::string(s.message())});
    }
    return placement;
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& name = candidates[i]->attributes().name;
    absl::Status s = candidates[i]->info_store().CheckSupported(node);
    if (!s.ok()) {
      placement.rejected.push_back({name, std::string(s.message())});
      continue;
    }
    placement.engine = name;
    // Between the two core engines the preferred one wins when it also fits.
    if (IsCoreEngine(name) && name != options_.preferred_core_engine) {
      for (size_t j = i + 1; j < candidates.size(); ++j) {
        if (candidates[j]->attributes().name == options_.preferred_core_engine &&
            candidates[j]->info_store().CheckSupported(node).ok()) {
          placement.rejected.push_back({name, "ge.engineType prefers " + options_.preferred_core_engine});
          placement.engine = options_.preferred_core_engine;
        }
      }
    }
    break;
  }
  return placement;
}

absl::Status EnginePlacer::CheckStrictMode(const PlacementReport& report) const {
  if (!options_.disable_host_cpu_fallback) return absl::OkStatus();
  std::vector<std::string> offenders;
  for (const NodePlacement& p : report.nodes) {
    if (p.engine != kHostCpu || p.host_exec || IsStructural(*p.node)) continue;
    std::vector<std::string> reasons;
    for (const EngineRejection& r : p.rejected) reasons.push_back(r.engine + ": " + r.reason);
    offenders.push_back(StrCat("'", p.node->name(), "' (", p.node->type(), ")",
                               reasons.empty() ? std::string(" no other engine is loaded")
                                               : " [" + absl::StrJoin(reasons, "; ") + "]"));
  }
  if (offenders.empty()) return absl::OkStatus();
  return FailedPrecondition("ge.exec.disable_host_cpu_fallback=1 and ", offenders.size(),
                            " node(s) would fall back to host_cpu: ", absl::StrJoin(offenders, ", "));
}

absl::StatusOr<PlacementReport> EnginePlacer::Run(ir::Graph& root) {
  PlacementReport report;
  for (const std::string& name : options_.exclude_engines) {
    if (engines_.Find(name) == nullptr) {
      report.warnings.push_back(StrCat("ge.exec.exclude_engines names '", name, "', which no loaded engine provides"));
      GE_LOG_WARN("compiler", "{}", report.warnings.back());
    }
  }
  std::vector<engine::Engine*> candidates;
  for (engine::Engine* e : engines_.ByCost()) {
    const auto* attrs = engines_.FindAttributes(e->attributes().name);
    if (attrs->atomic && !Contains(options_.exclude_engines, attrs->name)) candidates.push_back(e);
  }
  std::vector<ir::Node*> nodes;
  CollectNodes(root, nodes);
  report.nodes.resize(nodes.size());
  auto select_range = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) report.nodes[i] = Select(*nodes[i], candidates);
  };
  if (pool_ != nullptr) {
    pool_->ParallelFor(static_cast<int64_t>(nodes.size()), 256, select_range);
  } else {
    select_range(0, static_cast<int64_t>(nodes.size()));
  }
  std::vector<std::string> unplaced;
  for (NodePlacement& p : report.nodes) {
    if (!p.engine.empty()) {
      p.node->mutable_op_desc().SetAttr(ir::kAttrEngineName, p.engine);
      continue;
    }
    std::vector<std::string> reasons;
    for (const EngineRejection& r : p.rejected) reasons.push_back(r.engine + ": " + r.reason);
    unplaced.push_back(StrCat("'", p.node->name(), "' (", p.node->type(), ") [", absl::StrJoin(reasons, "; "), "]"));
  }
  if (!unplaced.empty()) {
    return FailedPrecondition("no engine can run ", unplaced.size(), " node(s): ",
                              absl::StrJoin(unplaced, ", "));
  }
  // Reassignment strategies, in order.
  std::vector<std::unique_ptr<EngineReassignPass>> passes;
  passes.push_back(std::make_unique<HostcpuEngineUpdatePass>(engines_, options_));
  for (auto& pass : passes) GE_RETURN_IF_ERROR(Annotate(pass->Run(report), pass->name()));
  GE_RETURN_IF_ERROR(CheckStrictMode(report));
  return report;
}

}  // namespace ge::compiler
