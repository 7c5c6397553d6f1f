// The `_ChannelsLastView` schema, its kernel and the pass that forms it
// (channels_last_view.h).
#include "runtime/engines/cpu_dense/channels_last_view.h"

#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine::cpu_dense {
namespace {

// The channels-last format of a rank (3 and 4: NHWC, oneDNN's nwc / nhwc).
ir::Format ChannelsLastOfRank(int64_t rank) { return rank == 5 ? ir::Format::kNDHWC : ir::Format::kNHWC; }

// [0, r-1, 1, ..., r-2]: channels-last to channels-first.
std::vector<int64_t> ToChannelsFirst(int64_t rank) {
  std::vector<int64_t> perm = {0, rank - 1};
  for (int64_t d = 1; d < rank - 1; ++d) perm.push_back(d);
  return perm;
}

bool IsPlain(ir::Format f) { return f == ir::Format::kND || f == ir::Format::kNCHW || f == ir::Format::kNCDHW; }

absl::Status InferChannelsLastView(ops::InferenceContext& ctx) {
  const ir::ValueType& x = ctx.input_type(0);
  if (!x.is_tensor()) return ctx.Error("input X is not a tensor");
  if (!IsPlain(x.tensor().format)) return ctx.Error("input X must be plain");
  const Shape& s = x.shape();
  if (s.unknown_rank()) return ctx.Error("input X has no known rank");
  if (s.rank() < 3 || s.rank() > 5) return ctx.Error("input X ", s.ToString(), " must have rank 3 to 5");
  Shape y = s;
  const std::vector<int64_t> perm = ToChannelsFirst(s.rank());
  for (int64_t d = 0; d < s.rank(); ++d) y.set_dim(d, s.dim(perm[static_cast<size_t>(d)]));
  ctx.set_output(0, ir::ValueType(ir::TensorDesc(x.dtype(), y, ChannelsLastOfRank(s.rank()))));
  return absl::OkStatus();
}

// Output 0 is input 0's storage under the output's logical shape.
class ChannelsLastViewKernel final : public Kernel {
 public:
  absl::Status Compute(ExecuteContext& ctx) override {
    const Value& in = ctx.input_value(0);
    const Shape& shape = ctx.output_type(0).shape();
    if (!in.is_tensor() || !shape.IsFullyKnown() || shape.NumElementsUnchecked() != in.tensor().NumElements()) {
      return Internal("channels-last view of ", in.is_tensor() ? in.tensor().shape().ToString() : "a non-tensor",
                      " as ", shape.ToString());
    }
    return ctx.SetOutputValue(0, Value(in.tensor().Reshaped(shape)));
  }
};

absl::Status CheckChannelsLastView(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (op.num_inputs() != 1 || op.num_outputs() != 1) return Unsupported(op, "not one input and one output");
  const ir::TensorDesc& in = op.input(0).type.tensor();
  const ir::TensorDesc& out = op.output(0).type.tensor();
  if (!IsPlain(in.format)) return Unsupported(op, "input layout ", ir::FormatName(in.format));
  if (!out.shape.unknown_rank() && out.format != ChannelsLastOfRank(out.shape.rank())) {
    return Unsupported(op, "output layout ", ir::FormatName(out.format));
  }
  return absl::OkStatus();
}

bool Rewritable(const ir::Node& n, const NodeFilter& can_rewrite) {
  return can_rewrite(n) && n.control_inputs().empty() && n.control_outputs().empty();
}

// Whether Transpose `t` becomes the view.
bool Eligible(const ir::Node& t, const NodeFilter& can_rewrite) {
  if (t.type() != "Transpose" || !Rewritable(t, can_rewrite) || t.num_inputs() != 1 || t.num_outputs() != 1 ||
      !t.input(0) || IsConstInput(t, 0)) {
    return false;
  }
  const ir::ValueType& x = t.op_desc().input(0).type;
  if (!x.is_tensor() || (x.dtype() != DataType::kFloat && x.dtype() != DataType::kBFloat16) ||
      !IsPlain(x.tensor().format)) {
    return false;
  }
  const Shape& s = x.shape();
  if (s.unknown_rank() || s.rank() < 3 || s.rank() > 5) return false;
  for (int64_t d = 1; d < s.rank(); ++d) {
    if (s.dim(d) <= 0) return false;
  }
  if (t.op_desc().GetAttrOr<std::vector<int64_t>>("perm", {}) != ToChannelsFirst(s.rank())) return false;
  const auto& uses = t.consumers(0);
  if (uses.empty()) return false;
  for (const ir::InPort& use : uses) {
    if (use.node->type() != "Conv" || use.index != 0 || !Rewritable(*use.node, can_rewrite)) return false;
  }
  return true;
}

absl::Status Rewrite(ir::Graph& graph, ir::Node* t) {
  const std::string name = t->name();
  const ir::OutPort src = t->input(0);
  const ir::ValueType in = t->op_desc().input(0).type;
  ir::ValueType out = t->op_desc().output(0).type;
  out.mutable_tensor().format = ChannelsLastOfRank(in.shape().rank());
  ir::OpDesc op(graph.UniqueNodeName(name + "_view"), std::string(kChannelsLastViewOp));
  op.AddInput({"", in});
  op.AddOutput({"", out});
  GE_ASSIGN_OR_RETURN(ir::Node * view, graph.AddNode(std::move(op)));
  GE_RETURN_IF_ERROR(graph.AddEdge(src.node, src.index, view, 0));
  const std::vector<ir::InPort> uses = t->consumers(0);
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(t, 0, view, 0));
  for (const ir::InPort& use : uses) {
    use.node->mutable_op_desc().mutable_input(use.index).type = out;
  }
  graph.RemoveNode(t);
  return graph.RenameNode(view, name);
}

}  // namespace

absl::Status RegisterChannelsLastViewOp(ops::OpRegistry& registry) {
  if (registry.Find(kChannelsLastViewOp) != nullptr) return absl::OkStatus();
  ops::OpSchemaBuilder b{std::string(kChannelsLastViewOp), 1};
  b.Doc(
       "cpu_dense: X ([N, S..., C], plain) viewed as the channels-last storage of its transpose [N, C, S...]; "
       "no copy.")
      .Input("X", "T")
      .Output("Y", "T")
      .TypeConstraint("T", {DataType::kFloat, DataType::kBFloat16})
      .View(0, 0)
      .Infer(InferChannelsLastView);
  return registry.Register(std::move(b).Build());
}

absl::StatusOr<bool> FuseChannelsLastViews(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](const ir::Node* n) {
    if (n->type() == "Transpose") names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* t = graph.FindNode(name);
    if (t == nullptr || !Eligible(*t, can_rewrite)) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, t));
    changed = true;
  }
  return changed;
}

void RegisterChannelsLastViewKernels(DenseKernelTable& table) {
  table.Add({std::string(kChannelsLastViewOp),
             {DataType::kFloat, DataType::kBFloat16},
             CheckChannelsLastView,
             [](const ir::OpDesc&, const DenseContext&) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ChannelsLastViewKernel());
             }});
}

}  // namespace ge::engine::cpu_dense
