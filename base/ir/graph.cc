// Graph mutation, ordering and subgraph ownership.
#include "base/ir/graph.h"

#include <algorithm>
#include <queue>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::ir {
namespace {

template <typename T>
void EraseOne(std::vector<T>& v, const T& value) {
  auto it = std::find(v.begin(), v.end(), value);
  if (it != v.end()) v.erase(it);
}

}  // namespace

Graph::Graph(std::string name) : name_(std::move(name)) {}
Graph::~Graph() = default;

absl::StatusOr<Node*> Graph::AddNode(OpDesc op) {
  if (op.name().empty()) return InvalidArgument("graph '", name_, "': a node needs a name");
  if (by_name_.contains(op.name())) {
    return InvalidArgument("graph '", name_, "': duplicate node name '", op.name(), "'");
  }
  std::unique_ptr<Node> node(new Node(std::move(op), this, next_id_++));
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  raw->self_ = std::prev(nodes_.end());
  by_name_.emplace(raw->name(), raw);
  return raw;
}

void Graph::RemoveNode(Node* node) {
  GE_CHECK(node->graph_ == this);
  for (int i = 0; i < node->num_inputs(); ++i) RemoveInputEdge(node, i);
  for (int o = 0; o < node->num_outputs(); ++o) {
    for (const InPort& c : node->outputs_[o]) c.node->inputs_[c.index] = OutPort{};
    node->outputs_[o].clear();
  }
  for (Node* src : node->control_inputs_) EraseOne(src->control_outputs_, node);
  for (Node* dst : node->control_outputs_) EraseOne(dst->control_inputs_, node);
  by_name_.erase(node->name());
  nodes_.erase(node->self_);
}

