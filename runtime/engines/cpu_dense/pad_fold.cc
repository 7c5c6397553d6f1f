// PadFold: constant-zero Pad nodes folded away (pad_fold.h).
#include "runtime/engines/cpu_dense/pad_fold.h"

#include <optional>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/post_ops.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

// The pads of a foldable Pad ([begin..., end...], one pair per dim of its
// input), or nothing.
std::optional<std::vector<int64_t>> ZeroValuedPads(const ir::Node& pad, const NodeFilter& can_rewrite) {
  if (pad.type() != "Pad" || !can_rewrite(pad) || pad.num_inputs() < 2 || pad.num_outputs() != 1) return std::nullopt;
  if (sdk::StringAttr(pad.op_desc(), "mode", "constant") != "constant") return std::nullopt;
  if (!pad.control_inputs().empty() || !pad.control_outputs().empty() || !pad.input(0)) return std::nullopt;
  if (pad.num_inputs() > 3 && pad.input(3)) return std::nullopt;  // axes
  if (pad.num_inputs() > 2 && pad.input(2)) {
    const std::optional<float> value = ConstScalar(pad, 2);
    if (!value || *value != 0.0f) return std::nullopt;
  }
  const ir::ValueType& in = pad.op_desc().input(0).type;
  if (!in.is_tensor() || in.shape().unknown_rank()) return std::nullopt;
  const Tensor* pads = ConstInput(pad, 1);
  if (pads == nullptr || pads->NumElements() != 2 * in.shape().rank()) return std::nullopt;
  std::vector<int64_t> out(static_cast<size_t>(pads->NumElements()));
  for (int64_t i = 0; i < pads->NumElements(); ++i) out[i] = static_cast<int64_t>(pads->GetAsDouble(i));
  return out;
}

bool AllZero(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x != 0) return false;
  }
  return true;
}

// Consumers of a zero Pad read its input instead.
absl::StatusOr<bool> Bypass(ir::Graph& graph, ir::Node* pad) {
  for (const ir::InPort& c : pad->consumers(0)) {
    if (c.node->type() == ir::kNetOutput) return false;  // the Pad's tensor name is a graph output's
  }
  const ir::OutPort src = pad->input(0);
  GE_RETURN_IF_ERROR(graph.ReplaceAllUses(pad, 0, src.node, src.index));
  return true;
}

// The node whose pads can take the Pad's: a Conv (or fused Conv), or an
// AveragePool that counts its pads (count_include_pad, or no pads of its
// own: it then starts counting them), whose input 0 is the Pad's only use.
// The padded zeros are then the window's own pads: a convolution multiplies
// them, a counting average adds them and divides by the whole window. A
// MaxPool's pads are not zeros, so it never folds.
ir::Node* PaddableWindow(const ir::Node& pad, const std::vector<int64_t>& pads, const NodeFilter& can_rewrite) {
  const ir::InPort* use = SingleConsumer(pad, 0);
  if (use == nullptr || use->index != 0) return nullptr;
  ir::Node* node = use->node;
  const ir::OpDesc& op = node->op_desc();
  const bool is_conv =
      node->type() == "Conv" || (node->type() == kDenseFusedOp && op.GetAttrOr<std::string>("base", "") == "Conv");
  const bool is_average = node->type() == "AveragePool";
  if ((!is_conv && !is_average) || !can_rewrite(*node)) return nullptr;
  if (sdk::StringAttr(op, "auto_pad", "NOTSET") != "NOTSET") return nullptr;
  const auto rank = static_cast<int64_t>(pads.size() / 2);
  if (rank < 3) return nullptr;
  for (int64_t p : pads) {
    if (p < 0) return nullptr;
  }
  if (pads[0] != 0 || pads[1] != 0 || pads[rank] != 0 || pads[rank + 1] != 0) return nullptr;
  const std::vector<int64_t> own = op.GetAttrOr<std::vector<int64_t>>("pads", {});
  if (!own.empty() && own.size() != static_cast<size_t>(2 * (rank - 2))) return nullptr;
  if (is_average) {
    if (sdk::IntAttr(op, "count_include_pad", 0) == 0) {
      for (int64_t p : own) {
        if (p != 0) return nullptr;
      }
    }
    // Every folded pad below the window, no ceil_mode, no dilation: then
    // every window still covers an input element (a window of pads only
    // has no agreed value across implementations, where the Pad's zeros
    // averaged to 0).
    const std::vector<int64_t> kernel = op.GetAttrOr<std::vector<int64_t>>("kernel_shape", {});
    if (sdk::IntAttr(op, "ceil_mode", 0) != 0 || kernel.size() != static_cast<size_t>(rank - 2)) return nullptr;
    for (int64_t d : op.GetAttrOr<std::vector<int64_t>>("dilations", {})) {
      if (d != 1) return nullptr;
    }
    for (int64_t i = 0; i < rank - 2; ++i) {
      const int64_t begin = pads[2 + i] + (own.empty() ? 0 : own[i]);
      const int64_t end = pads[rank + 2 + i] + (own.empty() ? 0 : own[rank - 2 + i]);
      if (begin >= kernel[i] || end >= kernel[i]) return nullptr;
    }
  }
  return node;
}

absl::Status AddToWindow(ir::Graph& graph, ir::Node* pad, const std::vector<int64_t>& pads, ir::Node* node) {
  const auto rank = static_cast<int64_t>(pads.size() / 2);
  const int64_t spatial = rank - 2;
  std::vector<int64_t> own = node->op_desc().GetAttrOr<std::vector<int64_t>>("pads", {});
  if (own.empty()) own.assign(static_cast<size_t>(2 * spatial), 0);
  for (int64_t i = 0; i < spatial; ++i) {
    own[i] += pads[2 + i];
    own[spatial + i] += pads[rank + 2 + i];
  }
  ir::OpDesc& op = node->mutable_op_desc();
  op.SetAttr("pads", ir::AttrValue(std::move(own)));
  if (node->type() == "AveragePool") op.SetAttr("count_include_pad", ir::AttrValue(int64_t{1}));
  const ir::OutPort src = pad->input(0);
  graph.RemoveInputEdge(node, 0);
  GE_RETURN_IF_ERROR(graph.AddEdge(src.node, src.index, node, 0));
  op.mutable_input(0).type = pad->op_desc().input(0).type;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> FoldPads(ir::Graph& graph, const NodeFilter& can_rewrite) {
  bool changed = false;
  // By name: folding removes nodes a pointer snapshot would still hold.
  std::vector<std::string> names;
  graph.ForEachNode([&](ir::Node* n) {
    if (n->type() == "Pad") names.push_back(n->name());
  });
  for (const std::string& name : names) {
    ir::Node* pad = graph.FindNode(name);
    if (pad == nullptr) continue;
    const std::optional<std::vector<int64_t>> pads = ZeroValuedPads(*pad, can_rewrite);
    if (!pads) continue;
    bool folded = false;
    if (AllZero(*pads)) {
      GE_ASSIGN_OR_RETURN(folded, Bypass(graph, pad));
    } else if (ir::Node* node = PaddableWindow(*pad, *pads, can_rewrite)) {
      GE_RETURN_IF_ERROR(AddToWindow(graph, pad, *pads, node));
      folded = true;
    }
    if (!folded) continue;
    std::vector<std::string> inputs;
    for (int i = 1; i < pad->num_inputs(); ++i) {
      if (pad->input(i)) inputs.push_back(pad->input(i).node->name());
    }
    graph.RemoveNode(pad);
    for (const std::string& input : inputs) RemoveIfUnused(graph, graph.FindNode(input));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
