// Conv + BatchNormalization folding.
#include "runtime/engines/cpu_dense/conv_bn_fold.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

// The folded parameters of one pair.
struct Folded {
  Tensor weights;
  Tensor bias;
};

// Matches a Conv feeding `bn`; null when the pair cannot fold.
ir::Node* FoldableConv(const ir::Node& bn, const NodeFilter& can_rewrite) {
  if (bn.type() != "BatchNormalization" || bn.num_inputs() != 5 || !can_rewrite(bn)) return nullptr;
  if (sdk::IntAttr(bn.op_desc(), "training_mode", 0) != 0) return nullptr;
  for (int o = 1; o < bn.num_outputs(); ++o) {
    if (!bn.consumers(o).empty()) return nullptr;
  }
  const ir::OutPort p = bn.input(0);
  if (!p || p.index != 0 || p.node->type() != "Conv" || !can_rewrite(*p.node)) return nullptr;
  ir::Node* conv = p.node;
  if (SingleConsumer(*conv, 0) == nullptr || !conv->control_outputs().empty()) return nullptr;
  const DataType dtype = conv->op_desc().output(0).type.dtype();
  if (dtype != DataType::kFloat && dtype != DataType::kDouble) return nullptr;
  if (ConstInput(*conv, 1) == nullptr) return nullptr;
  if (conv->num_inputs() > 2 && conv->input(2) && ConstInput(*conv, 2) == nullptr) return nullptr;
  for (int i = 1; i <= 4; ++i) {
    if (ConstInput(bn, i) == nullptr) return nullptr;
  }
  return conv;
}

absl::StatusOr<Folded> FoldParameters(const ir::Node& conv, const ir::Node& bn) {
  const Tensor& w = *ConstInput(conv, 1);
  const Tensor* b = conv.num_inputs() > 2 && conv.input(2) ? ConstInput(conv, 2) : nullptr;
  const Shape& wshape = conv.op_desc().input(1).type.shape();
  if (!wshape.IsFullyKnown() || wshape.rank() < 1 || wshape.NumElementsUnchecked() != w.NumElements()) {
    return InvalidArgument("weights shape unknown");
  }
  const int64_t m = wshape.dim(0);
  const int64_t per = m > 0 ? w.NumElements() / m : 0;
  std::vector<const Tensor*> params;
  for (int i = 1; i <= 4; ++i) params.push_back(ConstInput(bn, i));
  for (const Tensor* t : params) {
    if (t->NumElements() != m) return InvalidArgument("BN parameters do not match the Conv's channels");
  }
  if (b != nullptr && b->NumElements() != m) return InvalidArgument("bias size mismatch");
  const double epsilon = sdk::FloatAttr(bn.op_desc(), "epsilon", 1e-5f);
  const DataType dtype = w.dtype();
  GE_ASSIGN_OR_RETURN(Tensor wd, Tensor::Allocate(DataType::kDouble, wshape));
  GE_ASSIGN_OR_RETURN(Tensor bd, Tensor::Allocate(DataType::kDouble, Shape{m}));
  for (int64_t c = 0; c < m; ++c) {
    const double a = params[0]->GetAsDouble(c) / std::sqrt(params[3]->GetAsDouble(c) + epsilon);
    for (int64_t k = 0; k < per; ++k) wd.data<double>()[c * per + k] = w.GetAsDouble(c * per + k) * a;
    const double bias = b != nullptr ? b->GetAsDouble(c) : 0.0;
    bd.data<double>()[c] = (bias - params[2]->GetAsDouble(c)) * a + params[1]->GetAsDouble(c);
  }
  Folded folded;
  GE_ASSIGN_OR_RETURN(folded.weights, sdk::ConvertTensor(wd, dtype));
  GE_ASSIGN_OR_RETURN(folded.bias, sdk::ConvertTensor(bd, dtype));
  return folded;
}

