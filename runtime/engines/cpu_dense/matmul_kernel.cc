// MatMul (numpy.matmul: 1-D promotion, broadcast batch dims) and Gemm
// (transA / transB, alpha, beta, C broadcast to the output) on oneDNN's
// matmul primitive, with fused post-ops.
//
// Transposed operands are described by strides, so no copy is made. A
// constant B is packed once into the layout oneDNN prefers; a B computed
// at run time is read in place. Gemm's C becomes the primitive's bias when
// it is a row vector with alpha = beta = 1; otherwise it is broadcast into
// the output and accumulated with a sum post-op scaled by beta (alpha is
// the primitive's output scale). The `add` post-op is a sum for operands of
// the output's shape and a binary add for broadcast ones. oneDNN 2.6 has
// only its reference matmul for a binary add broadcast over batch dims
// (Swin's attention scores plus a [1, heads, 49, 49] position bias: 2.9 s
// for a [64, 3, 49, 49] product, against 5 ms as a GEMM); such an operand is
// broadcast into the output before the product, which adds it as a sum.
//
// Products with a constant f32 B and few rows take the packed path instead
// (packed_matmul.h): B packed once into panels for every row count, the
// post-ops applied in the GEMM's registers, no oneDNN primitive.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/dense_ops.h"
#include "runtime/engines/cpu_dense/eltwise_tail.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/packed_matmul.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

using dims = dnnl::memory::dims;

// How Gemm's C reaches the result.
enum class CMode { kNone, kBias, kSum };

// Gemm's attributes (MatMul: the defaults).
struct GemmAttrs {
  bool is_gemm = false;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  // B is a constant stored in panel order (kAttrGemmPanels, weight_panels.h).
  bool b_panels = false;
};

GemmAttrs ReadGemmAttrs(const ir::OpDesc& base) {
  GemmAttrs a;
  a.is_gemm = base.type() == "Gemm";
  if (a.is_gemm) {
    a.trans_a = sdk::IntAttr(base, "transA", 0) != 0;
    a.trans_b = sdk::IntAttr(base, "transB", 0) != 0;
    a.alpha = sdk::FloatAttr(base, "alpha", 1.0f);
    a.beta = sdk::FloatAttr(base, "beta", 1.0f);
  }
  return a;
}

// C of shape [N] or [1, N] with alpha = beta = 1 is a bias.
bool GemmCIsBias(const GemmAttrs& a, const Shape& c, int64_t n) {
  if (a.alpha != 1.0f || a.beta != 1.0f) return false;
  return (c.rank() == 1 && c.dim(0) == n) || (c.rank() == 2 && c.dim(0) == 1 && c.dim(1) == n);
}

CMode GemmCMode(const GemmAttrs& a, const PlanRequest& r, int64_t n) {
  if (!a.is_gemm || !r.has_input(2) || a.beta == 0.0f) return CMode::kNone;
  return GemmCIsBias(a, r.shape(2), n) ? CMode::kBias : CMode::kSum;
}

// `shape` left-padded with 1s to `rank`, as oneDNN dims.
dims Aligned(const Shape& shape, size_t rank) {
  dims d(rank, 1);
  const size_t r = shape.dims().size();
  for (size_t i = 0; i < r; ++i) d[rank - r + i] = shape.dim(i);
  return d;
}

// Copies `c` (rank <= 2, broadcast) into the [m, n] matrix at `y`.
void BroadcastRows(const Tensor& c, void* y, int64_t m, int64_t n) {
  const size_t size = DataTypeSize(c.dtype());
  const int64_t cr = c.shape().rank() == 2 ? c.shape().dim(0) : 1;
  const int64_t cc = c.shape().rank() >= 1 ? c.shape().dim(c.shape().rank() - 1) : 1;
  const char* src = static_cast<const char*>(c.raw_data());
  char* dst = static_cast<char*>(y);
  for (int64_t i = 0; i < m; ++i) {
    const char* row = src + (cr == 1 ? 0 : i) * cc * size;
    char* out = dst + i * n * size;
    if (cc == n) {
      std::memcpy(out, row, n * size);
    } else {
      for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * size, row, size);
    }
  }
}

