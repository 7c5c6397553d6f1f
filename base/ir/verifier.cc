// The graph verifier. Each graph is indexed once (node pointer -> dense
// index), then every check is one pass over nodes and edges with arrays or
// hash sets, so the cost stays linear for million-node graphs. Checks run in
// an order where each may rely on the previous ones: names, then edge tables
// on both sides, then cycles (which walk the now-trusted tables), then types
// and graph inputs/outputs, then the subgraph tree.
#include "base/ir/verifier.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::ir {
namespace {

// Longest cycle spelled out in full in an error message.
constexpr size_t kMaxCycleNodesShown = 16;

std::string Port(const Node* node, int index) { return StrCat("'", node->name(), "':", index); }

class GraphChecker {
 public:
  explicit GraphChecker(const Graph& graph) : graph_(graph) {}

  absl::Status Run() {
    GE_RETURN_IF_ERROR(IndexNodes());
    GE_RETURN_IF_ERROR(CheckInputSides());
    GE_RETURN_IF_ERROR(CheckConsumerSides());
    GE_RETURN_IF_ERROR(CheckControlEdges());
    GE_RETURN_IF_ERROR(CheckAcyclic());
    GE_RETURN_IF_ERROR(CheckTypes());
    return CheckGraphIo();
  }

 private:
  std::string Where() const { return StrCat("graph '", graph_.name(), "'"); }
  // The node's dense index, or -1 when it is not a node of this graph.
  // Node ids are unique within a graph, so a table by id finds the slot and
  // the pointer comparison rejects nodes of other graphs with the same id.
  int64_t IndexOf(const Node* node) const {
    const int64_t id = node->id();
    uint32_t slot = kNoSlot;
    if (!sparse_slots_.empty()) {
      auto it = sparse_slots_.find(id);
      if (it != sparse_slots_.end()) slot = it->second;
    } else if (id >= 0 && id < static_cast<int64_t>(slot_by_id_.size())) {
      slot = slot_by_id_[id];
    }
    return slot != kNoSlot && nodes_[slot] == node ? int64_t{slot} : int64_t{-1};
  }
  uint32_t At(const Node* node) const { return static_cast<uint32_t>(IndexOf(node)); }
  std::string ElsewhereName(const Node* node) const {
    const Graph* g = node->owner_graph();
    return StrCat("'", node->name(), "' of graph '", g == nullptr ? "<none>" : g->name(), "'");
  }

  absl::Status IndexNodes();
  absl::Status NameError(const Node* node) const;
  absl::Status CheckInputSides();
  absl::Status CheckConsumerSides();
  absl::Status CheckControlEdges();
  absl::Status CheckAcyclic();
  absl::Status CycleError(const std::vector<uint32_t>& pending) const;
  absl::Status CheckTypes() const;
  absl::Status CheckGraphIo() const;