absl::Status Rewrite(ir::Graph& graph, ir::Node* conv, ir::Node* bn, Folded folded) {
  std::set<std::string> old_inputs;  // by name: a constant may feed several ports
  for (int i = 1; i < conv->num_inputs(); ++i) {
    if (conv->input(i)) old_inputs.insert(conv->input(i).node->name());
  }
  for (int i = 1; i <= 4; ++i) old_inputs.insert(bn->input(i).node->name());
  const ir::ValueType bias_type = ir::ValueType::Tensor(folded.bias.dtype(), folded.bias.shape());
  GE_ASSIGN_OR_RETURN(ir::Node * w, AddConst(graph, conv->name() + "_folded_weights", std::move(folded.weights)));
  GE_ASSIGN_OR_RETURN(ir::Node * b, AddConst(graph, conv->name() + "_folded_bias", std::move(folded.bias)));
  graph.RemoveInputEdge(conv, 1);
  GE_RETURN_IF_ERROR(graph.AddEdge(w, 0, conv, 1));
  if (conv->num_inputs() < 3) graph.AddInputPort(conv, {"", bias_type});
  graph.RemoveInputEdge(conv, 2);
  conv->mutable_op_desc().mutable_input(2).type = bias_type;
  GE_RETURN_IF_ERROR(graph.AddEdge(b, 0, conv, 2));
  // The Conv now produces the BN's result, under the BN's tensor name.
  conv->mutable_op_desc().mutable_output(0) = bn->op_desc().output(0);
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(bn, 0, conv, 0));
  for (ir::Node* c : bn->control_outputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(conv, c));
  for (ir::Node* c : bn->control_inputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(c, conv));
  graph.RemoveNode(bn);
  for (const std::string& name : old_inputs) RemoveIfUnused(graph, graph.FindNode(name));
  return absl::OkStatus();
}

