// ClusterSet: clusters over one graph, their DAG, and the merge operations.
#include "compiler/partition/base_cluster.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_join.h"
#include "base/status.h"

namespace ge::partition {

std::string_view ClusterTypeName(int type_index) {
  switch (type_index) {
    case kClusterData: return "data";
    case kClusterNetOutput: return "netoutput";
    case kClusterInputNode: return "input";
    case kClusterStage: return "stage";
    case kClusterKnownShape: return "static";
    case kClusterUnknownShape: return "dynamic";
    default: return "other";
  }
}

// ---- BaseCluster ----

int32_t BaseCluster::rank() const { return set_->RankOf(*this); }
const std::string& BaseCluster::label() const { return set_->labels_[label_id_]; }
void BaseCluster::set_label(std::string_view label) { label_id_ = set_->InternLabel(label); }

std::vector<ir::Node*> BaseCluster::Nodes() const {
  std::vector<ir::Node*> out;
  out.reserve(members_.size());
  for (int32_t p : members_) out.push_back(set_->node(p));
  return out;
}

std::vector<BaseCluster*> BaseCluster::Inputs() const { return set_->Inputs(*this); }
std::vector<BaseCluster*> BaseCluster::Outputs() const { return set_->Outputs(*this); }
void BaseCluster::Merge(BaseCluster& other) { set_->Merge(*this, other); }
bool BaseCluster::TryMerge(BaseCluster& other) { return set_->TryMerge(*this, other); }
std::vector<BaseCluster*> BaseCluster::MergeAllPathFrom(BaseCluster& other) {
  return set_->MergeAllPathFrom(*this, other);
}

// ---- ClusterSet ----

namespace {

// Whether the graph's insertion order is topological; `id_to_index` maps
// node ids to insertion indexes.
bool InsertionOrderIsTopological(const std::vector<ir::Node*>& nodes, const std::vector<int32_t>& id_to_index,
                                 const ir::Graph& graph) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node* n = nodes[i];
    auto before = [&](const ir::Node* p) {
      return p->owner_graph() != &graph || id_to_index[p->id()] < static_cast<int32_t>(i);
    };
    for (const ir::OutPort& in : n->inputs()) {
      if (in.node != nullptr && !before(in.node)) return false;
    }
    for (const ir::Node* c : n->control_inputs()) {
      if (!before(c)) return false;
    }
  }
  return true;
}

}  // namespace

absl::Status ClusterSet::Init(const ir::Graph& graph, const std::function<int(const ir::Node&)>& type_of) {
  graph_ = &graph;
  moved_.clear();
  nodes_.clear();
  nodes_.reserve(graph.num_nodes());
  graph.ForEachNode([&](ir::Node* n) { nodes_.push_back(n); });
  // Node ids grow along the node list (AddNode and MoveNodeTo append), so
  // the last id bounds them all and a vector indexes them.
  const int64_t max_id = nodes_.empty() ? -1 : nodes_.back()->id();
  position_by_id_.assign(static_cast<size_t>(max_id + 1), -1);
  for (size_t i = 0; i < nodes_.size(); ++i) position_by_id_[nodes_[i]->id()] = static_cast<int32_t>(i);
  if (!InsertionOrderIsTopological(nodes_, position_by_id_, graph)) {
    GE_ASSIGN_OR_RETURN(nodes_, graph.TopologicalOrder());
    for (size_t i = 0; i < nodes_.size(); ++i) position_by_id_[nodes_[i]->id()] = static_cast<int32_t>(i);
  }
  const size_t n = nodes_.size();
  input_offsets_.assign(1, 0);
  control_offsets_.assign(1, 0);
  input_positions_.clear();
  control_positions_.clear();
  for (const ir::Node* node : nodes_) {
    for (const ir::OutPort& in : node->inputs()) input_positions_.push_back(in.node ? Locate(in.node) : -1);
    for (const ir::Node* c : node->control_inputs()) control_positions_.push_back(Locate(c));
    input_offsets_.push_back(static_cast<int32_t>(input_positions_.size()));
    control_offsets_.push_back(static_cast<int32_t>(control_positions_.size()));
  }
  clusters_.clear();
  clusters_.resize(n);
  cluster_of_dag_.resize(n);
  uf_parent_.resize(n);
  uf_size_.assign(n, 1);
  cluster_of_root_.resize(n);
  dag_ = ClusterDag();
  dag_.Reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto p = static_cast<int32_t>(i);
    BaseCluster& c = clusters_[i];
    c.set_ = this;
    c.id_ = p;
    c.dag_id_ = dag_.AddNode();
    c.uf_root_ = p;
    c.members_.push_back(p);
    c.type_index_ = type_of(*nodes_[i]);
    cluster_of_dag_[i] = p;
    uf_parent_[i] = p;
    cluster_of_root_[i] = p;
  }
  // Nodes were added in topological order, so every edge agrees with the
  // initial ranks and costs O(1).
  for (size_t i = 0; i < n; ++i) {
    const auto to = static_cast<int32_t>(i);
    for (int32_t q : InputPositions(to)) {
      if (q >= 0) GE_CHECK(dag_.InsertEdge(q, to));
    }
    for (int32_t q : ControlInputPositions(to)) {
      if (q >= 0) GE_CHECK(dag_.InsertEdge(q, to));
    }
  }
  return absl::OkStatus();
}

