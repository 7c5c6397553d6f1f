// Flattening PartitionedCall nodes into their parent graph: validation of
// the body first (so that errors change nothing), then moving nodes and
// rewiring edges with whole-port operations (ReplaceAllUses), so the cost
// stays linear in the edges touched.
#include "base/ir/flatten.h"

#include <algorithm>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::ir {
namespace {

// A PartitionedCall body marks its inputs with InnerData (_parent_index) or,
// as GE's user-written functions do, Data (index); its results with
// InnerNetOutput or NetOutput.
bool IsInput(const Node& n) { return n.type() == kInnerData || n.type() == kData; }
bool IsOutput(const Node& n) { return n.type() == kInnerNetOutput || n.type() == kNetOutput; }
bool IsBoundary(const Node& n) { return IsInput(n) || IsOutput(n); }

struct Body {
  Graph* graph = nullptr;
  std::vector<std::pair<Node*, int>> inner_data;  // node, parent index
  Node* inner_output = nullptr;
};

absl::StatusOr<Body> InspectBody(const Graph& graph, Node* call) {
  if (call->owner_graph() != &graph) {
    return InvalidArgument("node '", call->name(), "' is not in graph '", graph.name(), "'");
  }
  if (call->type() != kPartitionedCall) {
    return InvalidArgument("node '", call->name(), "' is a ", call->type(), ", not a PartitionedCall");
  }
  const auto& names = call->op_desc().subgraph_names();
  if (names.empty()) return InvalidArgument("PartitionedCall '", call->name(), "' names no subgraph");
  Body body;
  body.graph = graph.FindSubgraph(names[0]);
  if (body.graph == nullptr) {
    return InvalidArgument("PartitionedCall '", call->name(), "': subgraph '", names[0], "' not found");
  }
  if (body.graph->parent_node() != call) {
    return InvalidArgument("PartitionedCall '", call->name(), "': subgraph '", names[0],
                           "' belongs to another node");
  }
  absl::Status error;
  body.graph->ForEachNode([&](Node* n) {
    if (!error.ok()) return;
    if (IsInput(*n)) {
      auto index = n->op_desc().GetAttr<int64_t>(n->type() == kData ? kAttrIndex : kAttrParentIndex);
      if (!index || *index < 0 || *index >= call->num_inputs()) {
        error = InvalidArgument("PartitionedCall '", call->name(), "': InnerData '", n->name(), "' has ",
                                index ? StrCat("_parent_index ", *index) : std::string("no _parent_index"),
                                " but the call has ", call->num_inputs(), " input(s)");
        return;
      }
      body.inner_data.emplace_back(n, static_cast<int>(*index));
    } else if (IsOutput(*n)) {
      if (body.inner_output != nullptr) {
        error = InvalidArgument("PartitionedCall '", call->name(), "': subgraph '", names[0],
                                "' has more than one InnerNetOutput");
        return;
      }
      body.inner_output = n;
    }
  });
  GE_RETURN_IF_ERROR(error);
  const int results = body.inner_output ? body.inner_output->num_inputs() : 0;
  if (results != call->num_outputs()) {
    return InvalidArgument("PartitionedCall '", call->name(), "' has ", call->num_outputs(),
                           " output(s) but its subgraph '", names[0], "' returns ", results);
  }
  return body;
}

// A name unused in both graphs, so that the node can move.
std::string FreeName(const Graph& a, const Graph& b, const std::string& name) {
  for (int64_t i = 1;; ++i) {
    std::string candidate = StrCat(name, "_", i);
    if (a.FindNode(candidate) == nullptr && b.FindNode(candidate) == nullptr) return candidate;
  }
}

Node* AddNoOp(Graph& graph, std::string_view name, const FlattenOptions& options) {
  OpDesc op(graph.UniqueNodeName(name), std::string(kNoOp));
  op.mutable_attrs() = options.noop_attrs;
  auto node = graph.AddNode(std::move(op));
  GE_CHECK(node.ok());
  return *node;
}

bool HasInnerProducer(const Node& n) {
  for (const OutPort& p : n.inputs()) {
    if (p.node != nullptr && !IsBoundary(*p.node)) return true;
  }
  for (const Node* c : n.control_inputs()) {
    if (!IsBoundary(*c)) return true;
  }
  return false;
}

bool HasInnerConsumer(const Node& n) {
  for (const auto& port : n.outputs()) {
    for (const InPort& c : port) {
      if (!IsBoundary(*c.node)) return true;
    }
  }
  for (const Node* c : n.control_outputs()) {
    if (!IsBoundary(*c)) return true;
  }
  return false;
}

// Rewires what used to flow through the InnerData nodes and the call's
// outputs to the real producers.
absl::Status RewireValues(Node* call, const Body& body, Node* after) {
  for (const auto& [d, index] : body.inner_data) {
    const OutPort src = call->input(index);
    bool feeds_inner_node = false;
    for (const InPort& c : d->consumers(0)) feeds_inner_node = feeds_inner_node || !IsBoundary(*c.node);
    if (src.node != nullptr) {
      GE_RETURN_IF_ERROR(call->owner_graph()->ReplaceAllUses(d, 0, src.node, src.index));
      // A value that only passes through still has to be ready before the
      // call's control successors run.
      if (after != nullptr && !feeds_inner_node) GE_RETURN_IF_ERROR(after->owner_graph()->AddControlEdge(src.node, after));
    } else {
      const std::vector<InPort> consumers = d->consumers(0);
      for (const InPort& c : consumers) c.node->owner_graph()->RemoveInputEdge(c.node, c.index);
    }
    const std::vector<Node*> control = d->control_outputs();
    for (Node* x : control) {
      body.graph->RemoveControlEdge(d, x);
      if (src.node != nullptr) GE_RETURN_IF_ERROR(x->owner_graph()->AddControlEdge(src.node, x));
    }
  }
  for (int k = 0; k < call->num_outputs(); ++k) {
    const OutPort p = body.inner_output->input(k);
    if (p.node != nullptr) {
      GE_RETURN_IF_ERROR(call->owner_graph()->ReplaceAllUses(call, k, p.node, p.index));
    } else {
      const std::vector<InPort> consumers = call->consumers(k);
      for (const InPort& c : consumers) c.node->owner_graph()->RemoveInputEdge(c.node, c.index);
    }
  }
  return absl::OkStatus();
}

absl::Status Expand(Graph& graph, Node* call, const Body& body, const FlattenOptions& options) {
  Graph& f = *body.graph;
  const bool need_before = options.always_insert_noops || !call->control_inputs().empty();
  const bool need_after = options.always_insert_noops || !call->control_outputs().empty();
  std::vector<Node*> moved;
  std::vector<Node*> entries;
  std::vector<Node*> exits;
  f.ForEachNode([&](Node* n) {
    if (IsBoundary(*n)) return;
    moved.push_back(n);
    if (need_before && !HasInnerProducer(*n)) entries.push_back(n);
    if (need_after && !HasInnerConsumer(*n)) exits.push_back(n);
  });
  Node* before = need_before ? AddNoOp(graph, StrCat(call->name(), "/before"), options) : nullptr;
  Node* after = need_after ? AddNoOp(graph, StrCat(call->name(), "/after"), options) : nullptr;
  // The call's inherited attributes are looked up once, and the nodes move
  // in one MoveNodesTo (the body's name index is rebuilt once rather than
  // erased from node by node).
  std::vector<std::pair<std::string_view, const AttrValue*>> inherited;
  for (const std::string& attr : options.inherited_attrs) {
    if (const AttrValue* v = call->op_desc().FindAttr(attr)) inherited.emplace_back(attr, v);
  }
  std::vector<std::pair<Node*, Graph*>> moves;
  moves.reserve(moved.size());
  for (Node* n : moved) {
    if (graph.FindNode(n->name()) != nullptr) GE_RETURN_IF_ERROR(f.RenameNode(n, FreeName(graph, f, n->name())));
    moves.emplace_back(n, &graph);
  }
  GE_RETURN_IF_ERROR(f.MoveNodesTo(moves));
  for (Node* n : moved) {
    for (const auto& [attr, v] : inherited) {
      if (!n->op_desc().HasAttr(attr)) n->mutable_op_desc().SetAttr(attr, *v);
    }
  }
  GE_RETURN_IF_ERROR(RewireValues(call, body, after));
  if (before != nullptr) {
    for (Node* u : std::vector<Node*>(call->control_inputs())) GE_RETURN_IF_ERROR(graph.AddControlEdge(u, before));
    for (Node* e : entries) GE_RETURN_IF_ERROR(graph.AddControlEdge(before, e));
  }
  if (after != nullptr) {
    for (Node* e : exits) GE_RETURN_IF_ERROR(graph.AddControlEdge(e, after));
    if (body.inner_output != nullptr) {
      for (Node* u : std::vector<Node*>(body.inner_output->control_inputs())) {
        if (!IsBoundary(*u)) GE_RETURN_IF_ERROR(graph.AddControlEdge(u, after));
      }
    }
    for (Node* v : std::vector<Node*>(call->control_outputs())) GE_RETURN_IF_ERROR(graph.AddControlEdge(after, v));
    if (before != nullptr) GE_RETURN_IF_ERROR(graph.AddControlEdge(before, after));
  }
  for (const auto& [d, index] : body.inner_data) f.RemoveNode(d);
  if (body.inner_output != nullptr) f.RemoveNode(body.inner_output);
  graph.RemoveNode(call);
  return absl::OkStatus();
}

}  // namespace

