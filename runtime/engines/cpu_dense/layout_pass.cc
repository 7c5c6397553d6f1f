// The blocked-layout pass: layout decisions in topological order, then
// TransData nodes where a layout meets a reader that cannot take it.
#include "runtime/engines/cpu_dense/layout_pass.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/dense_fused_op.h"
#include "runtime/engines/cpu_dense/dense_ops.h"
#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/channel_shuffle.h"
#include "runtime/engines/cpu_dense/channel_softmax.h"
#include "runtime/engines/cpu_dense/post_ops.h"

namespace ge::engine::cpu_dense {
namespace {

enum class Role { kNone, kConv, kDeconv, kInt8Conv, kFollow, kBinary, kInt8Binary, kGlobalPool, kConcat, kShuffle };

// cpu_dense's QuantizeLinear / DequantizeLinear are per tensor only, so
// element-wise: they keep the layout while changing the dtype.
// Resize and Pad follow a channel-blocked layout when they keep the batch
// and channels (KeepsChannels); InstanceNormalization always (per-channel
// parameters, like BatchNormalization). Resize and Pad follow channels-last
// as well (one block of all C channels); InstanceNormalization does not, its
// kernel reads plain and channel-blocked tensors only. `_GroupNorm`
// (group_norm.h) follows every layout.
constexpr std::array<std::string_view, 24> kFollowers = {"Relu",
                                                         "LeakyRelu",
                                                         "Sigmoid",
                                                         "Tanh",
                                                         "Elu",
                                                         "Softplus",
                                                         "HardSwish",
                                                         "Sqrt",
                                                         "Exp",
                                                         "Log",
                                                         "Abs",
                                                         "Neg",
                                                         "Reciprocal",
                                                         "Round",
                                                         "Clip",
                                                         "MaxPool",
                                                         "AveragePool",
                                                         "BatchNormalization",
                                                         "QuantizeLinear",
                                                         "DequantizeLinear",
                                                         "Resize",
                                                         "Pad",
                                                         "InstanceNormalization",
                                                         "_GroupNorm"};
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
  if (t == "ConvTranspose") return Role::kDeconv;
  if (t == "QLinearConv") return Role::kInt8Conv;
  if (t == "_QLinearAdd") return Role::kInt8Binary;
  if (t == kDenseFusedOp) {
    return n.op_desc().GetAttrOr<std::string>(kAttrFusedBase, "") == "Conv" ? Role::kConv : Role::kNone;
  }
  if (In(kFollowers, t)) return Role::kFollow;
  if (In(kBinaries, t)) return Role::kBinary;
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") return Role::kGlobalPool;
  if (t == "Concat") return Role::kConcat;
  if (t == kChannelShuffleOp) return Role::kShuffle;
  return Role::kNone;
}

bool IsPlain(ir::Format f) { return f == ir::Format::kND || f == ir::Format::kNCHW || f == ir::Format::kNCDHW; }

bool IsInt8(DataType d) { return d == DataType::kUint8 || d == DataType::kInt8; }

// A u8 / s8 MaxPool or AveragePool of rank 4 or 5: oneDNN pools plain int8
// with its reference kernel only (tens of times slower than the
// channels-last JIT one), so such a pool always takes channels-last.
bool IsInt8Pool(const ir::Node& n) {
  if ((n.type() != "MaxPool" && n.type() != "AveragePool") || n.num_outputs() < 1) return false;
  const ir::ValueType& out = n.op_desc().output(0).type;
  return out.is_tensor() && IsInt8(out.dtype()) && !out.shape().unknown_rank() &&
         (out.shape().rank() == 4 || out.shape().rank() == 5);
}

int64_t Block(ir::Format f) { return f == ir::Format::kNChw16c ? 16 : f == ir::Format::kNChw8c ? 8 : 1; }

// Whether a value of `type` can be stored in `f` at the same byte size:
// f32 and bf16 in any layout, int8 channels-last only (oneDNN's int8
// primitives take it on every x64 ISA).
bool Fits(const ir::ValueType& type, ir::Format f) {
  if (!type.is_tensor()) return false;
  const DataType d = type.dtype();
  const bool int8_layout = IsInt8(d) && (f == ir::Format::kNHWC || f == ir::Format::kNDHWC);
  if (d != DataType::kFloat && d != DataType::kBFloat16 && !int8_layout) return false;
  const Shape& s = type.shape();
  if (!OnlyBatchUnknown(s) || s.rank() < 3 || s.rank() > 5 || s.dim(1) <= 0 || s.dim(1) % Block(f) != 0) {
    return false;
  }
  return FormatDesc(LayoutProbeShape(s), type.dtype(), f).ok();
}

// A [N, C, 1...] operand of a binary op whose other operand and output are
// in channel-blocked layout `f` (C fills whole blocks) or channels-last:
// stored alike plain and in `f`, so it is read where it is, without a
// TransData (squeeze-excite's scale after a convolution oneDNN runs
// channels-last).
bool PerChannelOperand(const ir::ValueType& type, const Shape& out, ir::Format f) {
  if (!type.is_tensor() || IsPlain(f)) return false;
  const Shape& s = type.shape();
  if (s.rank() != out.rank() || s.rank() < 3 || s.dim(1) != out.dim(1) || s.dim(1) % Block(f) != 0) return false;
  if (s.dim(0) != 1 && s.dim(0) != out.dim(0)) return false;
  for (int64_t i = 2; i < s.rank(); ++i) {
    if (s.dim(i) != 1) return false;
  }
  return true;
}

// A one-element operand of a binary op (a scalar, [1], [1, 1, 1, 1]: a
// learned or computed weight times an activation) has the same value at
// every position: it is read where it is, plain, beside an operand in any
// layout (BinaryKernel), without a TransData.
bool OneElement(const ir::ValueType& type, const Shape& out) {
  if (!type.is_tensor()) return false;
  const Shape& s = type.shape();
  return s.IsFullyKnown() && s.NumElementsUnchecked() == 1 && s.rank() <= out.rank();
}

std::atomic<bool>& DepthwiseBlocksSwitch() {
  static std::atomic<bool> on{[] {
    const char* env = std::getenv("GED_CPU_DENSE_DW_BLOCKS");
    return !(env != nullptr && std::strcmp(env, "off") == 0);
  }()};
  return on;
}

// A 2-D f32 depthwise convolution (one output channel per input channel)
// of known shape whose source holds at least kLargeDepthwiseBytes: out of
// the per-core cache (docs/design/cpu_dense.md, "Depthwise blocks").
bool LargeDepthwise(const ir::Node& n) {
  ir::OpDesc base = n.op_desc();
  if (n.type() == kDenseFusedOp) {
    absl::StatusOr<ir::OpDesc> b = BaseOpDesc(n.op_desc());
    if (!b.ok()) return false;
    base = *std::move(b);
  }
  if (base.type() != "Conv" || base.num_inputs() < 2) return false;
  const ir::TensorDesc& x = base.input(0).type.tensor();
  const Shape& w = base.input(1).type.tensor().shape;
  if (x.dtype != DataType::kFloat || !x.shape.IsFullyKnown() || x.shape.rank() != 4 || !w.IsFullyKnown() ||
      w.rank() != 4 || w.dim(1) != 1 || w.dim(0) != x.shape.dim(1)) {
    return false;
  }
  absl::StatusOr<ops::WindowAttrs> attrs = ops::WindowAttrsFromOp(base);
  if (!attrs.ok() || attrs->group != x.shape.dim(1)) return false;
  return x.shape.NumElementsUnchecked() * static_cast<int64_t>(sizeof(float)) >= kLargeDepthwiseBytes;
}

// A tensor of known rank whose dims past the channels are all 1.
bool OnePosition(const ir::ValueType& type) {
  if (!type.is_tensor() || type.shape().unknown_rank() || type.shape().rank() < 3) return false;
  for (int64_t d = 2; d < type.shape().rank(); ++d) {
    if (type.shape().dim(d) != 1) return false;
  }
  return true;
}

bool Commutative(const ir::Node& n) {
  return n.type() == "Add" || n.type() == "Mul" || n.type() == "Max" || n.type() == "Min";
}

ir::Format FormatOf(const ir::OutPort& p) { return p.node->op_desc().output(p.index).type.tensor().format; }
const ir::ValueType& TypeOf(const ir::OutPort& p) { return p.node->op_desc().output(p.index).type; }

// A Resize or Pad whose output has its input's batch and channels (a
// spatial resize or pad): only then does a channel block of the output read
// the same block of the input.
bool KeepsChannels(const ir::Node& n) {
  if (!n.input(0)) return false;
  const Shape& in = TypeOf(n.input(0)).shape();
  const Shape& out = n.op_desc().output(0).type.shape();
  return in.rank() >= 3 && in.rank() == out.rank() && in.dim(0) == out.dim(0) && in.dim(1) == out.dim(1) &&
         in.dim(1) > 0;
}

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
    if (DepthwiseBlocksEnabled()) MarkDepthwiseBlocks(order);
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
  // Depthwise blocks: a large depthwise convolution (LargeDepthwise) that
  // this host runs channels-last between channels-last neighbours, while
  // oneDNN, left to choose, runs it on channel blocks, is marked to take
  // that blocked layout together with the convolution that produces its
  // input (when that one feeds nothing else): oneDNN 2.6's channels-last
  // depthwise kernel (brdgmm_dw) streams such a tensor about twice as
  // slowly as its blocked one (jit_dw), and the 1x1 convolutions on each
  // side run as fast on blocks. The convolutions that read the block's
  // output are asked for it in Decide (the region).
  void MarkDepthwiseBlocks(const std::vector<ir::Node*>& order) {
    for (ir::Node* n : order) {
      if (!on_dense_(*n) || RoleOf(*n) != Role::kConv || !n->input(0) || !LargeDepthwise(*n)) continue;
      ir::Node* producer = n->input(0).node;
      if (!on_dense_(*producer) || RoleOf(*producer) != Role::kConv || n->input(0).index != 0 ||
          producer->consumers(0).size() != 1) {
        continue;
      }
      absl::StatusOr<ir::Format> channels_last = ConvPreferredFormat(n->op_desc(), context_, ir::Format::kNHWC);
      if (!channels_last.ok() || *channels_last != ir::Format::kNHWC) continue;
      // Blocks of 16, AVX-512's: with blocks of 8 oneDNN 2.6 runs AVX2 kernels
      // there (and its reference binary op for a squeeze-excite scale).
      const ir::Format blocked = ir::Format::kNChw16c;
      if (!Fits(n->op_desc().output(0).type, blocked)) continue;
      absl::StatusOr<ir::Format> f = ConvPreferredFormat(n->op_desc(), context_, blocked, blocked);
      if (f.ok() && *f == blocked) {
        depthwise_want_[n] = blocked;
        producer_want_[producer] = blocked;
      }
    }
  }