int32_t ClusterSet::InternLabel(std::string_view label) {
  if (label.empty()) return 0;
  auto [it, fresh] = label_ids_.try_emplace(label, static_cast<int32_t>(labels_.size()));
  if (fresh) labels_.emplace_back(label);
  return it->second;
}

int32_t ClusterSet::Locate(const ir::Node* node) const {
  if (node->owner_graph() != graph_) return -1;
  const int64_t id = node->id();
  return id >= 0 && id < static_cast<int64_t>(position_by_id_.size()) ? position_by_id_[id] : -1;
}

int32_t ClusterSet::PositionOf(const ir::Node* node) const {
  const int32_t p = Locate(node);
  if (p >= 0 && nodes_[p] == node) return p;
  if (moved_.empty() && !nodes_.empty()) {
    moved_.reserve(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) moved_.emplace(nodes_[i], static_cast<int32_t>(i));
  }
  auto it = moved_.find(node);
  return it == moved_.end() ? -1 : it->second;
}

int32_t ClusterSet::Find(int32_t position) {
  int32_t root = position;
  while (uf_parent_[root] != root) root = uf_parent_[root];
  while (uf_parent_[position] != root) {  // path compression
    const int32_t next = uf_parent_[position];
    uf_parent_[position] = root;
    position = next;
  }
  return root;
}

BaseCluster& ClusterSet::ClusterOf(int32_t position) { return clusters_[cluster_of_root_[Find(position)]]; }

BaseCluster* ClusterSet::ClusterOf(const ir::Node* node) {
  const int32_t p = PositionOf(node);
  return p < 0 ? nullptr : &ClusterOf(p);
}

std::vector<BaseCluster*> ClusterSet::OrderedClusters() {
  // Ranks are a permutation of the DAG's ids: bucket instead of sorting.
  std::vector<BaseCluster*> by_rank(dag_.num_nodes(), nullptr);
  size_t alive = 0;
  for (BaseCluster& c : clusters_) {
    if (!c.alive_) continue;
    by_rank[RankOf(c)] = &c;
    ++alive;
  }
  std::vector<BaseCluster*> out;
  out.reserve(alive);
  for (BaseCluster* c : by_rank) {
    if (c != nullptr) out.push_back(c);
  }
  return out;
}

