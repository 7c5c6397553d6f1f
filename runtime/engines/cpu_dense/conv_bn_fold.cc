// Folds of per-channel affine maps into convolutions (conv_bn_fold.h): a
// BatchNormalization after a Conv, a BatchNormalization before one, and a
// Mul by a per-output-channel constant after one.
#include "runtime/engines/cpu_dense/conv_bn_fold.h"

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

// The folded parameters of one Conv.
struct Folded {
  Tensor weights;
  Tensor bias;
};

// A Conv's constant W (fully known shape) and B (or none), f32 or f64.
struct ConvParams {
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;
  Shape wshape;
  int64_t m = 0;  // output channels
};

std::optional<ConvParams> ConstConvParams(const ir::Node& conv) {
  const DataType dtype = conv.op_desc().output(0).type.dtype();
  if (dtype != DataType::kFloat && dtype != DataType::kDouble) return std::nullopt;
  ConvParams p;
  p.w = ConstInput(conv, 1);
  if (p.w == nullptr) return std::nullopt;
  if (conv.num_inputs() > 2 && conv.input(2)) {
    p.b = ConstInput(conv, 2);
    if (p.b == nullptr) return std::nullopt;
  }
  p.wshape = conv.op_desc().input(1).type.shape();
  if (!p.wshape.IsFullyKnown() || p.wshape.rank() < 1 || p.wshape.NumElementsUnchecked() != p.w->NumElements()) {
    return std::nullopt;
  }
  p.m = p.wshape.dim(0);
  if (p.m <= 0 || (p.b != nullptr && p.b->NumElements() != p.m)) return std::nullopt;
  return p;
}

// An inference BatchNormalization with constant parameters whose
// statistics outputs are unused, as y = a * x + shift per channel
// (a = scale / sqrt(var + epsilon), shift = bias - mean * a) over
// `channels` channels; nothing for any other.
struct Affine {
  std::vector<double> a, shift;
};
std::optional<Affine> BatchNormAffine(const ir::Node& bn, int64_t channels) {
  if (bn.type() != "BatchNormalization" || bn.num_inputs() != 5) return std::nullopt;
  if (sdk::IntAttr(bn.op_desc(), "training_mode", 0) != 0) return std::nullopt;
  for (int o = 1; o < bn.num_outputs(); ++o) {
    if (!bn.consumers(o).empty()) return std::nullopt;
  }
  const Tensor* params[4];
  for (int i = 1; i <= 4; ++i) {
    params[i - 1] = ConstInput(bn, i);
    if (params[i - 1] == nullptr || params[i - 1]->NumElements() != channels) return std::nullopt;
  }
  const double epsilon = sdk::FloatAttr(bn.op_desc(), "epsilon", 1e-5f);
  Affine f{std::vector<double>(channels), std::vector<double>(channels)};
  for (int64_t c = 0; c < channels; ++c) {
    f.a[c] = params[0]->GetAsDouble(c) / std::sqrt(params[3]->GetAsDouble(c) + epsilon);
    f.shift[c] = params[1]->GetAsDouble(c) - params[2]->GetAsDouble(c) * f.a[c];
  }
  return f;
}

// W'[o] = W[o] * factor[o], B'[o] = B[o] * factor[o] + offset[o], computed
// in double (`offset` empty: none).
absl::StatusOr<Folded> ScaleOutputs(const ConvParams& p, const std::vector<double>& factor,
                                    const std::vector<double>& offset) {
  const int64_t per = p.w->NumElements() / p.m;
  GE_ASSIGN_OR_RETURN(Tensor wd, Tensor::Allocate(DataType::kDouble, p.wshape));
  GE_ASSIGN_OR_RETURN(Tensor bd, Tensor::Allocate(DataType::kDouble, Shape{p.m}));
  for (int64_t o = 0; o < p.m; ++o) {
    for (int64_t k = 0; k < per; ++k) wd.data<double>()[o * per + k] = p.w->GetAsDouble(o * per + k) * factor[o];
    const double bias = p.b != nullptr ? p.b->GetAsDouble(o) : 0.0;
    bd.data<double>()[o] = bias * factor[o] + (offset.empty() ? 0.0 : offset[o]);
  }
  Folded folded;
  GE_ASSIGN_OR_RETURN(folded.weights, sdk::ConvertTensor(wd, p.w->dtype()));
  GE_ASSIGN_OR_RETURN(folded.bias, sdk::ConvertTensor(bd, p.w->dtype()));
  return folded;
}

