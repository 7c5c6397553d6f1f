// Pooling on oneDNN: MaxPool (dilations, ceil_mode; not the Indices
// output), AveragePool (count_include_pad, ceil_mode) for 1-D to 3-D
// windows, and GlobalAveragePool / GlobalMaxPool as one window over the
// spatial dims (or a reduction over them).
//
// The geometry comes from ops::PoolOutputShape, the function shape
// inference uses. oneDNN derives the output size by floor division, so
// ceil_mode's extra window becomes extra end padding; oneDNN's max pooling
// ignores padding and its exclude-padding average counts only input
// elements, which is ONNX's meaning. With count_include_pad ONNX counts
// the explicit pads but not that extra window, which oneDNN cannot
// express: those shapes run on the reference kernel. Plain 2-D pools that
// oneDNN would run with its reference implementation run blocked by 8
// channels between reorders instead.
//
// 2-D f32 MaxPool and exclude-pad AveragePool whose input and output share
// one channel-blocked layout run the engine's own separable loop
// (pool_loops.h) on AVX2 CPUs: oneDNN 2.6's jit:avx2 pooling took 4-5x its
// time on SqueezeNet's and ResNet's stem pools. Include-pad averages stay on
// oneDNN, whose kernel for them is as fast.
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/pool_loops.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/window2d.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

dnnl::memory::dims Dims(const std::vector<int64_t>& v) { return dnnl::memory::dims(v.begin(), v.end()); }

// Whether some output window covers no input element (only pads): ONNX
// leaves its value to the implementation and oneDNN's differs from
// host_cpu's (the type's lowest value against -inf, NaN against 0), so
// such shapes run on the reference.
bool HasEmptyWindow(const Shape& x, const ops::WindowGeometry& g) {
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    const int64_t in = x.dim(i + 2);
    for (int64_t o = 0; o < g.output.dim(i + 2); ++o) {
      const int64_t start = o * g.strides[i] - g.pads_begin[i];
      bool covered = false;
      for (int64_t k = 0; k < g.kernel[i] && !covered; ++k) {
        const int64_t p = start + k * g.dilations[i];
        covered = p >= 0 && p < in;
      }
      if (!covered) return true;
    }
  }
  return false;
}

// Whether oneDNN chose one of its JIT kernels.
template <typename PrimitiveDesc>
bool IsJit(const PrimitiveDesc& pd) {
  return std::string_view(pd.impl_info_str()).substr(0, 3) == "jit";
}

// The channel-blocked layout the JIT kernels of this CPU pool (8 floats on
// AVX2, 16 on AVX-512), or ND when `x` cannot be stored in it.
ir::Format PoolBlockedFormat(const Shape& x, DataType dtype) {
  if (dtype != DataType::kFloat || x.rank() < 4 || x.rank() > 5) return ir::Format::kND;
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  const bool avx512 = (isa & core) == core;
  const ir::Format f = avx512 ? ir::Format::kNChw16c : ir::Format::kNChw8c;
  return x.dim(1) % (avx512 ? 16 : 8) == 0 ? f : ir::Format::kND;
}

// The channel block of a layout (1 for unblocked ones).
int64_t ChannelBlock(ir::Format f) { return f == ir::Format::kNChw16c ? 16 : f == ir::Format::kNChw8c ? 8 : 1; }

class PoolKernel final : public DenseKernel {
 public:
  PoolKernel(const ir::OpDesc& op, const DenseContext& ctx, ops::WindowAttrs attrs, bool max,
             bool include_pad)
      : DenseKernel(op, ctx), attrs_(std::move(attrs)), max_(max), include_pad_(include_pad) {}

 private:
  int64_t MemoryBoundElements(const PlanRequest& r) const override { return r.shape(0).NumElementsUnchecked(); }

  struct PoolPlan final : Plan {
    dnnl::pooling_v2_forward pool;
    dnnl::memory::desc src_md, dst_md, scratchpad_md;
    // Pooling a blocked copy: the layouts the primitive runs on.
    std::optional<dnnl::reorder> src_reorder, dst_reorder;
    dnnl::memory::desc pool_src_md, pool_dst_md;
    // The own loop's window and channel block (block 0: oneDNN's primitive
    // runs).
    Window2d own;
    int64_t own_block = 0;
  };