  // The blocked layout a convolution is asked for (kND: none): a marked
  // depthwise convolution whose producer took it, a marked producer, and a
  // convolution reading the output of a block (the region) in the layout it
  // arrives in, when its output fits that layout.
  ir::Format WantedFormat(const ir::Node& n) const {
    const ir::Format arriving = n.input(0) ? FormatOf(n.input(0)) : ir::Format::kND;
    if (auto it = depthwise_want_.find(&n); it != depthwise_want_.end()) {
      return arriving == it->second ? it->second : ir::Format::kND;
    }
    if (auto it = producer_want_.find(&n); it != producer_want_.end()) return it->second;
    if (n.input(0) && region_.count(n.input(0).node) > 0 && Fits(n.op_desc().output(0).type, arriving)) {
      return arriving;
    }
    return ir::Format::kND;
  }

  // Chooses the layout of `n`'s output 0.
  absl::Status Decide(ir::Node& n) {
    const ir::ValueType& out = n.op_desc().output(0).type;
    ir::Format f = ir::Format::kND;
    switch (RoleOf(n)) {
      case Role::kConv: {
        const ir::Format want = WantedFormat(n);
        absl::StatusOr<ir::Format> preferred =
            ConvPreferredFormat(n.op_desc(), context_, n.input(0) ? FormatOf(n.input(0)) : ir::Format::kND, want);
        if (preferred.ok()) f = *preferred;
        if (want != ir::Format::kND && f == want && depthwise_want_.count(&n) > 0) region_.insert(&n);
        break;
      }
      case Role::kDeconv: {
        absl::StatusOr<ir::Format> preferred =
            DeconvPreferredFormat(n.op_desc(), context_, n.input(0) ? FormatOf(n.input(0)) : ir::Format::kND);
        if (preferred.ok()) f = *preferred;
        break;
      }
      case Role::kInt8Conv:
        // int8 activations stay channels-last between int8 nodes.
        if (out.is_tensor() && IsInt8(out.dtype()))
          f = out.shape().rank() == 5 ? ir::Format::kNDHWC : ir::Format::kNHWC;
        break;
      case Role::kFollow:
        if (n.input(0)) f = FormatOf(n.input(0));
        // An int8 pool reached in plain layout takes channels-last and its
        // input a TransData (IsInt8Pool).
        if (IsPlain(f) && IsInt8Pool(n)) f = out.shape().rank() == 5 ? ir::Format::kNDHWC : ir::Format::kNHWC;
        break;
      case Role::kBinary: f = BinaryFormat(n, 0, 1); break;
      case Role::kConcat: f = ConcatFormat(n); break;
      case Role::kShuffle: f = ShuffleFormat(n); break;
      case Role::kInt8Binary: f = BinaryFormat(n, 0, 3); break;
      default: break;
    }
    if (IsPlain(f) || !Fits(out, f)) return absl::OkStatus();
    if ((RoleOf(n) == Role::kFollow || RoleOf(n) == Role::kShuffle) && !Fits(TypeOf(n.input(0)), f)) {
      return absl::OkStatus();
    }
    if ((n.type() == "Resize" || n.type() == "Pad") && !KeepsChannels(n)) return absl::OkStatus();
    // InstanceNormalization's kernel reads plain and channel-blocked tensors only.
    if (n.type() == "InstanceNormalization" && IsChannelsLast(f)) return absl::OkStatus();
    ir::Format& format = n.mutable_op_desc().mutable_output(0).type.mutable_tensor().format;
    changed_ = changed_ || format != f;
    format = f;
    if (RoleOf(n) == Role::kFollow && n.input(0) && FormatOf(n.input(0)) != f) {
      GE_RETURN_IF_ERROR(Convert(&n, 0, f));  // the int8 pool above
    }
    // Element-wise ops on a block's output (a squeeze-excite scale, an
    // activation left unfused) stay in its region.
    if (RoleOf(n) == Role::kFollow || RoleOf(n) == Role::kBinary) {
      for (int i = 0; i < n.num_inputs(); ++i) {
        if (n.input(i) && region_.count(n.input(i).node) > 0 && FormatOf(n.input(i)) == f) region_.insert(&n);
      }
    }
    if (RoleOf(n) == Role::kConcat || RoleOf(n) == Role::kShuffle) {
      for (int i = 0; i < n.num_inputs(); ++i) {
        if (FormatOf(n.input(i)) != f) GE_RETURN_IF_ERROR(Convert(&n, i, f));
      }
    }
    if (RoleOf(n) == Role::kBinary || RoleOf(n) == Role::kInt8Binary) {
      for (int i : DataPorts(n)) {
        if (FormatOf(n.input(i)) == f) continue;
        if (RoleOf(n) == Role::kBinary && IsPlain(FormatOf(n.input(i))) &&
            (PerChannelOperand(TypeOf(n.input(i)), out.shape(), f) || OneElement(TypeOf(n.input(i)), out.shape()))) {
          continue;  // the kernel reads it in place (BinaryKernel)
        }
        if (RoleOf(n) == Role::kInt8Binary && i == 3 && OneElement(TypeOf(n.input(i)), out.shape())) {
          continue;  // one element reads alike in any layout (int8_add_kernel.cc)
        }
        GE_RETURN_IF_ERROR(Convert(&n, i, f));
      }
    }
    return absl::OkStatus();
  }