// The Conv that alone reads `bn`'s output, at X, with constant weights
// and no padding (every tap then reads a normalized value, never a zero
// of the padding); null otherwise.
ir::Node* FoldableNextConv(const ir::Node& bn, const NodeFilter& can_rewrite) {
  if (bn.type() != "BatchNormalization" || bn.num_inputs() != 5 || !can_rewrite(bn) || !bn.input(0)) return nullptr;
  if (sdk::IntAttr(bn.op_desc(), "training_mode", 0) != 0 || !bn.control_outputs().empty()) return nullptr;
  for (int o = 1; o < bn.num_outputs(); ++o) {
    if (!bn.consumers(o).empty()) return nullptr;
  }
  for (int i = 1; i <= 4; ++i) {
    if (ConstInput(bn, i) == nullptr) return nullptr;
  }
  const auto& uses = bn.consumers(0);
  if (uses.size() != 1 || uses[0].index != 0) return nullptr;
  ir::Node* conv = uses[0].node;
  if (conv->type() != "Conv" || !can_rewrite(*conv) || ConstInput(*conv, 1) == nullptr) return nullptr;
  if (conv->num_inputs() > 2 && conv->input(2) && ConstInput(*conv, 2) == nullptr) return nullptr;
  const DataType dtype = conv->op_desc().output(0).type.dtype();
  if ((dtype != DataType::kFloat && dtype != DataType::kDouble) || bn.op_desc().output(0).type.dtype() != dtype) {
    return nullptr;
  }
  const std::string auto_pad = sdk::StringAttr(conv->op_desc(), "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return nullptr;
  for (int64_t p : conv->op_desc().GetAttrOr<std::vector<int64_t>>("pads", {})) {
    if (p != 0) return nullptr;
  }
  return conv;
}

// y = Conv(BN(x), W, B) with a = scale / sqrt(var + epsilon) and
// s = bias - mean * a per input channel c: W'[o, c, k] = W[o, c, k] * a[c],
// B'[o] = B[o] + sum over c, k of W[o, c, k] * s[c] (c through the group).
absl::StatusOr<Folded> FoldIntoNext(const ir::Node& bn, const ir::Node& conv) {
  const Tensor& w = *ConstInput(conv, 1);
  const Tensor* b = conv.num_inputs() > 2 && conv.input(2) ? ConstInput(conv, 2) : nullptr;
  const Shape& wshape = conv.op_desc().input(1).type.shape();
  if (!wshape.IsFullyKnown() || wshape.rank() < 3 || wshape.NumElementsUnchecked() != w.NumElements()) {
    return InvalidArgument("weights shape unknown");
  }
  const int64_t m = wshape.dim(0), cg = wshape.dim(1);
  const int64_t group = sdk::IntAttr(conv.op_desc(), "group", 1);
  if (m <= 0 || cg <= 0 || group <= 0 || m % group != 0) return InvalidArgument("group does not divide");
  const int64_t channels = cg * group, taps = w.NumElements() / (m * cg);
  std::vector<const Tensor*> params;
  for (int i = 1; i <= 4; ++i) params.push_back(ConstInput(bn, i));
  for (const Tensor* t : params) {
    if (t->NumElements() != channels) return InvalidArgument("BN parameters do not match the Conv's input channels");
  }
  if (b != nullptr && b->NumElements() != m) return InvalidArgument("bias size mismatch");
  const double epsilon = sdk::FloatAttr(bn.op_desc(), "epsilon", 1e-5f);
  std::vector<double> a(channels), shift(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = params[0]->GetAsDouble(c) / std::sqrt(params[3]->GetAsDouble(c) + epsilon);
    shift[c] = params[1]->GetAsDouble(c) - params[2]->GetAsDouble(c) * a[c];
  }
  GE_ASSIGN_OR_RETURN(Tensor wd, Tensor::Allocate(DataType::kDouble, wshape));
  GE_ASSIGN_OR_RETURN(Tensor bd, Tensor::Allocate(DataType::kDouble, Shape{m}));
  for (int64_t o = 0; o < m; ++o) {
    const int64_t first = (o / (m / group)) * cg;  // the group's first input channel
    double bias = b != nullptr ? b->GetAsDouble(o) : 0.0;
    for (int64_t ci = 0; ci < cg; ++ci) {
      const int64_t c = first + ci;
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t at = (o * cg + ci) * taps + k;
        const double v = w.GetAsDouble(at);
        wd.data<double>()[at] = v * a[c];
        bias += v * shift[c];
      }
    }
    bd.data<double>()[o] = bias;
  }
  Folded folded;
  GE_ASSIGN_OR_RETURN(folded.weights, sdk::ConvertTensor(wd, w.dtype()));
  GE_ASSIGN_OR_RETURN(folded.bias, sdk::ConvertTensor(bd, w.dtype()));
  return folded;
}

absl::Status RewriteIntoNext(ir::Graph& graph, ir::Node* bn, ir::Node* conv, Folded folded) {
  std::set<std::string> old_inputs;
  for (int i = 1; i < conv->num_inputs(); ++i) {
    if (conv->input(i)) old_inputs.insert(conv->input(i).node->name());
  }
  for (int i = 1; i <= 4; ++i) old_inputs.insert(bn->input(i).node->name());
  const ir::ValueType bias_type = ir::ValueType::Tensor(folded.bias.dtype(), folded.bias.shape());
  GE_ASSIGN_OR_RETURN(ir::Node * w, AddConst(graph, conv->name() + "_prenorm_weights", std::move(folded.weights)));
  GE_ASSIGN_OR_RETURN(ir::Node * b, AddConst(graph, conv->name() + "_prenorm_bias", std::move(folded.bias)));
  graph.RemoveInputEdge(conv, 1);
  GE_RETURN_IF_ERROR(graph.AddEdge(w, 0, conv, 1));
  if (conv->num_inputs() < 3) graph.AddInputPort(conv, {"", bias_type});
  graph.RemoveInputEdge(conv, 2);
  conv->mutable_op_desc().mutable_input(2).type = bias_type;
  GE_RETURN_IF_ERROR(graph.AddEdge(b, 0, conv, 2));
  // The Conv reads the BN's input.
  const ir::OutPort x = bn->input(0);
  conv->mutable_op_desc().mutable_input(0) = bn->op_desc().input(0);
  graph.RemoveInputEdge(conv, 0);
  GE_RETURN_IF_ERROR(graph.AddEdge(x.node, x.index, conv, 0));
  for (ir::Node* c : bn->control_inputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(c, conv));
  graph.RemoveNode(bn);
  for (const std::string& name : old_inputs) RemoveIfUnused(graph, graph.FindNode(name));
  return absl::OkStatus();
}

