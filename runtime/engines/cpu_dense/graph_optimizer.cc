// cpu_dense's graph optimizer: the pass order and the marking of constant
// weights.
#include "runtime/engines/cpu_dense/graph_optimizer.h"

#include <algorithm>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/channel_shuffle.h"
#include "runtime/engines/cpu_dense/channel_softmax.h"
#include "runtime/engines/cpu_dense/channels_last_view.h"
#include "runtime/engines/cpu_dense/conv_bn_fold.h"
#include "runtime/engines/cpu_dense/conv_tap_trim.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "runtime/engines/cpu_dense/einsum_lowering.h"
#include "runtime/engines/cpu_dense/group_norm.h"
#include "runtime/engines/cpu_dense/layout_pass.h"
#include "runtime/engines/cpu_dense/norm_relu_fusion.h"
#include "runtime/engines/cpu_dense/pad_fold.h"
#include "runtime/engines/cpu_dense/post_op_fusion.h"
#include "runtime/engines/cpu_dense/post_ops.h"
#include "runtime/engines/cpu_dense/reduce_to_pool.h"
#include "runtime/engines/cpu_dense/weight_panels.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr std::string_view kEngineName = "cpu_dense";

bool IsDenseNode(const ir::Node& n) {
  const std::string& t = n.type();
  return t == "Conv" || t == "MatMul" || t == "Gemm" || t == kDenseFusedOp || t == "QLinearConv" ||
         t == "ConvInteger" || t == "QLinearMatMul" || t == "MatMulInteger" || t == "LSTM" || t == "GRU" ||
         t == "RNN" || t == "ConvTranspose";
}

bool FeedsLayerNorm(const ir::Node& n) {
  for (int i = 0; i < n.num_outputs(); ++i) {
    for (const ir::InPort& use : n.consumers(i)) {
      if (use.node->type() == "LayerNormalization") return true;
    }
  }
  return false;
}

// Before placement: anything not pinned elsewhere.
bool UnpinnedOrDense(const ir::Node& n) {
  const ir::OpDesc& op = n.op_desc();
  if (op.GetAttrOr<bool>(ir::kAttrHostExec, false) || op.GetAttrOr<int64_t>(ir::kAttrHostExec, 0) != 0) {
    return false;
  }
  const auto forced = op.GetAttr<std::string>(ir::kAttrEngine);
  return !forced || *forced == kEngineName;
}

// After placement: nodes placed on cpu_dense (or not placed at all).
bool PlacedOnDense(const ir::Node& n) {
  const auto placed = n.op_desc().GetAttr<std::string>(ir::kAttrEngineName);
  return !placed || *placed == kEngineName;
}

}  // namespace

absl::StatusOr<bool> MarkConstInputs(ir::Graph& graph, const NodeFilter& can_rewrite) {
  bool changed = false;
  graph.ForEachNode([&](ir::Node* n) {
    if (!IsDenseNode(*n) || !can_rewrite(*n)) return;
    ir::OpDesc& op = n->mutable_op_desc();
    const auto old = op.GetAttr<std::vector<int64_t>>(kAttrConstInputs);
    // After partitioning, a constant reaches an engine's subgraph through
    // an input node (the engine partition's PlaceHolder, a subgraph's
    // InnerData): what the whole graph's marking found stays marked.
    auto marked_before = [&](int i) {
      if (!old || std::find(old->begin(), old->end(), i) == old->end() || !n->input(i)) return false;
      const std::string& t = n->input(i).node->type();
      return t == ir::kPlaceHolder || t == ir::kInnerData || t == ir::kData;
    };
    std::vector<int64_t> constant;
    for (int i = 1; i < n->num_inputs(); ++i) {
      if (IsConstInput(*n, i) || marked_before(i)) constant.push_back(i);
    }
    if (constant.empty()) {
      changed = op.RemoveAttr(kAttrConstInputs) || changed;
    } else if (!old || *old != constant) {
      op.SetAttr(kAttrConstInputs, ir::AttrValue(std::move(constant)));
      changed = true;
    }
  });
  return changed;
}