  // The operand ports of a binary op (`_QLinearAdd`'s are 0 and 3).
  static std::array<int, 2> DataPorts(const ir::Node& n) {
    return RoleOf(n) == Role::kInt8Binary ? std::array<int, 2>{0, 3} : std::array<int, 2>{0, 1};
  }

  // A Concat along the channels takes the layout of its first non-plain
  // input when every input fills it (whole blocks; channels-last fits any
  // channel count); the others get a TransData.
  static ir::Format ConcatFormat(const ir::Node& n) {
    if (n.num_inputs() < 1) return ir::Format::kND;
    const ir::ValueType& out = n.op_desc().output(0).type;
    const int64_t rank = out.is_tensor() ? out.shape().rank() : -1;
    const int64_t axis = n.op_desc().GetAttrOr<int64_t>("axis", 0);
    if (rank < 3 || (axis != 1 && axis != 1 - rank)) return ir::Format::kND;
    ir::Format f = ir::Format::kND;
    for (int i = 0; i < n.num_inputs() && IsPlain(f); ++i) {
      if (n.input(i)) f = FormatOf(n.input(i));
    }
    // Channel blocks (the kernel copies runs) or channels-last (oneDNN's
    // concat; what AVX-512 convolutions write): a plain join between them
    // cost a reorder of every input and of the result.
    if (IsPlain(f)) return ir::Format::kND;
    for (int i = 0; i < n.num_inputs(); ++i) {
      if (!n.input(i) || !Fits(TypeOf(n.input(i)), f)) return ir::Format::kND;
    }
    return f;
  }

