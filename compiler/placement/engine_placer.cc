// EnginePlacer: priority and estimated-cost engine selection, reassignment
// and strict mode.
#include "compiler/placement/engine_placer.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/status.h"
#include "compiler/placement/cost_model.h"

namespace ge::compiler {
namespace {

// Sweeps of the neighbour-aware refinement: the first settles each node
// given its neighbours' own-cost choices, the second answers the changes.
constexpr int kCostSweeps = 2;

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

std::string_view PlacementReasonName(PlacementReason reason) {
  switch (reason) {
    case PlacementReason::kPriority: return "priority";
    case PlacementReason::kForced: return "forced";
    case PlacementReason::kEngineType: return "engine_type";
    case PlacementReason::kCost: return "cost";
    case PlacementReason::kHostExec: return "host_exec";
  }
  return "priority";
}

const NodePlacement* PlacementReport::Find(std::string_view node_name) const {
  for (const NodePlacement& p : nodes) {
    if (p.node->name() == node_name) return &p;
  }
  return nullptr;
}

absl::Status HostcpuEngineUpdatePass::Run(PlacementReport& report) {
  // The target of host-execution requests: the reference engine.
  const engine::Engine* reference = engines_.Reference();
  const std::string target = reference == nullptr ? std::string() : reference->attributes().name;
  const bool target_present = reference != nullptr && !Contains(options_.exclude_engines, target);
  for (NodePlacement& p : report.nodes) {
    const ir::OpDesc& op = p.node->op_desc();
    const bool flagged = op.GetAttrOr<bool>(ir::kAttrHostExec, false) || Contains(options_.host_exec_ops, op.type());
    if (!flagged || (reference != nullptr && p.engine == target)) {
      p.host_exec = p.host_exec || flagged;
      continue;
    }
    if (!target_present) {
      return FailedPrecondition("node '", p.node->name(), "' (", op.type(),
                                ") is flagged for host execution but the reference engine",
                                reference == nullptr ? " is not loaded" : StrCat(" (", target, ") is excluded"));
    }
    absl::Status supported = reference->info_store().CheckSupported(*p.node);
    if (!supported.ok()) {
      return FailedPrecondition("node '", p.node->name(), "' (", op.type(), ") is flagged for host execution but ",
                                target, " rejects it: ", StdView(supported.message()));
    }
    p.rejected.push_back({p.engine, StrCat("moved to ", target, " by host execution request")});
    p.engine = target;
    p.host_exec = true;
    p.reason = PlacementReason::kHostExec;
    p.node->mutable_op_desc().SetAttr(ir::kAttrEngineName, target);
  }
  return absl::OkStatus();
}

EnginePlacer::EnginePlacer(const engine::EngineRegistry& engines, const CompileOptions& options,
                           ThreadPool* pool)
    : engines_(engines), options_(options), pool_(pool) {}

NodePlacement EnginePlacer::Select(ir::Node& node, const std::vector<engine::Engine*>& candidates,
                                   std::vector<const engine::Engine*>& costed) const {
  NodePlacement placement;
  placement.node = &node;
  if (auto forced = node.op_desc().GetAttr<std::string>(ir::kAttrEngine)) {
    placement.reason = PlacementReason::kForced;
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
  // A node a composite engine made in an earlier compile (its own fused op,
  // placed on it by its optimizer; a compiled model planned again for known
  // shapes, docs/design/jit.md) stays on that engine while it runs the node:
  // no atomic engine does, and placement takes atomic engines only.
  if (auto placed = node.op_desc().GetAttr<std::string>(ir::kAttrEngineName)) {
    const engine::EngineAttributes* attrs = engines_.FindAttributes(*placed);
    engine::Engine* e = engines_.Find(*placed);
    if (attrs != nullptr && !attrs->atomic && e != nullptr && !Contains(options_.exclude_engines, *placed) &&
        e->info_store().CheckSupported(node).ok()) {
      placement.engine = *placed;
      return placement;
    }
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& name = candidates[i]->attributes().name;
    absl::Status s = candidates[i]->info_store().CheckSupported(node);
    if (!s.ok()) {
      placement.rejected.push_back({name, std::string(s.message())});
      continue;
    }
    placement.engine = name;
    // An engine without a cost table keeps what the priority order gives it.
    if (engines_.FindAttributes(name)->cost.empty()) break;
    if (!options_.preferred_engine.empty()) {
      // ge.engineType: the named engine wins wherever it runs the node.
      if (name == options_.preferred_engine) break;
      for (size_t j = i + 1; j < candidates.size(); ++j) {
        if (candidates[j]->attributes().name == options_.preferred_engine &&
            candidates[j]->info_store().CheckSupported(node).ok()) {
          placement.rejected.push_back({name, "ge.engineType prefers " + options_.preferred_engine});
          placement.engine = options_.preferred_engine;
          placement.reason = PlacementReason::kEngineType;
        }
      }
      break;
    }
    // ge.engineType=auto: every engine with a table that runs the node competes.
    costed.push_back(candidates[i]);
    for (size_t j = i + 1; j < candidates.size(); ++j) {
      if (!engines_.FindAttributes(candidates[j]->attributes().name)->cost.empty() &&
          candidates[j]->info_store().CheckSupported(node).ok()) {
        costed.push_back(candidates[j]);
      }
    }
    break;
  }
  return placement;
}

namespace {

// One node whose engine is chosen by estimated cost.
struct CostChoice {
  NodePlacement* placement = nullptr;
  std::vector<const engine::CostTable*> tables;  // per competing engine, priority order
  std::vector<std::string> engines;
  std::vector<double> own;    // own estimate per engine
  std::vector<double> total;  // own + boundaries, last sweep
  size_t chosen = 0;
};

std::string FormatNs(double ns) { return StrCat(static_cast<int64_t>(ns + 0.5), " ns"); }

size_t Cheapest(const std::vector<double>& costs) {
  size_t best = 0;  // ties go to the earlier engine in priority order
  for (size_t k = 1; k < costs.size(); ++k) {
    if (costs[k] < costs[best]) best = k;
  }
  return best;
}

// Places the nodes of `choices` by estimated cost. A neighbour's engine is
// its current choice when it is itself chosen by cost, else its priority
// placement; edges to neighbours on engines without a table cost nothing.
void ChooseByCost(std::vector<CostChoice>& choices, const PlacementReport& report,
                  const engine::EngineRegistry& engines) {
  if (choices.empty()) return;
  absl::flat_hash_map<const ir::Node*, size_t> placed;
  placed.reserve(report.nodes.size());
  for (size_t i = 0; i < report.nodes.size(); ++i) placed.emplace(report.nodes[i].node, i);
  absl::flat_hash_map<const ir::Node*, CostChoice*> by_node;
  for (CostChoice& c : choices) {
    c.chosen = Cheapest(c.own);
    c.total = c.own;
    by_node.emplace(c.placement->node, &c);
  }
  // The engine `n` is on now and its table (null when it has none).
  auto current = [&](const ir::Node* n, std::string_view& name) -> const engine::CostTable* {
    if (auto it = by_node.find(n); it != by_node.end()) {
      name = it->second->engines[it->second->chosen];
      return it->second->tables[it->second->chosen];
    }
    auto it = placed.find(n);
    if (it == placed.end() || report.nodes[it->second].engine.empty()) return nullptr;
    name = report.nodes[it->second].engine;
    const engine::EngineAttributes* attrs = engines.FindAttributes(name);
    return attrs == nullptr || attrs->cost.empty() ? nullptr : &attrs->cost;
  };
  for (int sweep = 0; sweep < kCostSweeps; ++sweep) {
    for (CostChoice& c : choices) {
      const ir::Node& node = *c.placement->node;
      std::vector<double> total = c.own;
      auto add_edge = [&](const ir::Node* other, double elements) {
        std::string_view other_name;
        const engine::CostTable* other_table = current(other, other_name);
        if (other_table == nullptr) return;
        for (size_t k = 0; k < total.size(); ++k) {
          if (c.engines[k] != other_name) total[k] += EstimateBoundary(*c.tables[k], *other_table, elements);
        }
      };
      for (int i = 0; i < node.num_inputs(); ++i) {
        ir::OutPort in = node.input(i);
        if (in) add_edge(in.node, OutputElements(*in.node, in.index));
      }
      for (int o = 0; o < node.num_outputs(); ++o) {
        const double elements = OutputElements(node, o);
        for (const ir::InPort& consumer : node.consumers(o)) add_edge(consumer.node, elements);
      }
      c.total = std::move(total);
      c.chosen = Cheapest(c.total);
    }
  }
}

}  // namespace

absl::Status EnginePlacer::CheckStrictMode(const PlacementReport& report) const {
  if (!options_.disable_host_cpu_fallback) return absl::OkStatus();
  // A compute node on the reference engine is a fallback.
  const engine::Engine* reference = engines_.Reference();
  if (reference == nullptr) return absl::OkStatus();
  const std::string& fallback = reference->attributes().name;
  std::vector<std::string> offenders;
  for (const NodePlacement& p : report.nodes) {
    if (p.engine != fallback || p.host_exec || IsStructural(*p.node)) continue;
    std::vector<std::string> reasons;
    for (const EngineRejection& r : p.rejected) reasons.push_back(r.engine + ": " + r.reason);
    offenders.push_back(StrCat("'", p.node->name(), "' (", p.node->type(), ")",
                               reasons.empty() ? std::string(" no other engine is loaded")
                                               : " [" + absl::StrJoin(reasons, "; ") + "]"));
  }
  if (offenders.empty()) return absl::OkStatus();
  return FailedPrecondition("ge.exec.disable_host_cpu_fallback=1 and ", offenders.size(),
                            " node(s) would fall back to ", fallback, ": ", absl::StrJoin(offenders, ", "));
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
  std::vector<std::vector<const engine::Engine*>> costed(nodes.size());
  auto select_range = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) report.nodes[i] = Select(*nodes[i], candidates, costed[i]);
  };
  if (pool_ != nullptr) {
    pool_->ParallelFor(static_cast<int64_t>(nodes.size()), 256, select_range);
  } else {
    select_range(0, static_cast<int64_t>(nodes.size()));
  }
  // Nodes two or more engines with cost tables run: the cheapest estimate.
  std::vector<CostChoice> choices;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (costed[i].size() < 2) continue;
    CostChoice c;
    c.placement = &report.nodes[i];
    for (const engine::Engine* e : costed[i]) {
      const engine::CostTable& table = engines_.FindAttributes(e->attributes().name)->cost;
      double ns = 0;
      if (!EstimateNode(*nodes[i], table, ns)) continue;  // no entry for the op: not a competitor
      c.tables.push_back(&table);
      c.engines.push_back(e->attributes().name);
      c.own.push_back(ns);
    }
    if (c.engines.size() >= 2) choices.push_back(std::move(c));
  }
  ChooseByCost(choices, report, engines_);
  for (CostChoice& c : choices) {
    NodePlacement& p = *c.placement;
    p.reason = PlacementReason::kCost;
    for (size_t k = 0; k < c.engines.size(); ++k) p.estimates.push_back({c.engines[k], c.total[k]});
    std::stable_sort(p.estimates.begin(), p.estimates.end(),
                     [](const EngineEstimate& a, const EngineEstimate& b) { return a.ns < b.ns; });
    const std::string& winner = c.engines[c.chosen];
    if (winner != p.engine) {
      const auto mine = std::find(c.engines.begin(), c.engines.end(), p.engine);
      p.rejected.push_back({p.engine, mine == c.engines.end()
                                          ? StrCat("no cost estimate; ", winner, " has one")
                                          : StrCat("estimated ", FormatNs(c.total[mine - c.engines.begin()]), ", ",
                                                   winner, " ", FormatNs(c.total[c.chosen]))});
      p.engine = winner;
    }
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
