// QLinearMatMul and MatMulInteger on oneDNN's int8 matmul (u8 A, s8 B;
// see int8_util.h for what is exact on which CPU).
//
// numpy.matmul shapes (1-D operands promoted, batch dims broadcast by
// oneDNN). An s8 A is shifted to u8 (its zero point with it). A's zero
// point (per tensor) and the output's are run-time arguments, as are the
// output scales a_scale * b_scale / y_scale (per tensor or per column of
// B), so DynamicQuantizeLinear's parameters never rebuild the primitive.
// On AVX-512 VNNI every B runs one primitive (exact at full range). Else a
// constant B within [-64, 64] runs one primitive; any other B runs two
// over A's halves (each exact), summed in int32 by a sum post-op and
// requantized here. A constant B is packed once; B's zero point must be
// zero (CheckSupported places other nodes on host_cpu). A product of fewer
// than kSerialMacs multiply-adds runs on one thread (int8_util.h).
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/int8_util.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine::cpu_dense {
namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

bool FitsSevenBits(const Tensor& w) {
  const auto* p = static_cast<const int8_t*>(w.raw_data());
  const int64_t n = w.NumElements();
  return std::all_of(p, p + n, [](int8_t v) { return v >= -kMaxUnsplitWeight && v <= kMaxUnsplitWeight; });
}

dims AlignedDims(const Shape& shape, size_t rank) {
  dims d(rank, 1);
  const size_t r = shape.dims().size();
  for (size_t i = 0; i < r; ++i) d[rank - r + i] = shape.dim(i);
  return d;
}

class Int8MatMulKernel final : public DenseKernel {
 public:
  Int8MatMulKernel(const ir::OpDesc& op, const DenseContext& ctx) : DenseKernel(op, ctx), ports_(PortsOf(op.type())) {}

 private:
  struct MatMulPlan final : Plan {
    dnnl::matmul first, second;  // second: the split path's upper half
    dnnl::memory::desc a_md, dst_md, acc_md, scratchpad_md;
    PackedWeights weights;
    bool flip = false;    // A is s8: shifted to u8
    bool split = false;   // two primitives over A's halves
    bool serial = false;  // fewer than kSerialMacs: one thread (SerialScope)
    DataType y_dtype = DataType::kInt32;
    int64_t n = 0, a_elements = 0;
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& request) override;
  absl::Status Run(Plan& plan, ExecuteContext& ctx, Scratch& scratch) override;

  Int8Ports ports_;
};

absl::StatusOr<std::unique_ptr<DenseKernel::Plan>> Int8MatMulKernel::Build(const PlanRequest& r) {
  if (r.dtype(ports_.w) != DataType::kInt8) return NodeUnimplemented(op(), "B is not s8");
  Shape a = r.shape(ports_.x), b = r.shape(ports_.w);
  auto out = ops::MatMulShape(a, b);
  if (!out.ok()) return NodeError(op(), out.status().message());
  if (a.rank() == 1) a = Shape{1, a.dim(0)};
  if (b.rank() == 1) b = Shape{b.dim(0), 1};
  size_t rank = std::max(a.dims().size(), b.dims().size());
  if (rank > static_cast<size_t>(DNNL_MAX_NDIMS)) return NodeUnimplemented(op(), "rank ", rank, " is too high");
  dims ad = AlignedDims(a, rank), bd = AlignedDims(b, rank);
  dims dd(rank);
  for (size_t i = 0; i + 2 < rank; ++i) dd[i] = std::max(ad[i], bd[i]);
  dd[rank - 2] = ad[rank - 2];
  dd[rank - 1] = bd[rank - 1];
  // A batch of rows times one matrix ([S, B, K] x [K, N]: a dynamically
  // quantized transformer's projections) is one [S*B, K] x [K, N] product,
  // whose B oneDNN packs once; as a batched product it reads B plain and
  // repacks it on every run.
  if (rank > 2 && std::all_of(bd.begin(), bd.end() - 2, [](int64_t d) { return d == 1; })) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < rank; ++i) rows *= dd[i];
    ad = dims{rows, ad[rank - 1]};
    bd = dims{bd[rank - 2], bd[rank - 1]};
    dd = dims{rows, dd[rank - 1]};
    rank = 2;
  }
  auto plan = std::make_unique<MatMulPlan>();
  plan->n = dd[rank - 1];
  plan->flip = r.dtype(ports_.x) == DataType::kInt8;
  plan->a_elements = a.NumElementsUnchecked();
  plan->a_md = PlainDesc(ad, dt::u8);
  plan->y_dtype = r.output_types[0].dtype();
  plan->dst_md = PlainDesc(dd, ToDnnlType(plan->y_dtype));
  plan->acc_md = PlainDesc(dd, dt::s32);
  // Per-column parameters of B must be one row of N (no batch of them).
  for (int i : {ports_.w_scale, ports_.w_zero}) {
    if (i >= 0 && r.has_input(i)) {
      const int64_t count = r.shape(i).NumElementsUnchecked();
      if (count != 1 && count != plan->n) return NodeUnimplemented(op(), "input ", i, " is not per column");
    }
  }
  if (r.has_input(ports_.x_zero) && r.shape(ports_.x_zero).NumElementsUnchecked() != 1) {
    return NodeUnimplemented(op(), "a_zero_point is not per tensor");
  }
  int64_t macs = bd[rank - 2];
  for (int64_t d : dd) macs *= d;
  plan->serial = macs < kSerialMacs;
  const SerialScope serial(plan->serial);
  const Tensor* w = r.const_input(ports_.w);
  const bool constant_b = IsConstInput(ports_.w, r);
  plan->split = !Int8Vnni() && !(constant_b && w != nullptr && FitsSevenBits(*w));
  const dnnl::memory::desc b_md = PlainDesc(bd, dt::s8);
  const dnnl::memory::desc b_request =
      constant_b ? dnnl::memory::desc(bd, dt::s8, dnnl::memory::format_tag::any) : b_md;
  auto make = [&](bool second) {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    if (!plan->split && ports_.qlinear()) {
      attr.set_output_scales(1 << (rank - 1), {DNNL_RUNTIME_F32_VAL});
      attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    }
    if (second) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
    }
    const dnnl::memory::desc& out = plan->split ? plan->acc_md : plan->dst_md;
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(plan->a_md, b_request, out), attr, eng());
  };
  const dnnl::matmul::primitive_desc first = make(false);
  plan->first = dnnl::matmul(first);
  size_t pad = first.scratchpad_desc().get_size();
  plan->scratchpad_md = first.scratchpad_desc();
  if (plan->split) {
    const dnnl::matmul::primitive_desc second = make(true);
    if (second.weights_desc() != first.weights_desc()) {
      return NodeUnimplemented(op(), "oneDNN packs B differently for the two halves");
    }
    plan->second = dnnl::matmul(second);
    if (second.scratchpad_desc().get_size() > pad) {
      pad = second.scratchpad_desc().get_size();
      plan->scratchpad_md = second.scratchpad_desc();
    }
  }
  plan->weights.Init(eng(), b_md, first.weights_desc(), constant_b);
  if (w != nullptr) GE_RETURN_IF_ERROR(plan->weights.Preload(eng(), *w));
  const size_t a_bytes = Scratch::Padded(plan->a_md.get_size());
  plan->workspace_bytes = Scratch::Padded(pad) + plan->weights.scratch_bytes() + 2 * a_bytes +
                          Scratch::Padded(plan->acc_md.get_size()) + Scratch::kAlign;
  return plan;
}