  const Graph& graph_;
  std::vector<const Node*> nodes_;
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  std::vector<uint32_t> slot_by_id_;  // node id -> index in nodes_, when ids are dense
  absl::flat_hash_map<int64_t, uint32_t> sparse_slots_;  // the same when they are not
  std::vector<size_t> input_offset_;                     // first slot of each node in matched_
  std::vector<uint8_t> matched_;                         // consumer-table entries seen per input
};

absl::Status GraphChecker::IndexNodes() {
  nodes_.reserve(graph_.num_nodes());
  input_offset_.reserve(graph_.num_nodes() + 1);
  size_t slots = 0;
  int64_t max_id = -1;
  absl::Status status;
  graph_.ForEachNode([&](const Node* node) {
    if (!status.ok()) return;
    if (node->name().empty()) {
      status = InvalidArgument(Where(), ": node #", nodes_.size(), " (", node->type(),
                               ") has an empty name");
    } else if (graph_.FindNode(node->name()) != node) {
      status = NameError(node);
    } else if (node->owner_graph() != &graph_ || node->id() < 0) {
      status = FailedPrecondition(Where(), ": node '", node->name(), "' records owner graph ",
                                  node->owner_graph() ? node->owner_graph()->name() : "<none>",
                                  " and id ", node->id());
    } else if (node->inputs().size() != node->op_desc().inputs().size() ||
               node->outputs().size() != node->op_desc().outputs().size()) {
      status = FailedPrecondition(
          Where(), ": node '", node->name(), "' has ", node->inputs().size(), " input and ",
          node->outputs().size(), " output edge slots but its OpDesc describes ",
          node->op_desc().inputs().size(), " and ", node->op_desc().outputs().size());
    }
    if (!status.ok()) return;
    max_id = std::max(max_id, node->id());
    nodes_.push_back(node);
    input_offset_.push_back(slots);
    slots += node->inputs().size();
  });
  GE_RETURN_IF_ERROR(status);
  input_offset_.push_back(slots);
  matched_.assign(slots, 0);
  // Ids stay dense unless many nodes were removed or moved out; a table
  // far larger than the graph would cost more than hashing.
  const bool sparse = static_cast<size_t>(max_id) > 4 * nodes_.size() + 1024;
  if (sparse) {
    sparse_slots_.reserve(nodes_.size());
  } else {
    slot_by_id_.assign(static_cast<size_t>(max_id + 1), kNoSlot);
  }
  for (size_t n = 0; n < nodes_.size(); ++n) {
    uint32_t& slot = sparse ? sparse_slots_.try_emplace(nodes_[n]->id(), kNoSlot).first->second
                            : slot_by_id_[nodes_[n]->id()];
    if (slot != kNoSlot) {
      return FailedPrecondition(Where(), ": nodes '", nodes_[slot]->name(), "' and '",
                                nodes_[n]->name(), "' share id ", nodes_[n]->id());
    }
    slot = static_cast<uint32_t>(n);
  }
  return absl::OkStatus();
}

// The graph's name table does not map `node`'s name to it: either another
// node has the same name or the node was renamed behind the graph's back.
absl::Status GraphChecker::NameError(const Node* node) const {
  const Node* other = nullptr;
  graph_.ForEachNode([&](const Node* n) {
    if (other == nullptr && n != node && n->name() == node->name()) other = n;
  });
  if (other != nullptr) {
    return InvalidArgument(Where(), ": two nodes are named '", node->name(), "'");
  }
  return FailedPrecondition(Where(), ": node '", node->name(),
                            "' was renamed without Graph::RenameNode");
}

// Every connected input names an in-graph producer port that exists.
absl::Status GraphChecker::CheckInputSides() {
  for (const Node* node : nodes_) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      const OutPort src = node->input(i);
      if (src.node == nullptr) continue;
      if (IndexOf(src.node) < 0) {
        return FailedPrecondition(Where(), ": input ", i, " of '", node->name(), "' is fed by ",
                                  ElsewhereName(src.node), " (dangling cross-graph edge)");
      }
      if (src.index < 0 || src.index >= src.node->num_outputs()) {
        return FailedPrecondition(Where(), ": input ", i, " of '", node->name(), "' names port ",
                                  Port(src.node, src.index), ", but '", src.node->name(), "' has ",
                                  src.node->num_outputs(), " outputs");
      }
    }
  }
  return absl::OkStatus();
}

