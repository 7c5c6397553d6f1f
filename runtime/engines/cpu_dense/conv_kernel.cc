// Conv on oneDNN: 1-D, 2-D and 3-D, groups (depthwise included), strides,
// dilations, asymmetric pads and every auto_pad mode, with fused post-ops.
//
// The window geometry (output size and the pads actually applied) comes
// from ops::ConvOutputShape, the function shape inference uses. The
// primitive is created with layout `any`, so oneDNN picks the source,
// weights and destination layouts it runs fastest (channel-blocked on
// AVX2, mostly channels-last on AVX-512), except between channels-last
// ports, where a channels-last JIT primitive is taken when oneDNN has one
// (ChannelsLast); activations are converted at the kernel's edges when the
// graph hands them in another layout, and the weights are packed once
// when they are constant (PackedWeights). The `add` post-op is a oneDNN
// sum: the operand is written into the destination before the primitive
// accumulates onto it.
//
// Pads oneDNN's JIT convolutions cannot take (on AVX2, a pad wider than
// the kernel's register block, as in a dilated 1-D convolution with
// padding = dilation) send oneDNN to its gemm implementation, which wants
// plain layouts. The kernel then pads explicitly: the source is reordered
// into the interior of a zeroed, padded buffer in the layout oneDNN picks
// for an unpadded convolution over it (ExplicitPad).
//
// A 1-D convolution with long output rows runs on oneDNN's direct JIT
// kernel in the layouts brgconv chose (LongSignalConv, dense_ops.h: brgconv's
// primitive grows by about 1 KB per output sample).
//
// Small outputs with wide channels in channel-blocked layouts run the
// engine's own loop instead (small_conv.h: ResNet's 7x7 stage), and so
// do few output channels at high resolution into a plain destination
// (narrow_conv.h: image heads).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/dense_fused_op.h"
#include "runtime/engines/cpu_dense/dense_ops.h"
#include "runtime/engines/cpu_dense/eltwise_tail.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/packed_matmul.h"
#include "runtime/engines/cpu_dense/narrow_conv.h"
#include "runtime/engines/cpu_dense/small_conv.h"
#include "runtime/engines/cpu_dense/window2d.h"

namespace ge::engine::cpu_dense {
namespace {

using tag = dnnl::memory::format_tag;

class ConvKernel final : public DenseKernel {
 public:
  ConvKernel(const ir::OpDesc& op, const DenseContext& ctx, ops::WindowAttrs attrs,
             PostOpChain chain)
      : DenseKernel(op, ctx), attrs_(std::move(attrs)), chain_(std::move(chain)) {}

 private:
  struct ConvPlan final : Plan {
    dnnl::convolution_forward conv;
    dnnl::memory::desc src_user, src_md, dst_user, dst_md, add_user, bias_md, scratchpad_md;
    std::optional<dnnl::reorder> src_reorder, dst_reorder, add_reorder;
    // An add operand of batch 1 against a larger output batch (a dynamic
    // batch): made plain, repeated per image, then reordered.
    std::optional<dnnl::reorder> add_to_plain;
    dnnl::memory::desc add_one_plain, add_full_plain;
    PackedWeights weights;
    bool has_bias = false;
    // Explicit padding: the padded source (src_md) and its interior.
    bool pad_source = false;
    dnnl::memory::desc src_interior;
    // The own small-output path (no oneDNN primitive then).
    std::unique_ptr<SmallConvPlan> small;
    // The own few-output-channel path.
    std::unique_ptr<NarrowConvPlan> narrow;
    std::vector<GemmStep> steps;
    // The chain's exp-based end, run on the destination after the
    // primitive (eltwise_tail.h); empty when oneDNN runs the whole chain.
    std::vector<GemmStep> tail;
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& request) override;
  absl::Status Run(Plan& plan, ExecuteContext& ctx, Scratch& scratch) override;
  absl::StatusOr<dnnl::convolution_forward::primitive_desc> MakePrimitiveDesc(const PlanRequest& request,
                                                                              const ops::WindowGeometry& g,
                                                                              bool has_bias,
                                                                              const PostOpChain& chain) const;
  // The own path's geometry when it takes this convolution.
  std::optional<Window2d> SmallConvFor(const PlanRequest& request, const ops::WindowGeometry& g) const;
  absl::Status RunSmall(ConvPlan& plan, ExecuteContext& ctx, Scratch& scratch);
  // The few-output-channel path's geometry and source layout (blocked,
  // channels-last or plain) when it takes this convolution.
  std::optional<std::pair<Window2d, NarrowSource>> NarrowConvFor(const PlanRequest& request,
                                                                 const ops::WindowGeometry& g) const;
  absl::Status RunNarrow(ConvPlan& plan, ExecuteContext& ctx, Scratch& scratch);