class MatMulKernel final : public DenseKernel {
 public:
  MatMulKernel(const ir::OpDesc& op, const DenseContext& ctx, GemmAttrs attrs, PostOpChain chain)
      : DenseKernel(op, ctx), attrs_(attrs), chain_(std::move(chain)) {}

 private:
  struct MatMulPlan final : Plan {
    dnnl::matmul matmul;
    dnnl::memory::desc a_md, dst_md, bias_md, add_md, scratchpad_md;
    PackedWeights weights;
    CMode c_mode = CMode::kNone;
    bool fused_bias = false;   // _DenseFused's input 2 for MatMul
    AddMode add_mode = AddMode::kSum;
    bool broadcast_add = false;  // kSum of an operand broadcast into the output first
    int64_t m = 0, n = 0;
    dims collapsed_dst;  // the output's own dims when its batch dims were folded into m
    // The packed path (packed_matmul.h): no primitive.
    bool packed = false;
    int64_t k = 0, add_ld = 0;
    std::vector<GemmStep> steps;
    // oneDNN's path: the chain's exp-based end, run on the output after
    // the primitive (eltwise_tail.h); empty when oneDNN runs it all.
    std::vector<GemmStep> tail;
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& request) override;
  absl::Status Run(Plan& plan, ExecuteContext& ctx, Scratch& scratch) override;
  // Whether the described `plan` can run on the packed path.
  bool Packable(const PlanRequest& r, const MatMulPlan& plan) const;
  absl::Status RunPacked(MatMulPlan& plan, ExecuteContext& ctx);
  absl::Status Describe(const PlanRequest& r, MatMulPlan& plan, dnnl::memory::desc& b_md,
                        dnnl::memory::desc& b_any) const;
  // Whether the fused add's operand still lines up once the output's batch
  // dims are folded into its rows.
  bool CollapsibleAdd(const PlanRequest& r, const dims& dst) const;
  // B as the product reads it off the packed path: `given` itself, or, for
  // a B stored in panel order, its plain matrix (unpacked once per storage).
  absl::StatusOr<Tensor> PlainB(const Tensor& given);

  GemmAttrs attrs_;
  PostOpChain chain_;
  PanelWeights panels_;  // the packed path's B, shared by every plan
  // PlainB's last unpacking and the storage it was made from.
  std::mutex plain_mu_;
  std::shared_ptr<Buffer> plain_source_;
  size_t plain_offset_ = 0;
  Tensor plain_b_;
};

absl::StatusOr<Tensor> MatMulKernel::PlainB(const Tensor& given) {
  if (!attrs_.b_panels) return given;
  std::lock_guard<std::mutex> lock(plain_mu_);
  if (plain_source_ != nullptr && plain_source_ == given.buffer() && plain_offset_ == given.byte_offset()) {
    return plain_b_;
  }
  const Shape& b = given.shape();
  const int64_t n = b.dim(attrs_.trans_b ? 0 : 1), k = b.dim(attrs_.trans_b ? 1 : 0);
  GE_ASSIGN_OR_RETURN(Tensor plain, Tensor::Allocate(DataType::kFloat, b));
  UnpackPanels(given.data<float>(), k, n, attrs_.trans_b, plain.data<float>());
  plain_b_ = plain;
  plain_source_ = given.buffer();
  plain_offset_ = given.byte_offset();
  return plain;
}

