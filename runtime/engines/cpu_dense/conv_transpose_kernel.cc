// ConvTranspose on oneDNN (deconvolution_forward): 1-D, 2-D and 3-D, groups,
// strides, dilations, output_padding, output_shape and auto_pad.
//
// As for Conv, the primitive is created with its layouts left to oneDNN
// (`any`), so it picks its JIT implementation and blocked layouts (with
// plain ones it ran its gemm-based implementation), except between
// channels-last ports, where a channels-last JIT primitive is taken when
// oneDNN has one (DeconvChannelsLast); the activations are
// reordered at the kernel's edges when the graph hands them in another
// layout (the layout pass gives the output the layout oneDNN prefers,
// DeconvPreferredFormat), and constant weights are packed once
// (PackedWeights).
//
// The geometry comes from ops::ConvTransposeOutputShape, the function shape
// inference and host_cpu use. oneDNN has no output_padding: the output
// size it checks is (in - 1) * stride + dilated kernel - pad_l - pad_r, so
// the right pad is derived from the output size (output_padding lowers
// it). Shapes needing a negative pad run on host_cpu. ONNX's weights
// [C, M/group, k...] are oneDNN's (g, o, i, k...) weights with i outer of
// o, given by strides: the packing reorder reads them in place.
//
// A kernel equal to its stride without pads or dilation (a UNet's 2x2
// stride-2 upsampling) puts each input position's product with the
// weights into its own KH x KW output tile: between channels-last ports,
// output row h KH + i of an image is the product of input row h ([W, C])
// with the weights' row i ([C, KW M], packed once into the packed GEMM's
// panels, gemm_loops.h), so the kernel runs those products itself, a share
// of the (image, row, i) triples per thread. oneDNN 2.6's `jit:avx512_core`
// deconvolution took 0.51 ms for UNet's 64 -> 32 channels at 32x32 -> 64x64
// (1 thread), ONNX Runtime 0.25 (docs/perf.md, "Channels-last concat").
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/dense_ops.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/packed_matmul.h"
#include "runtime/engines/cpu_dense/packed_weights.h"

