// QLinearConv and ConvInteger on oneDNN's int8 convolution (u8 source, s8
// weights; see int8_util.h for what is exact on which CPU).
//
// One plan per input shapes. The primitive takes the source and
// destination zero points at run time (so DynamicQuantizeLinear's may
// change per run) and the output scales (x_scale * w_scale / y_scale, per
// tensor or per output channel) baked in: a run whose scales differ from
// the plan's rebuilds the primitive (constant scales, the usual case,
// never do). Constant weights are packed once (PackedWeights), with
// oneDNN's zero-point compensation computed by that reorder.
//
// On AVX-512 VNNI every convolution runs one primitive (exact at full
// range). Else constant weights within [-64, 64] run one primitive. Others (full-range,
// or computed at run time) run two over the source's halves, each exact,
// summed in int32 by a sum post-op and requantized here. Constant weights
// whose values Prepare did not see (a `_const_inputs` attribute only) are
// classified at the first run, which then rebuilds the primitive unsplit
// when it can. The source and output are stored as their IoDescs' formats
// say: channels-last (NHWC, which the blocked-layout pass gives int8
// activations between int8 nodes) runs the primitive on them directly;
// plain (NCHW) ones reach oneDNN's preferred layout by reorders inside the
// kernel. A convolution of fewer than kSerialMacs multiply-adds is created
// and run on one thread (int8_util.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/int8_util.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine::cpu_dense {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;
using fwd = dnnl::convolution_forward;

dnnl::memory::dims Dims(const std::vector<int64_t>& v) { return dnnl::memory::dims(v.begin(), v.end()); }

// Conv weights' dims for oneDNN: [G, M / G, C / G, k...] when grouped.
dnnl::memory::dims GroupedWeightDims(const Shape& w, int64_t group) {
  dnnl::memory::dims d = ToDnnlDims(w);
  if (group > 1) {
    d[0] = w.dim(0) / group;
    d.insert(d.begin(), group);
  }
  return d;
}

bool FitsUnsplit(const Tensor& w) {
  const auto* p = static_cast<const int8_t*>(w.raw_data());
  const int64_t n = w.NumElements();
  return std::all_of(p, p + n, [](int8_t v) { return v >= -kMaxUnsplitWeight && v <= kMaxUnsplitWeight; });
}

class Int8ConvKernel final : public DenseKernel {
 public:
  Int8ConvKernel(const ir::OpDesc& op, const DenseContext& ctx, ops::WindowAttrs attrs)
      : DenseKernel(op, ctx), attrs_(std::move(attrs)), ports_(PortsOf(op.type())) {}

 private:
  struct ConvPlan final : Plan {
    ops::WindowGeometry g;
    Shape x_shape, w_shape;
    int64_t m = 0;
    DataType x_dtype = DataType::kUint8, y_dtype = DataType::kInt32;
    bool split = false, has_bias = false, const_weights = false;
    bool decide_at_run = false;  // constant weights not seen yet: split until the first run
    bool serial = false;         // fewer than kSerialMacs: one thread (SerialScope)
    // *_plain: how the tensors are stored (plain, or the IoDesc's layout);
    // *_md: what the primitive takes.
    dnnl::memory::desc src_plain, src_md, dst_plain, dst_md, acc_plain, bias_md, wei_plain;
    bool src_fixed = false, dst_fixed = false;  // the primitive takes the stored layout itself
    std::optional<dnnl::reorder> src_reorder, dst_reorder;
    PackedWeights weights;
    dnnl::memory::desc weights_md;
    // The primitives, for `scales`.
    std::vector<float> scales;
    fwd conv_a, conv_b;
    dnnl::memory::desc pad_a, pad_b;
    size_t pad_budget = 0;      // each scratchpad's share of the workspace
    std::vector<char> own_pad;  // when a rebuilt primitive needs more
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& request) override;
  absl::Status Run(Plan& plan, ExecuteContext& ctx, Scratch& scratch) override;
  // (Re)creates the primitives of `plan` for output scales `scales`.
  absl::Status MakePrimitives(ConvPlan& plan, const std::vector<float>& scales) const;
  fwd::primitive_desc MakeDesc(const ConvPlan& plan, const std::vector<float>& scales, bool first) const;
  absl::StatusOr<std::vector<float>> Scales(const ConvPlan& plan, const ExecuteContext& ctx) const;

