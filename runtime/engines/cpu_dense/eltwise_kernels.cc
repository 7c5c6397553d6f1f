// Element-wise ops on oneDNN: unary activations and math (eltwise
// primitive) and binary arithmetic with numpy broadcasting (binary
// primitive).
//
// Unary ops see the tensor as one flat vector, so they run in any layout.
// Binary ops in a channel-blocked layout (the layout pass) take each
// operand in its port's layout, and a plain per-channel operand [N, C, 1...]
// as if blocked: with C a multiple of the block both store it alike.
// oneDNN's binary primitive broadcasts its second operand only, and its
// first must have the output's shape: for Add, Mul, Max and Min the
// operands are swapped when only the first one broadcasts; other shapes
// (both broadcasting, or Sub / Div with a broadcast first operand) are
// rejected by CheckSupported when shapes are known, and run on the
// reference kernel when they were not. Plain operands whose broadcast
// oneDNN has only a reference kernel for are described in fewer dims
// (MakePlainBinary); when that does not help either, the op is rejected
// too (another engine runs it faster).
#include <limits>
#include <map>
#include <string_view>
#include <utility>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

using alg = dnnl::algorithm;

// ---- Unary ----

struct UnarySpec {
  std::string_view op;
  alg algorithm;
  float alpha = 0.0f;
  float beta = 0.0f;
  std::string_view alpha_attr = {};  // read alpha from this attribute
};

constexpr UnarySpec kUnary[] = {
    {"Relu", alg::eltwise_relu},
    {"LeakyRelu", alg::eltwise_relu, 0.01f, 0.0f, "alpha"},
    {"Sigmoid", alg::eltwise_logistic},
    {"Tanh", alg::eltwise_tanh},
    {"Elu", alg::eltwise_elu, 1.0f, 0.0f, "alpha"},
    {"Softplus", alg::eltwise_soft_relu},
    {"HardSwish", alg::eltwise_hardswish},
    {"Sqrt", alg::eltwise_sqrt},
    {"Exp", alg::eltwise_exp},
    {"Log", alg::eltwise_log},
    {"Abs", alg::eltwise_abs},
    {"Neg", alg::eltwise_linear, -1.0f, 0.0f},
    {"Reciprocal", alg::eltwise_pow, 1.0f, -1.0f},
    {"Round", alg::eltwise_round},
    {"Clip", alg::eltwise_clip_v2},
};

class EltwiseKernel final : public DenseKernel {
 public:
  EltwiseKernel(const ir::OpDesc& op, const DenseContext& ctx, const UnarySpec& spec)
      : DenseKernel(op, ctx), spec_(spec) {
    if (!spec.alpha_attr.empty()) spec_.alpha = sdk::FloatAttr(op, spec.alpha_attr, spec.alpha);
  }

 private:
  int64_t MemoryBoundElements(const PlanRequest& r) const override { return r.shape(0).NumElementsUnchecked(); }

  struct EltwisePlan final : Plan {
    dnnl::memory::desc md;
    // By (alpha, beta): Clip's bounds are inputs and may change per run.
    std::map<std::pair<float, float>, dnnl::eltwise_forward> primitives;
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    auto plan = std::make_unique<EltwisePlan>();
    const int64_t n = r.shape(0).NumElementsUnchecked();
    plan->md = PlainDesc(dnnl::memory::dims{n}, ToDnnlType(r.dtype(0)));
    if (spec_.algorithm != alg::eltwise_clip_v2) {
      GE_ASSIGN_OR_RETURN(auto prim, Primitive(*plan, spec_.alpha, spec_.beta));
      (void)prim;
    }
    plan->workspace_bytes = 0;
    return plan;
  }

  absl::StatusOr<dnnl::eltwise_forward*> Primitive(EltwisePlan& plan, float alpha, float beta) {
    auto key = std::make_pair(alpha, beta);
    auto it = plan.primitives.find(key);
    if (it != plan.primitives.end()) return &it->second;
    if (plan.primitives.size() > 16) plan.primitives.clear();
    using fwd = dnnl::eltwise_forward;
    fwd::primitive_desc pd(fwd::desc(dnnl::prop_kind::forward_inference, spec_.algorithm, plan.md, alpha, beta), eng());
    return &plan.primitives.emplace(key, fwd(pd)).first->second;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch&) override {
    auto& plan = static_cast<EltwisePlan&>(base_plan);
    float alpha = spec_.alpha, beta = spec_.beta;
    if (spec_.algorithm == alg::eltwise_clip_v2) {
      alpha = ctx.has_input(1) ? static_cast<float>(ctx.input(1).GetAsDouble(0))
                               : -std::numeric_limits<float>::infinity();
      beta = ctx.has_input(2) ? static_cast<float>(ctx.input(2).GetAsDouble(0))
                              : std::numeric_limits<float>::infinity();
      alpha = std::min(alpha, beta);  // numpy: min > max clips everything to max
    }
    GE_ASSIGN_OR_RETURN(dnnl::eltwise_forward * prim, Primitive(plan, alpha, beta));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    dnnl::stream stream(eng());
    prim->execute(stream, {{DNNL_ARG_SRC, WrapTensor(plan.md, eng(), ctx.input(0))},
                           {DNNL_ARG_DST, WrapTensor(plan.md, eng(), y)}});
    stream.wait();
    return absl::OkStatus();
  }