Node* Graph::FindNode(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::string Graph::UniqueNodeName(std::string_view prefix) {
  if (!by_name_.contains(prefix)) return std::string(prefix);
  for (int64_t i = 1;; ++i) {
    std::string candidate = StrCat(prefix, "_", i);
    if (!by_name_.contains(candidate)) return candidate;
  }
}

absl::Status Graph::RenameNode(Node* node, std::string new_name) {
  if (new_name == node->name()) return absl::OkStatus();
  if (new_name.empty() || by_name_.contains(new_name)) {
    return InvalidArgument("graph '", name_, "': cannot rename '", node->name(), "' to '",
                           new_name, "': name empty or taken");
  }
  by_name_.erase(node->name());
  node->op_.set_name(std::move(new_name));
  by_name_.emplace(node->name(), node);
  return absl::OkStatus();
}

absl::Status Graph::MoveNodeTo(Node* node, Graph* dst) {
  GE_CHECK(node->graph_ == this);
  if (dst == this) return absl::OkStatus();
  if (dst->by_name_.contains(node->name())) {
    return InvalidArgument("graph '", dst->name_, "': cannot move node '", node->name(),
                           "' in: name taken");
  }
  by_name_.erase(node->name());
  dst->nodes_.splice(dst->nodes_.end(), nodes_, node->self_);
  node->graph_ = dst;
  node->id_ = dst->next_id_++;
  dst->by_name_.emplace(node->name(), node);
  // Subgraphs owned by the node now hang off the destination graph.
  for (const std::string& sub : node->op_.subgraph_names()) {
    if (Graph* g = FindSubgraph(sub)) g->SetParent(dst, node);
  }
  return absl::OkStatus();
}

absl::Status Graph::MoveNodesTo(const std::vector<std::pair<Node*, Graph*>>& moves) {
  for (const auto& [node, dst] : moves) {
    if (node->graph_ != this) return InvalidArgument("node '", node->name(), "' is not in graph '", name_, "'");
    if (dst != this && dst->by_name_.contains(node->name())) {
      return InvalidArgument("graph '", dst->name_, "': cannot move node '", node->name(), "' in: name taken");
    }
  }
  // Size each destination's name index once for what arrives (a million
  // nodes moving into a fresh graph would otherwise rehash it ~20 times).
  // Moves come grouped by destination: count runs, one map update each.
  absl::flat_hash_map<Graph*, size_t> arriving;
  for (size_t i = 0; i < moves.size();) {
    Graph* dst = moves[i].second;
    size_t run = 0;
    for (; i < moves.size() && moves[i].second == dst; ++i) ++run;
    if (dst != this) arriving[dst] += run;
  }
  for (const auto& [dst, count] : arriving) dst->by_name_.reserve(dst->by_name_.size() + count);
  size_t moved = 0;
  for (const auto& [node, dst] : moves) {
    if (dst == this) continue;
    dst->nodes_.splice(dst->nodes_.end(), nodes_, node->self_);
    node->graph_ = dst;
    node->id_ = dst->next_id_++;
    dst->by_name_.emplace(node->name(), node);
    for (const std::string& sub : node->op_.subgraph_names()) {
      if (Graph* g = FindSubgraph(sub)) g->SetParent(dst, node);
    }
    ++moved;
  }
  if (moved * 2 > by_name_.size()) {
    by_name_.clear();
    by_name_.reserve(nodes_.size());
    for (const auto& n : nodes_) by_name_.emplace(n->name(), n.get());
  } else {
    for (const auto& [node, dst] : moves) {
      if (dst != this) by_name_.erase(node->name());
    }
  }
  return absl::OkStatus();
}

absl::Status Graph::AddEdge(Node* src, int src_port, Node* dst, int dst_port) {
  if (src_port < 0 || src_port >= src->num_outputs()) {
    return InvalidArgument("edge ", src->name(), ":", src_port, " -> ", dst->name(), ":",
                           dst_port, ": ", src->name(), " has ", src->num_outputs(), " outputs");
  }
  if (dst_port < 0 || dst_port >= dst->num_inputs()) {
    return InvalidArgument("edge ", src->name(), ":", src_port, " -> ", dst->name(), ":",
                           dst_port, ": ", dst->name(), " has ", dst->num_inputs(), " inputs");
  }
  if (dst->inputs_[dst_port].node != nullptr) {
    return InvalidArgument("input ", dst_port, " of '", dst->name(), "' already has producer '",
                           dst->inputs_[dst_port].node->name(), "'");
  }
  dst->inputs_[dst_port] = OutPort{src, src_port};
  src->outputs_[src_port].push_back(InPort{dst, dst_port});
  return absl::OkStatus();
}

void Graph::RemoveInputEdge(Node* dst, int dst_port) {
  OutPort src = dst->inputs_[dst_port];
  if (src.node == nullptr) return;
  EraseOne(src.node->outputs_[src.index], InPort{dst, dst_port});
  dst->inputs_[dst_port] = OutPort{};
}

absl::Status Graph::ReplaceAllUses(Node* from, int from_port, Node* to, int to_port) {
  // Ports are checked up front so that a bad call changes nothing, and the
  // consumer list moves in one go: removing consumers one by one would
  // search `from`'s list each time, quadratic in the fan-out.
  if (from_port < 0 || from_port >= from->num_outputs()) {
    return InvalidArgument("ReplaceAllUses: '", from->name(), "' has no output ", from_port);
  }
  if (to_port < 0 || to_port >= to->num_outputs()) {
    return InvalidArgument("ReplaceAllUses: '", to->name(), "' has no output ", to_port);
  }
  if (from == to && from_port == to_port) return absl::OkStatus();
  std::vector<InPort> consumers = std::move(from->outputs_[from_port]);
  from->outputs_[from_port].clear();
  auto& dst = to->outputs_[to_port];
  dst.reserve(dst.size() + consumers.size());
  for (const InPort& c : consumers) {
    c.node->inputs_[c.index] = OutPort{to, to_port};
    dst.push_back(c);
  }
  return absl::OkStatus();
}

absl::Status Graph::AddControlEdge(Node* src, Node* dst) {
  if (src == dst) return InvalidArgument("control edge from '", src->name(), "' to itself");
  if (std::find(src->control_outputs_.begin(), src->control_outputs_.end(), dst) !=
      src->control_outputs_.end()) {
    return absl::OkStatus();
  }
  src->control_outputs_.push_back(dst);
  dst->control_inputs_.push_back(src);
  return absl::OkStatus();
}

void Graph::RemoveControlEdge(Node* src, Node* dst) {
  EraseOne(src->control_outputs_, dst);
  EraseOne(dst->control_inputs_, src);
}

void Graph::AddInputPort(Node* node, IoDesc desc) {
  node->op_.AddInput(std::move(desc));
  node->inputs_.emplace_back();
}

void Graph::AddOutputPort(Node* node, IoDesc desc) {
  node->op_.AddOutput(std::move(desc));
  node->outputs_.emplace_back();
}

void Graph::RemoveLastInputPort(Node* node) {
  GE_CHECK(!node->inputs_.empty() && node->inputs_.back().node == nullptr);
  node->inputs_.pop_back();
  node->op_.mutable_inputs().pop_back();
}

absl::StatusOr<std::vector<Node*>> Graph::TopologicalOrder() const {
  // Kahn's algorithm with a min-heap on node id: deterministic, and the
  // insertion order wherever the edges allow it. Pending counts live in an
  // array indexed by id while ids are dense (next_id_ is not much larger
  // than the node count), else in a hash map: on million-node graphs a hash
  // probe per edge costs a cache miss each.
  const bool dense = static_cast<size_t>(next_id_) <= 4 * nodes_.size() + 1024;
  std::vector<int> pending_by_id(dense ? static_cast<size_t>(next_id_) : 0, 0);
  absl::flat_hash_map<const Node*, int> pending_by_node;
  if (!dense) pending_by_node.reserve(nodes_.size());
  auto pending = [&](const Node* n) -> int& {
    return dense ? pending_by_id[static_cast<size_t>(n->id_)] : pending_by_node[n];
  };
  auto cmp = [](const Node* a, const Node* b) { return a->id() > b->id(); };
  std::vector<Node*> heap;
  for (const auto& n : nodes_) {
    int count = 0;
    for (const OutPort& p : n->inputs_) count += p.node != nullptr && p.node->graph_ == this;
    for (const Node* c : n->control_inputs_) count += c->graph_ == this;
    if (count == 0) {
      heap.push_back(n.get());  // ids increase in list order: already a valid min-heap
    } else {
      pending(n.get()) = count;
    }
  }
  std::priority_queue<Node*, std::vector<Node*>, decltype(cmp)> ready(cmp, std::move(heap));
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  auto release = [&](Node* consumer) {
    if (consumer->graph_ != this) return;
    if (--pending(consumer) == 0) ready.push(consumer);
  };
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    order.push_back(n);
    for (const auto& port : n->outputs_) {
      for (const InPort& c : port) release(c.node);
    }
    for (Node* c : n->control_outputs_) release(c);
  }
  if (order.size() != nodes_.size()) {
    std::vector<std::string> stuck;
    for (const auto& n : nodes_) {
      if (pending(n.get()) > 0 && stuck.size() < 8) stuck.push_back(n->name());
    }
    return FailedPrecondition("graph '", name_, "' has a cycle through: ",
                              absl::StrJoin(stuck, ", "));
  }
  return order;
}

