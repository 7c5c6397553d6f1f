// The text form's graph blocks and subgraph tree. Nodes are created as
// their lines are read; edges are resolved at the end of each graph block,
// because a reference may name a node defined further down; the subgraph
// tree is linked once every block is read, because a subgraph may be
// printed before the graph that owns it (MoveNodeTo re-parents subgraphs).
// Every error carries the line:column of the token it is about.
#include "base/ir/text_format_parser.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "base/ir/text_format.h"

namespace ge::ir {
namespace text_internal {

absl::StatusOr<std::unique_ptr<Graph>> Parser::ParseFile() {
  do {
    GE_RETURN_IF_ERROR(ParseGraphBlock());
  } while (Peek().kind != Tok::kEnd);
  return LinkTree();
}

absl::Status Parser::ParseGraphBlock() {
  if (!IsKeyword(Peek(), "graph")) return Expected(Peek(), "'graph'");
  GraphHeader header;
  header.pos = Take().pos;
  GE_ASSIGN_OR_RETURN(std::string name, ParseName("a graph name"));
  if (IsKeyword(Peek(), "parent") && IsPunct(Peek(1), '(')) {
    Take();
    Take();
    header.has_parent = true;
    GE_ASSIGN_OR_RETURN(header.parent_graph, ParseName("the parent graph's name"));
    GE_RETURN_IF_ERROR(ExpectPunct(',', "after the parent graph"));
    if (IsKeyword(Peek(), "_")) {
      Take();
    } else {
      GE_ASSIGN_OR_RETURN(header.parent_node, ParseName("the parent node's name or _"));
    }
    GE_RETURN_IF_ERROR(ExpectPunct(')', "to close parent(...)"));
  }
  GE_RETURN_IF_ERROR(ExpectPunct('{', StrCat("to open graph '", name, "'")));
  header.graph = std::make_unique<Graph>(std::move(name));
  Graph* graph = header.graph.get();
  graphs_.push_back(std::move(header));
  while (!IsPunct(Peek(), '}')) {
    if (IsKeyword(Peek(), "attr") && !IsPunct(Peek(1), '=')) {
      Take();
      GE_RETURN_IF_ERROR(ParseAttrEntry(&graph->mutable_attrs()));
    } else {
      GE_RETURN_IF_ERROR(ParseNode(graph));
    }
  }
  Take();
  return ResolveEdges(graph);
}

absl::Status Parser::ParseNode(Graph* graph) {
  const Pos at = Peek().pos;
  if (Peek().kind != Tok::kWord && Peek().kind != Tok::kString) {
    return Expected(Peek(), "a node (name = Type(...)), 'attr' or '}'");
  }
  GE_ASSIGN_OR_RETURN(std::string name, ParseName("a node name"));
  GE_RETURN_IF_ERROR(ExpectPunct('=', StrCat("after node name '", name, "'")));
  GE_ASSIGN_OR_RETURN(std::string type, ParseName("an op type"));
  auto added = graph->AddNode(OpDesc(name, std::move(type)));
  if (!added.ok()) return ErrorAt(at, StdView(added.status().message()));
  Node* node = *added;
  GE_RETURN_IF_ERROR(ExpectPunct('(', StrCat("to open the inputs of '", name, "'")));
  GE_RETURN_IF_ERROR(ParseInputs(node));
  while (IsPunct(Peek(), '^')) {
    Take();
    const Pos ref = Peek().pos;
    GE_ASSIGN_OR_RETURN(std::string producer, ParseName("a control input's node name"));
    controls_.push_back(PendingControl{node, std::move(producer), ref});
  }
  if (IsPunct(Peek(), '{')) {
    Take();
    while (!IsPunct(Peek(), '}')) {
      if (!node->op_desc().attrs().empty())
        GE_RETURN_IF_ERROR(ExpectPunct(',', "or '}' in attributes"));
      GE_RETURN_IF_ERROR(ParseAttrEntry(&node->mutable_op_desc().mutable_attrs()));
    }
    Take();
  }
  if (IsKeyword(Peek(), "subgraphs") && IsPunct(Peek(1), '(')) {
    Take();
    Take();
    auto& names = node->mutable_op_desc().mutable_subgraph_names();
    do {
      if (!names.empty()) Take();
      GE_ASSIGN_OR_RETURN(std::string sub, ParseName("a subgraph name"));
      names.push_back(std::move(sub));
    } while (IsPunct(Peek(), ','));
    GE_RETURN_IF_ERROR(ExpectPunct(')', "to close subgraphs(...)"));
  }
  if (Peek().kind != Tok::kArrow) {
    implied_outputs_.push_back(node);
    return absl::OkStatus();
  }
  Take();
  std::vector<IoDesc> outputs;
  GE_RETURN_IF_ERROR(ParseOutputs(&outputs));
  for (IoDesc& io : outputs) graph->AddOutputPort(node, std::move(io));
  return absl::OkStatus();
}

absl::Status Parser::ParseInputs(Node* node) {
  Graph* graph = node->owner_graph();
  while (!IsPunct(Peek(), ')')) {
    if (node->num_inputs() > 0) GE_RETURN_IF_ERROR(ExpectPunct(',', "or ')' after an input"));
    PendingInput in{node, node->num_inputs(), "", 0, std::nullopt, Peek().pos};
    bool absent = false;
    if (IsKeyword(Peek(), "_")) {
      Take();
      absent = true;
    } else {
      GE_ASSIGN_OR_RETURN(in.producer, ParseName("an input (node:port or _)"));
      if (IsPunct(Peek(), ':') && IsIntWord(Peek(1))) {
        Take();
        const Pos port_pos = Peek().pos;
        GE_ASSIGN_OR_RETURN(int64_t port, ParseInt("a port"));
        // A node without `-> (...)` gets an output per port up to the highest
        // one named, so the bound also bounds what a reference can allocate.
        constexpr int64_t kMaxPort = 65535;
        if (port < 0 || port > kMaxPort) {
          return ErrorAt(port_pos, StrCat("port ", port, " is out of range [0, ", kMaxPort, "]"));
        }
        in.port = static_cast<int>(port);
      }
    }
    IoDesc io;
    if (IsPunct(Peek(), ':')) {
      Take();
      GE_ASSIGN_OR_RETURN(ValueType type, ParseType());
      in.type = type;
      io.type = std::move(type);
    }
    if (IsKeyword(Peek(), "as")) {
      Take();
      GE_ASSIGN_OR_RETURN(io.name, ParseName("a tensor name after 'as'"));
    }
    graph->AddInputPort(node, std::move(io));
    if (!absent) inputs_.push_back(std::move(in));
  }
  Take();
  return absl::OkStatus();
}

absl::Status Parser::ParseOutputs(std::vector<IoDesc>* outputs) {
  GE_RETURN_IF_ERROR(ExpectPunct('(', "after '->'"));
  while (!IsPunct(Peek(), ')')) {
    if (!outputs->empty()) GE_RETURN_IF_ERROR(ExpectPunct(',', "or ')' after an output type"));
    IoDesc io;
    GE_ASSIGN_OR_RETURN(io.type, ParseType());
    if (IsKeyword(Peek(), "as")) {
      Take();
      GE_ASSIGN_OR_RETURN(io.name, ParseName("a tensor name after 'as'"));
    }
    outputs->push_back(std::move(io));
  }
  Take();
  return absl::OkStatus();
}

absl::Status Parser::ResolveEdges(Graph* graph) {
  // Nodes without `-> (...)` get one undefined output per port up to the
  // highest one consumed.
  absl::flat_hash_map<const Node*, int> highest;
  for (Node* node : implied_outputs_) highest[node] = 0;
  for (PendingInput& in : inputs_) {
    Node* producer = in.resolved = graph->FindNode(in.producer);
    if (producer == nullptr) {
      return ErrorAt(in.pos, StrCat("input ", in.index, " of '", in.node->name(), "' names node '",
                                    in.producer, "', which is not in graph '", graph->name(), "'"));
    }
    auto it = highest.find(producer);
    if (it != highest.end()) it->second = std::max(it->second, in.port + 1);
  }
  for (Node* node : implied_outputs_) {
    for (int o = 0; o < highest[node]; ++o) graph->AddOutputPort(node, IoDesc());
  }
  for (const PendingInput& in : inputs_) {
    Node* producer = in.resolved;
    if (in.port >= producer->num_outputs()) {
      return ErrorAt(in.pos,
                     StrCat("'", in.producer, "' has ", producer->num_outputs(), " outputs; input ",
                            in.index, " of '", in.node->name(), "' asks for port ", in.port));
    }
    if (!in.type) {
      in.node->mutable_op_desc().mutable_input(in.index).type =
          producer->op_desc().output(in.port).type;
    }
    GE_RETURN_IF_ERROR(graph->AddEdge(producer, in.port, in.node, in.index));
  }
  for (const PendingControl& c : controls_) {
    Node* producer = graph->FindNode(c.producer);
    if (producer == nullptr || producer == c.node) {
      return ErrorAt(c.pos, StrCat("control input '", c.producer, "' of '", c.node->name(),
                                   producer ? "' is the node itself" : "' is not in the graph"));
    }
    const auto& existing = c.node->control_inputs();
    if (std::find(existing.begin(), existing.end(), producer) != existing.end()) {
      return ErrorAt(c.pos, StrCat("control input '", c.producer, "' is given twice"));
    }
    GE_RETURN_IF_ERROR(graph->AddControlEdge(producer, c.node));
  }
  inputs_.clear();
  controls_.clear();
  implied_outputs_.clear();
  return absl::OkStatus();
}

// Attaches every subgraph to the root in text order, then points each at its
// parent; parents may be printed after their children.
absl::StatusOr<std::unique_ptr<Graph>> Parser::LinkTree() {
  if (graphs_.front().has_parent) {
    return ErrorAt(graphs_.front().pos, "the first graph is the root and has no parent(...)");
  }
  std::unique_ptr<Graph> root = std::move(graphs_.front().graph);
  std::vector<Graph*> subs;
  for (size_t i = 1; i < graphs_.size(); ++i) {
    GraphHeader& h = graphs_[i];
    if (!h.has_parent) {
      return ErrorAt(h.pos, StrCat("subgraph '", h.graph->name(), "' needs parent(graph, node)"));
    }
    auto added = root->AddSubgraph(std::move(h.graph), nullptr);
    if (!added.ok()) return ErrorAt(h.pos, StdView(added.status().message()));
    subs.push_back(*added);
  }
  for (size_t i = 1; i < graphs_.size(); ++i) {
    const GraphHeader& h = graphs_[i];
    Graph* parent =
        h.parent_graph == root->name() ? root.get() : root->FindSubgraph(h.parent_graph);
    if (parent == nullptr || parent == subs[i - 1]) {
      return ErrorAt(h.pos, StrCat("parent graph '", h.parent_graph, "' of '", subs[i - 1]->name(),
                                   parent ? "' is the graph itself" : "' is not defined"));
    }
    Node* node = nullptr;
    if (h.parent_node) {
      node = parent->FindNode(*h.parent_node);
      if (node == nullptr) {
        return ErrorAt(h.pos, StrCat("parent node '", *h.parent_node, "' is not in graph '",
                                     parent->name(), "'"));
      }
    }
    subs[i - 1]->SetParent(parent, node);
  }
  // Parents must lead to the root: a loop would make Graph::root() spin.
  for (size_t i = 0; i < subs.size(); ++i) {
    const Graph* g = subs[i];
    for (size_t steps = 0; g != nullptr && g != root.get() && steps <= subs.size(); ++steps) {
      g = g->parent_graph();
    }
    if (g != root.get()) {
      return ErrorAt(graphs_[i + 1].pos, StrCat("the parents of subgraph '", subs[i]->name(),
                                                "' loop without reaching the root"));
    }
  }
  return root;
}

}  // namespace text_internal

absl::StatusOr<std::unique_ptr<Graph>> ParseGraph(std::string_view text) {
  text_internal::Parser parser(text);
  return parser.ParseFile();
}

}  // namespace ge::ir
