// BinaryPartitioner: the dependency check, then the two graphs built by
// copying nodes and re-creating their edges and boundary Data / NetOutput.
#include "compiler/partition/binary_partitioner.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::partition {
namespace {

using ValueKey = std::pair<const ir::Node*, int>;

bool IsData(const ir::Node& n) { return n.type() == ir::kData; }

absl::Status CheckNodesContainsCycle(const std::vector<const ir::Node*>& order,
                                     const absl::flat_hash_set<const ir::Node*>& known) {
  for (const ir::Node* n : order) {
    if (!known.contains(n)) continue;
    auto check = [&](const ir::Node* producer, std::string_view what) -> absl::Status {
      if (producer == nullptr || known.contains(producer) || IsData(*producer)) return absl::OkStatus();
      return InvalidArgument("cannot slice: known node '", n->name(), "' ", what, " '", producer->name(),
                             "', which is not known; the slice would depend on the remaining graph");
    };
    for (const ir::OutPort& in : n->inputs()) GE_RETURN_IF_ERROR(check(in.node, "reads"));
    for (const ir::Node* c : n->control_inputs()) GE_RETURN_IF_ERROR(check(c, "follows a control edge from"));
  }
  return absl::OkStatus();
}

ir::OpDesc DataDesc(std::string name, int64_t index, const ir::IoDesc& value) {
  ir::OpDesc op(std::move(name), std::string(ir::kData));
  op.SetAttr(ir::kAttrIndex, index);
  op.AddOutput(value);
  return op;
}

// Copies `nodes` (in order) into `dst`, mapping their producers through
// `value_of` (values made outside the copy) or through the copies.
absl::Status CopyNodes(const std::vector<const ir::Node*>& nodes, ir::Graph& dst,
                       const absl::flat_hash_map<ValueKey, ir::OutPort>& value_of,
                       absl::flat_hash_map<const ir::Node*, ir::Node*>& copies) {
  for (const ir::Node* n : nodes) {
    GE_ASSIGN_OR_RETURN(ir::Node * copy, dst.AddNode(n->op_desc()));
    copies[n] = copy;
  }
  for (const ir::Node* n : nodes) {
    ir::Node* copy = copies.at(n);
    for (int i = 0; i < n->num_inputs(); ++i) {
      const ir::OutPort p = n->input(i);
      if (p.node == nullptr) continue;
      auto c = copies.find(p.node);
      ir::OutPort src = c != copies.end() ? ir::OutPort{c->second, p.index} : value_of.at({p.node, p.index});
      GE_RETURN_IF_ERROR(dst.AddEdge(src.node, src.index, copy, i));
    }
    for (const ir::Node* ctl : n->control_inputs()) {
      auto c = copies.find(ctl);
      if (c != copies.end()) GE_RETURN_IF_ERROR(dst.AddControlEdge(c->second, copy));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BinaryPartition> BinaryPartitioner::Partition(const ir::Graph& graph,
                                                            const std::vector<const ir::Node*>& known_nodes) {
  absl::flat_hash_set<const ir::Node*> known;
  for (const ir::Node* n : known_nodes) {
    if (n->owner_graph() != &graph) return InvalidArgument("node '", n->name(), "' is not in graph '", graph.name(), "'");
    if (IsData(*n) || n->type() == ir::kNetOutput) continue;
    if (!n->op_desc().subgraph_names().empty()) {
      return Unimplemented("cannot slice node '", n->name(), "' (", n->type(), "): it owns subgraphs");
    }
    known.insert(n);
  }
  if (known.empty()) return InvalidArgument("cannot slice graph '", graph.name(), "': no compute node is known");
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  const std::vector<const ir::Node*> corder(order.begin(), order.end());
  GE_RETURN_IF_ERROR(CheckNodesContainsCycle(corder, known));

  std::vector<const ir::Node*> inputs;  // original Data nodes by index
  for (const ir::Node* d : graph.InputNodes()) inputs.push_back(d);
  // A known Const read by remaining compute nodes is copied into the
  // remaining graph (the tensor's storage is shared) instead of crossing as
  // a sliced output: the next slice sees its weights as constants (packs
  // them, folds what they feed); the remaining graph's NetOutput reads the
  // copy too. It is also in the slice when a sliced node reads it.
  auto is_shared_const = [&](const ir::Node& n) {
    if (n.type() != ir::kConst || !known.contains(&n) || n.num_inputs() != 0 || !n.control_inputs().empty()) {
      return false;
    }
    for (int o = 0; o < n.num_outputs(); ++o) {
      for (const ir::InPort& c : n.consumers(o)) {
        if (!known.contains(c.node) && c.node->type() != ir::kNetOutput) return true;
      }
    }
    return false;
  };
  auto sliced_reads = [&](const ir::Node& n) {
    for (int o = 0; o < n.num_outputs(); ++o) {
      for (const ir::InPort& c : n.consumers(o)) {
        if (known.contains(c.node)) return true;
      }
    }
    return !n.control_outputs().empty();
  };
  std::vector<const ir::Node*> sliced_nodes;
  std::vector<const ir::Node*> remaining_nodes;
  absl::flat_hash_set<const ir::Node*> shared_consts;
  for (const ir::Node* n : corder) {
    if (IsData(*n)) continue;
    if (is_shared_const(*n)) {
      shared_consts.insert(n);
      remaining_nodes.push_back(n);
      if (sliced_reads(*n)) sliced_nodes.push_back(n);
      continue;
    }
    (known.contains(n) ? sliced_nodes : remaining_nodes).push_back(n);
  }
  if (sliced_nodes.empty()) return InvalidArgument("cannot slice graph '", graph.name(), "': no compute node is known");
  // Which inputs each side reads, and which sliced values cross over.
  absl::flat_hash_set<const ir::Node*> sliced_reads_input;
  absl::flat_hash_set<const ir::Node*> remaining_reads_input;
  std::vector<ValueKey> crossing;
  absl::flat_hash_map<ValueKey, int> crossing_index;
  for (const ir::Node* n : remaining_nodes) {
    for (const ir::OutPort& p : n->inputs()) {
      if (p.node == nullptr) continue;
      if (IsData(*p.node)) remaining_reads_input.insert(p.node);
    }
  }
  for (const ir::Node* n : sliced_nodes) {
    for (const ir::OutPort& p : n->inputs()) {
      if (p.node != nullptr && IsData(*p.node)) sliced_reads_input.insert(p.node);
    }
    for (int o = 0; o < n->num_outputs(); ++o) {
      bool crosses = false;
      for (const ir::InPort& c : n->consumers(o)) {
        crosses = crosses || (!known.contains(c.node) && !shared_consts.contains(n));
      }
      if (crosses && crossing_index.emplace(ValueKey{n, o}, static_cast<int>(crossing.size())).second) {
        crossing.push_back({n, o});
      }
    }
  }

  BinaryPartition result;
  result.sliced = std::make_unique<ir::Graph>(StrCat(graph.name(), "_slice"));
  result.remaining = std::make_unique<ir::Graph>(graph.name());
  absl::flat_hash_map<ValueKey, ir::OutPort> sliced_values;
  absl::flat_hash_map<ValueKey, ir::OutPort> remaining_values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Node* d = inputs[i];
    if (sliced_reads_input.contains(d)) {
      const int64_t index = static_cast<int64_t>(result.linkage.sliced_inputs.size());
      GE_ASSIGN_OR_RETURN(ir::Node * nd, result.sliced->AddNode(DataDesc(d->name(), index, d->op_desc().output(0))));
      sliced_values[{d, 0}] = {nd, 0};
      result.linkage.sliced_inputs.push_back(static_cast<int>(i));
    }
    if (remaining_reads_input.contains(d)) {
      const int64_t index = static_cast<int64_t>(result.linkage.remaining_inputs.size());
      GE_ASSIGN_OR_RETURN(ir::Node * nd, result.remaining->AddNode(DataDesc(d->name(), index, d->op_desc().output(0))));
      remaining_values[{d, 0}] = {nd, 0};
      result.linkage.remaining_inputs.push_back({ValueSource::Kind::kGraphInput, -1, static_cast<int>(i)});
    }
  }
  absl::flat_hash_map<const ir::Node*, ir::Node*> copies;
  GE_RETURN_IF_ERROR(CopyNodes(sliced_nodes, *result.sliced, sliced_values, copies));
  ir::OpDesc out(result.sliced->UniqueNodeName("slice_output"), std::string(ir::kNetOutput));
  for (const auto& [n, o] : crossing) out.AddInput(n->op_desc().output(o));
  GE_ASSIGN_OR_RETURN(ir::Node * net_output, result.sliced->AddNode(std::move(out)));
  for (size_t k = 0; k < crossing.size(); ++k) {
    const auto& [n, o] = crossing[k];
    GE_RETURN_IF_ERROR(result.sliced->AddEdge(copies.at(n), o, net_output, static_cast<int>(k)));
    result.linkage.sliced_outputs.emplace_back(n->name(), o);
  }
  // The remaining graph reads each crossing value through a Data node.
  for (size_t k = 0; k < crossing.size(); ++k) {
    const auto& [n, o] = crossing[k];
    std::string name = StrCat(n->name(), "_", o);
    for (int i = 1; result.remaining->FindNode(name) != nullptr || graph.FindNode(name) != nullptr; ++i) {
      name = StrCat(n->name(), "_", o, "_", i);
    }
    const int64_t index = static_cast<int64_t>(result.linkage.remaining_inputs.size());
    GE_ASSIGN_OR_RETURN(ir::Node * nd, result.remaining->AddNode(DataDesc(name, index, n->op_desc().output(o))));
    remaining_values[{n, o}] = {nd, 0};
    result.linkage.remaining_inputs.push_back({ValueSource::Kind::kSliceOutput, -1, static_cast<int>(k)});
  }
  copies.clear();
  GE_RETURN_IF_ERROR(CopyNodes(remaining_nodes, *result.remaining, remaining_values, copies));
  return result;
}

}  // namespace ge::partition