// Every consumer-table entry points back at an input fed by that port, each
// input is listed exactly once, and no input is missing from its producer.
absl::Status GraphChecker::CheckConsumerSides() {
  for (const Node* node : nodes_) {
    for (int o = 0; o < node->num_outputs(); ++o) {
      for (const InPort& c : node->consumers(o)) {
        if (c.node == nullptr) {
          return FailedPrecondition(Where(), ": output ", Port(node, o), " lists a null consumer");
        }
        const int64_t ci = IndexOf(c.node);
        if (ci < 0) {
          return FailedPrecondition(Where(), ": output ", Port(node, o), " feeds ",
                                    ElsewhereName(c.node), " (dangling cross-graph edge)");
        }
        if (c.index < 0 || c.index >= c.node->num_inputs() ||
            !(c.node->input(c.index) == OutPort{const_cast<Node*>(node), o})) {
          return FailedPrecondition(Where(), ": output ", Port(node, o), " lists consumer ",
                                    Port(c.node, c.index), ", which is not fed by it");
        }
        if (++matched_[input_offset_[ci] + c.index] > 1) {
          return FailedPrecondition(Where(), ": output ", Port(node, o), " lists consumer ",
                                    Port(c.node, c.index), " twice");
        }
      }
    }
  }
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node* node = nodes_[n];
    for (int i = 0; i < node->num_inputs(); ++i) {
      const OutPort src = node->input(i);
      if (src.node != nullptr && matched_[input_offset_[n] + i] == 0) {
        return FailedPrecondition(Where(), ": input ", i, " of '", node->name(), "' is fed by ",
                                  Port(src.node, src.index),
                                  ", whose consumer table does not list it");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status GraphChecker::CheckControlEdges() {
  auto key = [](uint64_t src, uint64_t dst) { return (src << 32) | dst; };
  absl::flat_hash_set<uint64_t> edges;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (const Node* dst : nodes_[n]->control_outputs()) {
      const int64_t d = dst == nullptr ? -1 : IndexOf(dst);
      if (d < 0) {
        return FailedPrecondition(Where(), ": control output of '", nodes_[n]->name(), "' is ",
                                  dst ? ElsewhereName(dst) : "null",
                                  " (dangling cross-graph edge)");
      }
      if (!edges.insert(key(n, d)).second) {
        return FailedPrecondition(Where(), ": control edge '", nodes_[n]->name(), "' -> '",
                                  dst->name(), "' is listed twice");
      }
    }
  }
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (const Node* src : nodes_[n]->control_inputs()) {
      const int64_t s = src == nullptr ? -1 : IndexOf(src);
      if (s < 0) {
        return FailedPrecondition(Where(), ": control input of '", nodes_[n]->name(), "' is ",
                                  src ? ElsewhereName(src) : "null",
                                  " (dangling cross-graph edge)");
      }
      if (edges.erase(key(s, n)) == 0) {
        return FailedPrecondition(Where(), ": '", nodes_[n]->name(), "' lists control input '",
                                  src->name(), "', whose control outputs do not list it (once)");
      }
    }
  }
  if (edges.empty()) return absl::OkStatus();
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (const Node* dst : nodes_[n]->control_outputs()) {
      if (edges.contains(key(n, At(dst)))) {
        return FailedPrecondition(Where(), ": '", nodes_[n]->name(), "' lists control output '",
                                  dst->name(), "', whose control inputs do not list it");
      }
    }
  }
  return Internal(Where(), ": control edge tables disagree");
}

absl::Status GraphChecker::CheckAcyclic() {
  std::vector<uint32_t> pending(nodes_.size(), 0);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (const OutPort& p : nodes_[n]->inputs()) pending[n] += p.node != nullptr;
    pending[n] += static_cast<uint32_t>(nodes_[n]->control_inputs().size());
  }
  std::vector<uint32_t> ready;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (pending[n] == 0) ready.push_back(static_cast<uint32_t>(n));
  }
  size_t done = 0;
  while (!ready.empty()) {
    const Node* node = nodes_[ready.back()];
    ready.pop_back();
    ++done;
    auto release = [&](const Node* consumer) {
      const uint32_t c = At(consumer);
      if (--pending[c] == 0) ready.push_back(c);
    };
    for (const auto& port : node->outputs()) {
      for (const InPort& c : port) release(c.node);
    }
    for (const Node* c : node->control_outputs()) release(c);
  }
  if (done == nodes_.size()) return absl::OkStatus();
  return CycleError(pending);
}