  // The own loop's geometry when it runs this pool (see the file comment),
  // else nullopt.
  std::optional<Window2d> OwnGeometry(const PlanRequest& r, const ops::WindowGeometry& g) const {
    const ir::Format fx = op().input(0).type.tensor().format;
    if (include_pad_ || r.dtype(0) != DataType::kFloat || r.shape(0).rank() != 4) return std::nullopt;
    if (fx != op().output(0).type.tensor().format || ChannelBlock(fx) == 1) return std::nullopt;
    const Window2d own = Window2dOf(r.shape(0), g);
    if (!BlockedPoolSupported(own, ChannelBlock(fx))) return std::nullopt;
    return own;
  }

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    if (x.rank() < 3 || x.rank() > 5) return NodeUnimplemented(op(), "input ", x.ToString(), " is not 1-D to 3-D");
    auto g = ops::PoolOutputShape(x, attrs_);
    if (!g.ok()) return NodeError(op(), g.status().message());
    const Shape& out = r.output_types[0].shape();
    if (out.IsFullyKnown() && out != g->output) {
      return NodeError(op(), "output ", out.ToString(), " differs from the computed ", g->output.ToString());
    }
    if (HasEmptyWindow(x, *g)) return NodeUnimplemented(op(), "a window covers only padding");
    std::vector<int64_t> dilation, pad_end;
    for (size_t i = 0; i < g->kernel.size(); ++i) {
      const int64_t extent = (g->kernel[i] - 1) * g->dilations[i] + 1;
      const int64_t in = x.dim(i + 2);
      const int64_t needed = (g->output.dim(i + 2) - 1) * g->strides[i] + extent - in - g->pads_begin[i];
      if (g->pads_begin[i] < 0 || g->pads_end[i] < 0) return NodeUnimplemented(op(), "negative pads");
      if (needed > g->pads_end[i] && include_pad_) {
        return NodeUnimplemented(op(), "count_include_pad with a ceil_mode window past the pads");
      }
      pad_end.push_back(std::max(needed, g->pads_end[i]));
      dilation.push_back(g->dilations[i] - 1);
    }
    auto plan = std::make_unique<PoolPlan>();
    if (auto own = OwnGeometry(r, *g)) {
      plan->own = *own;
      plan->own_block = ChannelBlock(op().input(0).type.tensor().format);
      return plan;
    }
    GE_ASSIGN_OR_RETURN(plan->src_md, FormatDesc(x, r.dtype(0), op().input(0).type.tensor().format));
    GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(g->output, r.dtype(0), op().output(0).type.tensor().format));
    const auto alg = max_ ? dnnl::algorithm::pooling_max
                          : include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                         : dnnl::algorithm::pooling_avg_exclude_padding;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    using fwd = dnnl::pooling_v2_forward;
    auto make = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
      return fwd::primitive_desc(fwd::desc(dnnl::prop_kind::forward_inference, alg, src, dst, Dims(g->strides),
                                           Dims(g->kernel), Dims(dilation), Dims(g->pads_begin), Dims(pad_end)),
                                 attr, eng());
    };
    fwd::primitive_desc pd = make(plan->src_md, plan->dst_md);
    plan->pool_src_md = plan->src_md;
    plan->pool_dst_md = plan->dst_md;
    const ir::Format blocked = PoolBlockedFormat(x, r.dtype(0));
    if (!IsJit(pd) && blocked != ir::Format::kND && plan->src_md == PlainDesc(x, r.dtype(0)) &&
        plan->dst_md == PlainDesc(g->output, r.dtype(0))) {
      GE_ASSIGN_OR_RETURN(dnnl::memory::desc src_blk, FormatDesc(x, r.dtype(0), blocked));
      GE_ASSIGN_OR_RETURN(dnnl::memory::desc dst_blk, FormatDesc(g->output, r.dtype(0), blocked));
      fwd::primitive_desc blocked_pd = make(src_blk, dst_blk);
      if (IsJit(blocked_pd)) {
        pd = blocked_pd;
        plan->pool_src_md = src_blk;
        plan->pool_dst_md = dst_blk;
        plan->src_reorder = MakeReorder(eng(), plan->src_md, src_blk);
        plan->dst_reorder = MakeReorder(eng(), dst_blk, plan->dst_md);
      }
    }
    plan->scratchpad_md = pd.scratchpad_desc();
    plan->pool = fwd(pd);
    size_t bytes = Scratch::Padded(plan->scratchpad_md.get_size());
    if (plan->src_reorder) {
      bytes += Scratch::Padded(plan->pool_src_md.get_size()) + Scratch::Padded(plan->pool_dst_md.get_size());
    }
    plan->workspace_bytes = bytes + Scratch::kAlign;
    return plan;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<PoolPlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (plan.own_block != 0) {
      avx2::BlockedPool(plan.own, plan.own_block, max_ ? BlockedPoolKind::kMax : BlockedPoolKind::kAverageExcludePad,
                        ctx.input(0).data<float>(), y.data<float>());
      return absl::OkStatus();
    }
    dnnl::stream stream(eng());
    dnnl::memory src = WrapTensor(plan.src_md, eng(), ctx.input(0));
    dnnl::memory dst = WrapTensor(plan.dst_md, eng(), y);
    dnnl::memory pool_src = src, pool_dst = dst;
    if (plan.src_reorder) {
      pool_src = dnnl::memory(plan.pool_src_md, eng(), scratch.Take(plan.pool_src_md.get_size()));
      pool_dst = dnnl::memory(plan.pool_dst_md, eng(), scratch.Take(plan.pool_dst_md.get_size()));
      plan.src_reorder->execute(stream, src, pool_src);
    }
    plan.pool.execute(stream, {{DNNL_ARG_SRC, pool_src},
                               {DNNL_ARG_DST, pool_dst},
                               {DNNL_ARG_SCRATCHPAD,
                                dnnl::memory(plan.scratchpad_md, eng(), scratch.Take(plan.scratchpad_md.get_size()))}});
    if (plan.dst_reorder) plan.dst_reorder->execute(stream, pool_dst, dst);
    stream.wait();
    return absl::OkStatus();
  }

  ops::WindowAttrs attrs_;
  bool max_;
  bool include_pad_;
};

