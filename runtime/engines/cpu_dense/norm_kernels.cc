// Normalizations on oneDNN: BatchNormalization (inference, global
// statistics), LayerNormalization (any axis: the tensor is viewed as
// [rows, normalized elements]) and Softmax / LogSoftmax over one axis.
//
// oneDNN takes the statistics, scale and shift as f32 vectors; parameters
// of another dtype, or LayerNormalization scales that broadcast, are
// expanded into f32 scratch on each run (they are C or the normalized size
// long, tiny next to the data). An f32 softmax over an axis that is not
// the innermost runs the kernel's own loop: oneDNN 2.6 has only its
// reference kernel for strided axes (a TCN's [1, 30, 400] LogSoftmax over
// the channels took 1.6 ms there), and its JIT softmax over a transposed
// copy computed the logarithm a few ulp off ONNX Runtime's.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/norm_relu_fusion.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

using dt = dnnl::memory::data_type;

// A f32 vector of `n` elements holding input `t` (converted and broadcast
// to the trailing `shape` as needed): the tensor itself when it already is
// one, else a copy in scratch.
absl::StatusOr<dnnl::memory> F32Vector(const ir::OpDesc& op, const dnnl::engine& eng, const Tensor& t,
                                       const Shape& shape, Scratch& scratch) {
  const int64_t n = shape.NumElementsUnchecked();
  const dnnl::memory::desc md = PlainDesc(dnnl::memory::dims{n}, dt::f32);
  if (t.dtype() == DataType::kFloat && t.NumElements() == n) return WrapTensor(md, eng, t);
  GE_ASSIGN_OR_RETURN(Tensor f32, sdk::ConvertTensor(t, DataType::kFloat));
  void* data = scratch.Take(n * sizeof(float));
  Tensor out(DataType::kFloat, shape, Buffer::Wrap(data, n * sizeof(float), [] {}));
  GE_RETURN_IF_ERROR(sdk::BroadcastCopy(op, f32, out, 1));
  return dnnl::memory(md, eng, data);
}

dnnl::memory ScratchpadMemory(const dnnl::memory::desc& md, const dnnl::engine& eng, Scratch& scratch) {
  return dnnl::memory(md, eng, scratch.Take(md.get_size()));
}

// ---- BatchNormalization ----

class BatchNormKernel final : public DenseKernel {
 public:
  BatchNormKernel(const ir::OpDesc& op, const DenseContext& ctx)
      : DenseKernel(op, ctx),
        epsilon_(sdk::FloatAttr(op, "epsilon", 1e-5f)),
        relu_(op.GetAttrOr<int64_t>(kAttrFusedRelu, 0) != 0) {}

 private:
  struct BnPlan final : Plan {
    dnnl::batch_normalization_forward bn;
    dnnl::memory::desc src_md, dst_md, scratchpad_md;
    Shape channels;
  };

  int64_t MemoryBoundElements(const PlanRequest& r) const override { return r.shape(0).NumElementsUnchecked(); }

