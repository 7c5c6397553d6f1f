// The blocked-layout pass: layout decisions in topological order, then
// TransData nodes where a layout meets a reader that cannot take it.
#include "runtime/engines/cpu_dense/layout_pass.h"

#include <array>
#include <map>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/dense_ops.h"
#include "runtime/engines/cpu_dense/post_ops.h"

namespace ge::engine::cpu_dense {
namespace {

enum class Role { kNone, kConv, kFollow, kBinary, kGlobalPool };

constexpr std::array<std::string_view, 18> kFollowers = {
    "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Softplus", "HardSwish", "Sqrt", "Exp", "Log", "Abs",
    "Neg",  "Reciprocal", "Round", "Clip", "MaxPool", "AveragePool", "BatchNormalization"};
constexpr std::array<std::string_view, 6> kBinaries = {"Add", "Sub", "Mul", "Div", "Max", "Min"};

template <size_t N>
bool In(const std::array<std::string_view, N>& list, std::string_view s) {
  for (std::string_view v : list) {
    if (v == s) return true;
  }
  return false;
}

Role RoleOf(const ir::Node& n) {
  const std::string& t = n.type();
  if (t == "Conv") return Role::kConv;
  if (t == kDenseFusedOp) {
    return n.op_desc().GetAttrOr<std::string>(kAttrFusedBase, "") == "Conv" ? Role::kConv : Role::kNone;
  }
  if (In(kFollowers, t)) return Role::kFollow;
  if (In(kBinaries, t)) return Role::kBinary;
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") return Role::kGlobalPool;
  return Role::kNone;
}

bool IsPlain(ir::Format f) { return f == ir::Format::kND || f == ir::Format::kNCHW || f == ir::Format::kNCDHW; }

int64_t Block(ir::Format f) { return f == ir::Format::kNChw16c ? 16 : f == ir::Format::kNChw8c ? 8 : 1; }

// Whether a value of `type` can be stored in `f` at the same byte size.
bool Fits(const ir::ValueType& type, ir::Format f) {
  if (!type.is_tensor() || (type.dtype() != DataType::kFloat && type.dtype() != DataType::kBFloat16)) return false;
  const Shape& s = type.shape();
  if (!s.IsFullyKnown() || s.rank() < 3 || s.rank() > 5 || s.dim(1) <= 0 || s.dim(1) % Block(f) != 0) return false;
  return FormatDesc(s, type.dtype(), f).ok();
}

ir::Format FormatOf(const ir::OutPort& p) { return p.node->op_desc().output(p.index).type.tensor().format; }
const ir::ValueType& TypeOf(const ir::OutPort& p) { return p.node->op_desc().output(p.index).type; }

class LayoutPass {
 public:
  LayoutPass(ir::Graph& graph, const NodeFilter& on_dense, const DenseContext& context)
      : graph_(graph), on_dense_(on_dense), context_(context) {}

  absl::StatusOr<bool> Run() {
    // Layouts start at convolutions and spread from outputs already in a
    // non-plain layout; without either, every decision is "plain" and there
    // is nothing to route (the common case: skip the topological order).
    bool any_source = false;
    graph_.ForEachNode([&](const ir::Node* n) { any_source = any_source || StartsLayouts(*n); });
    if (!any_source) return false;
    GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph_.TopologicalOrder());
    for (ir::Node* n : order) {
      if (!on_dense_(*n) || n->num_outputs() < 1) continue;
      GE_RETURN_IF_ERROR(Decide(*n));
    }
    for (ir::Node* n : order) {
      if (n->num_outputs() >= 1 && !IsPlain(FormatOf({n, 0}))) GE_RETURN_IF_ERROR(Route(n));
    }
    return changed_;
  }

 private:
  // Chooses the layout of `n`'s output 0.
  absl::Status Decide(ir::Node& n) {
    const ir::ValueType& out = n.op_desc().output(0).type;
    ir::Format f = ir::Format::kND;
    switch (RoleOf(n)) {
      case Role::kConv: {
        absl::StatusOr<ir::Format> preferred = ConvPreferredFormat(n.op_desc(), context_);
        if (preferred.ok()) f = *preferred;
        break;
      }
      case Role::kFollow:
        if (n.input(0)) f = FormatOf(n.input(0));
        break;
      case Role::kBinary:
        f = BinaryFormat(n);
        break;
      default: break;
    }
    if (IsPlain(f) || !Fits(out, f)) return absl::OkStatus();
    if (RoleOf(n) == Role::kFollow && !Fits(TypeOf(n.input(0)), f)) return absl::OkStatus();
    ir::Format& format = n.mutable_op_desc().mutable_output(0).type.mutable_tensor().format;
    changed_ = changed_ || format != f;
    format = f;
    if (RoleOf(n) == Role::kBinary) {
      for (int i = 0; i < 2; ++i) {
        if (FormatOf(n.input(i)) != f) GE_RETURN_IF_ERROR(Convert(&n, i, f));
      }
    }
    return absl::OkStatus();
  }