  ops::WindowAttrs attrs_;
  Int8Ports ports_;
};

fwd::primitive_desc Int8ConvKernel::MakeDesc(const ConvPlan& plan, const std::vector<float>& scales, bool first) const {
  const dnnl::memory::dims wdims = GroupedWeightDims(plan.w_shape, attrs_.group);
  dnnl::memory::dims dilations;
  for (int64_t d : plan.g.dilations) dilations.push_back(d - 1);
  // Split: both halves accumulate int32; unsplit: the output's own type.
  const dt dst_type = plan.split ? dt::s32 : ToDnnlType(plan.y_dtype);
  const dnnl::memory::desc src_any =
      plan.src_fixed ? plan.src_plain : dnnl::memory::desc(ToDnnlDims(plan.x_shape), dt::u8, tag::any);
  const dnnl::memory::desc wei_any(wdims, dt::s8, tag::any);
  const dnnl::memory::desc dst_any = plan.dst_fixed ? (plan.split ? plan.acc_plain : plan.dst_plain)
                                                    : dnnl::memory::desc(ToDnnlDims(plan.g.output), dst_type, tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (!plan.split && !scales.empty()) {
    const bool per_channel = std::any_of(scales.begin(), scales.end(), [&](float s) { return s != scales[0]; });
    attr.set_output_scales(per_channel ? 1 << 1 : 0, per_channel ? scales : std::vector<float>{scales[0]});
  }
  // The source's zero point is the first primitive's; the second half of a
  // split source gets 0 at run time (declared all the same, so that both
  // primitives take one packing of the weights, compensation included).
  // Padding then adds nothing to either.
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (!plan.split && ports_.qlinear()) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  if (!first) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  if (first && plan.has_bias) {
    return fwd::primitive_desc(fwd::desc(prop, alg, src_any, wei_any, plan.bias_md, dst_any, Dims(plan.g.strides),
                                         dilations, Dims(plan.g.pads_begin), Dims(plan.g.pads_end)),
                               attr, eng());
  }
  return fwd::primitive_desc(fwd::desc(prop, alg, src_any, wei_any, dst_any, Dims(plan.g.strides), dilations,
                                       Dims(plan.g.pads_begin), Dims(plan.g.pads_end)),
                             attr, eng());
}

absl::Status Int8ConvKernel::MakePrimitives(ConvPlan& plan, const std::vector<float>& scales) const {
  const fwd::primitive_desc a = MakeDesc(plan, scales, true);
  plan.conv_a = fwd(a);
  plan.pad_a = a.scratchpad_desc();
  if (plan.split) {
    const fwd::primitive_desc b = MakeDesc(plan, scales, false);
    if (b.src_desc() != a.src_desc() || b.dst_desc() != a.dst_desc() || b.weights_desc() != a.weights_desc()) {
      return NodeUnimplemented(op(), "oneDNN picked different layouts for the two halves");
    }
    plan.conv_b = fwd(b);
    plan.pad_b = b.scratchpad_desc();
  }
  plan.scales = scales;
  if (plan.weights_md != a.weights_desc()) {
    plan.weights_md = a.weights_desc();
    plan.weights.Init(eng(), plan.wei_plain, plan.weights_md, plan.const_weights);
  }
  plan.src_md = a.src_desc();
  plan.dst_md = a.dst_desc();
  plan.src_reorder.reset();
  plan.dst_reorder.reset();
  if (plan.src_md != plan.src_plain) plan.src_reorder = MakeReorder(eng(), plan.src_plain, plan.src_md);
  const dnnl::memory::desc& out_plain = plan.split ? plan.acc_plain : plan.dst_plain;
  if (plan.dst_md != out_plain) plan.dst_reorder = MakeReorder(eng(), plan.dst_md, out_plain);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> Int8ConvKernel::Scales(const ConvPlan& plan, const ExecuteContext& ctx) const {
  if (!ports_.qlinear()) return std::vector<float>{};
  GE_ASSIGN_OR_RETURN(auto sx, QuantParam(op(), ctx, ports_.x_scale, "x_scale", 1, 1.0f));
  GE_ASSIGN_OR_RETURN(auto sw, QuantParam(op(), ctx, ports_.w_scale, "w_scale", plan.m, 1.0f));
  GE_ASSIGN_OR_RETURN(auto sy, QuantParam(op(), ctx, ports_.y_scale, "y_scale", 1, 1.0f));
  if (!(sy[0] > 0) || !std::isfinite(sy[0])) return NodeError(op(), "y_scale must be positive, got ", sy[0]);
  std::vector<float> out(static_cast<size_t>(plan.m));
  for (int64_t c = 0; c < plan.m; ++c) out[c] = sx[0] * sw[c] / sy[0];
  return out;
}

// Scales from constant inputs known at build time (else ones: the first
// run rebuilds with its own).
std::vector<float> BuildScales(const PlanRequest& r, const Int8Ports& p, int64_t m) {
  std::vector<float> out(static_cast<size_t>(m), 1.0f);
  if (!p.qlinear()) return {};
  const Tensor *sx = r.const_input(p.x_scale), *sw = r.const_input(p.w_scale), *sy = r.const_input(p.y_scale);
  if (sx == nullptr || sw == nullptr || sy == nullptr || sx->NumElements() != 1 || sy->NumElements() != 1 ||
      (sw->NumElements() != 1 && sw->NumElements() != m) || !(sy->GetAsDouble(0) > 0)) {
    return out;
  }
  for (int64_t c = 0; c < m; ++c) {
    out[c] = static_cast<float>(sx->GetAsDouble(0)) *
             static_cast<float>(sw->GetAsDouble(sw->NumElements() == 1 ? 0 : c)) /
             static_cast<float>(sy->GetAsDouble(0));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<DenseKernel::Plan>> Int8ConvKernel::Build(const PlanRequest& r) {
  auto plan = std::make_unique<ConvPlan>();
  plan->x_shape = r.shape(ports_.x);
  plan->w_shape = r.shape(ports_.w);
  plan->x_dtype = r.dtype(ports_.x);
  plan->y_dtype = r.output_types[0].dtype();
  if (plan->x_shape.rank() < 3 || plan->x_shape.rank() > 5) return NodeUnimplemented(op(), "input is not 1-D to 3-D");
  if (r.dtype(ports_.w) != DataType::kInt8) return NodeUnimplemented(op(), "weights are not s8");
  auto g = ops::ConvOutputShape(plan->x_shape, plan->w_shape, attrs_);
  if (!g.ok()) return NodeError(op(), g.status().message());
  plan->g = *std::move(g);
  for (size_t i = 0; i < plan->g.pads_begin.size(); ++i) {
    if (plan->g.pads_begin[i] < 0 || plan->g.pads_end[i] < 0) return NodeUnimplemented(op(), "negative pads");
  }
  plan->m = plan->w_shape.dim(0);
  plan->has_bias = ports_.bias >= 0 && r.has_input(ports_.bias);
  if (plan->has_bias && r.shape(ports_.bias).NumElementsUnchecked() != plan->m) {
    return NodeError(op(), "B ", r.shape(ports_.bias).ToString(), " must have ", plan->m, " elements");
  }
  plan->bias_md = PlainDesc(dnnl::memory::dims{plan->m}, dt::s32);
  const Tensor* w = r.const_input(ports_.w);
  plan->split = !Int8Vnni() && !(IsConstInput(ports_.w, r) && w != nullptr && FitsUnsplit(*w));
  plan->decide_at_run = plan->split && IsConstInput(ports_.w, r) && w == nullptr;
  // The stored layouts; a channels-last one is handed to the primitive as it is.
  const ir::Format x_format = op().input(ports_.x).type.tensor().format;
  const ir::Format y_format = op().output(0).type.tensor().format;
  GE_ASSIGN_OR_RETURN(plan->src_plain, FormatDesc(plan->x_shape, DataType::kUint8, x_format));
  GE_ASSIGN_OR_RETURN(plan->dst_plain, FormatDesc(plan->g.output, plan->y_dtype, y_format));
  GE_ASSIGN_OR_RETURN(plan->acc_plain, FormatDesc(plan->g.output, DataType::kInt32, y_format));
  plan->src_fixed = x_format == ir::Format::kNHWC || x_format == ir::Format::kNDHWC;
  plan->dst_fixed = y_format == ir::Format::kNHWC || y_format == ir::Format::kNDHWC;
  // The plain weights in the primitive's dims (groups add a leading dim).
  plan->wei_plain = PlainDesc(GroupedWeightDims(plan->w_shape, attrs_.group), dt::s8);
  plan->const_weights = IsConstInput(ports_.w, r);
  const int64_t macs = plan->g.output.NumElementsUnchecked() * (plan->w_shape.NumElementsUnchecked() / plan->m);
  plan->serial = macs < kSerialMacs;
  {
    const SerialScope serial(plan->serial);
    GE_RETURN_IF_ERROR(MakePrimitives(*plan, BuildScales(r, ports_, plan->m)));
    if (w != nullptr) GE_RETURN_IF_ERROR(plan->weights.Preload(eng(), *w));
  }
  // Workspace: the source copies, the destination in oneDNN's layout, the
  // int32 accumulator, the non-constant weights and the scratchpads.
  const size_t src_bytes = plan->src_plain.get_size();
  size_t bytes = 2 * Scratch::Padded(src_bytes) + 2 * Scratch::Padded(plan->src_md.get_size());
  bytes += Scratch::Padded(plan->dst_md.get_size()) + Scratch::Padded(plan->acc_plain.get_size());
  bytes += plan->weights.scratch_bytes();
  plan->pad_budget = std::max(plan->pad_a.get_size(), plan->split ? plan->pad_b.get_size() : size_t{0});
  bytes += Scratch::Padded(plan->pad_budget);
  plan->workspace_bytes = bytes + Scratch::kAlign;
  return plan;
}

absl::Status Int8ConvKernel::Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) {
  auto& plan = static_cast<ConvPlan&>(base_plan);
  const SerialScope serial(plan.serial);
  GE_ASSIGN_OR_RETURN(std::vector<float> scales, Scales(plan, ctx));
  if (plan.decide_at_run) {
    // Constant weights seen for the first time: one primitive when they fit.
    plan.decide_at_run = false;
    if (FitsUnsplit(ctx.input(ports_.w))) {
      plan.split = false;
      GE_RETURN_IF_ERROR(MakePrimitives(plan, ports_.qlinear() ? scales : plan.scales));
    }
  }
  if (ports_.qlinear() && scales != plan.scales) GE_RETURN_IF_ERROR(MakePrimitives(plan, scales));
  GE_ASSIGN_OR_RETURN(auto zx, QuantParam(op(), ctx, ports_.x_zero, "x_zero_point", 1, 0.0f));
  GE_ASSIGN_OR_RETURN(auto zw, QuantParam(op(), ctx, ports_.w_zero, "w_zero_point", plan.m, 0.0f));
  for (float z : zw) {
    if (z != 0) return NodeError(op(), "cpu_dense takes a zero weight zero point only, got ", z);
  }
  int32_t zy = 0;
  if (ports_.qlinear()) {
    GE_ASSIGN_OR_RETURN(auto zyv, QuantParam(op(), ctx, ports_.y_zero, "y_zero_point", 1, 0.0f));
    zy = static_cast<int32_t>(zyv[0]);
  }
  // An s8 source moves to u8 with its zero point.
  const bool flip = plan.x_dtype == DataType::kInt8;
  int32_t zx_u8 = static_cast<int32_t>(zx[0]) + (flip ? 128 : 0);
  GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
  dnnl::stream stream(eng());
  const Tensor& x = ctx.input(ports_.x);
  const int64_t n_src = plan.x_shape.NumElementsUnchecked();
  const size_t src_bytes = plan.src_plain.get_size();
  // Sources in the primitive's layout: one, or the two halves.
  void* plain_a = scratch.Take(src_bytes);
  void* plain_b = scratch.Take(src_bytes);
  void* packed_a = scratch.Take(plan.src_md.get_size());
  void* packed_b = scratch.Take(plan.src_md.get_size());
  std::vector<dnnl::memory> sources;
  if (plan.split) {
    SplitHalves(x.raw_data(), flip, static_cast<uint8_t*>(plain_a), static_cast<uint8_t*>(plain_b), n_src);
    sources = {dnnl::memory(plan.src_plain, eng(), plain_a), dnnl::memory(plan.src_plain, eng(), plain_b)};
  } else if (flip) {
    FlipSign(x.raw_data(), plain_a, n_src);
    sources = {dnnl::memory(plan.src_plain, eng(), plain_a)};
  } else {
    sources = {WrapTensor(plan.src_plain, eng(), x)};
  }
  if (plan.src_reorder) {
    void* packed[2] = {packed_a, packed_b};
    for (size_t i = 0; i < sources.size(); ++i) {
      dnnl::memory to(plan.src_md, eng(), packed[i]);
      plan.src_reorder->execute(stream, sources[i], to);
      sources[i] = to;
    }
  }
  GE_ASSIGN_OR_RETURN(dnnl::memory weights, plan.weights.Get(eng(), stream, ctx.input(ports_.w), scratch));
  void* dst_buffer = scratch.Take(plan.dst_md.get_size());
  void* acc_buffer = scratch.Take(plan.acc_plain.get_size());
  void* pad_buffer = scratch.Take(plan.pad_budget);
  const size_t pad_need = std::max(plan.pad_a.get_size(), plan.split ? plan.pad_b.get_size() : size_t{0});
  if (pad_need > plan.pad_budget) {
    plan.own_pad.resize(pad_need + Scratch::kAlign);
    pad_buffer = plan.own_pad.data();
  }
  // Where the primitive writes: the output itself when it is plain and of
  // the primitive's type; else a buffer reordered after.
  const bool direct = !plan.dst_reorder && (!plan.split || !ports_.qlinear());
  dnnl::memory dst(plan.dst_md, eng(), direct ? y.raw_data() : dst_buffer);
  int32_t zx_arg = zx_u8;
  dnnl::memory zx_mem(PlainDesc(dnnl::memory::dims{1}, dt::s32), eng(), &zx_arg);
  dnnl::memory zy_mem(PlainDesc(dnnl::memory::dims{1}, dt::s32), eng(), &zy);
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, sources[0]},
                                                {DNNL_ARG_WEIGHTS, weights},
                                                {DNNL_ARG_DST, dst},
                                                {DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.pad_a, eng(), pad_buffer)},
                                                {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zx_mem}};
  if (!plan.split && ports_.qlinear()) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = zy_mem;
  if (plan.has_bias) args[DNNL_ARG_BIAS] = WrapTensor(plan.bias_md, eng(), ctx.input(ports_.bias));
  plan.conv_a.execute(stream, args);
  if (plan.split) {
    int32_t no_zero = 0;
    plan.conv_b.execute(stream, {{DNNL_ARG_SRC, sources[1]},
                                 {DNNL_ARG_WEIGHTS, weights},
                                 {DNNL_ARG_DST, dst},
                                 {DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.pad_b, eng(), pad_buffer)},
                                 {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
                                  dnnl::memory(PlainDesc(dnnl::memory::dims{1}, dt::s32), eng(), &no_zero)}});
  }
  if (direct) {
    stream.wait();
    return absl::OkStatus();
  }
  if (!plan.split) {
    dnnl::memory out = WrapTensor(plan.dst_plain, eng(), y);
    plan.dst_reorder->execute(stream, dst, out);
    stream.wait();
    return absl::OkStatus();
  }
  // Split: the int32 sum, plain, then requantized (QLinearConv) or written
  // out as it is (ConvInteger).
  void* acc = ports_.qlinear() ? acc_buffer : y.raw_data();
  if (plan.dst_reorder) {
    dnnl::memory out(plan.acc_plain, eng(), acc);
    plan.dst_reorder->execute(stream, dst, out);
  }
  stream.wait();
  if (!plan.dst_reorder) acc = dst_buffer;
  if (ports_.qlinear()) {
    const int64_t n = plan.g.output.NumElementsUnchecked();
    // Channels vary fastest in a channels-last accumulator.
    const int64_t inner = plan.dst_fixed                      ? 1
                          : plan.g.output.dim(0) * plan.m > 0 ? n / (plan.g.output.dim(0) * plan.m)
                                                              : 0;
    Requantize(static_cast<const int32_t*>(acc), plan.scales, inner, plan.m, zy, plan.y_dtype, y.raw_data(), n);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterInt8ConvKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet types{DataType::kUint8, DataType::kInt8, DataType::kInt32};
  for (std::string_view type : {"QLinearConv", "ConvInteger"}) {
    table.Add({std::string(type), types, CheckInt8Conv,
               [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                 auto attrs = ops::WindowAttrsFromOp(op);
                 if (!attrs.ok()) return NodeError(op, attrs.status().message());
                 if (attrs->group < 1) return NodeError(op, "group ", attrs->group, " must be at least 1");
                 return std::unique_ptr<Kernel>(new Int8ConvKernel(op, ctx, *std::move(attrs)));
               }});
  }
}

}  // namespace ge::engine::cpu_dense
