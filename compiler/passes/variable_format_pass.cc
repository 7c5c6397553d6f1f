// VariableFormatPass: folds uniform Cast / Reshape / Transpose readers into
// the variable's stored form.
#include "compiler/passes/variable_format_pass.h"

#include <cstring>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "compiler/passes/variable_util.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::compiler {
namespace {

bool CastTargetSupported(DataType d) {
  return d == DataType::kFloat || d == DataType::kDouble || d == DataType::kInt32 || d == DataType::kInt64 ||
         d == DataType::kBool;
}

// The conversion every consumer of `var` applies, or null when they differ.
const ir::Node* UniformConversion(const ir::Node& var) {
  const auto& uses = var.consumers(0);
  if (uses.empty()) return nullptr;
  const ir::Node* first = uses[0].node;
  const std::string& type = first->type();
  if (type != "Cast" && type != "Reshape" && type != "Transpose") return nullptr;
  if (!first->op_desc().output(0).type.is_tensor() || !first->op_desc().output(0).type.shape().IsFullyKnown()) {
    return nullptr;
  }
  if (type == "Cast" && !CastTargetSupported(first->op_desc().output(0).type.dtype())) return nullptr;
  for (const ir::InPort& use : uses) {
    const ir::Node* n = use.node;
    if (use.index != 0 || n->type() != type || n->op_desc().attrs() != first->op_desc().attrs() ||
        n->op_desc().output(0).type != first->op_desc().output(0).type || !n->control_inputs().empty()) {
      return nullptr;
    }
    for (int i = 1; i < n->num_inputs(); ++i) {
      if (!(n->input(i) == first->input(i))) return nullptr;
    }
  }
  return first;
}

absl::StatusOr<Tensor> CastValue(const Tensor& in, DataType to) {
  GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(to, in.shape()));
  for (int64_t i = 0; i < in.NumElements(); ++i) {
    const double v = in.GetAsDouble(i);
    switch (to) {
      case DataType::kFloat: out.data<float>()[i] = static_cast<float>(v); break;
      case DataType::kDouble: out.data<double>()[i] = v; break;
      case DataType::kInt32: out.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DataType::kInt64: out.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      default: out.data<bool>()[i] = v != 0; break;
    }
  }
  return out;
}

absl::StatusOr<Tensor> TransposeValue(const Tensor& in, const std::vector<int64_t>& perm, const Shape& out_shape) {
  GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(in.dtype(), out_shape));
  const size_t rank = perm.size();
  const size_t elem = DataTypeSize(in.dtype());
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in.shape().dim(d);
  std::vector<int64_t> index(rank, 0);
  const auto* src = static_cast<const char*>(in.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < out.NumElements(); ++o) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * in_strides[perm[d]];
    std::memcpy(dst + o * elem, src + offset * elem, elem);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out_shape.dim(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

// `value` as `conv` converts it.
absl::StatusOr<Tensor> Convert(const Tensor& value, const ir::Node& conv) {
  const ir::ValueType& to = conv.op_desc().output(0).type;
  if (conv.type() == "Cast") return CastValue(value, to.dtype());
  if (conv.type() == "Reshape") return value.Reshaped(to.shape());
  std::vector<int64_t> perm = conv.op_desc().GetAttrOr<std::vector<int64_t>>("perm", {});
  if (perm.empty()) {
    for (int64_t d = value.shape().rank(); d-- > 0;) perm.push_back(d);
  }
  return TransposeValue(value, perm, to.shape());
}

// Folds `conv` (and every identical sibling) into `var`.
absl::Status Fold(ir::Graph& graph, ir::Node& var, const ir::Node& conv) {
  ir::OpDesc& op = var.mutable_op_desc();
  for (std::string_view attr : {ir::kAttrValue, engine::kAttrInitValue}) {
    if (auto value = op.GetAttr<Tensor>(attr)) {
      GE_ASSIGN_OR_RETURN(Tensor converted, Convert(*value, conv));
      op.SetAttr(attr, converted);
    }
  }
  const ir::ValueType to = conv.op_desc().output(0).type;
  op.mutable_output(0).type = to;
  op.SetAttr("shape", to.shape());
  op.SetAttr("dtype", static_cast<int64_t>(to.dtype()));
  std::vector<ir::Node*> convs;
  for (const ir::InPort& use : var.consumers(0)) convs.push_back(use.node);
  for (ir::Node* c : convs) {
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(c, 0, &var, 0));
    for (ir::Node* out : std::vector<ir::Node*>(c->control_outputs())) GE_RETURN_IF_ERROR(graph.AddControlEdge(&var, out));
    graph.RemoveNode(c);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> FoldVariable(ir::Graph& graph, ir::Node& var, const std::vector<ir::Node*>& order) {
  if (var.op_desc().GetAttrOr<int64_t>(kAttrVarFormatChanges, 0) >= 1) return false;
  if (var.op_desc().GetAttr<std::string>(engine::kAttrRefVarSrcVarName) || !WritersOf(var, order).empty()) {
    return false;
  }
  std::vector<std::string> road;
  const ir::ValueType original = var.op_desc().output(0).type;
  while (const ir::Node* conv = UniformConversion(var)) {
    road.push_back(conv->type());
    GE_RETURN_IF_ERROR(Annotate(Fold(graph, var, *conv), StrCat("folding into variable '", var.name(), "'")));
  }
  if (road.empty()) return false;
  var.mutable_op_desc().SetAttr(kAttrVarFormatChanges, int64_t{1});
  var.mutable_op_desc().SetAttr(kAttrVarTransRoad, road);
  var.mutable_op_desc().SetAttr(kAttrVarOriginalType, original.shape());
  var.mutable_op_desc().SetAttr(kAttrVarOriginalDtype, static_cast<int64_t>(original.dtype()));
  return true;
}

}  // namespace

absl::StatusOr<bool> VariableFormatPass::Run(ir::Graph& root) {
  bool changed = false;
  for (ir::Graph* graph : GraphAndSubgraphs(root)) {
    if (!HasVariable(*graph)) continue;
    GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph->TopologicalOrder());
    // Folding removes conversions that come after their variable in
    // `order`: take the variables first.
    std::vector<ir::Node*> variables;
    for (ir::Node* node : order) {
      if (node->type() == ir::kVariable) variables.push_back(node);
    }
    for (ir::Node* variable : variables) {
      GE_ASSIGN_OR_RETURN(bool folded, FoldVariable(*graph, *variable, order));
      changed = changed || folded;
    }
  }
  return changed;
}

}  // namespace ge::compiler