// y = Conv(a * x + shift, W, B) per input channel c: W'[o, c, k] =
// W[o, c, k] * a[c], B'[o] = B[o] + sum over c, k of W[o, c, k] * shift[c]
// (c through the Conv's group).
absl::StatusOr<Folded> ScaleInputs(const ConvParams& p, int64_t group, const Affine& f) {
  const int64_t cg = p.wshape.rank() >= 2 ? p.wshape.dim(1) : 0;
  const int64_t taps = cg > 0 ? p.w->NumElements() / (p.m * cg) : 0;
  GE_ASSIGN_OR_RETURN(Tensor wd, Tensor::Allocate(DataType::kDouble, p.wshape));
  GE_ASSIGN_OR_RETURN(Tensor bd, Tensor::Allocate(DataType::kDouble, Shape{p.m}));
  for (int64_t o = 0; o < p.m; ++o) {
    const int64_t first = (o / (p.m / group)) * cg;  // the group's first input channel
    double bias = p.b != nullptr ? p.b->GetAsDouble(o) : 0.0;
    for (int64_t ci = 0; ci < cg; ++ci) {
      const int64_t c = first + ci;
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t at = (o * cg + ci) * taps + k;
        const double v = p.w->GetAsDouble(at);
        wd.data<double>()[at] = v * f.a[c];
        bias += v * f.shift[c];
      }
    }
    bd.data<double>()[o] = bias;
  }
  Folded folded;
  GE_ASSIGN_OR_RETURN(folded.weights, sdk::ConvertTensor(wd, p.w->dtype()));
  GE_ASSIGN_OR_RETURN(folded.bias, sdk::ConvertTensor(bd, p.w->dtype()));
  return folded;
}

// The names of `node`'s inputs from port `first` on (constants a fold may
// leave unread; by name: a constant may feed several ports).
void OperandNames(const ir::Node& node, int first, std::set<std::string>& names) {
  for (int i = first; i < node.num_inputs(); ++i) {
    if (node.input(i)) names.insert(node.input(i).node->name());
  }
}

// Gives `conv` the folded W and B as new constants named after it with
// `tag`.
absl::Status SetParams(ir::Graph& graph, ir::Node* conv, Folded folded, std::string_view tag) {
  const ir::ValueType bias_type = ir::ValueType::Tensor(folded.bias.dtype(), folded.bias.shape());
  const std::string prefix = conv->name() + "_" + std::string(tag);
  GE_ASSIGN_OR_RETURN(ir::Node * w, AddConst(graph, prefix + "_weights", std::move(folded.weights)));
  GE_ASSIGN_OR_RETURN(ir::Node * b, AddConst(graph, prefix + "_bias", std::move(folded.bias)));
  graph.RemoveInputEdge(conv, 1);
  GE_RETURN_IF_ERROR(graph.AddEdge(w, 0, conv, 1));
  if (conv->num_inputs() < 3) graph.AddInputPort(conv, {"", bias_type});
  graph.RemoveInputEdge(conv, 2);
  conv->mutable_op_desc().mutable_input(2).type = bias_type;
  return graph.AddEdge(b, 0, conv, 2);
}

// `conv` produces `after`'s result, under its tensor name (graph outputs
// keep their names), and `after` goes.
absl::Status TakeOver(ir::Graph& graph, ir::Node* conv, ir::Node* after) {
  conv->mutable_op_desc().mutable_output(0) = after->op_desc().output(0);
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(after, 0, conv, 0));
  for (ir::Node* c : after->control_outputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(conv, c));
  for (ir::Node* c : after->control_inputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(c, conv));
  graph.RemoveNode(after);
  return absl::OkStatus();
}

void RemoveUnused(ir::Graph& graph, const std::set<std::string>& names) {
  for (const std::string& name : names) RemoveIfUnused(graph, graph.FindNode(name));
}

