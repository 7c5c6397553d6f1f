// GatherFromExpand: GatherElements reading Expands becomes
// `_GatherElementsBroadcast` reading what they expanded (gather_elements.h).
#include <algorithm>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/cpu_vector/gather_elements.h"

namespace ge::engine::cpu_vector {
namespace {

// The partitioner's stream label (compiler/partition/partition_attrs.h),
// which engines cannot include: the new node keeps the gather's.
constexpr std::string_view kAttrStreamLabel = "_stream_label";

bool Pinned(const ir::Node& n) {
  const ir::OpDesc& op = n.op_desc();
  return op.FindAttr(ir::kAttrEngine) != nullptr || op.FindAttr(ir::kAttrHostExec) != nullptr;
}
bool NoControl(const ir::Node& n) { return n.control_inputs().empty() && n.control_outputs().empty(); }

bool StaticTensor(const ir::ValueType& t) { return t.is_tensor() && t.shape().IsFullyKnown(); }

// The Expand feeding input `i` of `gather` when it can be read through:
// an Expand of this graph with static input and output shapes.
ir::Node* ExpandInput(const ir::Node& gather, int i) {
  ir::Node* e = gather.input(i).node;
  if (e == nullptr || e->type() != "Expand" || e->num_inputs() != 2 || e->input(0).node == nullptr) return nullptr;
  if (Pinned(*e) || !NoControl(*e)) return nullptr;
  if (!StaticTensor(e->op_desc().input(0).type) || !StaticTensor(e->op_desc().output(0).type)) return nullptr;
  return e;
}

std::vector<int64_t> Dims(const ir::ValueType& t) {
  return std::vector<int64_t>(t.shape().span().begin(), t.shape().span().end());
}

bool Unread(const ir::Node& n) {
  for (int o = 0; o < n.num_outputs(); ++o) {
    if (!n.consumers(o).empty()) return false;
  }
  return n.control_outputs().empty();
}

// Removes `n` when nothing reads it, then its producers the same way (the
// Expand's shape computation), never a boundary node or a graph input.
void RemoveIfUnread(ir::Graph& graph, ir::Node* n) {
  std::vector<ir::Node*> work = {n};
  while (!work.empty()) {
    ir::Node* m = work.back();
    work.pop_back();
    if (m->type() == ir::kPlaceHolder || m->type() == ir::kEnd || m->type() == ir::kData ||
        m->type() == ir::kNetOutput || !Unread(*m) || !m->control_inputs().empty()) {
      continue;
    }
    std::vector<ir::Node*> producers;
    for (int i = 0; i < m->num_inputs(); ++i) {
      if (m->input(i).node != nullptr) producers.push_back(m->input(i).node);
    }
    graph.RemoveNode(m);
    for (ir::Node* p : producers) {
      if (std::find(work.begin(), work.end(), p) == work.end()) work.push_back(p);
    }
  }
}

}  // namespace

absl::StatusOr<bool> GatherFromExpand(ir::Graph& graph) {
  std::vector<ir::Node*> gathers;
  graph.ForEachNode([&](ir::Node* n) {
    if (n->type() == "GatherElements" && n->num_inputs() == 2 && n->num_outputs() == 1) gathers.push_back(n);
  });
  bool changed = false;
  // Expands read through, by name: removed after every rewrite (two gathers
  // may read one Expand, and removing one node may remove another).
  std::vector<std::string> expands;
  for (ir::Node* g : gathers) {
    if (Pinned(*g) || !NoControl(*g) || g->input(0).node == nullptr || g->input(1).node == nullptr) continue;
    const ir::OpDesc& gop = g->op_desc();
    if (!StaticTensor(gop.input(0).type) || !StaticTensor(gop.input(1).type) || !StaticTensor(gop.output(0).type)) {
      continue;
    }
    ir::Node* data_expand = ExpandInput(*g, 0);
    ir::Node* index_expand = ExpandInput(*g, 1);
    if (data_expand == nullptr && index_expand == nullptr) continue;
    const int64_t rank = gop.input(0).type.shape().rank();
    int64_t axis = gop.GetAttrOr<int64_t>("axis", 0);
    if (axis < 0) axis += rank;
    if (rank == 0 || axis < 0 || axis >= rank || gop.input(1).type.shape().rank() != rank) continue;
    // The sources and their descriptors, in input order.
    const ir::OutPort data = data_expand ? data_expand->input(0) : g->input(0);
    const ir::OutPort indices = index_expand ? index_expand->input(0) : g->input(1);
    const ir::IoDesc data_desc = data_expand ? data_expand->op_desc().input(0) : gop.input(0);
    const ir::IoDesc indices_desc = index_expand ? index_expand->op_desc().input(0) : gop.input(1);
    ir::OpDesc op(graph.UniqueNodeName(g->name() + "_broadcast"), std::string(kGatherElementsBroadcastOp));
    op.AddInput(data_desc);
    op.AddInput(indices_desc);
    op.AddOutput(gop.output(0));
    op.SetAttr("axis", ir::AttrValue(axis));
    op.SetAttr(kAttrDataShape, ir::AttrValue(Dims(gop.input(0).type)));
    op.SetAttr(kAttrIndicesShape, ir::AttrValue(Dims(gop.input(1).type)));
    for (std::string_view attr : {ir::kAttrEngineName, kAttrStreamLabel}) {
      if (const ir::AttrValue* v = gop.FindAttr(attr)) op.SetAttr(attr, *v);
    }
    const std::string name = g->name();
    GE_ASSIGN_OR_RETURN(ir::Node * b, graph.AddNode(std::move(op)));
    GE_RETURN_IF_ERROR(graph.AddEdge(data.node, data.index, b, 0));
    GE_RETURN_IF_ERROR(graph.AddEdge(indices.node, indices.index, b, 1));
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(g, 0, b, 0));
    graph.RemoveNode(g);
    GE_RETURN_IF_ERROR(graph.RenameNode(b, name));
    for (ir::Node* e : {data_expand, index_expand}) {
      if (e != nullptr) expands.push_back(e->name());
    }
    changed = true;
  }
  for (const std::string& name : expands) {
    if (ir::Node* e = graph.FindNode(name)) RemoveIfUnread(graph, e);
  }
  return changed;
}

}  // namespace ge::engine::cpu_vector
