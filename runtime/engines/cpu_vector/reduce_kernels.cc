// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and ReduceSumSquare over
// any axes (attribute or input), with keepdims and noop_with_empty_axes.
//
// The plan (built at Prepare for known shapes) drops size-1 dims and merges
// neighbours that are both reduced or both kept, so the input is walked as
// contiguous rows of its last merged dim: a reduced last dim folds each row
// into one accumulator (lane accumulators, horizontal), a kept one adds the
// row into a row of accumulators (vertical). Accumulators live in the
// workspace; rows split across threads along the first dim when it is kept
// (disjoint outputs).
#include <cstring>

#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_vector/vector_kernel.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_vector {
namespace {

struct ReducePlan {
  std::vector<int64_t> dims;        // merged input dims (at least one)
  std::vector<bool> reduced;        // per merged dim
  std::vector<int64_t> out_stride;  // output element stride per merged dim (0 when reduced)
  int64_t count = 1;                // input elements per output element
  int64_t out_n = 1;
  int64_t rows = 1;                 // product of all dims but the last
};

ReducePlan MakePlan(const Shape& x, const std::vector<bool>& reduce) {
  ReducePlan p;
  for (size_t d = 0; d < reduce.size(); ++d) {
    const int64_t n = x.dim(d);
    if (reduce[d]) p.count *= n;
    if (n == 1) continue;
    if (!p.dims.empty() && p.reduced.back() == reduce[d]) {
      p.dims.back() *= n;
    } else {
      p.dims.push_back(n);
      p.reduced.push_back(reduce[d]);
    }
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    p.reduced.push_back(false);
  }
  p.out_stride.assign(p.dims.size(), 0);
  int64_t s = 1;
  for (size_t d = p.dims.size(); d-- > 0;) {
    if (p.reduced[d]) continue;
    p.out_stride[d] = s;
    s *= p.dims[d];
  }
  p.out_n = s;
  for (size_t d = 0; d + 1 < p.dims.size(); ++d) p.rows *= p.dims[d];
  return p;
}

// Rows [begin, end) of `p`.
void RunRows(const ReducePlan& p, const ReduceFns& fns, const char* x, size_t es, char* acc, const double* aux,
             int64_t begin, int64_t end) {
  const size_t outer = p.dims.size() - 1;
  const int64_t inner = p.dims.back();
  const bool horizontal = p.reduced.back();
  int64_t index[16] = {0};
  int64_t out = 0;
  int64_t rem = begin;
  for (size_t d = outer; d-- > 0;) {
    index[d] = rem % p.dims[d];
    rem /= p.dims[d];
    out += index[d] * p.out_stride[d];
  }
  for (int64_t r = begin; r < end; ++r) {
    const char* row = x + r * inner * static_cast<int64_t>(es);
    if (horizontal) {
      fns.horizontal(row, inner, acc + out * 8, aux != nullptr ? aux + out : nullptr);
    } else {
      fns.vertical(row, inner, acc + out * 8, aux != nullptr ? aux + out : nullptr);
    }
    for (size_t d = outer; d-- > 0;) {
      if (++index[d] < p.dims[d]) {
        out += p.out_stride[d];
        break;
      }
      out -= (p.dims[d] - 1) * p.out_stride[d];
      index[d] = 0;
    }
  }
}

void Accumulate(const ReducePlan& p, const ReduceFns& fns, const char* x, size_t es, char* acc, const double* aux,
                int threads) {
  fns.init(acc, p.out_n);
  const int64_t inner = p.dims.back();
  for (int64_t d : p.dims) {
    if (d == 0) return;  // an empty input: every output keeps the identity
  }
  if (p.dims.size() > 1 && !p.reduced[0]) {
    const int64_t per = p.rows / p.dims[0];
    Split(threads, p.dims[0], per * inner,
          [&](int64_t b, int64_t e) { RunRows(p, fns, x, es, acc, aux, b * per, e * per); });
  } else {
    RunRows(p, fns, x, es, acc, aux, 0, p.rows);
  }
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(const ir::OpDesc& op, ReduceOp kind)
      : op_(op),
        kind_(kind),
        keepdims_(sdk::IntAttr(op, "keepdims", 1) != 0),
        noop_(sdk::IntAttr(op, "noop_with_empty_axes", 0) != 0),
        attr_axes_(sdk::IntsAttr(op, "axes")) {}

  absl::Status Prepare(PrepareContext& ctx) override {
    if (ctx.input_types.empty() || !ctx.input_types[0].is_tensor() || !ctx.input_types[0].shape().IsFullyKnown()) {
      return absl::OkStatus();
    }
    std::vector<int64_t> axes = attr_axes_;
    if (op_.num_inputs() > 1 && !op_.input(1).name.empty()) {
      if (ctx.const_inputs.size() < 2 || ctx.const_inputs[1] == nullptr) return absl::OkStatus();
      axes = ctx.const_inputs[1]->ToInt64Vector();
    }
    GE_RETURN_IF_ERROR(Plan(ctx.input_types[0].shape(), axes));
    ctx.workspace_bytes = static_cast<size_t>(plan_.out_n) * 8 * (kind_ == ReduceOp::kLogSumExp ? 2 : 1);
    workspace_bytes_ = ctx.workspace_bytes;
    return absl::OkStatus();
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto v = ToVDt(x.dtype());
    const ReduceFns* fns = v ? &Kernels().reduce[int(kind_)][int(*v)] : nullptr;
    if (fns == nullptr || fns->init == nullptr) return NodeError(op_, "dtype ", DataTypeName(x.dtype()), " is not supported");
    if (ctx.has_input(1)) {
      std::vector<int64_t> axes = ctx.input(1).ToInt64Vector();
      if (!planned_ || axes != axes_ || x.shape() != shape_) GE_RETURN_IF_ERROR(Plan(x.shape(), axes));
    } else if (!planned_ || x.shape() != shape_) {
      GE_RETURN_IF_ERROR(Plan(x.shape(), attr_axes_));
    }
    if (noop_now_) return ctx.SetOutputValue(0, Value(x));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out_shape_));
    if (y.NumElements() == 0) return absl::OkStatus();
    const size_t bytes = static_cast<size_t>(plan_.out_n) * 8;
    const bool lse = kind_ == ReduceOp::kLogSumExp;
    std::vector<uint64_t> local;
    char* acc = static_cast<char*>(ctx.workspace());
    // The workspace is what Prepare asked for (nothing when the shape was unknown
    // then); a larger shape now accumulates into a local buffer.
    if (acc == nullptr || workspace_bytes_ < bytes * (lse ? 2 : 1)) {
      local.resize(static_cast<size_t>(plan_.out_n) * (lse ? 2 : 1));
      acc = reinterpret_cast<char*>(local.data());
    }
    const char* px = static_cast<const char*>(x.raw_data());
    const size_t es = DataTypeSize(x.dtype());
    const double* aux = nullptr;
    if (lse) {
      Accumulate(plan_, Kernels().max_to_double[int(*v)], px, es, acc + bytes, nullptr, ctx.num_threads());
      aux = reinterpret_cast<const double*>(acc + bytes);
    }
    Accumulate(plan_, *fns, px, es, acc, aux, ctx.num_threads());
    fns->finish(acc, y.raw_data(), plan_.out_n, plan_.count, aux);
    return absl::OkStatus();
  }

 private:
  absl::Status Plan(const Shape& x, const std::vector<int64_t>& axes) {
    const int64_t rank = x.rank();
    if (rank > 16) return NodeError(op_, "rank ", rank, " is above 16");
    axes_ = axes;
    shape_ = x;
    noop_now_ = axes.empty() && noop_;
    std::vector<bool> reduce(rank, axes.empty());
    auto normalized = ops::NormalizeAxes(axes, rank);
    if (!normalized.ok()) return NodeError(op_, normalized.status().message());
    for (int64_t a : *normalized) reduce[a] = true;
    out_shape_ = Shape();
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduce[d]) {
        out_shape_.push_back(x.dim(d));
      } else if (keepdims_) {
        out_shape_.push_back(1);
      }
    }
    plan_ = MakePlan(x, reduce);
    planned_ = true;
    return absl::OkStatus();
  }

  ir::OpDesc op_;
  ReduceOp kind_;
  bool keepdims_, noop_;
  std::vector<int64_t> attr_axes_;
  bool planned_ = false;
  bool noop_now_ = false;
  std::vector<int64_t> axes_;
  Shape shape_, out_shape_;
  ReducePlan plan_;
  size_t workspace_bytes_ = 0;  // what Prepare asked for: the size of ctx.workspace()
};