  // A channel shuffle (of one input, or of the join of several along the
  // channels) permutes each position's channel row: it takes the
  // channels-last layout of its first non-plain input when every input fits
  // it (the others get a TransData); its kernel reads plain and
  // channels-last ports only.
  static ir::Format ShuffleFormat(const ir::Node& n) {
    ir::Format f = ir::Format::kND;
    for (int i = 0; i < n.num_inputs() && IsPlain(f); ++i) {
      if (n.input(i)) f = FormatOf(n.input(i));
    }
    if (!IsChannelsLast(f)) return ir::Format::kND;
    for (int i = 0; i < n.num_inputs(); ++i) {
      if (!n.input(i) || !Fits(TypeOf(n.input(i)), f)) return ir::Format::kND;
    }
    return f;
  }

  // A binary op takes a layout when both operands (ports i and j) have the
  // output's shape and one of them arrives in a non-plain layout.
  static ir::Format BinaryFormat(const ir::Node& n, int i, int j) {
    const int inputs = RoleOf(n) == Role::kInt8Binary ? 8 : 2;
    if (n.num_inputs() != inputs || !n.input(i) || !n.input(j)) return ir::Format::kND;
    const Shape& y = n.op_desc().output(0).type.shape();
    const Shape& sa = TypeOf(n.input(i)).shape();
    const Shape& sb = TypeOf(n.input(j)).shape();
    const ir::Format a = FormatOf(n.input(i)), b = FormatOf(n.input(j));
    // With a dynamic batch the operands may still broadcast along it at run
    // time: the kernel swaps operands then, which only commutative ops allow.
    // A one-element second operand never swaps.
    if (!y.IsFullyKnown() && !Commutative(n) && !OneElement(TypeOf(n.input(j)), y)) return ir::Format::kND;
    if (sa == y && sb == y) return !IsPlain(a) ? a : b;
    // A per-channel operand (a squeeze-excite scale) beside a blocked one.
    if (RoleOf(n) == Role::kBinary && sa == y && !IsPlain(a) && PerChannelOperand(TypeOf(n.input(j)), y, a)) return a;
    if (RoleOf(n) == Role::kBinary && sb == y && !IsPlain(b) && PerChannelOperand(TypeOf(n.input(i)), y, b)) return b;
    // A one-element operand beside a laid-out one (`_QLinearAdd`'s B only:
    // a requantization, hard-swish's + 3).
    if (sa == y && !IsPlain(a) && OneElement(TypeOf(n.input(j)), y)) return a;
    if (RoleOf(n) == Role::kBinary && sb == y && !IsPlain(b) && OneElement(TypeOf(n.input(i)), y)) return b;
    return ir::Format::kND;
  }