absl::Status FlattenPartitionedCall(Graph& graph, Node* call, const FlattenOptions& options) {
  GE_ASSIGN_OR_RETURN(Body body, InspectBody(graph, call));
  const std::string name = body.graph->name();
  GE_RETURN_IF_ERROR(Expand(graph, call, body, options));
  graph.RemoveSubgraph(name);
  return absl::OkStatus();
}

absl::StatusOr<int> FlattenPartitionedCalls(Graph& graph, const FlattenOptions& options,
                                            const std::function<bool(const Node&)>& select) {
  std::vector<Node*> pending;
  auto consider = [&](Node* n) {
    if (n->type() == kPartitionedCall && (!select || select(*n))) pending.push_back(n);
  };
  graph.ForEachNode(consider);
  std::vector<std::string> bodies;
  int expanded = 0;
  // Work through a stack; bodies bring their own calls along, which are
  // considered as they arrive.
  std::reverse(pending.begin(), pending.end());
  while (!pending.empty()) {
    Node* call = pending.back();
    pending.pop_back();
    auto body = InspectBody(graph, call);
    if (!body.ok()) {
      graph.RemoveSubgraphs(bodies);
      return body.status();
    }
    std::vector<Node*> arriving;
    body->graph->ForEachNode([&](Node* n) {
      if (n->type() == kPartitionedCall && (!select || select(*n))) arriving.push_back(n);
    });
    bodies.push_back(body->graph->name());
    absl::Status s = Expand(graph, call, *body, options);
    if (!s.ok()) {
      graph.RemoveSubgraphs(bodies);
      return s;
    }
    ++expanded;
    pending.insert(pending.end(), arriving.rbegin(), arriving.rend());
  }
  graph.RemoveSubgraphs(bodies);
  return expanded;
}

}  // namespace ge::ir