void AddReduce(VectorKernelTable& table, std::string type, ReduceOp kind) {
  sdk::DataTypeSet set;
  for (DataType d : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32, DataType::kInt64,
                     DataType::kInt8, DataType::kUint8}) {
    if (Kernels().reduce[int(kind)][int(*ToVDt(d))].init != nullptr) set = set | sdk::DataTypeSet{d};
  }
  table.Add({std::move(type),
             [set](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, set));
               if (op.num_inputs() > 1) GE_RETURN_IF_ERROR(CheckInputDtype(op, 1, {DataType::kInt64}, true));
               return absl::OkStatus();
             },
             [kind](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ReduceKernel(op, kind));
             }});
}

}  // namespace

void RegisterReduceKernels(VectorKernelTable& table) {
  AddReduce(table, "ReduceSum", ReduceOp::kSum);
  AddReduce(table, "ReduceMean", ReduceOp::kMean);
  AddReduce(table, "ReduceMax", ReduceOp::kMax);
  AddReduce(table, "ReduceMin", ReduceOp::kMin);
  AddReduce(table, "ReduceProd", ReduceOp::kProd);
  AddReduce(table, "ReduceL1", ReduceOp::kL1);
  AddReduce(table, "ReduceL2", ReduceOp::kL2);
  AddReduce(table, "ReduceLogSum", ReduceOp::kLogSum);
  AddReduce(table, "ReduceLogSumExp", ReduceOp::kLogSumExp);
  AddReduce(table, "ReduceSumSquare", ReduceOp::kSumSquare);
}

}  // namespace ge::engine::cpu_vector