void ClusterSet::Absorb(BaseCluster& into, BaseCluster& from, int32_t surviving_dag_id) {
  // Union by size; the root maps to `into` whichever side it came from.
  int32_t ra = Find(into.uf_root_);
  int32_t rb = Find(from.uf_root_);
  if (uf_size_[ra] < uf_size_[rb]) std::swap(ra, rb);
  uf_parent_[rb] = ra;
  uf_size_[ra] += uf_size_[rb];
  cluster_of_root_[ra] = into.id_;
  into.uf_root_ = ra;
  // Smaller member list appended to the larger one.
  if (into.members_.size() < from.members_.size()) std::swap(into.members_, from.members_);
  into.members_.insert(into.members_.end(), from.members_.begin(), from.members_.end());
  from.members_.clear();
  from.alive_ = false;
  into.dag_id_ = surviving_dag_id;
  cluster_of_dag_[surviving_dag_id] = into.id_;
}

void ClusterSet::Merge(BaseCluster& into, BaseCluster& from) {
  if (&into == &from) return;
  GE_CHECK(into.alive_ && from.alive_);
  Absorb(into, from, dag_.Merge(into.dag_id_, from.dag_id_));
}

bool ClusterSet::TryMerge(BaseCluster& into, BaseCluster& from) {
  if (&into == &from) return true;
  GE_CHECK(into.alive_ && from.alive_);
  std::optional<int32_t> merged = dag_.TryMerge(into.dag_id_, from.dag_id_);
  if (!merged) return false;
  Absorb(into, from, *merged);
  return true;
}

std::vector<BaseCluster*> ClusterSet::MergeAllPathFrom(BaseCluster& into, BaseCluster& from) {
  if (&into == &from) return {};
  std::vector<int32_t> on_paths = dag_.NodesOnPaths(from.dag_id_, into.dag_id_);
  if (on_paths.empty()) return {};
  std::vector<BaseCluster*> merged;
  for (int32_t d : on_paths) {
    BaseCluster* c = &clusters_[cluster_of_dag_[d]];
    if (c != &into) merged.push_back(c);
  }
  // Contract in rank order: every prefix of a convex set in topological
  // order is itself convex, so each step is a legal merge.
  int32_t current = on_paths[0];
  for (size_t i = 1; i < on_paths.size(); ++i) current = dag_.Merge(current, on_paths[i]);
  for (BaseCluster* c : merged) Absorb(into, *c, current);
  if (merged.empty()) cluster_of_dag_[current] = into.id_;
  return merged;
}

bool ClusterSet::IsReachable(const BaseCluster& from, const BaseCluster& to) {
  return dag_.IsReachable(from.dag_id_, to.dag_id_);
}