// GlobalAveragePool / GlobalMaxPool: one pooling window over every dim
// after C where the output can take the input's layout (oneDNN 2.6 has jit
// pooling for plain, channels-last and blocked layouts, but only its
// reference reduction for a reduction that is not over the innermost
// dims), else a reduction over those dims.
class GlobalPoolKernel final : public DenseKernel {
 public:
  GlobalPoolKernel(const ir::OpDesc& op, const DenseContext& ctx, bool max)
      : DenseKernel(op, ctx), max_(max) {}

 private:
  int64_t MemoryBoundElements(const PlanRequest& r) const override { return r.shape(0).NumElementsUnchecked(); }

  struct ReducePlan final : Plan {
    dnnl::primitive reduce;  // a pooling or a reduction
    dnnl::memory::desc src_md, dst_md, scratchpad_md;
    bool identity = false;  // every spatial dim is 1: a copy (oneDNN refuses a reduction of nothing)
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    if (x.rank() < 3) return NodeUnimplemented(op(), "input ", x.ToString(), " has no spatial dims");
    Shape out = x;
    for (int64_t i = 2; i < x.rank(); ++i) out.set_dim(i, 1);
    if (r.output_types[0].shape().IsFullyKnown() && r.output_types[0].shape() != out) {
      return NodeError(op(), "output ", r.output_types[0].shape().ToString(), " must be ", out.ToString());
    }
    auto plan = std::make_unique<ReducePlan>();
    const ir::Format x_format = op().input(0).type.tensor().format;
    GE_ASSIGN_OR_RETURN(plan->src_md, FormatDesc(x, r.dtype(0), x_format));
    GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(out, r.dtype(0), op().output(0).type.tensor().format));
    if (out == x && plan->src_md == plan->dst_md) {
      plan->identity = true;
      return plan;
    }
    // A plain output of one element per channel has the bytes of the
    // input's own layout when that is channels-last, or blocked by a block
    // that divides C.
    const int64_t block = ChannelBlock(x_format);
    if (plan->dst_md == PlainDesc(out, r.dtype(0)) && x.dim(1) % block == 0) {
      GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(out, r.dtype(0), x_format));
    }
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const bool same_layout = FormatDesc(out, r.dtype(0), x_format).value() == plan->dst_md;
    if (same_layout) {
      dnnl::memory::dims kernel, strides, pads;
      for (int64_t i = 2; i < x.rank(); ++i) {
        kernel.push_back(x.dim(i));
        strides.push_back(1);
        pads.push_back(0);
      }
      const auto alg = max_ ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
      dnnl::pooling_forward::primitive_desc pd(
          dnnl::pooling_forward::desc(dnnl::prop_kind::forward_inference, alg, plan->src_md, plan->dst_md, strides,
                                      kernel, pads, pads),
          attr, eng());
      plan->scratchpad_md = pd.scratchpad_desc();
      plan->reduce = dnnl::pooling_forward(pd);
    } else {
      const auto alg = max_ ? dnnl::algorithm::reduction_max : dnnl::algorithm::reduction_mean;
      dnnl::reduction::primitive_desc pd(
          dnnl::reduction::desc(alg, plan->src_md, plan->dst_md, /*p=*/0.0f, /*eps=*/0.0f), attr, eng());
      plan->scratchpad_md = pd.scratchpad_desc();
      plan->reduce = dnnl::reduction(pd);
    }
    plan->workspace_bytes = Scratch::Padded(plan->scratchpad_md.get_size()) + Scratch::kAlign;
    return plan;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<ReducePlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (plan.identity) {
      std::memcpy(y.raw_data(), ctx.input(0).raw_data(), plan.src_md.get_size());
      return absl::OkStatus();
    }
    dnnl::stream stream(eng());
    const std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, WrapTensor(plan.src_md, eng(), ctx.input(0))},
        {DNNL_ARG_DST, WrapTensor(plan.dst_md, eng(), y)},
        {DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.scratchpad_md, eng(), scratch.Take(plan.scratchpad_md.get_size()))}};
    plan.reduce.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  }

  bool max_;
};

