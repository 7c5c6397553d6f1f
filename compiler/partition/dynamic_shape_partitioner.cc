// DynamicShapePartitioner: the six classification rules, the merge order,
// the whole-graph decisions and the data-flow re-split.
#include "compiler/partition/dynamic_shape_partitioner.h"

#include <algorithm>
#include <map>

#include "base/ir/op_types.h"
#include "base/ops/op_registry.h"
#include "base/status.h"

namespace ge::partition {
namespace {

constexpr int kMaxSubgraphDepth = 64;

bool IsUnknownType(const ir::ValueType& t) {
  if (!t.is_tensor()) return true;  // sequence or optional: length known at run time only
  if (t.dtype() == DataType::kUndefined) return false;  // not inferred: says nothing
  return !t.shape().IsFullyKnown();
}

bool IsConstLike(const ir::Node& n) {
  const std::string& t = n.type();
  return t == ir::kConst || t == ir::kFileConstant;
}

bool IsKnown(const BaseCluster& c) { return c.type_index() == kClusterKnownShape; }
bool IsUnknown(const BaseCluster& c) { return c.type_index() == kClusterUnknownShape; }
bool IsComputeCluster(const BaseCluster& c) { return IsKnown(c) || IsUnknown(c); }

void MarkUnknownIfEither(BaseCluster& into, bool other_unknown) {
  if (other_unknown) into.set_type_index(kClusterUnknownShape);
}

}  // namespace

std::string_view UnknownRuleName(UnknownRule rule) {
  switch (rule) {
    case UnknownRule::kNone: return "static";
    case UnknownRule::kUnknownShape: return "unknown shape";
    case UnknownRule::kForceUnknown: return "_force_unknown_shape";
    case UnknownRule::kTilingDepend: return "tiling dependency without offload";
    case UnknownRule::kNoAddrRefresh: return "_is_support_addr_refresh=false";
    case UnknownRule::kHostCpuEngine: return "host CPU engine";
    case UnknownRule::kDynamicSubgraph: return "dynamic node in a subgraph";
    case UnknownRule::kHostScheduling: return "graph below ge.host_scheduling_max_threshold";
  }
  return "?";
}

bool CountsAsOp(const ir::Node& node) {
  const std::string& t = node.type();
  return !IsGraphInput(node) && !IsGraphOutput(node) && t != ir::kConst && t != ir::kFileConstant &&
         t != ir::kVariable;
}

bool IsDataFlowOp(const ir::Node& node) {
  const std::string& t = node.type();
  return t == "Stack" || t == "StackPush" || t == "StackPop" || t == "StackClose";
}

// ---- Classification ----

bool DynamicShapePartitioner::HasTilingDependency(const ir::Node& node) {
  if (node.op_desc().GetAttrOr<bool>(kAttrTilingDepend, false)) return true;
  // The registry builds a key string per lookup; a graph has few op types.
  auto [it, fresh] = schemas_.try_emplace(node.type(), nullptr);
  if (fresh) it->second = ops::OpRegistry::Global().Find(node.type());
  const ops::OpSchema* schema = it->second;
  if (schema == nullptr) return false;
  for (int i : schema->value_inputs) {
    if (i >= node.num_inputs()) continue;
    const ir::OutPort p = node.input(i);
    if (p.node != nullptr && !IsConstLike(*p.node)) return true;
  }
  return false;
}

bool DynamicShapePartitioner::SubgraphIsDynamic(const ir::Graph& graph, int depth) {
  auto it = dynamic_subgraphs_.find(&graph);
  if (it != dynamic_subgraphs_.end()) return it->second;
  bool dynamic = false;
  if (depth < kMaxSubgraphDepth) {
    graph.ForEachNode([&](ir::Node* n) {
      if (dynamic || IsGraphInput(*n) || IsGraphOutput(*n)) return;
      dynamic = Classify(*n, depth) != UnknownRule::kNone;
    });
  }
  dynamic_subgraphs_[&graph] = dynamic;
  return dynamic;
}

UnknownRule DynamicShapePartitioner::Classify(const ir::Node& node, int depth) {
  const ir::OpDesc& op = node.op_desc();
  for (const ir::IoDesc& io : op.inputs()) {
    if (IsUnknownType(io.type)) return UnknownRule::kUnknownShape;
  }
  for (const ir::IoDesc& io : op.outputs()) {
    if (IsUnknownType(io.type)) return UnknownRule::kUnknownShape;
  }
  if (op.GetAttrOr<bool>(ir::kAttrForceUnknownShape, false)) return UnknownRule::kForceUnknown;
  if (HasTilingDependency(node) &&
      !(options_.tiling_offload && op.GetAttrOr<bool>(kAttrSupportTilingOffload, true))) {
    return UnknownRule::kTilingDepend;
  }
  if (!op.GetAttrOr<bool>(kAttrSupportAddrRefresh, true)) return UnknownRule::kNoAddrRefresh;
  if (const ir::AttrValue* engine = op.FindAttr(ir::kAttrEngineName)) {
    const std::string* name = engine->get<std::string>();
    if (name != nullptr && !options_.reference_engine.empty() && *name == options_.reference_engine) {
      return UnknownRule::kHostCpuEngine;
    }
  }
  for (const std::string& name : op.subgraph_names()) {
    const ir::Graph* sub = node.owner_graph()->FindSubgraph(name);
    if (sub != nullptr && SubgraphIsDynamic(*sub, depth + 1)) return UnknownRule::kDynamicSubgraph;
  }
  return UnknownRule::kNone;
}

absl::Status DynamicShapePartitioner::InitClusters() {
  rules_.clear();
  dynamic_subgraphs_.clear();
  return BasePartitioner::InitClusters();
}

int DynamicShapePartitioner::ClassifyNode(const ir::Node& node) {
  // ClusterSet::Init calls this once per node in position order, so the
  // rule's index is the node's position.
  if (IsGraphInput(node) || IsGraphOutput(node)) {
    rules_.push_back(UnknownRule::kNone);
    return IsGraphInput(node) ? kClusterData : kClusterNetOutput;
  }
  const UnknownRule rule = Classify(node, /*depth=*/0);
  rules_.push_back(rule);
  return rule == UnknownRule::kNone ? kClusterKnownShape : kClusterUnknownShape;
}

bool DynamicShapePartitioner::CopiesConstInto(const ir::Node& konst, const BaseCluster& reader) {
  return reader.type_index() == kClusterUnknownShape || RuleOf(&konst) == UnknownRule::kNone;
}

UnknownRule DynamicShapePartitioner::RuleOf(const ir::Node* node) {
  const int32_t p = clusters().PositionOf(node);
  return p < 0 || p >= static_cast<int32_t>(rules_.size()) ? UnknownRule::kNone : rules_[p];
}

absl::StatusOr<bool> DynamicShapePartitioner::ShouldSplit() {
  merge_all_ = options_.static_model_ops_lower_limit == -1;
  int64_t unknown = 0;
  int64_t ops = 0;
  for (int32_t p = 0; p < static_cast<int32_t>(clusters().num_nodes()); ++p) {
    const ir::Node& n = *clusters().node(p);
    unknown += rules_[p] != UnknownRule::kNone;
    ops += CountsAsOp(n);
  }
  ir::AttrMap& attrs = graph().mutable_attrs();
  whole_static_ = false;
  if (unknown == 0 && ops > 0 && options_.wrap_static_graph) {
    merge_all_ = true;
    whole_static_ = true;
    attrs[std::string(kAttrDynamicShapePartitioned)] = true;
    return true;
  }
  if (unknown == 0) {
    if (ops == 0 || ops >= options_.host_scheduling_max_threshold) {
      attrs[std::string(kAttrDynamicShapePartitioned)] = false;
      attrs[std::string(ir::kAttrIsUnknownShape)] = false;
      return false;
    }
    // Too small to be worth static scheduling: one dynamic subgraph.
    for (int32_t p = 0; p < static_cast<int32_t>(clusters().num_nodes()); ++p) {
      BaseCluster& c = clusters().ClusterOf(p);
      if (!IsKnown(c)) continue;
      c.set_type_index(kClusterUnknownShape);
      rules_[p] = UnknownRule::kHostScheduling;
    }
    merge_all_ = true;
  }
  attrs[std::string(kAttrDynamicShapePartitioned)] = true;
  return true;
}

// ---- Merging ----

absl::Status DynamicShapePartitioner::MergeClusters() {
  resplits_ = 0;
  for (;;) {
    if (merge_all_) {
      MergeEverything();
    } else {
      MergeClustersNormal();
    }
    if (!MarkStraddlingDataFlow()) return absl::OkStatus();
    ++resplits_;
    GE_RETURN_IF_ERROR(InitClusters());
  }
}

void DynamicShapePartitioner::MergeClustersNormal() {
  MergeUnknownPaths();
  MergeKnownSinglePaths();
  DowngradeSmallClusters();
  MergeUnknownPaths();
  MergeControlFlowGroups();
  MergeRefVariables();
}

void DynamicShapePartitioner::MergeUnknownPaths() {
  for (BaseCluster* c : clusters().OrderedClusters()) {
    if (!c->alive() || !IsUnknown(*c)) continue;
    // Absorbing a path brings the inputs of the clusters on it along; repeat
    // until no dynamic cluster feeds `c` directly.
    for (bool merged = true; merged;) {
      merged = false;
      for (BaseCluster* in : c->Inputs()) {
        if (!in->alive() || !IsUnknown(*in)) continue;
        merged = !c->MergeAllPathFrom(*in).empty() || merged;
      }
    }
  }
}

void DynamicShapePartitioner::MergeKnownSinglePaths() {
  for (BaseCluster* c : clusters().OrderedClusters()) {
    if (!c->alive() || !IsKnown(*c)) continue;
    for (BaseCluster* in : c->Inputs()) {
      if (in->alive() && IsKnown(*in)) c->TryMerge(*in);
    }
  }
}

void DynamicShapePartitioner::DowngradeSmallClusters() {
  const int64_t limit = options_.static_model_ops_lower_limit;
  for (BaseCluster* c : clusters().OrderedClusters()) {
    if (!IsKnown(*c)) continue;
    int64_t ops = 0;
    for (int32_t p : c->members()) ops += CountsAsOp(*clusters().node(p));
    if (ops < limit) c->set_type_index(kClusterUnknownShape);
  }
}

void DynamicShapePartitioner::MergeControlFlowGroups() {
  std::map<int64_t, std::vector<int32_t>> groups;  // ordered: deterministic
  for (int32_t p = 0; p < static_cast<int32_t>(clusters().num_nodes()); ++p) {
    if (auto g = clusters().node(p)->op_desc().GetAttr<int64_t>(kAttrControlFlowGroup)) groups[*g].push_back(p);
  }
  for (auto& [group, positions] : groups) {
    // One representative node per distinct cluster: clusters die as they
    // merge, nodes do not.
    std::vector<int32_t> reps;
    std::vector<BaseCluster*> seen;
    for (int32_t p : positions) {
      BaseCluster* c = &clusters().ClusterOf(p);
      if (!IsComputeCluster(*c) || std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
      seen.push_back(c);
      reps.push_back(p);
    }
    if (reps.size() < 2) continue;
    std::sort(reps.begin(), reps.end(), [this](int32_t a, int32_t b) {
      return clusters().ClusterOf(a).rank() < clusters().ClusterOf(b).rank();
    });
    BaseCluster* last = &clusters().ClusterOf(reps.back());
    for (auto it = reps.rbegin() + 1; it != reps.rend(); ++it) {
      BaseCluster* from = &clusters().ClusterOf(*it);
      if (from == last) continue;
      bool unknown = IsUnknown(*from) || IsUnknown(*last);
      if (clusters().IsReachable(*from, *last)) {
        for (BaseCluster* dead : last->MergeAllPathFrom(*from)) unknown = unknown || IsUnknown(*dead);
      } else {
        last->Merge(*from);  // no path either way: always legal
      }
      MarkUnknownIfEither(*last, unknown);
    }
  }
}

void DynamicShapePartitioner::MergeRefVariables() {
  for (int32_t p = 0; p < static_cast<int32_t>(clusters().num_nodes()); ++p) {
    const ir::Node& n = *clusters().node(p);
    if (!n.op_desc().GetAttrOr<bool>(kAttrRefVariable, false)) continue;
    BaseCluster& var = clusters().ClusterOf(p);
    if (!IsComputeCluster(var)) continue;
    for (BaseCluster* consumer : var.Outputs()) {
      if (!IsComputeCluster(*consumer)) continue;
      const bool unknown = IsUnknown(var) || IsUnknown(*consumer);
      if (consumer->TryMerge(var)) {
        MarkUnknownIfEither(*consumer, unknown);
        break;
      }
    }
  }
}

void DynamicShapePartitioner::MergeEverything() {
  BaseCluster* target = nullptr;
  for (BaseCluster* c : clusters().OrderedClusters()) {
    if (!IsComputeCluster(*c)) continue;
    if (target == nullptr) {
      target = c;
    } else {
      // Clusters taken in topological order: each prefix of the compute
      // clusters is convex, so every step is legal.
      target->Merge(*c);
    }
  }
  if (target != nullptr) target->set_type_index(whole_static_ ? kClusterKnownShape : kClusterUnknownShape);
}

bool DynamicShapePartitioner::MarkStraddlingDataFlow() {
  // Group data-flow ops by the Stack whose handle they read (through
  // Identity), in position order.
  std::map<int32_t, std::vector<int32_t>> stacks;
  for (int32_t p = 0; p < static_cast<int32_t>(clusters().num_nodes()); ++p) {
    const ir::Node* n = clusters().node(p);
    if (!IsDataFlowOp(*n)) continue;
    const ir::Node* root = n;
    for (int hops = 0; root->type() != "Stack" && root->num_inputs() > 0 && hops < 64; ++hops) {
      const ir::OutPort handle = root->input(0);
      if (handle.node == nullptr) break;
      root = handle.node;
      if (root->type() != ir::kIdentity && !IsDataFlowOp(*root)) break;
    }
    const int32_t root_position = root->type() == "Stack" ? clusters().PositionOf(root) : -1;
    stacks[root_position >= 0 ? root_position : p].push_back(p);
  }
  bool marked = false;
  for (auto& [stack, members] : stacks) {
    bool known = false;
    bool unknown = false;
    for (int32_t p : members) {
      const BaseCluster& c = clusters().ClusterOf(p);
      known = known || IsKnown(c);
      unknown = unknown || IsUnknown(c);
    }
    if (!known || !unknown) continue;
    for (int32_t p : members) {
      ir::OpDesc& op = clusters().node(p)->mutable_op_desc();
      if (op.GetAttrOr<bool>(ir::kAttrForceUnknownShape, false)) continue;
      op.SetAttr(ir::kAttrForceUnknownShape, true);
      marked = true;
    }
  }
  return marked;
}

// ---- Building ----

std::string DynamicShapePartitioner::CallName(const BaseCluster& cluster) const {
  return StrCat(IsUnknown(cluster) ? "dynamic_" : "static_", cluster.index);
}

absl::Status DynamicShapePartitioner::DecorateCall(const BaseCluster& cluster, ir::Node& call, ir::Graph& subgraph) {
  const bool unknown = IsUnknown(cluster);
  call.mutable_op_desc().SetAttr(ir::kAttrIsUnknownShape, unknown);
  subgraph.mutable_attrs()[std::string(ir::kAttrIsUnknownShape)] = unknown;
  return absl::OkStatus();
}

}  // namespace ge::partition