// Runs `fold` on every node of `type` (by name: folding removes nodes a
// pointer snapshot would still hold); whether any folded.
template <typename Fold>
absl::StatusOr<bool> FoldEach(ir::Graph& graph, std::string_view type, Fold fold) {
  std::vector<std::string> names;
  graph.ForEachNode([&](ir::Node* n) {
    if (n->type() == type) names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* node = graph.FindNode(name);
    if (node == nullptr) continue;
    GE_ASSIGN_OR_RETURN(bool folded, fold(node));
    changed = changed || folded;
  }
  return changed;
}

// Conv -> BN: the Conv's only reader is the BN.
absl::StatusOr<bool> FoldBack(ir::Graph& graph, ir::Node* bn, const NodeFilter& can_rewrite) {
  if (!can_rewrite(*bn) || bn->num_inputs() < 1) return false;
  const ir::OutPort p = bn->input(0);
  if (!p || p.index != 0 || p.node->type() != "Conv" || !can_rewrite(*p.node)) return false;
  ir::Node* conv = p.node;
  if (SingleConsumer(*conv, 0) == nullptr || !conv->control_outputs().empty()) return false;
  const std::optional<ConvParams> params = ConstConvParams(*conv);
  if (!params) return false;
  const std::optional<Affine> f = BatchNormAffine(*bn, params->m);
  if (!f) return false;  // shapes the fold cannot prove: leave the pair alone
  GE_ASSIGN_OR_RETURN(Folded folded, ScaleOutputs(*params, f->a, f->shift));
  std::set<std::string> stale;
  OperandNames(*conv, 1, stale);
  OperandNames(*bn, 1, stale);
  GE_RETURN_IF_ERROR(SetParams(graph, conv, std::move(folded), "folded"));
  GE_RETURN_IF_ERROR(TakeOver(graph, conv, bn));
  RemoveUnused(graph, stale);
  return true;
}

// BN -> Conv: the BN's only reader is an unpadded Conv at X (every tap then
// reads a normalized value, never a zero of the padding).
absl::StatusOr<bool> FoldAhead(ir::Graph& graph, ir::Node* bn, const NodeFilter& can_rewrite) {
  if (!can_rewrite(*bn) || bn->num_inputs() < 1 || !bn->input(0) || !bn->control_outputs().empty()) return false;
  const auto& uses = bn->consumers(0);
  if (uses.size() != 1 || uses[0].index != 0) return false;
  ir::Node* conv = uses[0].node;
  if (conv->type() != "Conv" || !can_rewrite(*conv)) return false;
  const std::optional<ConvParams> params = ConstConvParams(*conv);
  if (!params || params->wshape.rank() < 3 ||
      bn->op_desc().output(0).type.dtype() != conv->op_desc().output(0).type.dtype()) {
    return false;
  }
  const std::string auto_pad = sdk::StringAttr(conv->op_desc(), "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  for (int64_t pad : conv->op_desc().GetAttrOr<std::vector<int64_t>>("pads", {})) {
    if (pad != 0) return false;
  }
  const int64_t group = sdk::IntAttr(conv->op_desc(), "group", 1), cg = params->wshape.dim(1);
  if (cg <= 0 || group <= 0 || params->m % group != 0) return false;
  const std::optional<Affine> f = BatchNormAffine(*bn, cg * group);
  if (!f) return false;
  GE_ASSIGN_OR_RETURN(Folded folded, ScaleInputs(*params, group, *f));
  std::set<std::string> stale;
  OperandNames(*conv, 1, stale);
  OperandNames(*bn, 1, stale);
  GE_RETURN_IF_ERROR(SetParams(graph, conv, std::move(folded), "prenorm"));
  // The Conv reads the BN's input.
  const ir::OutPort x = bn->input(0);
  conv->mutable_op_desc().mutable_input(0) = bn->op_desc().input(0);
  graph.RemoveInputEdge(conv, 0);
  GE_RETURN_IF_ERROR(graph.AddEdge(x.node, x.index, conv, 0));
  for (ir::Node* c : bn->control_inputs()) GE_RETURN_IF_ERROR(graph.AddControlEdge(c, conv));
  graph.RemoveNode(bn);
  RemoveUnused(graph, stale);
  return true;
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

// Conv -> Mul by a per-output-channel constant: the Conv's only reader is
// the Mul.
absl::StatusOr<bool> FoldScale(ir::Graph& graph, ir::Node* mul, const NodeFilter& can_rewrite) {
  if (!can_rewrite(*mul) || mul->num_inputs() != 2) return false;
  ir::Node* conv = nullptr;
  for (int i = 0; i < 2 && conv == nullptr; ++i) {
    ir::Node* p = mul->input(i) ? mul->input(i).node : nullptr;
    if (p != nullptr && p->type() == "Conv" && mul->input(i).index == 0) conv = p;
  }
  if (conv == nullptr || !can_rewrite(*conv) || !conv->control_outputs().empty()) return false;
  const ir::InPort* only = SingleConsumer(*conv, 0);
  if (only == nullptr || only->node != mul) return false;
  const std::optional<ConvParams> params = ConstConvParams(*conv);
  if (!params || mul->op_desc().output(0).type.dtype() != conv->op_desc().output(0).type.dtype()) return false;
  const std::vector<double> factors = ChannelFactors(*mul, *conv, params->m);
  if (factors.empty()) return false;
  GE_ASSIGN_OR_RETURN(Folded folded, ScaleOutputs(*params, factors, {}));
  std::set<std::string> stale;
  OperandNames(*conv, 1, stale);
  OperandNames(*mul, 0, stale);
  stale.erase(conv->name());
  GE_RETURN_IF_ERROR(SetParams(graph, conv, std::move(folded), "scaled"));
  GE_RETURN_IF_ERROR(TakeOver(graph, conv, mul));
  RemoveUnused(graph, stale);
  return true;
}

}  // namespace

absl::StatusOr<bool> FoldConvBatchNorm(ir::Graph& graph, const NodeFilter& can_rewrite) {
  return FoldEach(graph, "BatchNormalization", [&](ir::Node* bn) { return FoldBack(graph, bn, can_rewrite); });
}

absl::StatusOr<bool> FoldBatchNormIntoConv(ir::Graph& graph, const NodeFilter& can_rewrite) {
  return FoldEach(graph, "BatchNormalization", [&](ir::Node* bn) { return FoldAhead(graph, bn, can_rewrite); });
}

absl::StatusOr<bool> FoldConvChannelScale(ir::Graph& graph, const NodeFilter& can_rewrite) {
  return FoldEach(graph, "Mul", [&](ir::Node* mul) { return FoldScale(graph, mul, can_rewrite); });
}

}  // namespace ge::engine::cpu_dense
