// The `_GroupNorm` schema and the pass that forms it (group_norm.h); the
// kernel is group_norm_kernel.cc.
#include "runtime/engines/cpu_dense/group_norm.h"

#include <optional>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/dnnl_util.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

using Kind = ir::AttrValue::Kind;

absl::Status InferGroupNorm(ops::InferenceContext& ctx) {
  const ir::ValueType& x = ctx.input_type(0);
  if (!x.is_tensor()) return ctx.Error("input X is not a tensor");
  const Shape& s = x.shape();
  if (!s.unknown_rank()) {
    if (s.rank() < 3 || s.rank() > 5) return ctx.Error("input X ", s.ToString(), " must have rank 3 to 5");
    const int64_t groups = ctx.op().GetAttrOr<int64_t>("num_groups", 0);
    if (groups < 1) return ctx.Error("num_groups ", groups, " must be positive");
    if (s.dim(1) >= 0 && s.dim(1) % groups != 0) {
      return ctx.Error("channels ", s.dim(1), " are not a multiple of num_groups ", groups);
    }
  }
  ctx.set_output(0, x.dtype(), s);
  return absl::OkStatus();
}

bool Rewritable(const ir::Node& n, const NodeFilter& can_rewrite) {
  return can_rewrite(n) && n.control_inputs().empty() && n.control_outputs().empty();
}

// The single reader of `n`'s output 0 when it may be rewritten.
ir::Node* OnlyReader(const ir::Node& n, const NodeFilter& can_rewrite) {
  const ir::InPort* use = SingleConsumer(n, 0);
  if (use == nullptr || !Rewritable(*use->node, can_rewrite)) return nullptr;
  return use->node;
}

// Equal dims, an unknown batch matching an unknown batch.
bool SameShape(const Shape& a, const Shape& b) {
  if (a.unknown_rank() || b.unknown_rank() || a.rank() != b.rank()) return false;
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (a.dim(d) != b.dim(d) || (d > 0 && a.dim(d) < 0)) return false;
  }
  return true;
}

// A constant operand of an element-wise op over `x` (rank r, C channels)
// that is one value per channel or one value: its per-channel values, or
// nothing when it broadcasts along any other axis.
std::optional<std::vector<double>> PerChannelConst(const ir::Node& op, int port, const Shape& x) {
  const Tensor* t = ConstInput(op, port);
  if (t == nullptr) return std::nullopt;
  const DataType d = t->dtype();
  if (d != DataType::kFloat && d != DataType::kDouble) return std::nullopt;
  const Shape& s = op.op_desc().input(port).type.shape();
  if (!s.IsFullyKnown() || s.rank() > x.rank() || s.NumElementsUnchecked() != t->NumElements()) return std::nullopt;
  const int64_t c = x.dim(1);
  int64_t channel_extent = 1;
  for (int64_t i = 0; i < s.rank(); ++i) {
    const int64_t axis = x.rank() - s.rank() + i;  // right-aligned
    if (s.dim(i) == 1) continue;
    if (axis != 1 || s.dim(i) != c) return std::nullopt;
    channel_extent = c;
  }
  std::vector<double> v(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) v[i] = t->GetAsDouble(channel_extent == 1 ? 0 : i);
  return v;
}

struct Match {
  ir::Node* reshape_in = nullptr;
  ir::Node* norm = nullptr;
  ir::Node* reshape_out = nullptr;
  std::vector<ir::Node*> affine;  // Mul / Add by constants, in order
  ir::Node* sigmoid = nullptr;    // SiLU: Sigmoid and the Mul of its input by it
  ir::Node* silu = nullptr;
  int64_t groups = 0;
  std::vector<double> scale, bias;
};

// The Mul of `t`'s output by its Sigmoid when `t`'s readers are exactly
// that Sigmoid and that Mul.
std::optional<std::pair<ir::Node*, ir::Node*>> SiluAfter(const ir::Node& t, const NodeFilter& can_rewrite) {
  const auto& uses = t.consumers(0);
  if (uses.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    ir::Node* sig = uses[k].node;
    ir::Node* mul = uses[1 - k].node;
    if (sig->type() != "Sigmoid" || mul->type() != "Mul" || !Rewritable(*sig, can_rewrite) ||
        !Rewritable(*mul, can_rewrite) || mul->num_inputs() != 2) {
      continue;
    }
    if (OnlyReader(*sig, can_rewrite) != mul) continue;
    const int other = uses[1 - k].index == 0 ? 1 : 0;
    if (mul->input(other).node != sig) continue;
    return std::make_pair(sig, mul);
  }
  return std::nullopt;
}

