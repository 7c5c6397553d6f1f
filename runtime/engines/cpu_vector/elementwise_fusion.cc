// Element-wise fusion: grouping and the rewrite into `_FusedElementwise`.
#include "runtime/engines/cpu_vector/elementwise_fusion.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/cpu_vector/elementwise_ops.h"
#include "runtime/engines/cpu_vector/fused_elementwise.h"

namespace ge::engine::cpu_vector {
namespace {

// The partitioner's stream label (compiler/partition/partition_attrs.h),
// which engines cannot include: the fused node keeps its root's.
constexpr std::string_view kAttrStreamLabel = "_stream_label";
// Programs needing more block registers than this stay unfused.
constexpr int kMaxRegisters = 32;

bool IsFloatTensor(const ir::ValueType& t) { return t.is_tensor() && t.dtype() == DataType::kFloat; }

bool FusableType(std::string_view type, int inputs) {
  if (FindUnaryOp(type) != nullptr) return inputs == 1;
  return FindBinaryOp(type) != nullptr && inputs == 2;
}

// Whether a producer with output `p` may run over the root's elements.
bool SameSize(const ir::ValueType& p, const ir::ValueType& root) {
  if (p.shape().IsFullyKnown() && root.shape().IsFullyKnown()) {
    return p.shape().NumElementsUnchecked() == root.shape().NumElementsUnchecked();
  }
  return p.shape() == root.shape();
}

struct Group {
  ir::Node* root = nullptr;
  std::vector<ir::Node*> members;  // in topological order, root last
};

// The `_FusedElementwise` op for `g`, its external inputs read from the
// graph as it is now (earlier rewrites may have replaced their producers).
absl::StatusOr<ir::OpDesc> BuildOp(ir::Graph& graph, const Group& g, std::vector<ir::OutPort>* sources) {
  std::unordered_map<const ir::Node*, int64_t> instr_of;
  for (size_t k = 0; k < g.members.size(); ++k) instr_of[g.members[k]] = static_cast<int64_t>(k);
  // External inputs first (their count fixes the value numbering).
  std::vector<std::pair<ir::OutPort, ir::IoDesc>> inputs;
  std::map<std::pair<const ir::Node*, int>, int64_t> input_of;
  auto external = [&](const ir::OutPort& src) -> int64_t {
    auto it = input_of.find({src.node, src.index});
    return it == input_of.end() ? -1 : it->second;
  };
  for (ir::Node* m : g.members) {
    for (int i = 0; i < m->num_inputs(); ++i) {
      const ir::OutPort src = m->input(i);
      if (instr_of.count(src.node) != 0 || external(src) >= 0) continue;
      input_of[{src.node, src.index}] = static_cast<int64_t>(inputs.size());
      inputs.emplace_back(src, m->op_desc().input(i));
    }
  }
  const int64_t n_in = static_cast<int64_t>(inputs.size());
  std::vector<std::string> ops;
  std::vector<int64_t> args;
  std::vector<float> alphas, betas;
  bool has_params = false;
  for (ir::Node* m : g.members) {
    ops.push_back(m->type());
    for (int i = 0; i < 2; ++i) {
      if (i >= m->num_inputs()) {
        args.push_back(-1);
        continue;
      }
      const ir::OutPort src = m->input(i);
      auto it = instr_of.find(src.node);
      args.push_back(it != instr_of.end() ? n_in + it->second : external(src));
    }
    UnaryParams p;
    if (const UnaryOpInfo* u = FindUnaryOp(m->type())) p = ReadUnaryParams(m->op_desc(), u->op);
    alphas.push_back(p.alpha);
    betas.push_back(p.beta);
    has_params = has_params || p.alpha != 0.0f || p.beta != 0.0f;
  }
  const ir::Node& root = *g.root;
  ir::OpDesc op(graph.UniqueNodeName(root.name() + "_fused"), std::string(kFusedElementwiseOp));
  for (auto& [src, desc] : inputs) {
    op.AddInput(desc);
    sources->push_back(src);
  }
  op.AddOutput(root.op_desc().output(0));
  op.SetAttr(kAttrFusedOps, std::move(ops));
  op.SetAttr(kAttrFusedArgs, std::move(args));
  if (has_params) {
    op.SetAttr(kAttrFusedAlphas, std::move(alphas));
    op.SetAttr(kAttrFusedBetas, std::move(betas));
  }
  for (std::string_view attr : {ir::kAttrEngineName, kAttrStreamLabel}) {
    if (const ir::AttrValue* v = root.op_desc().FindAttr(attr)) op.SetAttr(attr, *v);
  }
  return op;
}

}  // namespace

bool FusableNode(const ir::Node& node) {
  if (!FusableType(node.type(), node.num_inputs()) || node.num_outputs() != 1) return false;
  const ir::OpDesc& op = node.op_desc();
  if (op.FindAttr(ir::kAttrEngine) != nullptr || op.FindAttr(ir::kAttrHostExec) != nullptr) return false;
  if (!node.control_inputs().empty() || !node.control_outputs().empty()) return false;
  const ir::ValueType& y = op.output(0).type;
  if (!IsFloatTensor(y) || y.shape().unknown_rank()) return false;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.input(i) || !IsFloatTensor(op.input(i).type)) return false;
  }
  return true;
}