absl::StatusOr<bool> CpuDenseGraphOptimizer::OptimizeOne(ir::Graph& graph, const NodeFilter& can_rewrite, bool fold) {
  bool changed = false;
  if (fold) {
    // Einsum products first: their MatMuls then fuse like any other.
    GE_ASSIGN_OR_RETURN(bool einsums, LowerEinsums(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool pads, FoldPads(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool trimmed, TrimConvTaps(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool folded_back, FoldConvBatchNorm(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool folded_ahead, FoldBatchNormIntoConv(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool scaled, FoldConvChannelScale(graph, can_rewrite));
    const bool folded = folded_back || folded_ahead || scaled;
    GE_ASSIGN_OR_RETURN(bool group_norms, FuseGroupNorms(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool softmaxes, FuseChannelSoftmaxes(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool pools, ReduceToGlobalPool(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool shuffles, FuseChannelShuffles(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool slices, FuseChannelSlices(graph, can_rewrite));
    GE_ASSIGN_OR_RETURN(bool views, FuseChannelsLastViews(graph, can_rewrite));
    changed = einsums || pads || trimmed || folded || group_norms || softmaxes || pools || shuffles || slices || views;
  }
  // Before placement a convolution's chain (GELU's arithmetic, a residual
  // Add) fuses first, except an Add feeding a LayerNormalization
  // (cpu_fused's claim): left to the engine partition, the cost model put a
  // TCN's GELU on cpu_vector (a scalar erff per element) and cut
  // cpu_dense's subgraph. Then every product: a MatMul's bias Add, GELU
  // (whose constants are Consts only here: after placement they sit behind
  // the partition's PlaceHolders) and activations fuse now, whatever engine
  // the cost model would give them; residual Adds and SiLU wait for the
  // engine partition, where the composite engine's fusions run first
  // (cpu_fused's add + layer norm claims the residual Add).
  if (fold) {
    const NodeFilter conv_chain = [&can_rewrite](const ir::Node& n) {
      return can_rewrite(n) && n.type() != "MatMul" && n.type() != "Gemm" && !FeedsLayerNorm(n);
    };
    GE_ASSIGN_OR_RETURN(bool conv_fused, FusePostOps(graph, conv_chain, supported_));
    // A Split or Slice of a convolution's activated output (Conv ->
    // BatchNormalization -> ReLU -> Split: ResNeSt's radix splits) reads a
    // fused convolution only now.
    GE_ASSIGN_OR_RETURN(bool late_slices, FuseChannelSlices(graph, can_rewrite));
    changed = changed || conv_fused || late_slices;
  }
  GE_ASSIGN_OR_RETURN(bool fused, FusePostOps(graph, can_rewrite, supported_, /*residual_adds=*/!fold));
  // After placement only: a BatchNormalization's Relu becomes its attribute
  // (norm_relu_fusion.h), which no other engine may see.
  bool norm_relu = false;
  if (!fold) {
    GE_ASSIGN_OR_RETURN(norm_relu, FuseNormRelu(graph, can_rewrite));
  }
  GE_ASSIGN_OR_RETURN(bool marked, MarkConstInputs(graph, can_rewrite));
  return changed || fused || norm_relu || marked;
}

absl::StatusOr<bool> CpuDenseGraphOptimizer::OptimizeOriginalGraph(ir::Graph& graph) {
  GE_ASSIGN_OR_RETURN(bool changed, OptimizeOne(graph, UnpinnedOrDense, /*fold=*/true));
  for (ir::Graph* sub : graph.subgraphs()) {
    GE_ASSIGN_OR_RETURN(bool c, OptimizeOne(*sub, UnpinnedOrDense, /*fold=*/true));
    changed = changed || c;
  }
  return changed;
}

bool CpuDenseGraphOptimizer::MayOptimizeFused(const ir::Node& node) const {
  return IsDenseNode(node) || StartsLayouts(node);
}

absl::StatusOr<bool> CpuDenseGraphOptimizer::OptimizeFusedGraph(ir::Graph& graph) {
  GE_ASSIGN_OR_RETURN(bool changed, OptimizeOne(graph, PlacedOnDense, /*fold=*/false));
  GE_ASSIGN_OR_RETURN(bool layouts, AssignBlockedLayouts(graph, PlacedOnDense, context_));
  return changed || layouts;
}

absl::StatusOr<bool> CpuDenseGraphOptimizer::OptimizeGraphBeforeBuild(ir::Graph& graph) {
  return LayOutWeightPanels(graph, PlacedOnDense);
}

}  // namespace ge::engine::cpu_dense