std::vector<Node*> Graph::InputNodes() const {
  std::vector<Node*> inputs;
  for (const auto& n : nodes_) {
    if (n->type() == kData) inputs.push_back(n.get());
  }
  std::stable_sort(inputs.begin(), inputs.end(), [](const Node* a, const Node* b) {
    return a->op_desc().GetAttrOr<int64_t>(kAttrIndex, 0) <
           b->op_desc().GetAttrOr<int64_t>(kAttrIndex, 0);
  });
  return inputs;
}

Node* Graph::OutputNode() const {
  for (const auto& n : nodes_) {
    if (n->type() == kNetOutput) return n.get();
  }
  return nullptr;
}

Graph* Graph::root() {
  Graph* g = this;
  while (g->parent_graph_ != nullptr) g = g->parent_graph_;
  return g;
}

const Graph* Graph::root() const {
  const Graph* g = this;
  while (g->parent_graph_ != nullptr) g = g->parent_graph_;
  return g;
}

absl::StatusOr<Graph*> Graph::AddSubgraph(std::unique_ptr<Graph> subgraph, Node* parent_node) {
  Graph* r = root();
  if (r->subgraphs_.contains(subgraph->name()) || subgraph->name() == r->name_) {
    return InvalidArgument("subgraph name '", subgraph->name(), "' is already used");
  }
  subgraph->parent_graph_ = this;
  subgraph->parent_node_ = parent_node;
  // A subgraph handed over with subgraphs of its own gives them to the root.
  std::vector<std::unique_ptr<Graph>> nested;
  for (Graph* g : subgraph->subgraph_order_) nested.push_back(std::move(subgraph->subgraphs_[g->name()]));
  subgraph->subgraphs_.clear();
  subgraph->subgraph_order_.clear();
  Graph* raw = subgraph.get();
  r->subgraph_order_.push_back(raw);
  r->subgraphs_.emplace(raw->name(), std::move(subgraph));
  for (auto& g : nested) {
    Graph* parent = g->parent_graph_ == nullptr ? raw : g->parent_graph_;
    Node* pnode = g->parent_node_;
    GE_RETURN_IF_ERROR(parent->AddSubgraph(std::move(g), pnode).status());
  }
  return raw;
}

Graph* Graph::FindSubgraph(std::string_view name) const {
  const Graph* r = root();
  auto it = r->subgraphs_.find(name);
  return it == r->subgraphs_.end() ? nullptr : it->second.get();
}

void Graph::RemoveSubgraph(std::string_view name) {
  Graph* r = root();
  auto it = r->subgraphs_.find(name);
  if (it == r->subgraphs_.end()) return;
  Graph* g = it->second.get();
  for (const auto& n : g->nodes_) {
    for (const std::string& sub : n->op_.subgraph_names()) RemoveSubgraph(sub);
  }
  EraseOne(r->subgraph_order_, g);
  r->subgraphs_.erase(std::string(name));
}