// Fills the A, B and destination descriptors of `plan` (B's stored and
// preferred forms in b_md / b_any).
absl::Status MatMulKernel::Describe(const PlanRequest& r, MatMulPlan& plan,
                                    dnnl::memory::desc& b_md, dnnl::memory::desc& b_any) const {
  const auto type = ToDnnlType(r.dtype(0));
  Shape a = r.shape(0), b = r.shape(1);
  if (attrs_.is_gemm) {
    if (a.rank() != 2 || b.rank() != 2) return NodeError(op(), "Gemm takes 2-D A and B");
    const int64_t m = a.dim(attrs_.trans_a ? 1 : 0), k = a.dim(attrs_.trans_a ? 0 : 1);
    const int64_t kb = b.dim(attrs_.trans_b ? 1 : 0), n = b.dim(attrs_.trans_b ? 0 : 1);
    if (k != kb) return NodeError(op(), "A ", a.ToString(), " and B ", b.ToString(), " do not multiply");
    plan.a_md = dnnl::memory::desc({m, k}, type, attrs_.trans_a ? dims{1, m} : dims{k, 1});
    b_md = dnnl::memory::desc({k, n}, type, attrs_.trans_b ? dims{1, k} : dims{n, 1});
    b_any = dnnl::memory::desc({k, n}, type, dnnl::memory::format_tag::any);
    plan.dst_md = PlainDesc(dims{m, n}, type);
    plan.m = m;
    plan.n = n;
    return absl::OkStatus();
  }
  auto out = ops::MatMulShape(a, b);
  if (!out.ok()) return NodeError(op(), out.status().message());
  if (a.rank() == 1) a = Shape{1, a.dim(0)};
  if (b.rank() == 1) b = Shape{b.dim(0), 1};
  const size_t rank = std::max(a.dims().size(), b.dims().size());
  if (rank > static_cast<size_t>(DNNL_MAX_NDIMS)) return NodeUnimplemented(op(), "rank ", rank, " is too high");
  const dims ad = Aligned(a, rank), bd = Aligned(b, rank);
  dims dd(rank);
  for (size_t i = 0; i + 2 < rank; ++i) dd[i] = std::max(ad[i], bd[i]);
  dd[rank - 2] = ad[rank - 2];
  dd[rank - 1] = bd[rank - 1];
  plan.m = dd[rank - 2];
  plan.n = dd[rank - 1];
  // A batch of rows times one matrix ([S, B, K] x [K, N], as exported
  // transformers project activations) is one [S*B, K] x [K, N] product: a
  // GEMM that reads the weights once instead of S*B small ones that each
  // read them again. Row-major A and the output are already laid out so.
  const bool b_is_matrix = std::all_of(bd.begin(), bd.end() - 2, [](int64_t d) { return d == 1; });
  if (rank > 2 && b_is_matrix && CollapsibleAdd(r, dd)) {
    const int64_t rows = std::accumulate(dd.begin(), dd.end() - 1, int64_t{1}, std::multiplies<>());
    plan.collapsed_dst = dd;
    plan.m = rows;
    plan.a_md = PlainDesc(dims{rows, ad[rank - 1]}, type);
    b_md = PlainDesc(dims{bd[rank - 2], plan.n}, type);
    b_any = dnnl::memory::desc(dims{bd[rank - 2], plan.n}, type, dnnl::memory::format_tag::any);
    plan.dst_md = PlainDesc(dims{rows, plan.n}, type);
    return absl::OkStatus();
  }
  plan.a_md = PlainDesc(ad, type);
  b_md = PlainDesc(bd, type);
  b_any = dnnl::memory::desc(bd, type, dnnl::memory::format_tag::any);
  plan.dst_md = PlainDesc(dd, type);
  return absl::OkStatus();
}

bool MatMulKernel::CollapsibleAdd(const PlanRequest& r, const dims& dst) const {
  if (!chain_.has_add()) return true;
  if (!r.has_input(kFusedAddInput)) return false;
  const dims add = Aligned(r.shape(kFusedAddInput), dst.size());
  return add == dst || std::all_of(add.begin(), add.end() - 1, [](int64_t d) { return d == 1; });
}

