// ConvTranspose on oneDNN (deconvolution_forward): 1-D, 2-D and 3-D, groups,
// strides, dilations, output_padding, output_shape and auto_pad, in plain
// layouts.
//
// The geometry comes from ops::ConvTransposeOutputShape, the function shape
// inference and host_cpu use. oneDNN has no output_padding: the output
// size it checks is (in - 1) * stride + dilated kernel - pad_l - pad_r, so
// the right pad is derived from the output size (output_padding lowers
// it). Shapes needing a negative pad run on host_cpu. ONNX's weights
// [C, M/group, k...] are oneDNN's (g, o, i, k...) weights with i outer of
// o, given by strides, so they are read in place.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine::cpu_dense {
namespace {

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

class ConvTransposeKernel final : public DenseKernel {
 public:
  ConvTransposeKernel(const ir::OpDesc& op, const DenseContext& ctx, ops::WindowAttrs attrs)
      : DenseKernel(op, ctx), attrs_(std::move(attrs)) {}

 private:
  struct DeconvPlan final : Plan {
    dnnl::deconvolution_forward deconv;
    dnnl::memory::desc src_md, wei_md, bias_md, dst_md, scratchpad_md;
    bool has_bias = false;
  };

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
    GE_ASSIGN_OR_RETURN(plan->src_md, FormatDesc(x, dtype, op().input(0).type.tensor().format));
    GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(g->output, dtype, op().output(0).type.tensor().format));
    plan->wei_md = WeightsDesc(w, attrs_.group, dtype);
    dnnl::memory::dims strides(g->strides.begin(), g->strides.end()), dilations;
    for (int64_t d : g->dilations) dilations.push_back(d - 1);  // oneDNN counts the gaps
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    using fwd = dnnl::deconvolution_forward;
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::deconvolution_direct;
    return DnnlTry(op(), kCreation, [&]() -> absl::StatusOr<std::unique_ptr<Plan>> {
      std::optional<fwd::primitive_desc> pd;
      if (plan->has_bias) {
        plan->bias_md = PlainDesc(r.shape(2), dtype);
        pd.emplace(fwd::desc(prop, alg, plan->src_md, plan->wei_md, plan->bias_md, plan->dst_md, strides, dilations,
                             pad_l, pad_r),
                   attr, eng());
      } else {
        pd.emplace(fwd::desc(prop, alg, plan->src_md, plan->wei_md, plan->dst_md, strides, dilations, pad_l, pad_r),
                   attr, eng());
      }
      plan->scratchpad_md = pd->scratchpad_desc();
      plan->deconv = fwd(*pd);
      plan->workspace_bytes = Scratch::Padded(plan->scratchpad_md.get_size()) + Scratch::kAlign;
      return std::unique_ptr<Plan>(std::move(plan));
    });
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<DeconvPlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    dnnl::stream stream(eng());
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, WrapTensor(plan.src_md, eng(), ctx.input(0))},
        {DNNL_ARG_WEIGHTS, WrapTensor(plan.wei_md, eng(), ctx.input(1))},
        {DNNL_ARG_DST, WrapTensor(plan.dst_md, eng(), y)},
        {DNNL_ARG_SCRATCHPAD,
         dnnl::memory(plan.scratchpad_md, eng(), scratch.Take(plan.scratchpad_md.get_size()))}};
    if (plan.has_bias) args[DNNL_ARG_BIAS] = WrapTensor(plan.bias_md, eng(), ctx.input(2));
    plan.deconv.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  }

  ops::WindowAttrs attrs_;
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