// The per-output-channel factors of a Mul `mul` by a constant that reads
// `conv`'s output: a scalar, [M, 1, ...] (the Conv's rank less one) or
// [1, M, 1, ...]; empty when it is anything else.
std::vector<double> ChannelFactors(const ir::Node& mul, const ir::Node& conv, int64_t m) {
  if (mul.type() != "Mul" || mul.num_inputs() != 2 || !mul.control_inputs().empty()) return {};
  const int port = mul.input(0).node == &conv ? 1 : 0;
  if (!mul.input(1 - port) || mul.input(1 - port).node != &conv || mul.input(1 - port).index != 0) return {};
  const Tensor* f = ConstInput(mul, port);
  const Shape& out = conv.op_desc().output(0).type.shape();
  if (f == nullptr || out.unknown_rank() || mul.op_desc().output(0).type.shape() != out) return {};
  const Shape& fs = f->shape();
  const int64_t n = f->NumElements();
  bool per_channel = n == 1 && fs.rank() <= out.rank();
  for (int64_t lead : {int64_t{0}, int64_t{1}}) {
    if (per_channel || n != m || fs.rank() != out.rank() - 1 + lead) continue;
    bool ok = true;
    for (int64_t d = 0; d < fs.rank(); ++d) ok = ok && fs.dim(d) == (d == lead ? m : 1);
    per_channel = ok;
  }
  if (!per_channel) return {};
  std::vector<double> factors(m);
  for (int64_t o = 0; o < m; ++o) factors[o] = f->GetAsDouble(n == 1 ? 0 : o);
  return factors;
}

}  // namespace