  ops::WindowAttrs attrs_;
  PostOpChain chain_;
  SmallConvWeights small_weights_;    // the own path's panels, shared by every plan
  NarrowConvWeights narrow_weights_;  // the few-output-channel path's, likewise
};

dnnl::memory::dims Dims(const std::vector<int64_t>& v) { return dnnl::memory::dims(v.begin(), v.end()); }

bool IsPlainFormat(ir::Format f) { return f == ir::Format::kND || f == ir::Format::kNCHW; }

// Appends `chain` for oneDNN, each tanh as 2 sigmoid(2 x) - 1 (pow(x, 1)
// scaled by 2, logistic, linear 2 y - 1): oneDNN 2.6's AVX2 tanh post-op took 3.4 ns an
// element on this AMD host (2 ms of ESPCN's 1 -> 64 5x5 convolution, which
// computes in 0.37 ms), the three steps 0.6 (docs/perf.md, "Image heads").
// Absolute error about 1e-7. oneDNN 2.6 applies the first parameters of an
// eltwise algorithm to every post-op of that algorithm, so a chain with a
// linear step of its own (HardSigmoid) keeps oneDNN's tanh.
void AppendConvPostOps(const PostOpChain& chain, dnnl::post_ops& ops) {
  bool own_linear = false;
  for (const PostOp& step : chain.ops) own_linear = own_linear || step.kind == PostOpKind::kLinear;
  for (const PostOp& step : chain.ops) {
    if (step.kind == PostOpKind::kTanh && !own_linear) {
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_pow, 2.0f, 1.0f);
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 2.0f, -1.0f);
      continue;
    }
    PostOpChain one;
    one.ops.push_back(step);
    AppendPostOps(one, AddMode::kSum, {}, ops);
  }
}

}  // namespace

bool LongSignalConv(const Shape& output) {
  return output.rank() == 3 && output.IsFullyKnown() && output.dim(2) >= kLongSignalWidth;
}

std::atomic<int64_t>& LongSignalConvBuilds() {
  static std::atomic<int64_t> builds{0};
  return builds;
}