std::vector<std::vector<BaseCluster*>> ClusterSet::ConvexPieces(const std::vector<BaseCluster*>& set) {
  if (set.size() <= 1) {
    std::vector<std::vector<BaseCluster*>> whole;
    if (!set.empty()) whole.push_back(set);
    return whole;
  }
  absl::flat_hash_map<int32_t, int32_t> index_in_set;  // dag id -> index in `set`
  int32_t hi = -1;
  for (size_t i = 0; i < set.size(); ++i) {
    index_in_set.emplace(set[i]->dag_id_, static_cast<int32_t>(i));
    hi = std::max(hi, dag_.rank(set[i]->dag_id_));
  }
  // The region the set reaches below its highest rank, in rank order.
  absl::flat_hash_map<int32_t, int32_t> level;  // dag id -> layer, for region nodes
  std::vector<int32_t> region;
  std::vector<int32_t> stack;
  for (BaseCluster* c : set) {
    if (level.emplace(c->dag_id_, 0).second) {
      region.push_back(c->dag_id_);
      stack.push_back(c->dag_id_);
    }
  }
  while (!stack.empty()) {
    const int32_t u = stack.back();
    stack.pop_back();
    dag_.successors(u).ForEach([&](int32_t s) {
      if (dag_.rank(s) <= hi && level.emplace(s, 0).second) {
        region.push_back(s);
        stack.push_back(s);
      }
    });
  }
  std::sort(region.begin(), region.end(), [this](int32_t a, int32_t b) { return dag_.rank(a) < dag_.rank(b); });
  for (int32_t v : region) {
    const bool v_in = index_in_set.contains(v);
    int32_t k = 0;
    dag_.predecessors(v).ForEach([&](int32_t u) {
      auto it = level.find(u);
      if (it == level.end()) return;
      k = std::max(k, it->second + (v_in && !index_in_set.contains(u) ? 1 : 0));
    });
    level[v] = k;
  }
  // Weakly connected parts of each layer.
  std::vector<int32_t> parent(set.size());
  for (size_t i = 0; i < set.size(); ++i) parent[i] = static_cast<int32_t>(i);
  auto find = [&](int32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t i = 0; i < set.size(); ++i) {
    const int32_t v = set[i]->dag_id_;
    dag_.predecessors(v).ForEach([&](int32_t u) {
      auto it = index_in_set.find(u);
      if (it != index_in_set.end() && level[u] == level[v]) parent[find(it->second)] = find(static_cast<int32_t>(i));
    });
  }
  std::map<std::pair<int32_t, int32_t>, std::vector<BaseCluster*>> pieces;  // (layer, root's min rank)
  absl::flat_hash_map<int32_t, int32_t> min_rank;  // root -> min member rank
  for (size_t i = 0; i < set.size(); ++i) {
    const int32_t r = find(static_cast<int32_t>(i));
    const int32_t rank = dag_.rank(set[i]->dag_id_);
    auto [it, fresh] = min_rank.emplace(r, rank);
    if (!fresh) it->second = std::min(it->second, rank);
  }
  for (size_t i = 0; i < set.size(); ++i) {
    const int32_t r = find(static_cast<int32_t>(i));
    pieces[{level[set[i]->dag_id_], min_rank[r]}].push_back(set[i]);
  }
  std::vector<std::vector<BaseCluster*>> out;
  for (auto& [key, piece] : pieces) {
    std::sort(piece.begin(), piece.end(), [this](const BaseCluster* a, const BaseCluster* b) {
      return RankOf(*a) < RankOf(*b);
    });
    out.push_back(std::move(piece));
  }
  return out;
}

std::vector<BaseCluster*> ClusterSet::ClustersOfDag(const IdSet& ids) {
  std::vector<BaseCluster*> out;
  out.reserve(ids.size());
  ids.ForEach([&](int32_t d) { out.push_back(&clusters_[cluster_of_dag_[d]]); });
  std::sort(out.begin(), out.end(), [this](const BaseCluster* a, const BaseCluster* b) {
    return RankOf(*a) < RankOf(*b);
  });
  return out;
}

std::vector<BaseCluster*> ClusterSet::Inputs(const BaseCluster& cluster) {
  return ClustersOfDag(dag_.predecessors(cluster.dag_id_));
}

std::vector<BaseCluster*> ClusterSet::Outputs(const BaseCluster& cluster) {
  return ClustersOfDag(dag_.successors(cluster.dag_id_));
}

void ClusterSet::SortMembers() {
  for (BaseCluster& c : clusters_) {
    if (c.alive_) std::sort(c.members_.begin(), c.members_.end());
  }
}

std::string ClusterSet::Summary(size_t max_nodes) {
  std::string out;
  for (BaseCluster* c : OrderedClusters()) {
    std::vector<int32_t> members(c->members_.begin(), c->members_.end());
    std::sort(members.begin(), members.end());
    std::vector<std::string> names;
    for (size_t i = 0; i < members.size() && i < max_nodes; ++i) names.push_back(nodes_[members[i]]->name());
    if (members.size() > max_nodes) names.push_back(StrCat("... (", members.size(), " nodes)"));
    const std::string& label = labels_[c->label_id_];
    StrAppend(&out, ClusterTypeName(c->type_index_), label.empty() ? "" : " ", label, ": ",
              absl::StrJoin(names, ", "), "\n");
  }
  return out;
}

}  // namespace ge::partition