absl::StatusOr<std::unique_ptr<DenseKernel::Plan>> MatMulKernel::Build(const PlanRequest& r) {
  for (int i = 1; i < 3; ++i) {
    if (r.has_input(i) && r.dtype(i) != r.dtype(0)) return NodeError(op(), "inputs must share a dtype");
  }
  if (attrs_.b_panels) {
    // Only the own path and oneDNN (after PlainB) read panels: never the
    // reference kernel, so these shapes must plan.
    const Shape& b = r.shape(1);
    if (r.dtype(1) != DataType::kFloat || b.rank() != 2 || b.dim(attrs_.trans_b ? 0 : 1) % kGemmPanel != 0) {
      return NodeError(op(), "B in panel order (", kAttrGemmPanels, ") must be an f32 matrix of whole panels, not ",
                       DataTypeName(r.dtype(1)), b.ToString());
    }
  }
  auto plan = std::make_unique<MatMulPlan>();
  dnnl::memory::desc b_md, b_any;
  absl::Status described = Describe(r, *plan, b_md, b_any);
  if (attrs_.b_panels && absl::IsUnimplemented(described)) return NodeError(op(), described.message());
  GE_RETURN_IF_ERROR(described);
  const int64_t out_elements = plan->dst_md.get_size() / DataTypeSize(r.dtype(0));
  if (r.output_types[0].shape().IsFullyKnown() &&
      r.output_types[0].shape().NumElementsUnchecked() != out_elements) {
    return NodeError(op(), "output ", r.output_types[0].shape().ToString(), " does not fit the product");
  }
  const size_t rank = plan->dst_md.dims().size();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  plan->c_mode = GemmCMode(attrs_, r, plan->n);
  if (plan->c_mode == CMode::kSum) {
    if (!ops::CheckUnidirectionalBroadcast(r.shape(2), Shape{plan->m, plan->n}).ok() || r.shape(2).rank() > 2) {
      return NodeError(op(), "C ", r.shape(2).ToString(), " does not broadcast to [", plan->m, ",", plan->n, "]");
    }
  }
  if (attrs_.alpha != 1.0f) attr.set_output_scales(0, {attrs_.alpha});
  dnnl::post_ops ops;
  if (plan->c_mode == CMode::kSum) ops.append_sum(attrs_.beta);
  if (chain_.has_add()) {
    if (!r.has_input(kFusedAddInput)) return NodeError(op(), "the add post-op has no operand");
    const Shape& add = r.shape(kFusedAddInput);
    dims add_dims = Aligned(add, plan->collapsed_dst.empty() ? rank : plan->collapsed_dst.size());
    if (!plan->collapsed_dst.empty()) {  // the whole output, or one row broadcast
      add_dims = add_dims == plan->collapsed_dst ? dims{plan->m, plan->n} : dims{1, add_dims.back()};
    }
    plan->add_md = PlainDesc(add_dims, ToDnnlType(r.dtype(kFusedAddInput)));
    plan->add_mode = plan->add_md.dims() == plan->dst_md.dims() && plan->c_mode != CMode::kSum
                         ? AddMode::kSum
                         : AddMode::kBinary;
  }
  // The tail holds no add, so the head keeps the add's post-op position.
  EltwiseTail split = SplitEltwiseTail(chain_, r.dtype(0));
  AppendPostOps(split.head, plan->add_mode, plan->add_md, ops);
  attr.set_post_ops(ops);
  plan->fused_bias = !attrs_.is_gemm && r.has_input(kFusedBiasInput);
  const bool use_bias = plan->c_mode == CMode::kBias || plan->fused_bias;
  if (use_bias) {
    dims bd(rank, 1);
    bd[rank - 1] = plan->n;
    plan->bias_md = PlainDesc(bd, ToDnnlType(r.dtype(2)));
  }
  if (Packable(r, *plan)) {
    plan->packed = true;
    plan->k = plan->a_md.dims()[1];
    plan->steps = ToGemmSteps(chain_);
    plan->add_ld = chain_.has_add() && plan->add_md.dims()[0] != 1 ? plan->n : 0;
    const Tensor* b = r.const_input(1);
    if (b != nullptr && !attrs_.b_panels) {
      bool packed = false;
      panels_.Get(*b, plan->k, plan->n, attrs_.trans_b, &packed);
      if (packed) WeightPacks().fetch_add(1, std::memory_order_relaxed);
    }
    return plan;
  }
  const bool constant_b = IsConstInput(1, r);
  const dnnl::memory::desc& b_request = constant_b ? b_any : b_md;
  using mm = dnnl::matmul;
  auto describe = [&](const dnnl::primitive_attr& a) {
    return use_bias ? mm::primitive_desc(mm::desc(plan->a_md, b_request, plan->bias_md, plan->dst_md), a, eng())
                    : mm::primitive_desc(mm::desc(plan->a_md, b_request, plan->dst_md), a, eng());
  };
  mm::primitive_desc pd = describe(attr);
  if (plan->add_mode == AddMode::kBinary && plan->c_mode != CMode::kSum &&
      std::string_view(pd.impl_info_str()).substr(0, 3) == "ref") {
    dnnl::post_ops sum_ops;
    AppendPostOps(split.head, AddMode::kSum, plan->add_md, sum_ops);
    dnnl::primitive_attr sum_attr;
    sum_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    sum_attr.set_post_ops(sum_ops);
    try {
      mm::primitive_desc sum_pd = describe(sum_attr);
      if (std::string_view(sum_pd.impl_info_str()).substr(0, 3) != "ref") {
        pd = sum_pd;
        plan->add_mode = AddMode::kSum;
        plan->broadcast_add = true;
      }
    } catch (const dnnl::error&) {
      // no implementation takes the sum there: the binary add stays
    }
  }
  plan->tail = std::move(split.steps);
  plan->weights.Init(eng(), b_md, pd.weights_desc(), constant_b);
  if (const Tensor* b = r.const_input(1)) {
    GE_ASSIGN_OR_RETURN(Tensor plain, PlainB(*b));
    GE_RETURN_IF_ERROR(plan->weights.Preload(eng(), plain));
  }
  plan->scratchpad_md = pd.scratchpad_desc();
  plan->matmul = dnnl::matmul(pd);
  plan->workspace_bytes =
      Scratch::Padded(plan->scratchpad_md.get_size()) + plan->weights.scratch_bytes() + Scratch::kAlign;
  return plan;
}