void Graph::RemoveSubgraphs(const std::vector<std::string>& names) {
  Graph* r = root();
  // Collect the doomed graphs first (names plus everything their nodes own),
  // then drop them from the order in one pass and from the table by name.
  absl::flat_hash_set<const Graph*> doomed;
  std::vector<Graph*> pending;
  for (const std::string& name : names) {
    auto it = r->subgraphs_.find(name);
    if (it != r->subgraphs_.end() && doomed.insert(it->second.get()).second) pending.push_back(it->second.get());
  }
  while (!pending.empty()) {
    Graph* g = pending.back();
    pending.pop_back();
    for (const auto& n : g->nodes_) {
      for (const std::string& sub : n->op_.subgraph_names()) {
        auto it = r->subgraphs_.find(sub);
        if (it != r->subgraphs_.end() && doomed.insert(it->second.get()).second) pending.push_back(it->second.get());
      }
    }
  }
  if (doomed.empty()) return;
  std::vector<std::string> doomed_names;
  doomed_names.reserve(doomed.size());
  std::vector<Graph*> kept;
  kept.reserve(r->subgraph_order_.size() - std::min(r->subgraph_order_.size(), doomed.size()));
  for (Graph* g : r->subgraph_order_) {
    if (doomed.contains(g)) {
      doomed_names.push_back(g->name_);
    } else {
      kept.push_back(g);
    }
  }
  r->subgraph_order_ = std::move(kept);
  for (const std::string& name : doomed_names) r->subgraphs_.erase(name);
}

std::vector<Graph*> Graph::subgraphs() const { return subgraph_order_; }

std::unique_ptr<Graph> Graph::Clone() const {
  auto copy = CloneInto(name_);
  if (!is_root()) return copy;
  std::vector<Graph*> copies;
  for (const Graph* sub : subgraph_order_) {
    auto added = copy->AddSubgraph(sub->CloneInto(sub->name_), nullptr);
    GE_CHECK(added.ok());
    copies.push_back(*added);
  }
  // Parents are linked once every copy exists: a subgraph may come before
  // its parent in the order (MoveNodeTo re-parents subgraphs).
  for (size_t i = 0; i < copies.size(); ++i) {
    const Graph* sub = subgraph_order_[i];
    Graph* parent = nullptr;
    if (sub->parent_graph_ == this) {
      parent = copy.get();
    } else if (sub->parent_graph_ != nullptr) {
      parent = copy->FindSubgraph(sub->parent_graph_->name_);
    }
    Node* pnode =
        parent && sub->parent_node_ ? parent->FindNode(sub->parent_node_->name()) : nullptr;
    copies[i]->SetParent(parent, pnode);
  }
  return copy;
}

std::unique_ptr<Graph> Graph::CloneInto(std::string name) const {
  auto copy = std::make_unique<Graph>(std::move(name));
  copy->attrs_ = attrs_;
  copy->by_name_.reserve(nodes_.size());
  // Copies by the original's id (an array while ids are dense), so that
  // wiring the edges needs no lookup by name.
  const bool dense = static_cast<size_t>(next_id_) <= 4 * nodes_.size() + 1024;
  std::vector<Node*> copy_by_id(dense ? static_cast<size_t>(next_id_) : 0, nullptr);
  absl::flat_hash_map<const Node*, Node*> copy_by_node;
  if (!dense) copy_by_node.reserve(nodes_.size());
  auto copy_of = [&](const Node* n) { return dense ? copy_by_id[static_cast<size_t>(n->id_)] : copy_by_node.at(n); };
  for (const auto& n : nodes_) {
    auto added = copy->AddNode(n->op_);
    GE_CHECK(added.ok());
    for (size_t o = 0; o < n->outputs_.size(); ++o) (*added)->outputs_[o].reserve(n->outputs_[o].size());
    if (dense) {
      copy_by_id[static_cast<size_t>(n->id_)] = *added;
    } else {
      copy_by_node.emplace(n.get(), *added);
    }
  }
  for (const auto& n : nodes_) {
    Node* dst = copy_of(n.get());
    for (int i = 0; i < n->num_inputs(); ++i) {
      OutPort p = n->inputs_[i];
      if (p.node == nullptr || p.node->graph_ != this) continue;
      GE_CHECK(copy->AddEdge(copy_of(p.node), p.index, dst, i).ok());
    }
    for (Node* c : n->control_inputs_) {
      if (c->graph_ != this) continue;
      GE_CHECK(copy->AddControlEdge(copy_of(c), dst).ok());
    }
  }
  return copy;
}

}  // namespace ge::ir