absl::StatusOr<bool> FoldConvChannelScale(ir::Graph& graph, const NodeFilter& can_rewrite) {
  bool changed = false;
  std::vector<std::string> names;
  graph.ForEachNode([&](ir::Node* n) {
    if (n->type() == "Mul") names.push_back(n->name());
  });
  for (const std::string& name : names) {
    ir::Node* mul = graph.FindNode(name);
    if (mul == nullptr || !can_rewrite(*mul) || mul->num_inputs() != 2) continue;
    ir::Node* conv = nullptr;
    for (int i = 0; i < 2 && conv == nullptr; ++i) {
      ir::Node* p = mul->input(i) ? mul->input(i).node : nullptr;
      if (p != nullptr && p->type() == "Conv" && mul->input(i).index == 0) conv = p;
    }
    if (conv == nullptr || !can_rewrite(*conv) || SingleConsumer(*conv, 0) == nullptr ||
        SingleConsumer(*conv, 0)->node != mul || !conv->control_outputs().empty() || ConstInput(*conv, 1) == nullptr) {
      continue;
    }
    if (conv->num_inputs() > 2 && conv->input(2) && ConstInput(*conv, 2) == nullptr) continue;
    const DataType dtype = conv->op_desc().output(0).type.dtype();
    if ((dtype != DataType::kFloat && dtype != DataType::kDouble) || mul->op_desc().output(0).type.dtype() != dtype) {
      continue;
    }
    const Tensor& w = *ConstInput(*conv, 1);
    const Shape& wshape = conv->op_desc().input(1).type.shape();
    if (!wshape.IsFullyKnown() || wshape.rank() < 1 || wshape.NumElementsUnchecked() != w.NumElements()) continue;
    const int64_t m = wshape.dim(0);
    const std::vector<double> factors = ChannelFactors(*mul, *conv, m);
    if (factors.empty() || m <= 0) continue;
    const Tensor* b = conv->num_inputs() > 2 && conv->input(2) ? ConstInput(*conv, 2) : nullptr;
    if (b != nullptr && b->NumElements() != m) continue;
    const int64_t per = w.NumElements() / m;
    GE_ASSIGN_OR_RETURN(Tensor wd, Tensor::Allocate(DataType::kDouble, wshape));
    GE_ASSIGN_OR_RETURN(Tensor bd, Tensor::Allocate(DataType::kDouble, Shape{m}));
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t k = 0; k < per; ++k) wd.data<double>()[o * per + k] = w.GetAsDouble(o * per + k) * factors[o];
      bd.data<double>()[o] = (b != nullptr ? b->GetAsDouble(o) : 0.0) * factors[o];
    }
    Folded folded;
    GE_ASSIGN_OR_RETURN(folded.weights, sdk::ConvertTensor(wd, w.dtype()));
    GE_ASSIGN_OR_RETURN(folded.bias, sdk::ConvertTensor(bd, w.dtype()));
    std::set<std::string> old_inputs;
    for (int i = 1; i < conv->num_inputs(); ++i) {
      if (conv->input(i)) old_inputs.insert(conv->input(i).node->name());
    }
    for (int i = 0; i < 2; ++i) {
      if (mul->input(i).node != conv) old_inputs.insert(mul->input(i).node->name());
    }
    const ir::ValueType bias_type = ir::ValueType::Tensor(folded.bias.dtype(), folded.bias.shape());
    GE_ASSIGN_OR_RETURN(ir::Node * wn, AddConst(graph, conv->name() + "_scaled_weights", std::move(folded.weights)));
    GE_ASSIGN_OR_RETURN(ir::Node * bn, AddConst(graph, conv->name() + "_scaled_bias", std::move(folded.bias)));
    graph.RemoveInputEdge(conv, 1);
    GE_RETURN_IF_ERROR(graph.AddEdge(wn, 0, conv, 1));
    if (conv->num_inputs() < 3) graph.AddInputPort(conv, {"", bias_type});
    graph.RemoveInputEdge(conv, 2);
    conv->mutable_op_desc().mutable_input(2).type = bias_type;
    GE_RETURN_IF_ERROR(graph.AddEdge(bn, 0, conv, 2));
    conv->mutable_op_desc().mutable_output(0) = mul->op_desc().output(0);
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(mul, 0, conv, 0));
    for (ir::Node* c : mul->control_outputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(conv, c));
    graph.RemoveNode(mul);
    for (const std::string& old : old_inputs) RemoveIfUnused(graph, graph.FindNode(old));
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> FoldBatchNormIntoConv(ir::Graph& graph, const NodeFilter& can_rewrite) {
  bool changed = false;
  std::vector<std::string> names;
  graph.ForEachNode([&](ir::Node* n) {
    if (n->type() == "BatchNormalization") names.push_back(n->name());
  });
  for (const std::string& name : names) {
    ir::Node* node = graph.FindNode(name);
    if (node == nullptr) continue;
    ir::Node* conv = FoldableNextConv(*node, can_rewrite);
    if (conv == nullptr) continue;
    absl::StatusOr<Folded> folded = FoldIntoNext(*node, *conv);
    if (!folded.ok()) continue;
    GE_RETURN_IF_ERROR(RewriteIntoNext(graph, node, conv, *std::move(folded)));
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> FoldConvBatchNorm(ir::Graph& graph, const NodeFilter& can_rewrite) {
  bool changed = false;
  // By name: folding removes nodes a pointer snapshot would still hold.
  std::vector<std::string> names;
  graph.ForEachNode([&](ir::Node* n) {
    if (n->type() == "BatchNormalization") names.push_back(n->name());
  });
  for (const std::string& name : names) {
    ir::Node* node = graph.FindNode(name);
    if (node == nullptr) continue;
    ir::Node* conv = FoldableConv(*node, can_rewrite);
    if (conv == nullptr) continue;
    absl::StatusOr<Folded> folded = FoldParameters(*conv, *node);
    if (!folded.ok()) continue;  // shapes the fold cannot prove: leave the pair alone
    GE_RETURN_IF_ERROR(Rewrite(graph, conv, node, *std::move(folded)));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