absl::Status Int8MatMulKernel::Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) {
  auto& plan = static_cast<MatMulPlan&>(base_plan);
  const SerialScope serial(plan.serial);
  GE_ASSIGN_OR_RETURN(auto za, QuantParam(op(), ctx, ports_.x_zero, "a_zero_point", 1, 0.0f));
  GE_ASSIGN_OR_RETURN(auto zb, QuantParam(op(), ctx, ports_.w_zero, "b_zero_point", plan.n, 0.0f));
  for (float z : zb) {
    if (z != 0) return NodeError(op(), "cpu_dense takes a zero b_zero_point only, got ", z);
  }
  std::vector<float> scales;
  int32_t zy = 0;
  if (ports_.qlinear()) {
    GE_ASSIGN_OR_RETURN(auto sa, QuantParam(op(), ctx, ports_.x_scale, "a_scale", 1, 1.0f));
    GE_ASSIGN_OR_RETURN(auto sb, QuantParam(op(), ctx, ports_.w_scale, "b_scale", plan.n, 1.0f));
    GE_ASSIGN_OR_RETURN(auto sy, QuantParam(op(), ctx, ports_.y_scale, "y_scale", 1, 1.0f));
    GE_ASSIGN_OR_RETURN(auto zyv, QuantParam(op(), ctx, ports_.y_zero, "y_zero_point", 1, 0.0f));
    if (!(sy[0] > 0) || !std::isfinite(sy[0])) return NodeError(op(), "y_scale must be positive, got ", sy[0]);
    scales.resize(static_cast<size_t>(plan.n));
    for (int64_t j = 0; j < plan.n; ++j) scales[j] = sa[0] * sb[j] / sy[0];
    zy = static_cast<int32_t>(zyv[0]);
  }
  GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
  dnnl::stream stream(eng());
  GE_ASSIGN_OR_RETURN(dnnl::memory weights, plan.weights.Get(eng(), stream, ctx.input(ports_.w), scratch));
  const Tensor& a_in = ctx.input(ports_.x);
  int32_t za_arg = static_cast<int32_t>(za[0]) + (plan.flip ? 128 : 0);
  int32_t no_zero = 0;
  void* lo = scratch.Take(plan.a_md.get_size());
  void* hi = scratch.Take(plan.a_md.get_size());
  void* acc = scratch.Take(plan.acc_md.get_size());
  void* pad = scratch.Take(plan.scratchpad_md.get_size());
  dnnl::memory a = WrapTensor(plan.a_md, eng(), a_in);
  if (plan.split) {
    SplitHalves(a_in.raw_data(), plan.flip, static_cast<uint8_t*>(lo), static_cast<uint8_t*>(hi), plan.a_elements);
    a = dnnl::memory(plan.a_md, eng(), lo);
  } else if (plan.flip) {
    FlipSign(a_in.raw_data(), lo, plan.a_elements);
    a = dnnl::memory(plan.a_md, eng(), lo);
  }
  const dnnl::memory::desc one_s32 = PlainDesc(dims{1}, dt::s32);
  // The split path's int32 sum goes to the output itself for MatMulInteger.
  void* out = !plan.split || !ports_.qlinear() ? y.raw_data() : acc;
  dnnl::memory dst(plan.split ? plan.acc_md : plan.dst_md, eng(), out);
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, a},
      {DNNL_ARG_WEIGHTS, weights},
      {DNNL_ARG_DST, dst},
      {DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.scratchpad_md, eng(), pad)},
      {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, dnnl::memory(one_s32, eng(), &za_arg)}};
  if (!plan.split && ports_.qlinear()) {
    args[DNNL_ARG_ATTR_OUTPUT_SCALES] = dnnl::memory(PlainDesc(dims{plan.n}, dt::f32), eng(), scales.data());
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = dnnl::memory(one_s32, eng(), &zy);
  }
  plan.first.execute(stream, args);
  if (plan.split) {
    args[DNNL_ARG_SRC] = dnnl::memory(plan.a_md, eng(), hi);
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = dnnl::memory(one_s32, eng(), &no_zero);
    plan.second.execute(stream, args);
  }
  stream.wait();
  if (plan.split && ports_.qlinear()) {
    const int64_t n = y.NumElements();
    Requantize(static_cast<const int32_t*>(acc), scales, 1, plan.n, zy, plan.y_dtype, y.raw_data(), n);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterInt8MatMulKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet types{DataType::kUint8, DataType::kInt8, DataType::kInt32};
  for (std::string_view type : {"QLinearMatMul", "MatMulInteger"}) {
    table.Add({std::string(type), types, CheckInt8MatMul,
               [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                 return std::unique_ptr<Kernel>(new Int8MatMulKernel(op, ctx));
               }});
  }
}

}  // namespace ge::engine::cpu_dense