std::optional<Match> MatchAt(ir::Node& norm, const NodeFilter& can_rewrite) {
  Match m;
  m.norm = &norm;
  if (norm.num_inputs() != 3 || !Rewritable(norm, can_rewrite) || !norm.input(0)) return std::nullopt;
  m.reshape_in = norm.input(0).node;
  if (m.reshape_in->type() != "Reshape" || !Rewritable(*m.reshape_in, can_rewrite) ||
      OnlyReader(*m.reshape_in, can_rewrite) != &norm || !m.reshape_in->input(0) || IsConstInput(*m.reshape_in, 0)) {
    return std::nullopt;
  }
  const ir::ValueType& xt = m.reshape_in->op_desc().input(0).type;
  if (!xt.is_tensor() || xt.dtype() != DataType::kFloat) return std::nullopt;
  const Shape& x = xt.shape();
  if (!OnlyBatchUnknown(x) || x.rank() < 3 || x.rank() > 5 || x.dim(1) <= 0) return std::nullopt;
  const int64_t c = x.dim(1);
  int64_t spatial = 1;
  for (int64_t d = 2; d < x.rank(); ++d) spatial *= x.dim(d);
  // [N, G, rest...] with rest holding the group's C/G channels of every position.
  const Shape& grouped = norm.op_desc().input(0).type.shape();
  if (!OnlyBatchUnknown(grouped) || grouped.rank() < 3 || grouped.dim(0) != x.dim(0)) return std::nullopt;
  m.groups = grouped.dim(1);
  if (m.groups <= 0 || c % m.groups != 0) return std::nullopt;
  int64_t rest = 1;
  for (int64_t d = 2; d < grouped.rank(); ++d) rest *= grouped.dim(d);
  if (rest != c / m.groups * spatial) return std::nullopt;
  const Tensor* gscale = ConstInput(norm, 1);
  const Tensor* gbias = ConstInput(norm, 2);
  if (gscale == nullptr || gbias == nullptr || gscale->NumElements() != m.groups || gbias->NumElements() != m.groups) {
    return std::nullopt;
  }
  m.reshape_out = OnlyReader(norm, can_rewrite);
  if (m.reshape_out == nullptr || m.reshape_out->type() != "Reshape" ||
      !SameShape(m.reshape_out->op_desc().output(0).type.shape(), x)) {
    return std::nullopt;
  }
  const int64_t per_group = c / m.groups;
  m.scale.resize(static_cast<size_t>(c));
  m.bias.resize(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) {
    m.scale[i] = gscale->GetAsDouble(i / per_group);
    m.bias[i] = gbias->GetAsDouble(i / per_group);
  }
  // The affine tail: a Mul and an Add by constants, each at most once.
  ir::Node* last = m.reshape_out;
  bool mul_seen = false, add_seen = false;
  for (ir::Node* next = OnlyReader(*last, can_rewrite); next != nullptr; next = OnlyReader(*last, can_rewrite)) {
    const bool is_mul = next->type() == "Mul", is_add = next->type() == "Add";
    if ((!is_mul && !is_add) || (is_mul && mul_seen) || (is_add && add_seen) || next->num_inputs() != 2 ||
        !SameShape(next->op_desc().output(0).type.shape(), x)) {
      break;
    }
    const int port = next->input(0).node == last ? 1 : 0;
    const auto v = PerChannelConst(*next, port, x);
    if (!v) break;
    for (int64_t i = 0; i < c; ++i) {
      if (is_mul) {
        m.scale[i] *= (*v)[i];
        m.bias[i] *= (*v)[i];
      } else {
        m.bias[i] += (*v)[i];
      }
    }
    (is_mul ? mul_seen : add_seen) = true;
    m.affine.push_back(next);
    last = next;
  }
  if (auto silu = SiluAfter(*last, can_rewrite)) {
    m.sigmoid = silu->first;
    m.silu = silu->second;
  }
  return m;
}