  // A node with a fused ReLU must not fall back to the reference kernel
  // (which would drop the ReLU; norm_relu_fusion.h): its refusals are
  // errors.
  absl::Status Refuse(absl::Status s) const {
    if (!relu_ || !absl::IsUnimplemented(s)) return s;
    return NodeError(op(), "with a fused ReLU: ", s.message());
  }

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    auto plan = BuildPlan(r);
    if (!plan.ok()) return Refuse(plan.status());
    return plan;
  }

  absl::StatusOr<std::unique_ptr<Plan>> BuildPlan(const PlanRequest& r) {
    const Shape& x = r.shape(0);
    if (x.rank() < 2 || x.rank() > 5) return NodeUnimplemented(op(), "input rank ", x.rank());
    auto plan = std::make_unique<BnPlan>();
    plan->channels = Shape{x.dim(1)};
    for (int i = 1; i <= 4; ++i) {
      if (r.shape(i).NumElementsUnchecked() != x.dim(1)) {
        return NodeError(op(), "input ", i, " ", r.shape(i).ToString(), " must have ", x.dim(1),
                         " elements (the channels of X ", x.ToString(), ")");
      }
    }
    GE_ASSIGN_OR_RETURN(plan->src_md, FormatDesc(x, r.dtype(0), op().input(0).type.tensor().format));
    GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(x, r.dtype(0), op().output(0).type.tensor().format));
    if (plan->src_md != plan->dst_md) return NodeUnimplemented(op(), "input and output layouts differ");
    if (x.rank() == 3 && plan->src_md == PlainDesc(x, r.dtype(0))) {
      // oneDNN 2.6 has only its reference kernel for a plain [N, C, W]
      // (0.3 ms for PatchTST's [7, 128, 42] BatchNorm1d, 8 ns an element); the
      // same bytes as [N, C, 1, W] run on its vectorized NCHW kernel.
      plan->src_md = PlainDesc(dnnl::memory::dims{x.dim(0), x.dim(1), 1, x.dim(2)}, ToDnnlType(r.dtype(0)));
      plan->dst_md = plan->src_md;
    }
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                 dnnl::normalization_flags::use_shift;
    if (relu_) flags |= dnnl::normalization_flags::fuse_norm_relu;
    using fwd = dnnl::batch_normalization_forward;
    auto pd = DnnlTry(op(), kCreation, [&]() -> absl::StatusOr<fwd::primitive_desc> {
      return fwd::primitive_desc(fwd::desc(dnnl::prop_kind::forward_inference, plan->src_md, epsilon_, flags), attr,
                                 eng());
    });
    if (!pd.ok()) return pd.status();
    plan->scratchpad_md = pd->scratchpad_desc();
    plan->bn = fwd(*pd);
    plan->workspace_bytes = Scratch::Padded(plan->scratchpad_md.get_size()) +
                            4 * Scratch::Padded(x.dim(1) * sizeof(float)) + Scratch::kAlign;
    return plan;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<BnPlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, WrapTensor(plan.src_md, eng(), ctx.input(0))},
        {DNNL_ARG_DST, WrapTensor(plan.dst_md, eng(), y)},
        {DNNL_ARG_SCRATCHPAD, ScratchpadMemory(plan.scratchpad_md, eng(), scratch)}};
    const int params[4] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE};
    for (int i = 0; i < 4; ++i) {
      GE_ASSIGN_OR_RETURN(args[params[i]], F32Vector(op(), eng(), ctx.input(i + 1), plan.channels, scratch));
    }
    dnnl::stream stream(eng());
    plan.bn.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  }

  float epsilon_;
  bool relu_;  // norm_relu_fusion.h's `_fused_relu`
};

// ---- LayerNormalization ----

// LayerNorms of fewer than kSerialElements run on the calling thread alone
// (MemoryBoundElements): oneDNN's primitive splits its rows over the whole
// team however few there are, and waking the second thread for 8 rows of 64
// (mlp_tabular at batch 8) cost 8 ms per run at 2 threads on a loaded host
// against 0.06 ms for the whole model at 1 thread.

class LayerNormKernel final : public DenseKernel {
 public:
  LayerNormKernel(const ir::OpDesc& op, const DenseContext& ctx)
      : DenseKernel(op, ctx), axis_(sdk::IntAttr(op, "axis", -1)), epsilon_(sdk::FloatAttr(op, "epsilon", 1e-5f)) {}

 private:
  int64_t MemoryBoundElements(const PlanRequest& r) const override { return r.shape(0).NumElementsUnchecked(); }

  struct LnPlan final : Plan {
    dnnl::layer_normalization_forward ln;
    dnnl::memory::desc data_md, scratchpad_md;
    Shape normalized;
    bool has_bias = false;
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op(), axis_, x.rank()));
    auto plan = std::make_unique<LnPlan>();
    plan->normalized = Shape(x.span().subspan(axis));
    const int64_t rows = sdk::DimProduct(x.span(), 0, axis);
    const int64_t cols = plan->normalized.NumElementsUnchecked();
    for (int i = 1; i <= 2; ++i) {
      if (r.has_input(i) && !ops::CheckUnidirectionalBroadcast(r.shape(i), plan->normalized).ok()) {
        return NodeError(op(), "input ", i, " ", r.shape(i).ToString(),
                         " does not broadcast to the normalized shape ", plan->normalized.ToString());
      }
    }
    plan->has_bias = r.has_input(2);
    plan->data_md = PlainDesc(dnnl::memory::dims{rows, cols}, ToDnnlType(r.dtype(0)));
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto flags = dnnl::normalization_flags::use_scale;
    if (plan->has_bias) flags = flags | dnnl::normalization_flags::use_shift;
    using fwd = dnnl::layer_normalization_forward;
    fwd::primitive_desc pd(fwd::desc(dnnl::prop_kind::forward_inference, plan->data_md, epsilon_, flags), attr, eng());
    plan->scratchpad_md = pd.scratchpad_desc();
    plan->ln = fwd(pd);
    plan->workspace_bytes = Scratch::Padded(plan->scratchpad_md.get_size()) +
                            2 * Scratch::Padded(cols * sizeof(float)) + Scratch::kAlign;
    return plan;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<LnPlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, WrapTensor(plan.data_md, eng(), ctx.input(0))},
        {DNNL_ARG_DST, WrapTensor(plan.data_md, eng(), y)},
        {DNNL_ARG_SCRATCHPAD, ScratchpadMemory(plan.scratchpad_md, eng(), scratch)}};
    GE_ASSIGN_OR_RETURN(args[DNNL_ARG_SCALE], F32Vector(op(), eng(), ctx.input(1), plan.normalized, scratch));
    if (plan.has_bias) {
      GE_ASSIGN_OR_RETURN(args[DNNL_ARG_SHIFT], F32Vector(op(), eng(), ctx.input(2), plan.normalized, scratch));
    }
    dnnl::stream stream(eng());
    plan.ln.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  }

  int64_t axis_;
  float epsilon_;
};