bool MatMulKernel::Packable(const PlanRequest& r, const MatMulPlan& plan) const {
  if (r.dtype(0) != DataType::kFloat || !IsConstInput(1, r)) return false;
  if (plan.a_md.dims().size() != 2 || !PackedGemmFits(plan.m, plan.a_md.dims()[1], plan.n)) return false;
  if (attrs_.trans_a || attrs_.alpha != 1.0f || plan.c_mode == CMode::kSum) return false;
  if (chain_.has_add()) {
    const dims add = plan.add_md.dims();
    if (r.dtype(kFusedAddInput) != DataType::kFloat || add.size() != 2 || add[1] != plan.n) return false;
    if (add[0] != plan.m && add[0] != 1) return false;
  }
  return true;
}

absl::Status MatMulKernel::RunPacked(MatMulPlan& plan, ExecuteContext& ctx) {
  GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
  PanelWeights::Panels panels;  // held for the run
  if (!attrs_.b_panels) {
    bool packed = false;
    panels = panels_.Get(ctx.input(1), plan.k, plan.n, attrs_.trans_b, &packed);
    if (packed) WeightPacks().fetch_add(1, std::memory_order_relaxed);
  }
  GemmArgs g{};
  g.a = ctx.input(0).data<float>();
  g.lda = plan.k;
  g.rows = plan.m;
  g.k = plan.k;
  g.packed = attrs_.b_panels ? ctx.input(1).data<float>() : panels->data();
  g.n = plan.n;
  g.c = y.data<float>();
  g.ldc = plan.n;
  if (plan.c_mode == CMode::kBias || plan.fused_bias) g.bias = ctx.input(2).data<float>();
  if (chain_.has_add()) g.add = ctx.input(kFusedAddInput).data<float>();
  g.add_ld = plan.add_ld;
  g.steps = plan.steps.data();
  g.num_steps = static_cast<int32_t>(plan.steps.size());
  RunPackedGemm(g, omp_in_parallel() != 0 ? 1 : omp_get_max_threads());
  return absl::OkStatus();
}