absl::Status Rewrite(ir::Graph& graph, const Match& m) {
  ir::Node* last = m.silu != nullptr ? m.silu : (m.affine.empty() ? m.reshape_out : m.affine.back());
  const std::string name = last->name();
  const int64_t c = static_cast<int64_t>(m.scale.size());
  std::vector<float> scale(m.scale.begin(), m.scale.end()), bias(m.bias.begin(), m.bias.end());
  GE_ASSIGN_OR_RETURN(ir::Node * scale_node,
                      AddConst(graph, name + "_gn_scale", Tensor::FromVector<float>(scale, Shape{c})));
  GE_ASSIGN_OR_RETURN(ir::Node * bias_node,
                      AddConst(graph, name + "_gn_bias", Tensor::FromVector<float>(bias, Shape{c})));
  ir::OpDesc op(graph.UniqueNodeName(name + "_gn"), std::string(kGroupNormOp));
  op.AddInput(m.reshape_in->op_desc().input(0));
  op.AddInput({"", scale_node->op_desc().output(0).type});
  op.AddInput({"", bias_node->op_desc().output(0).type});
  op.AddOutput(last->op_desc().output(0));
  op.SetAttr("num_groups", ir::AttrValue(m.groups));
  op.SetAttr("epsilon", ir::AttrValue(sdk::FloatAttr(m.norm->op_desc(), "epsilon", 1e-5f)));
  if (m.silu != nullptr) op.SetAttr("activation", ir::AttrValue(std::string("silu")));
  GE_ASSIGN_OR_RETURN(ir::Node * gn, graph.AddNode(std::move(op)));
  const ir::OutPort x = m.reshape_in->input(0);
  GE_RETURN_IF_ERROR(graph.AddEdge(x.node, x.index, gn, 0));
  GE_RETURN_IF_ERROR(graph.AddEdge(scale_node, 0, gn, 1));
  GE_RETURN_IF_ERROR(graph.AddEdge(bias_node, 0, gn, 2));
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(last, 0, gn, 0));
  std::vector<ir::Node*> chain = {m.reshape_in, m.norm, m.reshape_out};
  chain.insert(chain.end(), m.affine.begin(), m.affine.end());
  if (m.sigmoid != nullptr) {
    chain.push_back(m.sigmoid);
    chain.push_back(m.silu);
  }
  std::vector<std::string> inputs;
  for (ir::Node* n : chain) {
    for (int i = 0; i < n->num_inputs(); ++i) {
      const ir::OutPort p = n->input(i);
      bool inside = false;
      for (ir::Node* o : chain) inside = inside || p.node == o;
      if (p && !inside && p.node != x.node) inputs.push_back(p.node->name());
    }
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) graph.RemoveNode(*it);
  RemoveDeadProducers(graph, std::move(inputs));
  return graph.RenameNode(gn, name);
}

}  // namespace

absl::Status RegisterGroupNormOp(ops::OpRegistry& registry) {
  if (registry.Find(kGroupNormOp) != nullptr) return absl::OkStatus();
  ops::OpSchemaBuilder b{std::string(kGroupNormOp), 1};
  b.Doc(
       "cpu_dense: group normalization of X [N, C, S...] over num_groups groups of channels, then "
       "Scale[c] and Bias[c] per channel, then SiLU when activation = \"silu\".")
      .Input("X", "T")
      .Input("Scale", "T")
      .Input("Bias", "T")
      .Output("Y", "T")
      .TypeConstraint("T", {DataType::kFloat})
      .RequiredAttr("num_groups", Kind::kInt)
      .OptionalAttr("epsilon", Kind::kFloat)
      .OptionalAttr("activation", Kind::kString)
      .Infer(InferGroupNorm);
  return registry.Register(std::move(b).Build());
}

absl::StatusOr<bool> FuseGroupNorms(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](const ir::Node* n) {
    if (n->type() == "InstanceNormalization") names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* norm = graph.FindNode(name);
    if (norm == nullptr) continue;
    const std::optional<Match> m = MatchAt(*norm, can_rewrite);
    if (!m) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, *m));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