namespace ge::engine::cpu_dense {
namespace {

std::atomic<bool>& StrideDeconvSwitch() {
  static std::atomic<bool> on{OwnPathOnByDefault("GED_CPU_DENSE_CONV")};
  return on;
}

// W [C, M, KH, KW] as KH matrices [C, KW M] (column j M + m), each packed
// into GemmPanels(KW M) panels of [C][kGemmPanel], one after another.
std::vector<float> PackStrideWeights(const Tensor& w) {
  const int64_t c = w.shape().dim(0), m = w.shape().dim(1), kh = w.shape().dim(2), kw = w.shape().dim(3);
  const int64_t n = kw * m, panels = GemmPanels(n);
  std::vector<float> out(static_cast<size_t>(kh * panels * c * kGemmPanel), 0.0f);
  const float* src = w.data<float>();
  for (int64_t i = 0; i < kh; ++i) {
    for (int64_t col = 0; col < n; ++col) {
      const int64_t j = col / m, o = col % m;
      float* panel = out.data() + ((i * panels + col / kGemmPanel) * c) * kGemmPanel + col % kGemmPanel;
      for (int64_t ci = 0; ci < c; ++ci) panel[ci * kGemmPanel] = src[((ci * m + o) * kh + i) * kw + j];
    }
  }
  return out;
}

// The pads oneDNN needs (begin, end per spatial dim), or an error when one
// is negative.
absl::Status DnnlPads(const Shape& x, const ops::WindowGeometry& g, dnnl::memory::dims* begin,
                      dnnl::memory::dims* end) {
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    const int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t right = (x.dim(i + 2) - 1) * g.strides[i] + extent - g.pads_begin[i] - g.output.dim(i + 2);
    if (g.pads_begin[i] < 0 || right < 0) return absl::UnimplementedError("negative pads");
    begin->push_back(g.pads_begin[i]);
    end->push_back(right);
  }
  return absl::OkStatus();
}

// W [C, M/group, k...] as oneDNN weights: (o, i, k...) or (g, o/g, i/g, k...).
dnnl::memory::desc WeightsDesc(const Shape& w, int64_t group, DataType dtype) {
  const int64_t c = w.dim(0), mg = w.dim(1), cg = c / group;
  int64_t ks = 1;
  dnnl::memory::dims spatial, spatial_strides;
  for (int64_t d = 2; d < w.rank(); ++d) spatial.push_back(w.dim(d));
  for (int64_t d = w.rank() - 1; d >= 2; --d) {
    spatial_strides.insert(spatial_strides.begin(), ks);
    ks *= w.dim(d);
  }
  dnnl::memory::dims dims, strides;
  if (group > 1) {
    dims = {group, mg, cg};
    strides = {cg * mg * ks, ks, mg * ks};
  } else {
    dims = {mg, c};
    strides = {ks, mg * ks};
  }
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  strides.insert(strides.end(), spatial_strides.begin(), spatial_strides.end());
  return dnnl::memory::desc(dims, ToDnnlType(dtype), strides);
}

// The deconvolution's primitive descriptor with its layouts left to oneDNN,
// or with the source and destination in `fixed` (weights still `any`).
dnnl::deconvolution_forward::primitive_desc DeconvPrimitiveDesc(
    const dnnl::engine& eng, const Shape& x, const Shape& w, int64_t group, DataType dtype,
    const std::optional<dnnl::memory::desc>& bias, const ops::WindowGeometry& g, const dnnl::memory::dims& pad_l,
    const dnnl::memory::dims& pad_r, ir::Format fixed = ir::Format::kND) {
  const auto type = ToDnnlType(dtype);
  dnnl::memory::desc src_any(ToDnnlDims(x), type, dnnl::memory::format_tag::any);
  const dnnl::memory::desc wei_any(WeightsDesc(w, group, dtype).dims(), type, dnnl::memory::format_tag::any);
  dnnl::memory::desc dst_any(ToDnnlDims(g.output), type, dnnl::memory::format_tag::any);
  if (fixed != ir::Format::kND) {
    auto src = FormatDesc(x, dtype, fixed);
    auto dst = FormatDesc(g.output, dtype, fixed);
    if (!src.ok() || !dst.ok()) throw dnnl::error(dnnl_invalid_arguments, "no such layout");
    src_any = *src;
    dst_any = *dst;
  }
  dnnl::memory::dims strides(g.strides.begin(), g.strides.end()), dilations;
  for (int64_t d : g.dilations) dilations.push_back(d - 1);  // oneDNN counts the gaps
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  using fwd = dnnl::deconvolution_forward;
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::deconvolution_direct;
  if (bias) {
    return fwd::primitive_desc(fwd::desc(prop, alg, src_any, wei_any, *bias, dst_any, strides, dilations, pad_l, pad_r),
                               attr, eng);
  }
  return fwd::primitive_desc(fwd::desc(prop, alg, src_any, wei_any, dst_any, strides, dilations, pad_l, pad_r), attr,
                             eng);
}

// Between channels-last neighbours (on AVX-512 oneDNN, asked with `any`,
// picks channel blocks for a UNet's upsampling ConvTranspose between
// channels-last convolutions): the channels-last primitive, when oneDNN
// runs it on a JIT kernel.
std::optional<dnnl::deconvolution_forward::primitive_desc> DeconvChannelsLast(
    const dnnl::engine& eng, const Shape& x, const Shape& w, int64_t group, DataType dtype,
    const std::optional<dnnl::memory::desc>& bias, const ops::WindowGeometry& g, const dnnl::memory::dims& pad_l,
    const dnnl::memory::dims& pad_r, const dnnl::deconvolution_forward::primitive_desc& chosen) {
  auto src = FormatDesc(x, dtype, ir::Format::kNHWC);
  auto dst = FormatDesc(g.output, dtype, ir::Format::kNHWC);
  if (!src.ok() || !dst.ok() || (chosen.src_desc() == *src && chosen.dst_desc() == *dst)) return std::nullopt;
  try {
    auto candidate = DeconvPrimitiveDesc(eng, x, w, group, dtype, bias, g, pad_l, pad_r, ir::Format::kNHWC);
    if (SlowDnnlImpl(candidate)) return std::nullopt;
    return candidate;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

class ConvTransposeKernel final : public DenseKernel {
 public:
  ConvTransposeKernel(const ir::OpDesc& op, const DenseContext& ctx, ops::WindowAttrs attrs)
      : DenseKernel(op, ctx), attrs_(std::move(attrs)) {}

 private:
  struct DeconvPlan final : Plan {
    dnnl::deconvolution_forward deconv;
    dnnl::memory::desc src_user, src_md, bias_md, dst_user, dst_md, scratchpad_md;
    std::optional<dnnl::reorder> src_reorder, dst_reorder;
    PackedWeights weights;
    bool has_bias = false;
    // The own path (kernel = stride, channels-last ports): no primitive.
    bool stride_tiles = false;
    int64_t n = 0, c = 0, h = 0, w = 0, m = 0, kh = 0, kw = 0;
  };

  // Whether the own path takes this plan's geometry.
  bool StrideTiles(const PlanRequest& r, const ops::WindowGeometry& g) const {
    const Shape& x = r.shape(0);
    if (!StrideDeconvEnabled() || r.dtype(0) != DataType::kFloat || x.rank() != 4 || attrs_.group != 1 ||
        !IsConstInput(1, r)) {
      return false;
    }
    if (op().input(0).type.tensor().format != ir::Format::kNHWC ||
        op().output(0).type.tensor().format != ir::Format::kNHWC) {
      return false;
    }
    for (size_t i = 0; i < 2; ++i) {
      if (g.kernel[i] != g.strides[i] || g.dilations[i] != 1 || g.pads_begin[i] != 0 ||
          g.output.dim(i + 2) != x.dim(i + 2) * g.strides[i]) {
        return false;
      }
    }
    return x.dim(0) > 0 && x.dim(1) > 0 && x.dim(2) > 0 && x.dim(3) > 0;
  }

  absl::Status RunStrideTiles(DeconvPlan& plan, ExecuteContext& ctx, Scratch& scratch) {
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    bool packed = false;
    const StoragePackedWeights::Data panels = stride_weights_.Get(ctx.input(1), {}, PackStrideWeights, &packed);
    if (packed) WeightPacks().fetch_add(1, std::memory_order_relaxed);
    const int64_t cols = plan.kw * plan.m, panel_count = GemmPanels(cols);
    // The bias repeated for each of the KW output columns of a tile row.
    float* bias = nullptr;
    if (plan.has_bias) {
      bias = static_cast<float*>(scratch.Take(static_cast<size_t>(cols) * sizeof(float)));
      const float* b = ctx.input(2).data<float>();
      for (int64_t j = 0; j < plan.kw; ++j) std::copy(b, b + plan.m, bias + j * plan.m);
    }
    const float* x = ctx.input(0).data<float>();
    float* out = y.data<float>();
    const int64_t tasks = plan.n * plan.h * plan.kh;
    auto run = [&](int64_t t) {
      const int64_t i = t % plan.kh, row = t / plan.kh;  // row: image * H + input row
      const int64_t image = row / plan.h, r = row % plan.h;
      GemmArgs g{};
      g.a = x + row * plan.w * plan.c;
      g.lda = plan.c;
      g.rows = plan.w;
      g.k = plan.c;
      g.packed = panels->data() + i * panel_count * plan.c * kGemmPanel;
      g.n = cols;
      g.c = out + ((image * plan.h + r) * plan.kh + i) * plan.w * cols;
      g.ldc = cols;
      g.bias = bias;
      g.panel_begin = 0;
      g.panel_end = panel_count;
      avx2::PackedGemm(g);
    };
    const int64_t work = tasks * plan.w * plan.c * cols;
    const int team = omp_in_parallel() != 0 || work < (int64_t{1} << 17) ? 1 : omp_get_max_threads();
    if (team <= 1) {
      for (int64_t t = 0; t < tasks; ++t) run(t);
    } else {
#pragma omp parallel for num_threads(team) schedule(static)
      for (int64_t t = 0; t < tasks; ++t) run(t);
    }
    StrideDeconvRuns().fetch_add(1, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    const Shape& w = r.shape(1);
    const DataType dtype = r.dtype(0);
    if (x.rank() < 3 || x.rank() > 5) return NodeUnimplemented(op(), "input ", x.ToString(), " is not 1-D to 3-D");
    if (r.dtype(1) != dtype || (r.has_input(2) && r.dtype(2) != dtype)) {
      return NodeError(op(), "X, W and B must share a dtype");
    }
    auto g = ops::ConvTransposeOutputShape(x, w, attrs_);
    if (!g.ok()) return NodeError(op(), g.status().message());
    const Shape& out = r.output_types[0].shape();
    if (out.IsFullyKnown() && out != g->output) {
      return NodeError(op(), "output ", out.ToString(), " differs from the computed ", g->output.ToString());
    }
    dnnl::memory::dims pad_l, pad_r;
    if (!DnnlPads(x, *g, &pad_l, &pad_r).ok()) return NodeUnimplemented(op(), "negative pads");
    auto plan = std::make_unique<DeconvPlan>();
    plan->has_bias = r.has_input(2);
    const int64_t m = g->output.dim(1);
    if (plan->has_bias && (r.shape(2).rank() != 1 || r.shape(2).dim(0) != m)) {
      return NodeError(op(), "bias ", r.shape(2).ToString(), " must be [", m, "]");
    }
    if (StrideTiles(r, *g)) {
      plan->stride_tiles = true;
      plan->n = x.dim(0);
      plan->c = x.dim(1);
      plan->h = x.dim(2);
      plan->w = x.dim(3);
      plan->m = m;
      plan->kh = g->kernel[0];
      plan->kw = g->kernel[1];
      plan->workspace_bytes = Scratch::Padded(static_cast<size_t>(plan->kw * m) * sizeof(float)) + Scratch::kAlign;
      if (const Tensor* value = r.const_input(1)) {
        bool packed = false;
        stride_weights_.Get(*value, {}, PackStrideWeights, &packed);
        if (packed) WeightPacks().fetch_add(1, std::memory_order_relaxed);
      }
      return std::unique_ptr<Plan>(std::move(plan));
    }
    GE_ASSIGN_OR_RETURN(plan->src_user, FormatDesc(x, dtype, op().input(0).type.tensor().format));
    GE_ASSIGN_OR_RETURN(plan->dst_user, FormatDesc(g->output, dtype, op().output(0).type.tensor().format));
    return DnnlTry(op(), kCreation, [&]() -> absl::StatusOr<std::unique_ptr<Plan>> {
      std::optional<dnnl::memory::desc> bias;
      if (plan->has_bias) bias = PlainDesc(r.shape(2), dtype);
      auto pd = DeconvPrimitiveDesc(eng(), x, w, attrs_.group, dtype, bias, *g, pad_l, pad_r);
      // Channels-last ports (DeconvPreferredFormat after a channels-last input).
      if (op().input(0).type.tensor().format == ir::Format::kNHWC &&
          op().output(0).type.tensor().format == ir::Format::kNHWC) {
        if (auto cl = DeconvChannelsLast(eng(), x, w, attrs_.group, dtype, bias, *g, pad_l, pad_r, pd)) pd = *cl;
      }
      if (plan->has_bias) plan->bias_md = pd.bias_desc();
      plan->src_md = pd.src_desc();
      plan->dst_md = pd.dst_desc();
      plan->scratchpad_md = pd.scratchpad_desc();
      size_t bytes = Scratch::Padded(plan->scratchpad_md.get_size());
      if (plan->src_md != plan->src_user) {
        plan->src_reorder = MakeReorder(eng(), plan->src_user, plan->src_md);
        bytes += Scratch::Padded(plan->src_md.get_size());
      }
      if (plan->dst_md != plan->dst_user) {
        plan->dst_reorder = MakeReorder(eng(), plan->dst_md, plan->dst_user);
        bytes += Scratch::Padded(plan->dst_md.get_size());
      }
      plan->weights.Init(eng(), WeightsDesc(w, attrs_.group, dtype), pd.weights_desc(), IsConstInput(1, r));
      bytes += plan->weights.scratch_bytes();
      if (const Tensor* value = r.const_input(1)) GE_RETURN_IF_ERROR(plan->weights.Preload(eng(), *value));
      plan->deconv = dnnl::deconvolution_forward(pd);
      plan->workspace_bytes = bytes + Scratch::kAlign;
      return std::unique_ptr<Plan>(std::move(plan));
    });
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<DeconvPlan&>(base_plan);
    if (plan.stride_tiles) return RunStrideTiles(plan, ctx, scratch);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    dnnl::stream stream(eng());
    dnnl::memory src = WrapTensor(plan.src_user, eng(), ctx.input(0));
    if (plan.src_reorder) {
      dnnl::memory tmp(plan.src_md, eng(), scratch.Take(plan.src_md.get_size()));
      plan.src_reorder->execute(stream, src, tmp);
      src = tmp;
    }
    GE_ASSIGN_OR_RETURN(dnnl::memory weights, plan.weights.Get(eng(), stream, ctx.input(1), scratch));
    dnnl::memory dst_user = WrapTensor(plan.dst_user, eng(), y);
    dnnl::memory dst = dst_user;
    if (plan.dst_reorder) dst = dnnl::memory(plan.dst_md, eng(), scratch.Take(plan.dst_md.get_size()));
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, dst},
        {DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.scratchpad_md, eng(), scratch.Take(plan.scratchpad_md.get_size()))}};
    if (plan.has_bias) args[DNNL_ARG_BIAS] = WrapTensor(plan.bias_md, eng(), ctx.input(2));
    plan.deconv.execute(stream, args);
    if (plan.dst_reorder) plan.dst_reorder->execute(stream, dst, dst_user);
    stream.wait();
    return absl::OkStatus();
  }

  ops::WindowAttrs attrs_;
  StoragePackedWeights stride_weights_{"stride_deconv"};  // the own path's panels, shared by every plan
};

absl::Status CheckConvTranspose(const ir::OpDesc& op, const DenseContext& ctx) {
  for (int i = 0; i < std::min(op.num_inputs(), 3); ++i) GE_RETURN_IF_ERROR(CheckFloatInput(op, i, ctx));
  if (InputDtype(op, 1) != DataType::kUndefined && InputDtype(op, 1) != InputDtype(op, 0)) {
    return Unsupported(op, "X and W have different dtypes");
  }
  auto attrs = ops::WindowAttrsFromOp(op);
  if (!attrs.ok()) return Unsupported(op, attrs.status().message());
  if (attrs->group < 1) return Unsupported(op, "group ", attrs->group, " is not positive");
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && (x.rank() < 3 || x.rank() > 5)) {
    return Unsupported(op, "input rank ", x.rank(), " (1-D to 3-D only)");
  }
  const Shape w = InputShape(op, 1);
  if (!x.IsFullyKnown() || !w.IsFullyKnown()) return absl::OkStatus();  // Build decides, host_cpu backs up
  auto g = ops::ConvTransposeOutputShape(x, w, *attrs);
  if (!g.ok()) return Unsupported(op, g.status().message());
  dnnl::memory::dims pad_l, pad_r;
  if (!DnnlPads(x, *g, &pad_l, &pad_r).ok()) return Unsupported(op, "negative pads");
  return absl::OkStatus();
}

}  // namespace