// ---- Softmax / LogSoftmax ----

class SoftmaxKernel final : public DenseKernel {
 public:
  SoftmaxKernel(const ir::OpDesc& op, const DenseContext& ctx, bool log)
      : DenseKernel(op, ctx), axis_(sdk::IntAttr(op, "axis", -1)), log_(log) {}

 private:
  // Fewer than kSerialElements: one thread (a beam's [4, 256] LogSoftmax per
  // decoder step woke a team for microseconds of work).
  int64_t MemoryBoundElements(const PlanRequest& r) const override { return r.shape(0).NumElementsUnchecked(); }

  struct SoftmaxPlan final : Plan {
    dnnl::softmax_v2_forward softmax;
    dnnl::memory::desc src_md, dst_md, scratchpad_md;
    // Softmax over an axis that is not the innermost, f32, plain: oneDNN
    // 2.6 has only its reference kernel there; the kernel's own loop
    // (Strided) runs it instead, as [outer, axis, inner].
    bool strided = false;
    int64_t outer = 0, length = 0, inner = 0;
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    if (x.rank() > DNNL_MAX_NDIMS) return NodeUnimplemented(op(), "rank ", x.rank());
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op(), axis_, x.rank()));
    auto plan = std::make_unique<SoftmaxPlan>();
    GE_ASSIGN_OR_RETURN(plan->src_md, FormatDesc(x, r.dtype(0), op().input(0).type.tensor().format));
    GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(x, r.dtype(0), op().output(0).type.tensor().format));
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    using fwd = dnnl::softmax_v2_forward;
    const auto alg = log_ ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
    fwd::primitive_desc pd(fwd::desc(dnnl::prop_kind::forward_inference, alg, plan->src_md, plan->dst_md,
                                     static_cast<int>(axis)),
                           attr, eng());
    const bool plain = plan->src_md == PlainDesc(x, r.dtype(0)) && plan->dst_md == plan->src_md;
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0 && plain && r.dtype(0) == DataType::kFloat &&
        axis != x.rank() - 1) {
      plan->strided = true;
      plan->outer = 1;
      plan->inner = 1;
      for (int64_t d = 0; d < axis; ++d) plan->outer *= x.dim(d);
      for (int64_t d = axis + 1; d < x.rank(); ++d) plan->inner *= x.dim(d);
      plan->length = x.dim(axis);
      plan->workspace_bytes = 2 * Scratch::Padded(static_cast<size_t>(plan->inner) * sizeof(float)) + Scratch::kAlign;
      return plan;
    }
    plan->scratchpad_md = pd.scratchpad_desc();
    plan->softmax = fwd(pd);
    plan->workspace_bytes = Scratch::Padded(plan->scratchpad_md.get_size()) + Scratch::kAlign;
    return plan;
  }

  // Softmax over the middle dim of [outer, length, inner]: per outer index,
  // the running maximum and sum of each inner lane over contiguous rows
  // (f32, as ONNX Runtime's kernel: y = x - max - log(sum) or exp(x - max) / sum).
  void Strided(const SoftmaxPlan& plan, const float* x, float* y, float* max, float* sum) const {
    const int64_t inner = plan.inner, length = plan.length;
    for (int64_t o = 0; o < plan.outer; ++o) {
      const float* in = x + o * length * inner;
      float* out = y + o * length * inner;
      for (int64_t i = 0; i < inner; ++i) max[i] = in[i];
      for (int64_t c = 1; c < length; ++c) {
        for (int64_t i = 0; i < inner; ++i) max[i] = std::max(max[i], in[c * inner + i]);
      }
      for (int64_t i = 0; i < inner; ++i) sum[i] = 0;
      for (int64_t c = 0; c < length; ++c) {
        for (int64_t i = 0; i < inner; ++i) {
          const float e = std::exp(in[c * inner + i] - max[i]);
          sum[i] += e;
          if (!log_) out[c * inner + i] = e;
        }
      }
      if (log_) {
        for (int64_t i = 0; i < inner; ++i) sum[i] = std::log(sum[i]);
        for (int64_t c = 0; c < length; ++c) {
          for (int64_t i = 0; i < inner; ++i) out[c * inner + i] = in[c * inner + i] - max[i] - sum[i];
        }
      } else {
        for (int64_t c = 0; c < length; ++c) {
          for (int64_t i = 0; i < inner; ++i) out[c * inner + i] /= sum[i];
        }
      }
    }
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<SoftmaxPlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (plan.strided) {
      const size_t bytes = static_cast<size_t>(plan.inner) * sizeof(float);
      auto* max = static_cast<float*>(scratch.Take(bytes));
      auto* sum = static_cast<float*>(scratch.Take(bytes));
      Strided(plan, ctx.input(0).data<float>(), y.data<float>(), max, sum);
      return absl::OkStatus();
    }
    dnnl::stream stream(eng());
    plan.softmax.execute(stream, {{DNNL_ARG_SRC, WrapTensor(plan.src_md, eng(), ctx.input(0))},
                                  {DNNL_ARG_DST, WrapTensor(plan.dst_md, eng(), y)},
                                  {DNNL_ARG_SCRATCHPAD, ScratchpadMemory(plan.scratchpad_md, eng(), scratch)}});
    stream.wait();
    return absl::OkStatus();
  }

  int64_t axis_;
  bool log_;
};