absl::Status CheckPool(const ir::OpDesc& op, const DenseContext&) {
  if (op.num_outputs() > 1) return Unsupported(op, "the Indices output is not supported");
  auto attrs = ops::WindowAttrsFromOp(op);
  if (!attrs.ok()) return Unsupported(op, attrs.status().message());
  if (attrs->kernel_shape.empty()) return Unsupported(op, "kernel_shape is missing");
  for (int64_t p : attrs->pads) {
    if (p < 0) return Unsupported(op, "negative pads");
  }
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && (x.rank() < 3 || x.rank() > 5)) {
    return Unsupported(op, "input rank ", x.rank(), " (1-D to 3-D windows only)");
  }
  if (x.IsFullyKnown()) {
    auto g = ops::PoolOutputShape(x, *attrs);
    if (!g.ok()) return Unsupported(op, g.status().message());
    if (HasEmptyWindow(x, *g)) return Unsupported(op, "a window covers only padding");
    const bool include_pad = op.type() == "AveragePool" && sdk::IntAttr(op, "count_include_pad", 0) != 0;
    for (size_t i = 0; i < g->kernel.size(); ++i) {
      const int64_t extent = (g->kernel[i] - 1) * g->dilations[i] + 1;
      const int64_t needed = (g->output.dim(i + 2) - 1) * g->strides[i] + extent - x.dim(i + 2) - g->pads_begin[i];
      if (include_pad && needed > g->pads_end[i]) {
        return Unsupported(op, "count_include_pad with a ceil_mode window past the pads");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool BlockedPoolSupported(const Window2d& g, int64_t block) {
  if (!OwnLoopsSupported()) return false;
  if (block != 8 && block != 16) return false;
  if (g.batch <= 0 || g.in_channels <= 0 || g.in_channels % block != 0) return false;
  if (g.in_h <= 0 || g.in_w <= 0 || g.out_h <= 0 || g.out_w <= 0) return false;
  if (g.kernel_h <= 0 || g.kernel_w <= 0 || g.stride_h <= 0 || g.stride_w <= 0) return false;
  if (g.dilation_h <= 0 || g.dilation_w <= 0 || g.pad_top < 0 || g.pad_left < 0) return false;
  return (g.kernel_w - 1) * g.dilation_w + 1 <= kBlockedPoolMaxSpan;
}

namespace {

absl::Status CheckGlobalPool(const ir::OpDesc& op, const DenseContext&) {
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && (x.rank() < 3 || x.rank() > 5)) {
    return Unsupported(op, "input rank ", x.rank(), " (1 to 3 spatial dims only)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Kernel>> CreatePool(const ir::OpDesc& op, const DenseContext& ctx, bool max) {
  auto attrs = ops::WindowAttrsFromOp(op);
  if (!attrs.ok()) return NodeError(op, attrs.status().message());
  if (attrs->kernel_shape.empty()) return NodeError(op, "attribute kernel_shape is required");
  const bool include_pad = !max && sdk::IntAttr(op, "count_include_pad", 0) != 0;
  return std::unique_ptr<Kernel>(new PoolKernel(op, ctx, *std::move(attrs), max, include_pad));
}

}  // namespace

void RegisterPoolKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet floats{DataType::kFloat, DataType::kBFloat16};
  table.Add({"MaxPool", {DataType::kFloat, DataType::kBFloat16, DataType::kInt8, DataType::kUint8},
             CheckPool, [](const ir::OpDesc& op, const DenseContext& ctx) { return CreatePool(op, ctx, true); }});
  table.Add({"AveragePool", floats, CheckPool,
             [](const ir::OpDesc& op, const DenseContext& ctx) { return CreatePool(op, ctx, false); }});
  table.Add({"GlobalAveragePool", floats, CheckGlobalPool,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new GlobalPoolKernel(op, ctx, false));
             }});
  table.Add({"GlobalMaxPool", floats, CheckGlobalPool,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new GlobalPoolKernel(op, ctx, true));
             }});
}

}  // namespace ge::engine::cpu_dense