bool StrideDeconvEnabled() { return StrideDeconvSwitch().load(std::memory_order_relaxed); }

void SetStrideDeconvEnabled(bool on) {
  StrideDeconvSwitch().store(on && OwnLoopsSupported(), std::memory_order_relaxed);
}

std::atomic<int64_t>& StrideDeconvRuns() {
  static std::atomic<int64_t> runs{0};
  return runs;
}

absl::StatusOr<ir::Format> DeconvPreferredFormat(const ir::OpDesc& op, const DenseContext& ctx, ir::Format arriving) {
  if (op.type() != "ConvTranspose" || op.num_inputs() < 2) return NodeError(op, "not a ConvTranspose");
  const ir::TensorDesc& xd = op.input(0).type.tensor();
  const ir::TensorDesc& wd = op.input(1).type.tensor();
  if (!OnlyBatchUnknown(xd.shape) || !wd.shape.IsFullyKnown()) return NodeError(op, "shapes are not known");
  const Shape x = LayoutProbeShape(xd.shape);  // a dynamic batch: oneDNN is asked about batch 1
  GE_ASSIGN_OR_RETURN(ops::WindowAttrs attrs, ops::WindowAttrsFromOp(op));
  GE_ASSIGN_OR_RETURN(ops::WindowGeometry g, ops::ConvTransposeOutputShape(x, wd.shape, attrs));
  dnnl::memory::dims pad_l, pad_r;
  GE_RETURN_IF_ERROR(DnnlPads(x, g, &pad_l, &pad_r));
  std::optional<dnnl::memory::desc> bias;
  if (op.num_inputs() > 2 && op.input(2).type.dtype() != DataType::kUndefined) {
    bias = PlainDesc(op.input(2).type.shape(), op.input(2).type.dtype());
  }
  return DnnlTry(op, kCreation, [&]() -> absl::StatusOr<ir::Format> {
    const auto pd = DeconvPrimitiveDesc(ctx.engine, x, wd.shape, attrs.group, xd.dtype, bias, g, pad_l, pad_r);
    if (arriving == ir::Format::kNHWC &&
        DeconvChannelsLast(ctx.engine, x, wd.shape, attrs.group, xd.dtype, bias, g, pad_l, pad_r, pd)) {
      return ir::Format::kNHWC;
    }
    for (ir::Format f : {ir::Format::kNChw16c, ir::Format::kNChw8c, ir::Format::kNHWC}) {
      auto md = FormatDesc(g.output, xd.dtype, f);
      if (md.ok() && *md == pd.dst_desc()) return f;
    }
    return ir::Format::kND;
  });
}

void RegisterConvTransposeKernels(DenseKernelTable& table) {
  table.Add({"ConvTranspose", {DataType::kFloat, DataType::kBFloat16}, CheckConvTranspose,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               auto attrs = ops::WindowAttrsFromOp(op);
               if (!attrs.ok()) return NodeError(op, attrs.status().message());
               if (attrs->group < 1) return NodeError(op, "group ", attrs->group, " must be at least 1");
               return std::unique_ptr<Kernel>(new ConvTransposeKernel(op, ctx, *std::move(attrs)));
             }});
}

}  // namespace ge::engine::cpu_dense