bool ElementwiseFusionOptimizer::MayOptimizeFused(const ir::Node& node) const {
  return FusableType(node.type(), node.num_inputs());
}

absl::StatusOr<bool> FuseElementwise(ir::Graph& graph) {
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  std::unordered_map<const ir::Node*, int64_t> position;
  std::vector<char> fusable(order.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    position[order[i]] = static_cast<int64_t>(i);
    fusable[i] = FusableNode(*order[i]) ? 1 : 0;
  }
  // group_of[position]: the group a node joined, -1 for none.
  std::vector<int64_t> group_of(order.size(), -1);
  std::vector<Group> groups;
  for (size_t r = order.size(); r-- > 0;) {
    if (!fusable[r] || group_of[r] >= 0) continue;
    const int64_t id = static_cast<int64_t>(groups.size());
    Group g;
    g.root = order[r];
    const ir::ValueType& root_type = g.root->op_desc().output(0).type;
    group_of[r] = id;
    std::vector<ir::Node*> work = {g.root};
    std::vector<int64_t> member_positions = {static_cast<int64_t>(r)};
    while (!work.empty()) {
      ir::Node* m = work.back();
      work.pop_back();
      for (int i = 0; i < m->num_inputs(); ++i) {
        ir::Node* p = m->input(i).node;
        auto it = position.find(p);
        if (it == position.end()) continue;
        const int64_t pos = it->second;
        if (!fusable[pos] || group_of[pos] >= 0) continue;
        if (!SameSize(p->op_desc().output(0).type, root_type)) continue;
        const std::vector<ir::InPort>& uses = p->consumers(0);
        const bool inside = std::all_of(uses.begin(), uses.end(), [&](const ir::InPort& u) {
          auto c = position.find(u.node);
          return c != position.end() && group_of[c->second] == id;
        });
        if (!inside) continue;
        group_of[pos] = id;
        member_positions.push_back(pos);
        work.push_back(p);
      }
    }
    if (member_positions.size() < 2) {
      group_of[r] = -1;
      // A lone op may still join a later root's group as a producer.
      continue;
    }
    std::sort(member_positions.begin(), member_positions.end());
    for (int64_t pos : member_positions) g.members.push_back(order[pos]);
    groups.push_back(std::move(g));
  }
  bool changed = false;
  for (const Group& g : groups) {
    std::vector<ir::OutPort> sources;
    GE_ASSIGN_OR_RETURN(ir::OpDesc op, BuildOp(graph, g, &sources));
    absl::StatusOr<FusedProgram> program = DecodeFusedProgram(op);
    if (!program.ok() || program->num_registers > kMaxRegisters) continue;
    const std::string name = g.root->name();
    GE_ASSIGN_OR_RETURN(ir::Node * fused, graph.AddNode(std::move(op)));
    for (size_t i = 0; i < sources.size(); ++i) {
      GE_RETURN_IF_ERROR(graph.AddEdge(sources[i].node, sources[i].index, fused, static_cast<int>(i)));
    }
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(g.root, 0, fused, 0));
    for (auto it = g.members.rbegin(); it != g.members.rend(); ++it) graph.RemoveNode(*it);
    GE_RETURN_IF_ERROR(graph.RenameNode(fused, name));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_vector