  UnarySpec spec_;
};

absl::Status CheckClip(const ir::OpDesc& op, const DenseContext& ctx) {
  for (int i = 1; i < op.num_inputs(); ++i) {
    GE_RETURN_IF_ERROR(CheckFloatInput(op, i, ctx));
    const Shape s = InputShape(op, i);
    if (s.IsFullyKnown() && s.NumElementsUnchecked() != 1) return Unsupported(op, "min and max must be scalars");
  }
  return absl::OkStatus();
}

// ---- Binary ----

struct BinarySpec {
  std::string_view op;
  alg algorithm;
  bool commutative;
};

constexpr BinarySpec kBinary[] = {
    {"Add", alg::binary_add, true}, {"Sub", alg::binary_sub, false}, {"Mul", alg::binary_mul, true},
    {"Div", alg::binary_div, false}, {"Max", alg::binary_max, true},  {"Min", alg::binary_min, true},
};

// The dims of `s` left-padded with 1s to `rank`.
dnnl::memory::dims AlignedDims(const Shape& s, size_t rank) {
  dnnl::memory::dims d(rank, 1);
  for (size_t i = 0; i < s.dims().size(); ++i) d[rank - s.dims().size() + i] = s.dim(i);
  return d;
}

// Which operand oneDNN reads as src0 (the one of the output's shape): 0 or
// 1, or -1 when neither can be (both broadcast, or a non-commutative op
// whose first operand broadcasts).
int FirstOperand(const Shape& a, const Shape& b, const Shape& out, bool commutative) {
  const size_t rank = std::max<size_t>(out.dims().size(), 1);
  const auto od = AlignedDims(out, rank);
  if (AlignedDims(a, rank) == od) return 0;
  if (commutative && AlignedDims(b, rank) == od) return 1;
  return -1;
}

// oneDNN 2.6 has jit binary kernels for only some broadcast patterns of the
// second operand (per channel, per batch and spatial, none, everything);
// any other runs its reference kernel, a hundred times slower (300 ns an
// element: torchvision detection models normalize a [3, H, W] image by a
// [3, 1, 1] mean, 100 ms at 320x320; Swin's shifted-window mask [1, 64, 3,
// 49, 49] + [1, 64, 1, 49, 49] took 171 ms). For plain tensors the same
// computation can be described in fewer dims: size-1 dims dropped and
// neighbours that both broadcast or both do not merged ([64, 3, 2401] +
// [64, 1, 2401]), or that with a leading 1 ([3, H, W] - [3, 1, 1] becomes
// [1, 3, H*W] - [1, 3, 1], per channel). The first form oneDNN has a jit
// kernel for is taken.
struct BroadcastDims {
  dnnl::memory::dims out, second;
};

BroadcastDims MergeBroadcastDims(const dnnl::memory::dims& out, const dnnl::memory::dims& second) {
  BroadcastDims r;
  int last = -1;  // 1: the last group broadcasts, 0: it does not
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    const int bcast = second[i] == 1 ? 1 : 0;
    if (bcast == last) {
      r.out.back() *= out[i];
      r.second.back() *= second[i];
    } else {
      r.out.push_back(out[i]);
      r.second.push_back(second[i]);
      last = bcast;
    }
  }
  if (r.out.empty()) {
    r.out.push_back(1);
    r.second.push_back(1);
  }
  return r;
}

bool IsReference(const dnnl::primitive_desc_base& pd) {
  return std::string_view(pd.impl_info_str()).substr(0, 3) == "ref";
}

// The binary primitive for plain operands of `out`'s shape (src0) and
// `second`'s (aligned to out's rank): the plain dims, else the first of the
// merged forms above oneDNN has a jit kernel for (the plain one when none).
struct PlainBinary {
  dnnl::memory::desc src0_md, src1_md, dst_md;
  dnnl::binary::primitive_desc pd;
};

