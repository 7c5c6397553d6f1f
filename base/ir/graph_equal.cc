// Structural graph comparison. Each check returns the first difference as a
// message so that a failing test says what differs and where rather than
// only that two large texts differ.
#include "base/ir/graph_equal.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "base/ir/text_format.h"

namespace ge::ir {
namespace {

using Diff = std::optional<std::string>;

bool FloatBitsEqual(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

std::string Short(const AttrValue& v) {
  PrintOptions options;
  options.max_tensor_elements = 8;
  return PrintAttrValue(v, options);
}

Diff CompareAttrs(const AttrMap& a, const AttrMap& b) {
  auto ia = a.begin();
  auto ib = b.begin();
  for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
    if (ia->first != ib->first) {
      return StrCat("attribute '", ia->first < ib->first ? ia->first : ib->first,
                    "' is only on the ", ia->first < ib->first ? "left" : "right");
    }
    if (!AttrValuesIdentical(ia->second, ib->second)) {
      return StrCat("attribute '", ia->first, "': ", Short(ia->second), " vs ", Short(ib->second));
    }
  }
  if (ia != a.end()) return StrCat("attribute '", ia->first, "' is only on the left");
  if (ib != b.end()) return StrCat("attribute '", ib->first, "' is only on the right");
  return std::nullopt;
}

Diff CompareIo(std::string_view what, const std::vector<IoDesc>& a, const std::vector<IoDesc>& b) {
  if (a.size() != b.size()) return StrCat(a.size(), " vs ", b.size(), " ", what, "s");
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name) {
      return StrCat(what, " ", i, " tensor name '", a[i].name, "' vs '", b[i].name, "'");
    }
    if (a[i].type != b[i].type) {
      return StrCat(what, " ", i, " type ", PrintValueType(a[i].type), " vs ",
                    PrintValueType(b[i].type));
    }
  }
  return std::nullopt;
}

std::string PortText(const OutPort& p) {
  if (p.node == nullptr) return "_";
  const Graph* g = p.node->owner_graph();
  return StrCat(g ? g->name() : "?", "/", p.node->name(), ":", p.index);
}

std::vector<std::pair<std::string, int>> SortedConsumers(const std::vector<InPort>& port) {
  std::vector<std::pair<std::string, int>> out;
  out.reserve(port.size());
  for (const InPort& c : port) out.emplace_back(c.node->name(), c.index);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> SortedNames(const std::vector<Node*>& nodes) {
  std::vector<std::string> out;
  out.reserve(nodes.size());
  for (const Node* n : nodes) out.push_back(n->name());
  std::sort(out.begin(), out.end());
  return out;
}

Diff CompareEdges(const Node& a, const Node& b) {
  for (int i = 0; i < a.num_inputs() && i < b.num_inputs(); ++i) {
    if (PortText(a.input(i)) != PortText(b.input(i))) {
      return StrCat("input ", i, " from ", PortText(a.input(i)), " vs ", PortText(b.input(i)));
    }
  }
  if (a.outputs().size() != b.outputs().size()) return std::string("output edge tables differ");
  for (size_t o = 0; o < a.outputs().size(); ++o) {
    if (SortedConsumers(a.consumers(o)) != SortedConsumers(b.consumers(o))) {
      return StrCat("consumers of output ", o, " differ");
    }
  }
  std::vector<std::string> ca, cb;
  for (const Node* n : a.control_inputs()) ca.push_back(n->name());
  for (const Node* n : b.control_inputs()) cb.push_back(n->name());
  if (ca != cb) return std::string("control inputs differ");
  if (SortedNames(a.control_outputs()) != SortedNames(b.control_outputs())) {
    return std::string("control outputs differ");
  }
  return std::nullopt;
}

Diff CompareNodes(const Node& a, const Node& b) {
  if (a.type() != b.type()) return StrCat("type ", a.type(), " vs ", b.type());
  if (Diff d = CompareAttrs(a.op_desc().attrs(), b.op_desc().attrs())) return d;
  if (Diff d = CompareIo("input", a.op_desc().inputs(), b.op_desc().inputs())) return d;
  if (Diff d = CompareIo("output", a.op_desc().outputs(), b.op_desc().outputs())) return d;
  if (a.op_desc().subgraph_names() != b.op_desc().subgraph_names()) {
    return std::string("subgraph names differ");
  }
  if (a.inputs().size() != b.inputs().size()) return std::string("input edge tables differ");
  return CompareEdges(a, b);
}

std::string ParentText(const Graph& g) {
  if (g.parent_graph() == nullptr) return "none";
  return StrCat(g.parent_graph()->name(), "/", g.parent_node() ? g.parent_node()->name() : "_");
}

Diff CompareOneGraph(const Graph& a, const Graph& b) {
  if (a.name() != b.name()) return StrCat("graph names '", a.name(), "' vs '", b.name(), "'");
  const std::string where = StrCat("graph '", a.name(), "': ");
  if (ParentText(a) != ParentText(b)) {
    return StrCat(where, "parent ", ParentText(a), " vs ", ParentText(b));
  }
  if (Diff d = CompareAttrs(a.attrs(), b.attrs())) return StrCat(where, "graph ", *d);
  const std::vector<Node*> na = a.nodes();
  const std::vector<Node*> nb = b.nodes();
  for (size_t i = 0; i < na.size() && i < nb.size(); ++i) {
    if (na[i]->name() != nb[i]->name()) {
      return StrCat(where, "node #", i, " is '", na[i]->name(), "' vs '", nb[i]->name(), "'");
    }
    if (Diff d = CompareNodes(*na[i], *nb[i])) {
      return StrCat(where, "node '", na[i]->name(), "': ", *d);
    }
  }
  if (na.size() != nb.size()) return StrCat(where, na.size(), " vs ", nb.size(), " nodes");
  return std::nullopt;
}

}  // namespace

bool AttrValuesIdentical(const AttrValue& a, const AttrValue& b) {
  if (a.kind() != b.kind()) return false;
  if (const float* f = a.get<float>()) return FloatBitsEqual(*f, *b.get<float>());
  if (const auto* fs = a.get<std::vector<float>>()) {
    const auto& other = *b.get<std::vector<float>>();
    return fs->size() == other.size() &&
           std::equal(fs->begin(), fs->end(), other.begin(), FloatBitsEqual);
  }
  return a == b;  // tensors compare by bytes already
}

bool GraphsEqual(const Graph& a, const Graph& b, std::string* diff) {
  Diff d = CompareOneGraph(a, b);
  if (!d && a.is_root() && b.is_root()) {
    const std::vector<Graph*> sa = a.subgraphs();
    const std::vector<Graph*> sb = b.subgraphs();
    for (size_t i = 0; !d && i < sa.size() && i < sb.size(); ++i)
      d = CompareOneGraph(*sa[i], *sb[i]);
    if (!d && sa.size() != sb.size()) d = StrCat(sa.size(), " vs ", sb.size(), " subgraphs");
  }
  if (d && diff != nullptr) *diff = *std::move(d);
  return !d.has_value();
}

}  // namespace ge::ir