absl::Status MatMulKernel::Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) {
  auto& plan = static_cast<MatMulPlan&>(base_plan);
  if (plan.packed) return RunPacked(plan, ctx);
  GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
  dnnl::stream stream(eng());
  GE_ASSIGN_OR_RETURN(Tensor b, PlainB(ctx.input(1)));
  GE_ASSIGN_OR_RETURN(dnnl::memory weights, plan.weights.Get(eng(), stream, b, scratch));
  if (plan.c_mode == CMode::kSum) BroadcastRows(ctx.input(2), y.raw_data(), plan.m, plan.n);
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, WrapTensor(plan.a_md, eng(), ctx.input(0))},
      {DNNL_ARG_WEIGHTS, weights},
      {DNNL_ARG_DST, WrapTensor(plan.dst_md, eng(), y)},
      {DNNL_ARG_SCRATCHPAD,
       dnnl::memory(plan.scratchpad_md, eng(), scratch.Take(plan.scratchpad_md.get_size()))}};
  if (plan.c_mode == CMode::kBias || plan.fused_bias) {
    args[DNNL_ARG_BIAS] = WrapTensor(plan.bias_md, eng(), ctx.input(2));
  }
  if (chain_.has_add()) {
    const Tensor& addend = ctx.input(kFusedAddInput);
    if (plan.broadcast_add) {
      GE_RETURN_IF_ERROR(sdk::BroadcastCopy(op(), addend, y, omp_in_parallel() != 0 ? 1 : omp_get_max_threads()));
    } else if (plan.add_mode == AddMode::kSum) {
      std::memcpy(y.raw_data(), addend.raw_data(), y.SizeInBytes());
    } else {
      const int first = plan.c_mode == CMode::kSum ? 1 : 0;  // after Gemm's own sum
      args[BinaryAddArg(chain_, first)] = WrapTensor(plan.add_md, eng(), addend);
    }
  }
  plan.matmul.execute(stream, args);
  stream.wait();
  RunEltwiseTail(plan.tail, static_cast<float*>(y.raw_data()),
                 static_cast<int64_t>(plan.dst_md.get_size() / sizeof(float)),
                 omp_in_parallel() != 0 ? 1 : omp_get_max_threads());
  return absl::OkStatus();
}

absl::Status CheckProductInputs(const ir::OpDesc& op, int count, const DenseContext& ctx) {
  for (int i = 0; i < std::min(op.num_inputs(), count); ++i) {
    GE_RETURN_IF_ERROR(CheckFloatInput(op, i, ctx));
    if (InputDtype(op, i) != DataType::kUndefined && InputDtype(op, i) != InputDtype(op, 0)) {
      return Unsupported(op, "inputs of different dtypes");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckMatMul(const ir::OpDesc& op, const DenseContext& ctx) {
  GE_RETURN_IF_ERROR(CheckProductInputs(op, 2, ctx));
  for (int i = 0; i < 2; ++i) {
    const Shape s = InputShape(op, i);
    if (s.rank() == 0) return Unsupported(op, "input ", i, " is a scalar");
    if (s.rank() > DNNL_MAX_NDIMS) return Unsupported(op, "input ", i, " has rank ", s.rank());
  }
  return absl::OkStatus();
}

absl::Status CheckGemm(const ir::OpDesc& op, const DenseContext& ctx) {
  GE_RETURN_IF_ERROR(CheckProductInputs(op, 3, ctx));
  const Shape c = InputShape(op, 2);
  if (c.rank() > 2) return Unsupported(op, "C has rank ", c.rank());
  return absl::OkStatus();
}

absl::Status CheckMatMulPostOps(const ir::OpDesc& base, const PostOpChain& chain,
                                const Shape& add_shape) {
  if (!chain.has_add()) return absl::OkStatus();
  if (!add_shape.IsFullyKnown()) return Unsupported(base, "the add operand's shape is not known");
  const GemmAttrs a = ReadGemmAttrs(base);
  if (a.is_gemm && a.alpha != 1.0f) return Unsupported(base, "a fused add needs alpha 1");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateMatMulKernel(const ir::OpDesc& op,
                                                           const ir::OpDesc& base,
                                                           PostOpChain chain,
                                                           const DenseContext& ctx) {
  GemmAttrs attrs = ReadGemmAttrs(base);
  attrs.b_panels = op.GetAttrOr<bool>(kAttrGemmPanels, false);
  return std::unique_ptr<Kernel>(new MatMulKernel(op, ctx, attrs, std::move(chain)));
}

void RegisterMatMulKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet types{DataType::kFloat, DataType::kBFloat16};
  table.Add({"MatMul", types, CheckMatMul, [](const ir::OpDesc& op, const DenseContext& ctx) {
               return CreateMatMulKernel(op, op, PostOpChain{}, ctx);
             }});
  table.Add({"Gemm", types, CheckGemm, [](const ir::OpDesc& op, const DenseContext& ctx) {
               return CreateMatMulKernel(op, op, PostOpChain{}, ctx);
             }});
}

}  // namespace ge::engine::cpu_dense