  // Whether `c` reads port `port` in layout `f` itself.
  bool Reads(const ir::Node& c, int port, ir::Format f) const {
    if (!on_dense_(c)) return false;
    // One position per sample: channels-last storage, and channel-blocked
    // storage of whole blocks, is the plain storage.
    if (c.type() == kChannelSoftmaxOp) {
      return port == 0 && (IsChannelsLast(f) || Block(f) > 1) && OnePosition(TypeOf(c.input(0)));
    }
    if (c.type() == ir::kTransData) {  // reads the layout its src_format names
      return c.op_desc().GetAttrOr<std::string>("src_format", "") == ir::FormatName(f);
    }
    const ir::Format out = c.num_outputs() > 0 ? c.op_desc().output(0).type.tensor().format : ir::Format::kND;
    switch (RoleOf(c)) {
      case Role::kConv: return port == 0 || (port == kFusedAddInput && c.type() == kDenseFusedOp);
      case Role::kDeconv: return port == 0;
      case Role::kInt8Conv: return port == 0;
      case Role::kFollow: return port == 0 && out == f;
      case Role::kBinary: return out == f;
      case Role::kInt8Binary: return (port == 0 || port == 3) && out == f;
      case Role::kGlobalPool: return port == 0;
      case Role::kConcat: return out == f;
      case Role::kShuffle: return out == f;
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
  // Depthwise blocks (MarkDepthwiseBlocks): the layout each marked node is
  // asked for, and the nodes whose output is a block's, in its layout.
  std::map<const ir::Node*, ir::Format> depthwise_want_, producer_want_;
  std::set<const ir::Node*> region_;
};

}  // namespace

bool StartsLayouts(const ir::Node& node) {
  return RoleOf(node) == Role::kConv || RoleOf(node) == Role::kDeconv || RoleOf(node) == Role::kInt8Conv ||
         IsInt8Pool(node) || (node.num_outputs() >= 1 && !IsPlain(node.op_desc().output(0).type.tensor().format));
}

bool DepthwiseBlocksEnabled() { return DepthwiseBlocksSwitch().load(std::memory_order_relaxed); }

void SetDepthwiseBlocksEnabled(bool on) { DepthwiseBlocksSwitch().store(on, std::memory_order_relaxed); }

absl::StatusOr<bool> AssignBlockedLayouts(ir::Graph& graph, const NodeFilter& on_dense, const DenseContext& context) {
  return LayoutPass(graph, on_dense, context).Run();
}

}  // namespace ge::engine::cpu_dense
