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

}  // namespace

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