// Every node left with pending > 0 has a predecessor also left, so walking
// predecessors from one of them must revisit a node: that loop is a cycle.
absl::Status GraphChecker::CycleError(const std::vector<uint32_t>& pending) const {
  auto stuck_predecessor = [&](const Node* node) -> uint32_t {
    for (const OutPort& p : node->inputs()) {
      if (p.node != nullptr && pending[At(p.node)] > 0) return At(p.node);
    }
    for (const Node* c : node->control_inputs()) {
      if (pending[At(c)] > 0) return At(c);
    }
    return UINT32_MAX;  // unreachable when the tables are consistent
  };
  uint32_t start = 0;
  while (pending[start] == 0) ++start;
  std::vector<int64_t> step_of(nodes_.size(), -1);
  std::vector<uint32_t> walk;
  uint32_t v = start;
  while (v != UINT32_MAX && step_of[v] < 0) {
    step_of[v] = static_cast<int64_t>(walk.size());
    walk.push_back(v);
    v = stuck_predecessor(nodes_[v]);
  }
  if (v == UINT32_MAX) return FailedPrecondition(Where(), " has a cycle");
  // walk[step_of[v]..] followed backwards is the cycle; print it forwards.
  std::vector<uint32_t> cycle(walk.begin() + step_of[v], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  // Start at the earliest-inserted node so the message does not depend on
  // where the walk happened to enter the cycle.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string text;
  for (size_t i = 0; i < cycle.size() && i < kMaxCycleNodesShown; ++i) {
    StrAppend(&text, "'", nodes_[cycle[i]]->name(), "' -> ");
  }
  if (cycle.size() > kMaxCycleNodesShown) StrAppend(&text, "... -> ");
  StrAppend(&text, "'", nodes_[cycle[0]]->name(), "'");
  return FailedPrecondition(Where(), " has a cycle of ", cycle.size(), " nodes: ", text);
}

absl::Status GraphChecker::CheckTypes() const {
  std::string why;
  for (const Node* node : nodes_) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      const OutPort src = node->input(i);
      if (src.node == nullptr) continue;
      const ValueType& produced = src.node->op_desc().output(src.index).type;
      const ValueType& consumed = node->op_desc().input(i).type;
      if (!TypesCompatible(produced, consumed, &why)) {
        return InvalidArgument(Where(), ": edge ", Port(src.node, src.index), " -> ", Port(node, i),
                               " (", node->type(), "): producer type ", produced.ToString(),
                               " does not match input type ", consumed.ToString(), " (", why, ")");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status GraphChecker::CheckGraphIo() const {
  const Node* net_output = nullptr;
  std::vector<const Node*> data;
  for (const Node* node : nodes_) {
    if (node->type() == kNetOutput) {
      if (net_output != nullptr) {
        return InvalidArgument(Where(), " has two NetOutput nodes: '", net_output->name(),
                               "' and '", node->name(), "'");
      }
      net_output = node;
    } else if (node->type() == kData) {
      data.push_back(node);
    }
  }
  std::vector<const Node*> by_index(data.size(), nullptr);
  for (const Node* node : data) {
    std::optional<int64_t> index = node->op_desc().GetAttr<int64_t>(kAttrIndex);
    if (!index) {
      return InvalidArgument(Where(), ": Data node '", node->name(), "' has no integer '",
                             kAttrIndex, "' attribute");
    }
    if (*index < 0 || *index >= static_cast<int64_t>(data.size())) {
      return InvalidArgument(Where(), ": Data node '", node->name(), "' has index ", *index,
                             ", outside 0..", data.size() - 1, " (the graph has ", data.size(),
                             " Data nodes)");
    }
    if (const Node* other = by_index[*index]) {
      return InvalidArgument(Where(), ": Data nodes '", other->name(), "' and '", node->name(),
                             "' both have index ", *index);
    }
    by_index[*index] = node;
  }
  return absl::OkStatus();
}

// ---- The subgraph tree ----

std::string NodeInGraph(const Node* node) {
  if (node == nullptr) return "<no node>";
  const Graph* g = node->owner_graph();
  return StrCat("'", node->name(), "' in graph '", g ? g->name() : "<none>", "'");
}

// The subgraph references of one graph's nodes: names resolve in the tree,
// each subgraph points back at its owner, GraphRef attributes resolve.
// `owners` collects every owned name to detect double ownership.
absl::Status CheckSubgraphRefs(const Graph& graph, const Graph& root,
                               StringMap<const Node*>& owners) {
  absl::Status status;
  graph.ForEachNode([&](const Node* node) {
    if (!status.ok()) return;
    for (const std::string& name : node->op_desc().subgraph_names()) {
      const Graph* sub = root.FindSubgraph(name);
      if (name.empty() || sub == nullptr) {
        status = FailedPrecondition("node ", NodeInGraph(node), " names subgraph '", name,
                                    "', which is not in the tree of '", root.name(), "'");
      } else if (auto [it, fresh] = owners.emplace(name, node); !fresh) {
        status = FailedPrecondition("subgraph '", name, "' is owned by both ",
                                    NodeInGraph(it->second), " and ", NodeInGraph(node));
      } else if (sub->parent_node() != node || sub->parent_graph() != &graph) {
        status = FailedPrecondition(
            "subgraph '", name, "' is owned by ", NodeInGraph(node), " but records parent node ",
            NodeInGraph(sub->parent_node()), " and parent graph '",
            sub->parent_graph() ? sub->parent_graph()->name() : "<none>", "'");
      }
      if (!status.ok()) return;
    }
    for (const auto& [attr, value] : node->op_desc().attrs()) {
      std::vector<GraphRef> refs;
      if (const auto* one = value.get<GraphRef>()) refs.push_back(*one);
      if (const auto* many = value.get<std::vector<GraphRef>>()) refs = *many;
      for (const GraphRef& ref : refs) {
        if (root.FindSubgraph(ref.name) == nullptr) {
          status =
              FailedPrecondition("attribute '", attr, "' of node ", NodeInGraph(node),
                                 " refers to graph '", ref.name, "', which is not in the tree");
          return;
        }
      }
    }
  });
  return status;
}

absl::Status CheckTree(const Graph& root) {
  StringMap<const Node*> owners;
  GE_RETURN_IF_ERROR(CheckSubgraphRefs(root, root, owners));
  for (const Graph* sub : root.subgraphs()) {
    if (!sub->subgraphs().empty()) {
      return FailedPrecondition("subgraph '", sub->name(), "' holds a subgraph table of its own");
    }
    GE_RETURN_IF_ERROR(CheckSubgraphRefs(*sub, root, owners));
  }
  for (const Graph* sub : root.subgraphs()) {
    if (!owners.contains(sub->name())) {
      return FailedPrecondition("subgraph '", sub->name(), "' of '", root.name(),
                                "' is not owned by any node");
    }
  }
  // Unique ownership with matching parents can still form a loop of
  // subgraphs owning each other, cut off from the root.
  absl::flat_hash_set<const Graph*> reached = {&root};
  std::vector<const Graph*> frontier = {&root};
  while (!frontier.empty()) {
    const Graph* g = frontier.back();
    frontier.pop_back();
    g->ForEachNode([&](const Node* node) {
      for (const std::string& name : node->op_desc().subgraph_names()) {
        const Graph* sub = root.FindSubgraph(name);
        if (reached.insert(sub).second) frontier.push_back(sub);
      }
    });
  }
  for (const Graph* sub : root.subgraphs()) {
    if (!reached.contains(sub)) {
      return FailedPrecondition("subgraph '", sub->name(),
                                "' is not reachable from the root graph (ownership loop)");
    }
  }
  return absl::OkStatus();
}

bool TensorTypesCompatible(const TensorDesc& a, const TensorDesc& b, std::string* why) {
  if (a.dtype != b.dtype) {
    if (why) *why = "dtypes differ";
    return false;
  }
  if (a.shape.unknown_rank() || b.shape.unknown_rank()) return true;
  if (a.shape.rank() != b.shape.rank()) {
    if (why) *why = "ranks differ";
    return false;
  }
  for (size_t d = 0; d < a.shape.dims().size(); ++d) {
    const int64_t x = a.shape.dim(d);
    const int64_t y = b.shape.dim(d);
    if (x >= 0 && y >= 0 && x != y) {
      if (why) *why = StrCat("dim ", d, " differs");
      return false;
    }
  }
  return true;
}

}  // namespace

bool TypesCompatible(const ValueType& produced, const ValueType& consumed, std::string* why) {
  auto undefined = [](const ValueType& t) {
    return t.is_tensor() && t.tensor().dtype == DataType::kUndefined;
  };
  if (undefined(produced) || undefined(consumed)) return true;
  if (produced.kind() != consumed.kind()) {
    if (why) *why = "kinds differ";
    return false;
  }
  if (produced.is_tensor()) return TensorTypesCompatible(produced.tensor(), consumed.tensor(), why);
  return TypesCompatible(*produced.element(), *consumed.element(), why);
}

absl::Status VerifyGraph(const Graph& graph) {
  GE_RETURN_IF_ERROR(GraphChecker(graph).Run());
  if (!graph.is_root()) {
    StringMap<const Node*> owners;
    return CheckSubgraphRefs(graph, *graph.root(), owners);
  }
  for (const Graph* sub : graph.subgraphs()) GE_RETURN_IF_ERROR(GraphChecker(*sub).Run());
  return CheckTree(graph);
}

}  // namespace ge::ir