namespace {

// The primitive descriptor of a convolution with layouts left to oneDNN,
// or with the source in `fixed_src` and the destination in `fixed_dst`
// where those are not kND (weights always `any`).
dnnl::convolution_forward::primitive_desc ConvPrimitiveDesc(
    const dnnl::engine& eng, int64_t group, const PostOpChain& chain, const Shape& x, const Shape& w, DataType dtype,
    const std::optional<dnnl::memory::desc>& bias, const ops::WindowGeometry& g, ir::Format fixed_src = ir::Format::kND,
    ir::Format fixed_dst = ir::Format::kND) {
  const auto type = ToDnnlType(dtype);
  dnnl::memory::dims wdims = ToDnnlDims(w);
  if (group > 1) {
    wdims[0] = w.dim(0) / group;
    wdims.insert(wdims.begin(), group);
  }
  dnnl::memory::dims dilations;
  for (int64_t d : g.dilations) dilations.push_back(d - 1);  // oneDNN counts the gaps
  dnnl::memory::desc src_any(ToDnnlDims(x), type, tag::any);
  const dnnl::memory::desc wei_any(wdims, type, tag::any);
  dnnl::memory::desc dst_any(ToDnnlDims(g.output), type, tag::any);
  if (fixed_src != ir::Format::kND) {
    auto src = FormatDesc(x, dtype, fixed_src);
    if (!src.ok()) throw dnnl::error(dnnl_invalid_arguments, "no such layout");
    src_any = *src;
  }
  if (fixed_dst != ir::Format::kND) {
    auto dst = FormatDesc(g.output, dtype, fixed_dst);
    if (!dst.ok()) throw dnnl::error(dnnl_invalid_arguments, "no such layout");
    dst_any = *dst;
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  AppendConvPostOps(chain, ops);
  attr.set_post_ops(ops);
  using fwd = dnnl::convolution_forward;
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  const auto desc = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
    if (bias) {
      return fwd::desc(prop, alg, src, wei_any, *bias, dst, Dims(g.strides), dilations, Dims(g.pads_begin),
                       Dims(g.pads_end));
    }
    return fwd::desc(prop, alg, src, wei_any, dst, Dims(g.strides), dilations, Dims(g.pads_begin), Dims(g.pads_end));
  };
  fwd::primitive_desc pd(desc(src_any, dst_any), attr, eng);
  if (!LongSignalConv(g.output) || std::string_view(pd.impl_info_str()).rfind("brgconv:", 0) != 0) return pd;
  // The same layouts on the next direct JIT kernel, when oneDNN has one.
  // (next_impl reads the operation descriptor: it must outlive the loop.)
  const fwd::desc fixed = desc(pd.src_desc(), pd.dst_desc());
  fwd::primitive_desc lean(fixed, attr, eng);
  do {
    const std::string_view impl = lean.impl_info_str();
    if (impl.rfind("jit:", 0) == 0) {
      LongSignalConvBuilds().fetch_add(1, std::memory_order_relaxed);
      return lean;
    }
  } while (lean.next_impl());
  return pd;
}

// The convolution without its padding, over the explicitly padded source
// (`padded` set to that source's shape), when oneDNN runs it on a JIT kernel.
std::optional<dnnl::convolution_forward::primitive_desc> UnpaddedConv(const dnnl::engine& eng, int64_t group,
                                                                      const PostOpChain& chain, const Shape& x,
                                                                      const Shape& w, DataType dtype,
                                                                      const std::optional<dnnl::memory::desc>& bias,
                                                                      const ops::WindowGeometry& g, Shape* padded) {
  ops::WindowGeometry unpadded = g;
  Shape p = x;
  for (size_t i = 0; i < g.pads_begin.size(); ++i) {
    p.set_dim(static_cast<int64_t>(i) + 2, x.dim(static_cast<int64_t>(i) + 2) + g.pads_begin[i] + g.pads_end[i]);
    unpadded.pads_begin[i] = 0;
    unpadded.pads_end[i] = 0;
  }
  try {
    auto candidate = ConvPrimitiveDesc(eng, group, chain, p, w, dtype, bias, unpadded);
    if (SlowDnnlImpl(candidate)) return std::nullopt;
    *padded = p;
    return candidate;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

bool AnyPad(const ops::WindowGeometry& g) {
  for (size_t i = 0; i < g.pads_begin.size(); ++i) {
    if (g.pads_begin[i] > 0 || g.pads_end[i] > 0) return true;
  }
  return false;
}

// A padded dilated 1-D convolution (not grouped) is asked for without its
// padding first. oneDNN 2.6's brgconv builds, for a padded dilated 1-D
// convolution over a long signal, a primitive that holds 10-20 MB (4,000
// samples, 32 -> 64 channels, kernel 2, dilation 2-64: WaveNet's and TCNs'
// dilated Conv1d; about 85 MB of WaveNet's 180 MB peak RSS at one thread) and
// takes twice as long to create; the unpadded one over the padded source
// holds none of that and runs as fast. 2-D dilated convolutions keep their
// padding: their primitives stay small, and padding their source explicitly
// cost 3-5% (docs/perf.md, "A seventh held-out set"). Grouped ones run
// on other kernels.
bool PadFirst(int64_t group, const ops::WindowGeometry& g) {
  if (group != 1 || g.dilations.size() != 1 || !AnyPad(g)) return false;
  return g.dilations[0] > 1;
}

// When oneDNN runs the padded convolution on a slow implementation but an
// unpadded one over the explicitly padded source on a JIT one: that one,
// with `padded` set to the padded source's shape.
std::optional<dnnl::convolution_forward::primitive_desc> ExplicitPad(
    const dnnl::engine& eng, int64_t group, const PostOpChain& chain, const Shape& x, const Shape& w, DataType dtype,
    const std::optional<dnnl::memory::desc>& bias, const ops::WindowGeometry& g,
    const dnnl::convolution_forward::primitive_desc& pd, Shape* padded) {
  if (!AnyPad(g) || !SlowDnnlImpl(pd)) return std::nullopt;
  return UnpaddedConv(eng, group, chain, x, w, dtype, bias, g, padded);
}

// A convolution between channels-last neighbours that oneDNN, asked with
// `any`, runs on channel blocks (on AVX-512, grouped 3x3 convolutions
// between 1x1 ones: RegNet's, ResNeXt's) pays a reorder on each side. When
// oneDNN runs the channels-last primitive on a JIT kernel too, that one.
std::optional<dnnl::convolution_forward::primitive_desc> ChannelsLast(
    const dnnl::engine& eng, int64_t group, const PostOpChain& chain, const Shape& x, const Shape& w, DataType dtype,
    const std::optional<dnnl::memory::desc>& bias, const ops::WindowGeometry& g,
    const dnnl::convolution_forward::primitive_desc& chosen) {
  auto src = FormatDesc(x, dtype, ir::Format::kNHWC);
  auto dst = FormatDesc(g.output, dtype, ir::Format::kNHWC);
  if (!src.ok() || !dst.ok() || (chosen.src_desc() == *src && chosen.dst_desc() == *dst)) return std::nullopt;
  try {
    auto candidate = ConvPrimitiveDesc(eng, group, chain, x, w, dtype, bias, g, ir::Format::kNHWC, ir::Format::kNHWC);
    if (SlowDnnlImpl(candidate)) return std::nullopt;
    return candidate;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

bool IsChannelBlocked(ir::Format f) { return f == ir::Format::kNChw16c || f == ir::Format::kNChw8c; }

// Ports in different layouts, or both channel-blocked where oneDNN, asked
// with `any`, prefers another layout (on AVX-512 a 1x1 convolution next to
// a depthwise one the layout pass put on channel blocks, layout_pass.cc):
// when the larger of source and destination is channel-blocked and `chosen`
// wants it in another layout, the primitive with that port (and the other
// one, when it has the same layout) fixed to it, if oneDNN runs that on a
// JIT kernel. Only the smaller tensor is then converted at the kernel's
// edge, and oneDNN's blocked kernels read and write the larger one in
// place.
std::optional<dnnl::convolution_forward::primitive_desc> LargerPortLayout(
    const dnnl::engine& eng, int64_t group, const PostOpChain& chain, const Shape& x, const Shape& w, DataType dtype,
    const std::optional<dnnl::memory::desc>& bias, const ops::WindowGeometry& g,
    const dnnl::convolution_forward::primitive_desc& chosen, ir::Format src_format, ir::Format dst_format) {
  if (!x.IsFullyKnown() || !g.output.IsFullyKnown()) return std::nullopt;
  const bool src_larger = x.NumElementsUnchecked() >= g.output.NumElementsUnchecked();
  const ir::Format f = src_larger ? src_format : dst_format;
  if (!IsChannelBlocked(f)) return std::nullopt;
  auto want = FormatDesc(src_larger ? x : g.output, dtype, f);
  if (!want.ok() || (src_larger ? chosen.src_desc() : chosen.dst_desc()) == *want) return std::nullopt;
  const ir::Format fixed_src = src_larger || src_format == f ? f : ir::Format::kND;
  const ir::Format fixed_dst = !src_larger || dst_format == f ? f : ir::Format::kND;
  try {
    auto candidate = ConvPrimitiveDesc(eng, group, chain, x, w, dtype, bias, g, fixed_src, fixed_dst);
    if (SlowDnnlImpl(candidate)) return std::nullopt;
    return candidate;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

absl::StatusOr<dnnl::convolution_forward::primitive_desc> ConvKernel::MakePrimitiveDesc(
    const PlanRequest& request, const ops::WindowGeometry& g, bool has_bias, const PostOpChain& chain) const {
  std::optional<dnnl::memory::desc> bias;
  if (has_bias) bias = PlainDesc(request.shape(2), request.dtype(2));
  return ConvPrimitiveDesc(eng(), attrs_.group, chain, request.shape(0), request.shape(1), request.dtype(0), bias, g);
}

absl::StatusOr<std::unique_ptr<DenseKernel::Plan>> ConvKernel::Build(const PlanRequest& request) {
  const Shape& x = request.shape(0);
  const DataType dtype = request.dtype(0);
  if (x.rank() < 3 || x.rank() > 5) return NodeUnimplemented(op(), "input ", x.ToString(), " is not 1-D to 3-D");
  if (request.dtype(1) != dtype || (request.has_input(2) && request.dtype(2) != dtype)) {
    return NodeError(op(), "X, W and B must share a dtype");
  }
  auto g = ops::ConvOutputShape(x, request.shape(1), attrs_);
  if (!g.ok()) return NodeError(op(), g.status().message());
  for (size_t i = 0; i < g->pads_begin.size(); ++i) {
    if (g->pads_begin[i] < 0 || g->pads_end[i] < 0) return NodeUnimplemented(op(), "negative pads");
  }
  const ir::ValueType& out_type = request.output_types[0];
  if (out_type.shape().IsFullyKnown() && out_type.shape() != g->output) {
    return NodeError(op(), "output ", out_type.shape().ToString(), " differs from the computed ",
                     g->output.ToString());
  }
  const bool has_bias = request.has_input(2);
  if (has_bias && (request.shape(2).rank() != 1 || request.shape(2).dim(0) != request.shape(1).dim(0))) {
    return NodeError(op(), "bias ", request.shape(2).ToString(), " must be [", request.shape(1).dim(0), "]");
  }
  auto plan = std::make_unique<ConvPlan>();
  plan->has_bias = has_bias;
  if (auto small = SmallConvFor(request, *g)) {
    plan->small = std::make_unique<SmallConvPlan>(*small);
    plan->steps = ToGemmSteps(chain_);
    plan->workspace_bytes =
        Scratch::Padded(plan->small->padded_bytes()) + Scratch::Padded(plan->small->partial_bytes()) + Scratch::kAlign;
    if (const Tensor* w = request.const_input(1)) {
      bool packed = false;
      small_weights_.Get(*w, &packed);
      if (packed) WeightPacks().fetch_add(1, std::memory_order_relaxed);
    }
    return plan;
  }
  if (auto narrow = NarrowConvFor(request, *g)) {
    plan->narrow = std::make_unique<NarrowConvPlan>(narrow->first, narrow->second);
    plan->steps = ToGemmSteps(chain_);
    plan->workspace_bytes = Scratch::Padded(plan->narrow->scratch_bytes()) + Scratch::kAlign;
    if (const Tensor* w = request.const_input(1); w != nullptr) {
      bool packed = false;
      narrow_weights_.Get(*w, &packed);
      if (packed) WeightPacks().fetch_add(1, std::memory_order_relaxed);
    }
    return plan;
  }
  EltwiseTail split = SplitEltwiseTail(chain_, dtype);
  plan->tail = std::move(split.steps);
  const PostOpChain& head = split.head;
  Shape padded;
  std::optional<dnnl::memory::desc> bias;
  if (has_bias) bias = PlainDesc(request.shape(2), request.dtype(2));
  std::optional<dnnl::convolution_forward::primitive_desc> pad_first;
  if (PadFirst(attrs_.group, *g)) {
    pad_first = UnpaddedConv(eng(), attrs_.group, head, x, request.shape(1), dtype, bias, *g, &padded);
  }
  using ConvDesc = dnnl::convolution_forward::primitive_desc;
  GE_ASSIGN_OR_RETURN(ConvDesc pd, pad_first ? absl::StatusOr<ConvDesc>(std::move(*pad_first))
                                             : MakePrimitiveDesc(request, *g, has_bias, head));
  if (pad_first) {
    plan->pad_source = true;
  } else if (auto explicit_pad =
                 ExplicitPad(eng(), attrs_.group, head, x, request.shape(1), dtype, bias, *g, pd, &padded)) {
    pd = *explicit_pad;
    plan->pad_source = true;
  } else if (op().input(0).type.tensor().format == ir::Format::kNHWC &&
             op().output(0).type.tensor().format == ir::Format::kNHWC) {
    // The layout pass gave both ports channels-last (ConvPreferredFormat
    // with a channels-last input).
    if (auto channels_last = ChannelsLast(eng(), attrs_.group, head, x, request.shape(1), dtype, bias, *g, pd)) {
      pd = *channels_last;
    }
  } else if (auto larger = LargerPortLayout(eng(), attrs_.group, head, x, request.shape(1), dtype, bias, *g, pd,
                                            op().input(0).type.tensor().format, op().output(0).type.tensor().format)) {
    pd = *larger;
  }
  if (has_bias) plan->bias_md = pd.bias_desc();
  GE_ASSIGN_OR_RETURN(plan->src_user, FormatDesc(x, dtype, op().input(0).type.tensor().format));
  GE_ASSIGN_OR_RETURN(plan->dst_user, FormatDesc(g->output, dtype, op().output(0).type.tensor().format));
  plan->src_md = pd.src_desc();
  plan->dst_md = pd.dst_desc();
  plan->scratchpad_md = pd.scratchpad_desc();
  size_t bytes = Scratch::Padded(plan->scratchpad_md.get_size());
  if (plan->pad_source) {
    dnnl::memory::dims offsets(static_cast<size_t>(x.rank()), 0);
    for (size_t i = 0; i < g->pads_begin.size(); ++i) offsets[i + 2] = g->pads_begin[i];
    plan->src_interior = plan->src_md.submemory_desc(ToDnnlDims(x), offsets);
    plan->src_reorder = MakeReorder(eng(), plan->src_user, plan->src_interior);
    bytes += Scratch::Padded(plan->src_md.get_size());
  } else if (plan->src_md != plan->src_user) {
    plan->src_reorder = MakeReorder(eng(), plan->src_user, plan->src_md);
    bytes += Scratch::Padded(plan->src_md.get_size());
  }
  if (plan->dst_md != plan->dst_user) {
    plan->dst_reorder = MakeReorder(eng(), plan->dst_md, plan->dst_user);
    bytes += Scratch::Padded(plan->dst_md.get_size());
  }
  if (chain_.has_add()) {
    if (!request.has_input(kFusedAddInput)) return NodeError(op(), "the add operand is missing");
    const Shape& addend = request.shape(kFusedAddInput);
    Shape one = g->output;
    one.set_dim(0, 1);
    const bool repeat = addend != g->output && addend == one;
    if (addend != g->output && !repeat) {
      return NodeError(op(), "the add operand ", addend.ToString(), " must have the output's shape ",
                       g->output.ToString());
    }
    const DataType add_type = request.dtype(kFusedAddInput);
    GE_ASSIGN_OR_RETURN(plan->add_user, FormatDesc(addend, add_type, op().input(kFusedAddInput).type.tensor().format));
    if (repeat) {
      plan->add_one_plain = PlainDesc(addend, add_type);
      plan->add_full_plain = PlainDesc(g->output, add_type);
      plan->add_to_plain = MakeReorder(eng(), plan->add_user, plan->add_one_plain);
      plan->add_reorder = MakeReorder(eng(), plan->add_full_plain, plan->dst_md);
      bytes += Scratch::Padded(plan->add_one_plain.get_size()) + Scratch::Padded(plan->add_full_plain.get_size());
    } else {
      plan->add_reorder = MakeReorder(eng(), plan->add_user, plan->dst_md);
      // The planner may put Y in R's buffer (`_inplace_inputs`); when their
      // layouts differ, R is set aside before it is converted into Y.
      if (plan->add_user != plan->dst_md) bytes += Scratch::Padded(plan->add_user.get_size());
    }
  }
  const dnnl::memory::desc wei_plain = PlainDesc(pd.weights_desc().dims(), pd.weights_desc().data_type());
  plan->weights.Init(eng(), wei_plain, pd.weights_desc(), IsConstInput(1, request));
  bytes += plan->weights.scratch_bytes();
  if (const Tensor* w = request.const_input(1)) GE_RETURN_IF_ERROR(plan->weights.Preload(eng(), *w));
  plan->conv = dnnl::convolution_forward(pd);
  plan->workspace_bytes = bytes + Scratch::kAlign;
  return plan;
}

std::optional<Window2d> ConvKernel::SmallConvFor(const PlanRequest& request, const ops::WindowGeometry& g) const {
  const Shape& x = request.shape(0);
  const Shape& w = request.shape(1);
  if (request.dtype(0) != DataType::kFloat || x.rank() != 4 || attrs_.group != 1 || !IsConstInput(1, request)) {
    return std::nullopt;
  }
  if (op().input(0).type.tensor().format != ir::Format::kNChw8c ||
      op().output(0).type.tensor().format != ir::Format::kNChw8c) {
    return std::nullopt;
  }
  for (const PostOp& step : chain_.ops) {
    if (step.kind != PostOpKind::kAdd && step.kind != PostOpKind::kRelu && step.kind != PostOpKind::kClip &&
        step.kind != PostOpKind::kLinear) {
      return std::nullopt;
    }
  }
  if (chain_.has_add()) {
    if (!request.has_input(kFusedAddInput) || request.shape(kFusedAddInput) != g.output ||
        request.dtype(kFusedAddInput) != DataType::kFloat ||
        op().input(kFusedAddInput).type.tensor().format != ir::Format::kNChw8c) {
      return std::nullopt;
    }
  }
  Window2d s = Window2dOf(x, g);
  if (w.dim(1) != s.in_channels || !SmallConvFits(s)) return std::nullopt;
  return s;
}

std::optional<std::pair<Window2d, NarrowSource>> ConvKernel::NarrowConvFor(const PlanRequest& request,
                                                                           const ops::WindowGeometry& g) const {
  const Shape& x = request.shape(0);
  const Shape& w = request.shape(1);
  if (request.dtype(0) != DataType::kFloat || x.rank() != 4 || attrs_.group != 1 || !IsConstInput(1, request)) {
    return std::nullopt;
  }
  const ir::Format in = op().input(0).type.tensor().format, out = op().output(0).type.tensor().format;
  const NarrowSource source = in == ir::Format::kNChw8c ? NarrowSource::kBlocked
                              : in == ir::Format::kNHWC ? NarrowSource::kChannelsLast
                                                        : NarrowSource::kPlain;
  if ((source == NarrowSource::kPlain && !IsPlainFormat(in)) || !IsPlainFormat(out)) return std::nullopt;
  if (source == NarrowSource::kBlocked && x.dim(1) % kNarrowLanes != 0) return std::nullopt;
  for (const PostOp& step : chain_.ops) {
    if (!NarrowConvStep(static_cast<int32_t>(step.kind))) return std::nullopt;
  }
  if (chain_.has_add()) {
    if (!request.has_input(kFusedAddInput) || request.shape(kFusedAddInput) != g.output ||
        request.dtype(kFusedAddInput) != DataType::kFloat ||
        !IsPlainFormat(op().input(kFusedAddInput).type.tensor().format)) {
      return std::nullopt;
    }
  }
  const Window2d s = Window2dOf(x, g);
  if (w.dim(1) != s.in_channels || !NarrowConvFits(s)) return std::nullopt;
  return std::make_pair(s, source);
}

absl::Status ConvKernel::RunSmall(ConvPlan& plan, ExecuteContext& ctx, Scratch& scratch) {
  GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
  // Packed at Prepare when the value was known there; else (or for new
  // storage) now, once for constant storage, whichever run comes first.
  bool packed = false;
  const SmallConvWeights::Panels panels = small_weights_.Get(ctx.input(1), &packed);
  if (packed) WeightPacks().fetch_add(1, std::memory_order_relaxed);
  auto* padded = static_cast<float*>(scratch.Take(plan.small->padded_bytes()));
  auto* partial = static_cast<float*>(scratch.Take(plan.small->partial_bytes()));
  const float* add = chain_.has_add() ? ctx.input(kFusedAddInput).data<float>() : nullptr;
  const float* bias = plan.has_bias ? ctx.input(2).data<float>() : nullptr;
  plan.small->Run(ctx.input(0).data<float>(), panels->data(), bias, add, y.data<float>(), plan.steps, padded, partial,
                  omp_in_parallel() != 0 ? 1 : omp_get_max_threads());
  return absl::OkStatus();
}

absl::Status ConvKernel::RunNarrow(ConvPlan& plan, ExecuteContext& ctx, Scratch& scratch) {
  GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
  bool packed = false;  // packs here after a Prepare without the value, or for new storage
  const NarrowConvWeights::Packed weights = narrow_weights_.Get(ctx.input(1), &packed);
  if (packed) WeightPacks().fetch_add(1, std::memory_order_relaxed);
  auto* blocks = static_cast<float*>(scratch.Take(plan.narrow->scratch_bytes()));
  const float* add = chain_.has_add() ? ctx.input(kFusedAddInput).data<float>() : nullptr;
  const float* bias = plan.has_bias ? ctx.input(2).data<float>() : nullptr;
  plan.narrow->Run(ctx.input(0).data<float>(), weights->data(), bias, add, y.data<float>(), plan.steps, blocks,
                   omp_in_parallel() != 0 ? 1 : omp_get_max_threads());
  return absl::OkStatus();
}

absl::Status ConvKernel::Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) {
  auto& plan = static_cast<ConvPlan&>(base_plan);
  if (plan.small) return RunSmall(plan, ctx, scratch);
  if (plan.narrow) return RunNarrow(plan, ctx, scratch);
  GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
  dnnl::stream stream(eng());
  dnnl::memory src = WrapTensor(plan.src_user, eng(), ctx.input(0));
  if (plan.pad_source) {
    void* buffer = scratch.Take(plan.src_md.get_size());
    std::memset(buffer, 0, plan.src_md.get_size());
    dnnl::memory interior(plan.src_interior, eng(), buffer);
    ExecuteReorder(*plan.src_reorder, stream, src, interior);
    src = dnnl::memory(plan.src_md, eng(), buffer);
  } else if (plan.src_reorder) {
    dnnl::memory tmp(plan.src_md, eng(), scratch.Take(plan.src_md.get_size()));
    ExecuteReorder(*plan.src_reorder, stream, src, tmp);
    src = tmp;
  }
  GE_ASSIGN_OR_RETURN(dnnl::memory weights, plan.weights.Get(eng(), stream, ctx.input(1), scratch));
  dnnl::memory dst_user = WrapTensor(plan.dst_user, eng(), y);
  dnnl::memory dst = dst_user;
  if (plan.dst_reorder) dst = dnnl::memory(plan.dst_md, eng(), scratch.Take(plan.dst_md.get_size()));
  // Y in R's buffer (the planner took the node's `_inplace_inputs` offer):
  // the operand is in place already when the layouts agree.
  const bool in_place = plan.add_reorder && !plan.add_to_plain && ctx.input(kFusedAddInput).raw_data() == y.raw_data();
  if (in_place && !plan.dst_reorder) {
    if (plan.add_user != plan.dst_md) {
      void* copy = scratch.Take(plan.add_user.get_size());
      std::memcpy(copy, y.raw_data(), plan.add_user.get_size());
      dnnl::memory addend(plan.add_user, eng(), copy);
      ExecuteReorder(*plan.add_reorder, stream, addend, dst);
    }
  } else if (plan.add_reorder) {
    dnnl::memory addend = WrapTensor(plan.add_user, eng(), ctx.input(kFusedAddInput));
    if (plan.add_to_plain) {
      dnnl::memory one(plan.add_one_plain, eng(), scratch.Take(plan.add_one_plain.get_size()));
      dnnl::memory full(plan.add_full_plain, eng(), scratch.Take(plan.add_full_plain.get_size()));
      plan.add_to_plain->execute(stream, addend, one);
      stream.wait();
      const size_t image = plan.add_one_plain.get_size();
      auto* to = static_cast<char*>(full.get_data_handle());
      for (size_t at = 0; at < plan.add_full_plain.get_size(); at += image) {
        std::memcpy(to + at, one.get_data_handle(), image);
      }
      addend = full;
    }
    ExecuteReorder(*plan.add_reorder, stream, addend, dst);
  }
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, src},
      {DNNL_ARG_WEIGHTS, weights},
      {DNNL_ARG_DST, dst},
      {DNNL_ARG_SCRATCHPAD,
       dnnl::memory(plan.scratchpad_md, eng(), scratch.Take(plan.scratchpad_md.get_size()))}};
  if (plan.has_bias) args[DNNL_ARG_BIAS] = WrapTensor(plan.bias_md, eng(), ctx.input(2));
  plan.conv.execute(stream, args);
  if (!plan.tail.empty()) {
    stream.wait();
    RunEltwiseTail(plan.tail, static_cast<float*>(dst.get_data_handle()),
                   static_cast<int64_t>(plan.dst_md.get_size() / sizeof(float)), omp_get_max_threads());
  }
  if (plan.dst_reorder) ExecuteReorder(*plan.dst_reorder, stream, dst, dst_user);
  stream.wait();
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckConv(const ir::OpDesc& op, const DenseContext& ctx) {
  for (int i = 0; i < std::min(op.num_inputs(), 3); ++i) GE_RETURN_IF_ERROR(CheckFloatInput(op, i, ctx));
  if (InputDtype(op, 1) != DataType::kUndefined && InputDtype(op, 1) != InputDtype(op, 0)) {
    return Unsupported(op, "X and W have different dtypes");
  }
  auto attrs = ops::WindowAttrsFromOp(op);
  if (!attrs.ok()) return Unsupported(op, attrs.status().message());
  if (attrs->group < 1) return Unsupported(op, "group ", attrs->group, " is not positive");
  for (int64_t p : attrs->pads) {
    if (p < 0) return Unsupported(op, "negative pads");
  }
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && (x.rank() < 3 || x.rank() > 5)) {
    return Unsupported(op, "input rank ", x.rank(), " (1-D to 3-D convolutions only)");
  }
  const Shape w = InputShape(op, 1);
  if (x.IsFullyKnown() && w.IsFullyKnown()) {
    auto g = ops::ConvOutputShape(x, w, *attrs);
    if (!g.ok()) return Unsupported(op, g.status().message());
    for (size_t i = 0; i < g->pads_begin.size(); ++i) {
      if (g->pads_begin[i] < 0 || g->pads_end[i] < 0) return Unsupported(op, "negative pads");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ir::Format> ConvPreferredFormat(const ir::OpDesc& op, const DenseContext& ctx, ir::Format arriving,
                                               ir::Format want) {
  ir::OpDesc base = op;
  PostOpChain chain;
  if (op.type() == kDenseFusedOp) {
    GE_ASSIGN_OR_RETURN(base, BaseOpDesc(op));
    GE_ASSIGN_OR_RETURN(chain, ParsePostOps(op));
  }
  if (base.type() != "Conv" || base.num_inputs() < 2) return NodeError(op, "not a convolution");
  const ir::TensorDesc& xd = base.input(0).type.tensor();
  const ir::TensorDesc& w = base.input(1).type.tensor();
  if (!OnlyBatchUnknown(xd.shape) || !w.shape.IsFullyKnown()) return NodeError(op, "shapes are not known");
  const Shape x = LayoutProbeShape(xd.shape);  // a dynamic batch: oneDNN is asked about batch 1
  GE_ASSIGN_OR_RETURN(ops::WindowAttrs attrs, ops::WindowAttrsFromOp(base));
  GE_ASSIGN_OR_RETURN(ops::WindowGeometry g, ops::ConvOutputShape(x, w.shape, attrs));
  std::optional<dnnl::memory::desc> bias;
  if (base.num_inputs() > 2 && base.input(2).type.dtype() != DataType::kUndefined) {
    bias = PlainDesc(base.input(2).type.shape(), base.input(2).type.dtype());
  }
  // The few-output-channel path (narrow_conv.h) writes a plain destination
  // and reads the source as it arrives (plain, channels-last, blocked by 8):
  // an image head after a channels-last convolution (AVX-512) stays on it.
  if (xd.dtype == DataType::kFloat && x.rank() == 4 && attrs.group == 1 && w.shape.dim(1) == x.dim(1) &&
      (IsPlainFormat(arriving) || arriving == ir::Format::kNHWC ||
       (arriving == ir::Format::kNChw8c && x.dim(1) % kNarrowLanes == 0)) &&
      std::all_of(chain.ops.begin(), chain.ops.end(),
                  [](const PostOp& step) { return NarrowConvStep(static_cast<int32_t>(step.kind)); }) &&
      NarrowConvFits(Window2dOf(x, g))) {
    return ir::Format::kND;
  }
  // The post-ops the kernel gives oneDNN (without an own exp-based tail).
  chain = SplitEltwiseTail(chain, xd.dtype).head;
  return DnnlTry(op, kCreation, [&]() -> absl::StatusOr<ir::Format> {
    auto pd = ConvPrimitiveDesc(ctx.engine, attrs.group, chain, x, w.shape, xd.dtype, bias, g);
    Shape padded;
    if (auto explicit_pad = ExplicitPad(ctx.engine, attrs.group, chain, x, w.shape, xd.dtype, bias, g, pd, &padded)) {
      pd = *explicit_pad;
    } else if (IsChannelBlocked(want) && x.IsFullyKnown()) {
      // The layout pass asks for a channel-blocked destination: given when
      // the kernel, between `arriving` and `want`, runs a JIT primitive that
      // writes it (LargerPortLayout, or oneDNN's own choice).
      auto dst = FormatDesc(g.output, xd.dtype, want);
      if (auto larger =
              LargerPortLayout(ctx.engine, attrs.group, chain, x, w.shape, xd.dtype, bias, g, pd, arriving, want)) {
        pd = *larger;
      }
      if (dst.ok() && pd.dst_desc() == *dst && !SlowDnnlImpl(pd)) return want;
    } else if (arriving == ir::Format::kNHWC &&
               ChannelsLast(ctx.engine, attrs.group, chain, x, w.shape, xd.dtype, bias, g, pd)) {
      return ir::Format::kNHWC;
    }
    for (ir::Format f : {ir::Format::kNChw16c, ir::Format::kNChw8c, ir::Format::kNHWC}) {
      auto md = FormatDesc(g.output, xd.dtype, f);
      if (md.ok() && *md == pd.dst_desc()) return f;
    }
    return ir::Format::kND;
  });
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateConvKernel(const ir::OpDesc& op,
                                                         const ir::OpDesc& base, PostOpChain chain,
                                                         const DenseContext& ctx) {
  auto attrs = ops::WindowAttrsFromOp(base);
  if (!attrs.ok()) return NodeError(op, attrs.status().message());
  if (attrs->group < 1) return NodeError(op, "group ", attrs->group, " must be at least 1");
  return std::unique_ptr<Kernel>(new ConvKernel(op, ctx, *std::move(attrs), std::move(chain)));
}

void RegisterConvKernels(DenseKernelTable& table) {
  table.Add({"Conv", {DataType::kFloat, DataType::kBFloat16}, CheckConv,
             [](const ir::OpDesc& op, const DenseContext& ctx) {
               return CreateConvKernel(op, op, PostOpChain{}, ctx);
             }});
}

}  // namespace ge::engine::cpu_dense