PlainBinary MakePlainBinary(const dnnl::engine& eng, alg algorithm, const dnnl::memory::dims& out,
                            const dnnl::memory::dims& second, dnnl::memory::data_type type,
                            const dnnl::primitive_attr& attr) {
  const auto make = [&](const dnnl::memory::dims& o, const dnnl::memory::dims& s) {
    PlainBinary b;
    b.src0_md = b.dst_md = PlainDesc(o, type);
    b.src1_md = PlainDesc(s, type);
    b.pd = dnnl::binary::primitive_desc(dnnl::binary::desc(algorithm, b.src0_md, b.src1_md, b.dst_md), attr, eng);
    return b;
  };
  PlainBinary plain = make(out, second);
  if (!IsReference(plain.pd)) return plain;
  BroadcastDims merged = MergeBroadcastDims(out, second);
  PlainBinary candidate = make(merged.out, merged.second);
  if (!IsReference(candidate.pd)) return candidate;
  if (merged.out.size() < static_cast<size_t>(DNNL_MAX_NDIMS)) {
    merged.out.insert(merged.out.begin(), 1);
    merged.second.insert(merged.second.begin(), 1);
    candidate = make(merged.out, merged.second);
    if (!IsReference(candidate.pd)) return candidate;
  }
  return plain;
}

class BinaryKernel final : public DenseKernel {
 public:
  BinaryKernel(const ir::OpDesc& op, const DenseContext& ctx, const BinarySpec& spec)
      : DenseKernel(op, ctx), spec_(spec) {}

 private:
  // The output's elements (-1 when the shapes do not broadcast: Build says why).
  int64_t MemoryBoundElements(const PlanRequest& r) const override {
    auto out = ops::BroadcastShapes(r.shape(0), r.shape(1));
    return out.ok() ? out->NumElementsUnchecked() : -1;
  }

  struct BinaryPlan final : Plan {
    dnnl::binary binary;
    dnnl::memory::desc src0_md, src1_md, dst_md, scratchpad_md;
    int first = 0;
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    if (r.dtype(0) != r.dtype(1)) return NodeError(op(), "inputs of different dtypes");
    auto out = ops::BroadcastShapes(r.shape(0), r.shape(1));
    if (!out.ok()) return NodeError(op(), out.status().message());
    const size_t rank = std::max<size_t>(out->dims().size(), 1);
    if (rank > static_cast<size_t>(DNNL_MAX_NDIMS)) return NodeUnimplemented(op(), "rank ", rank);
    auto plan = std::make_unique<BinaryPlan>();
    plan->first = FirstOperand(r.shape(0), r.shape(1), *out, spec_.commutative);
    if (plan->first < 0) {
      return NodeUnimplemented(op(), "operands ", r.shape(0).ToString(), " and ", r.shape(1).ToString(),
                               " (oneDNN broadcasts the second operand only)");
    }
    const auto type = ToDnnlType(r.dtype(0));
    const ir::Format format = op().output(0).type.tensor().format;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::binary::primitive_desc pd;
    // A one-element operand (of any rank up to the output's) has its value
    // at every position of any layout.
    auto one_element = [&](int k) {
      return r.shape(k).rank() <= out->rank() && r.shape(k).NumElementsUnchecked() == 1 && r.shape(k) != *out;
    };
    auto laid_out = [&](int k) { return r.shape(k).rank() == out->rank() || one_element(k); };
    if (format != ir::Format::kND && laid_out(0) && laid_out(1)) {
      // The engine's own layout (the layout pass): each operand in the
      // layout its port names; a plain per-channel operand [N, C, 1...]
      // (a squeeze-excite scale) is stored alike in the output's layout; a
      // plain one-element operand is read as [1, 1, ...].
      GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(*out, r.dtype(0), format));
      dnnl::memory::desc md[2];
      for (int k = 0; k < 2; ++k) {
        if (one_element(k) && op().input(k).type.tensor().format == ir::Format::kND) {
          md[k] = PlainDesc(dnnl::memory::dims(out->dims().size(), 1), type);
          continue;
        }
        ir::Format f = op().input(k).type.tensor().format;
        if (f == ir::Format::kND && r.shape(k) != *out) f = format;
        GE_ASSIGN_OR_RETURN(md[k], FormatDesc(r.shape(k), r.dtype(k), f));
      }
      plan->src0_md = md[plan->first];
      plan->src1_md = md[1 - plan->first];
      pd = dnnl::binary::primitive_desc(dnnl::binary::desc(spec_.algorithm, plan->src0_md, plan->src1_md, plan->dst_md),
                                        attr, eng());
    } else {
      PlainBinary b = MakePlainBinary(eng(), spec_.algorithm, AlignedDims(*out, rank),
                                      AlignedDims(r.shape(1 - plan->first), rank), type, attr);
      plan->src0_md = b.src0_md;
      plan->src1_md = b.src1_md;
      plan->dst_md = b.dst_md;
      pd = b.pd;
    }
    plan->scratchpad_md = pd.scratchpad_desc();
    plan->binary = dnnl::binary(pd);
    plan->workspace_bytes = Scratch::Padded(plan->scratchpad_md.get_size()) + Scratch::kAlign;
    return plan;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<BinaryPlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    dnnl::stream stream(eng());
    plan.binary.execute(stream, {{DNNL_ARG_SRC_0, WrapTensor(plan.src0_md, eng(), ctx.input(plan.first))},
                                 {DNNL_ARG_SRC_1, WrapTensor(plan.src1_md, eng(), ctx.input(1 - plan.first))},
                                 {DNNL_ARG_DST, WrapTensor(plan.dst_md, eng(), y)},
                                 {DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.scratchpad_md, eng(),
                                                                    scratch.Take(plan.scratchpad_md.get_size()))}});
    stream.wait();
    return absl::OkStatus();
  }

  BinarySpec spec_;
};