  // A binary op takes a layout when both operands have the output's shape
  // and one of them arrives in a non-plain layout.
  static ir::Format BinaryFormat(const ir::Node& n) {
    if (n.num_inputs() != 2 || !n.input(0) || !n.input(1)) return ir::Format::kND;
    const Shape& y = n.op_desc().output(0).type.shape();
    if (TypeOf(n.input(0)).shape() != y || TypeOf(n.input(1)).shape() != y) return ir::Format::kND;
    const ir::Format a = FormatOf(n.input(0)), b = FormatOf(n.input(1));
    return !IsPlain(a) ? a : b;
  }

  // Whether `c` reads port `port` in layout `f` itself.
  bool Reads(const ir::Node& c, int port, ir::Format f) const {
    if (!on_dense_(c)) return false;
    if (c.type() == ir::kTransData) {  // reads the layout its src_format names
      return c.op_desc().GetAttrOr<std::string>("src_format", "") == ir::FormatName(f);
    }
    const ir::Format out = c.num_outputs() > 0 ? c.op_desc().output(0).type.tensor().format : ir::Format::kND;
    switch (RoleOf(c)) {
      case Role::kConv: return port == 0 || (port == kFusedAddInput && c.type() == kDenseFusedOp);
      case Role::kFollow: return port == 0 && out == f;
      case Role::kBinary: return out == f;
      case Role::kGlobalPool: return port == 0;
      default: return false;
    }
  }

  // Gives every consumer of `n`'s output 0 the layout it reads.
  absl::Status Route(ir::Node* n) {
    const ir::Format f = FormatOf({n, 0});
    const std::vector<ir::InPort> uses = n->consumers(0);
    ir::Node* to_plain = nullptr;
    for (const ir::InPort& use : uses) {
      if (Reads(*use.node, use.index, f)) {
        ir::Format& format = use.node->mutable_op_desc().mutable_input(use.index).type.mutable_tensor().format;
        changed_ = changed_ || format != f;
        format = f;
        continue;
      }
      if (to_plain == nullptr) {
        GE_ASSIGN_OR_RETURN(to_plain, AddTransData({n, 0}, ir::Format::kND));
      }
      graph_.RemoveInputEdge(use.node, use.index);
      GE_RETURN_IF_ERROR(graph_.AddEdge(to_plain, 0, use.node, use.index));
    }
    return absl::OkStatus();
  }

  // Feeds input `port` of `c` through a TransData into layout `f`.
  absl::Status Convert(ir::Node* c, int port, ir::Format f) {
    const ir::OutPort p = c->input(port);
    GE_ASSIGN_OR_RETURN(ir::Node * td, AddTransData(p, f));
    graph_.RemoveInputEdge(c, port);
    GE_RETURN_IF_ERROR(graph_.AddEdge(td, 0, c, port));
    c->mutable_op_desc().mutable_input(port).type.mutable_tensor().format = f;
    return absl::OkStatus();
  }

  absl::StatusOr<ir::Node*> AddTransData(const ir::OutPort& src, ir::Format to) {
    const ir::IoDesc& from = src.node->op_desc().output(src.index);
    const std::string suffix = IsPlain(to) ? "_to_plain" : "_to_blocked";
    ir::OpDesc op(graph_.UniqueNodeName(src.node->name() + suffix), std::string(ir::kTransData));
    op.AddInput(from);
    ir::IoDesc out = from;
    out.type.mutable_tensor().format = to;
    op.AddOutput(out);
    op.SetAttr("src_format", ir::AttrValue(std::string(ir::FormatName(from.type.tensor().format))));
    op.SetAttr("dst_format", ir::AttrValue(std::string(ir::FormatName(to))));
    op.SetAttr(ir::kAttrEngineName, ir::AttrValue("cpu_dense"));
    GE_ASSIGN_OR_RETURN(ir::Node * td, graph_.AddNode(std::move(op)));
    GE_RETURN_IF_ERROR(graph_.AddEdge(src.node, src.index, td, 0));
    changed_ = true;
    return td;
  }

  ir::Graph& graph_;
  const NodeFilter& on_dense_;
  const DenseContext& context_;
  bool changed_ = false;
};

}  // namespace

bool StartsLayouts(const ir::Node& node) {
  return RoleOf(node) == Role::kConv ||
         (node.num_outputs() >= 1 && !IsPlain(node.op_desc().output(0).type.tensor().format));
}

absl::StatusOr<bool> AssignBlockedLayouts(ir::Graph& graph, const NodeFilter& on_dense,
                                          const DenseContext& context) {
  return LayoutPass(graph, on_dense, context).Run();
}

}  // namespace ge::engine::cpu_dense