absl::Status CheckBatchNorm(const ir::OpDesc& op, const DenseContext& ctx) {
  if (sdk::IntAttr(op, "training_mode", 0) != 0) return Unsupported(op, "training_mode=1");
  if (op.num_outputs() > 1) return Unsupported(op, "the running statistics outputs (training only)");
  for (int i = 1; i < op.num_inputs(); ++i) GE_RETURN_IF_ERROR(CheckFloatInput(op, i, ctx));
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && (x.rank() < 2 || x.rank() > 5)) return Unsupported(op, "input rank ", x.rank());
  return absl::OkStatus();
}

absl::Status CheckLayerNorm(const ir::OpDesc& op, const DenseContext& ctx) {
  if (op.num_outputs() > 1) return Unsupported(op, "the Mean and InvStdDev outputs");
  for (int i = 1; i < op.num_inputs(); ++i) GE_RETURN_IF_ERROR(CheckFloatInput(op, i, ctx));
  const Shape x = InputShape(op, 0);
  if (x.rank() == 0) return Unsupported(op, "a scalar input");
  return absl::OkStatus();
}

absl::Status CheckSoftmax(const ir::OpDesc& op, const DenseContext&) {
  const Shape x = InputShape(op, 0);
  if (x.rank() == 0) return Unsupported(op, "a scalar input");
  if (x.rank() > DNNL_MAX_NDIMS) return Unsupported(op, "input rank ", x.rank());
  return absl::OkStatus();
}

template <typename K, typename... Args>
DenseCreateFn Factory(Args... args) {
  return [=](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new K(op, ctx, args...));
  };
}

}  // namespace

void RegisterNormKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet floats{DataType::kFloat, DataType::kBFloat16};
  table.Add({"BatchNormalization", floats, CheckBatchNorm, Factory<BatchNormKernel>()});
  table.Add({"LayerNormalization", floats, CheckLayerNorm, Factory<LayerNormKernel>()});
  table.Add({"Softmax", floats, CheckSoftmax, Factory<SoftmaxKernel>(false)});
  table.Add({"LogSoftmax", floats, CheckSoftmax, Factory<SoftmaxKernel>(true)});
}

}  // namespace ge::engine::cpu_dense