absl::Status CheckBinary(const ir::OpDesc& op, const DenseContext& ctx, alg algorithm, bool commutative) {
  if (op.num_inputs() != 2) return Unsupported(op, op.num_inputs(), " inputs (two only)");
  GE_RETURN_IF_ERROR(CheckFloatInput(op, 1, ctx));
  if (InputDtype(op, 1) != DataType::kUndefined && InputDtype(op, 1) != InputDtype(op, 0)) {
    return Unsupported(op, "inputs of different dtypes");
  }
  const Shape a = InputShape(op, 0), b = InputShape(op, 1);
  if (a.rank() > DNNL_MAX_NDIMS || b.rank() > DNNL_MAX_NDIMS) return Unsupported(op, "rank above ", DNNL_MAX_NDIMS);
  if (a.IsFullyKnown() && b.IsFullyKnown()) {
    auto out = ops::BroadcastShapes(a, b);
    if (!out.ok()) return Unsupported(op, out.status().message());
    const int first = FirstOperand(a, b, *out, commutative);
    if (first < 0) {
      return Unsupported(op, "operands ", a.ToString(), " and ", b.ToString(),
                         " (oneDNN broadcasts the second operand only)");
    }
    if (InputDtype(op, 0) != DataType::kUndefined && out->NumElementsUnchecked() > 0) {
      const size_t rank = std::max<size_t>(out->dims().size(), 1);
      bool reference = false;
      try {
        reference = IsReference(MakePlainBinary(ctx.engine, algorithm, AlignedDims(*out, rank),
                                                AlignedDims(first == 0 ? b : a, rank), ToDnnlType(InputDtype(op, 0)),
                                                dnnl::primitive_attr())
                                    .pd);
      } catch (const dnnl::error&) {
        // No primitive at all: Build reports it with the node's name.
      }
      if (reference) {
        return Unsupported(op, "operands ", a.ToString(), " and ", b.ToString(),
                           " (oneDNN has only its reference kernel for this broadcast)");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterEltwiseKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet floats{DataType::kFloat, DataType::kBFloat16};
  for (const UnarySpec& spec : kUnary) {
    // oneDNN 2.6 rounds f32 only.
    const sdk::DataTypeSet types = spec.algorithm == alg::eltwise_round ? sdk::DataTypeSet{DataType::kFloat} : floats;
    table.Add({std::string(spec.op), types,
               spec.algorithm == alg::eltwise_clip_v2 ? SupportCheckFn(CheckClip) : SupportCheckFn(),
               [&spec](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                 return std::unique_ptr<Kernel>(new EltwiseKernel(op, ctx, spec));
               }});
  }
}

void RegisterBinaryKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet floats{DataType::kFloat, DataType::kBFloat16};
  for (const BinarySpec& spec : kBinary) {
    table.Add({std::string(spec.op), floats,
               [&spec](const ir::OpDesc& op, const DenseContext& ctx) {
                 return CheckBinary(op, ctx, spec.algorithm, spec.commutative);
               },
               [&spec](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                 return std::unique_ptr<Kernel>(new BinaryKernel(op, ctx, spec));
               }});
  }
}

}  // namespace ge::engine::cpu_dense
