// Matrix products: Gemm-13 (alpha, beta, transA, transB, C broadcast to the
// output) and MatMul-13 (numpy.matmul: 1-D promotion, broadcast batch
// dims). float and double run on the blocked GEMM, 16-bit floats through
// float, integers on the reference loop (wrapping arithmetic).
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/host_cpu/gemm.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

using MatMulTypes = Concat<FloatTypes, TypeList<int32_t, int64_t, uint32_t, uint64_t>>;

// Dispatches a matrix product on T: the blocked GEMM for float and double,
// the reference loop for integers.
template <typename T>
void MatrixProduct(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c,
                   int threads) {
  const int64_t lda = ta ? m : k;
  const int64_t ldb = tb ? k : n;
  if constexpr (std::is_floating_point_v<T>) {
    Gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, n, threads);
  } else {
    GemmReference<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, n);
  }
}

// Runs `body(a, b, y)` on host tensors of a type the products handle:
// 16-bit floats are converted to float and the result converted back.
template <typename Body>
absl::Status WithComputeTensors(const Tensor& a, const Tensor& b, const Tensor& y,
                                bool y_is_input, Body&& body) {
  if (!IsHalfDtype(a.dtype())) return body(a, b, y);
  GE_ASSIGN_OR_RETURN(Tensor af, ConvertTensor(a, DataType::kFloat));
  GE_ASSIGN_OR_RETURN(Tensor bf, ConvertTensor(b, DataType::kFloat));
  Tensor yf;
  if (y_is_input) {
    GE_ASSIGN_OR_RETURN(yf, ConvertTensor(y, DataType::kFloat));
  } else {
    GE_ASSIGN_OR_RETURN(yf, Tensor::Allocate(DataType::kFloat, y.shape()));
  }
  GE_RETURN_IF_ERROR(body(af, bf, yf));
  return ConvertInto(yf, y);
}

// ---- Gemm ----

// A float attribute as T (integers truncate without undefined behaviour).
template <typename T>
T ScalarAs(float v) {
  if constexpr (std::is_integral_v<T>) {
    return FloatToInt<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const ir::OpDesc& op)
      : op_(op),
        alpha_(FloatAttr(op, "alpha", 1.0f)),
        beta_(FloatAttr(op, "beta", 1.0f)),
        trans_a_(IntAttr(op, "transA", 0) != 0),
        trans_b_(IntAttr(op, "transB", 0) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    auto shape = ops::GemmShape(a.shape(), b.shape(), trans_a_, trans_b_);
    if (!shape.ok()) return NodeError(op_, shape.status().message());
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (y.shape() != *shape) {
      return NodeError(op_, "output ", y.shape().ToString(), " differs from ", shape->ToString());
    }
    const int64_t m = shape->dim(0), n = shape->dim(1);
    const int64_t k = a.shape().dim(trans_a_ ? 0 : 1);
    const bool use_c = ctx.has_input(2) && beta_ != 0.0f;
    if (use_c) {
      const Tensor& c = ctx.input(2);
      if (!ops::CheckUnidirectionalBroadcast(c.shape(), *shape).ok()) {
        return NodeError(op_, "C ", c.shape().ToString(), " does not broadcast to ",
                         shape->ToString());
      }
      GE_RETURN_IF_ERROR(BroadcastCopy(op_, c, y, ctx.num_threads()));
    }
    return WithComputeTensors(a, b, y, use_c, [&](const Tensor& ac, const Tensor& bc,
                                                  const Tensor& yc) {
      return DispatchType<MatMulTypes>(ac.dtype(), op_, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!kIsHalf<T>) {
          const T alpha = ScalarAs<T>(alpha_);
          const T beta = use_c ? ScalarAs<T>(beta_) : T(0);
          MatrixProduct<T>(trans_a_, trans_b_, m, n, k, alpha, ac.data<T>(), bc.data<T>(), beta, yc.data<T>(),
                           ctx.num_threads());
        }
        return absl::OkStatus();
      });
    });
  }

 private:
  ir::OpDesc op_;
  float alpha_, beta_;
  bool trans_a_, trans_b_;
};

// ---- MatMul ----

struct MatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  // Matrix index of A and B for each output matrix.
  std::vector<std::pair<int64_t, int64_t>> batches;
  bool fold_batches = false;  // A's batches stack into one [batch*M, K] product
};

absl::StatusOr<MatMulPlan> PlanMatMul(const Shape& a, const Shape& b) {
  GE_ASSIGN_OR_RETURN(Shape out, ops::MatMulShape(a, b));
  (void)out;
  const Shape pa = a.rank() == 1 ? Shape{1, a.dim(0)} : a;
  const Shape pb = b.rank() == 1 ? Shape{b.dim(0), 1} : b;
  const size_t ra = pa.dims().size(), rb = pb.dims().size();
  MatMulPlan plan;
  plan.m = pa.dim(ra - 2);
  plan.k = pa.dim(ra - 1);
  plan.n = pb.dim(rb - 1);
  const Shape batch_a(pa.span().subspan(0, ra - 2));
  const Shape batch_b(pb.span().subspan(0, rb - 2));
  GE_ASSIGN_OR_RETURN(Shape batch, ops::BroadcastShapes(batch_a, batch_b));
  const BroadcastPlan bp = MakeBroadcastPlan(batch.span(), {batch_a.span(), batch_b.span()});
  const int64_t count = batch.NumElementsUnchecked();
  plan.batches.reserve(count);
  if (count > 0) {
    ForEachRow<2>(bp, 0, bp.num_rows(), [&](int64_t, const std::array<int64_t, 2>& off, int64_t len) {
      for (int64_t i = 0; i < len; ++i) {
        plan.batches.emplace_back(off[0] + i * bp.inner_stride(0), off[1] + i * bp.inner_stride(1));
      }
    });
  }
  plan.fold_batches = count > 1 && batch_a == batch &&
                      batch_b.NumElementsUnchecked() == 1;
  return plan;
}

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    auto plan = PlanMatMul(a.shape(), b.shape());
    if (!plan.ok()) return NodeError(op_, plan.status().message());
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const int64_t per = plan->m * plan->n;
    if (y.NumElements() != per * static_cast<int64_t>(plan->batches.size())) {
      return NodeError(op_, "output ", y.shape().ToString(), " does not match A ",
                       a.shape().ToString(), " x B ", b.shape().ToString());
    }
    if (y.NumElements() == 0) return absl::OkStatus();
    return WithComputeTensors(a, b, y, false, [&](const Tensor& ac, const Tensor& bc,
                                                  const Tensor& yc) {
      return DispatchType<MatMulTypes>(ac.dtype(), op_, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!kIsHalf<T>) Run<T>(*plan, ac.data<T>(), bc.data<T>(), yc.data<T>(), ctx);
        return absl::OkStatus();
      });
    });
  }

 private:
  template <typename T>
  static void Run(const MatMulPlan& p, const T* a, const T* b, T* y, ExecuteContext& ctx) {
    const int threads = ctx.num_threads();
    const int64_t batches = static_cast<int64_t>(p.batches.size());
    if (p.fold_batches) {
      MatrixProduct<T>(false, false, batches * p.m, p.n, p.k, T(1), a, b, T(0), y, threads);
      return;
    }
    auto one = [&](int64_t i, int inner_threads) {
      const auto [ai, bi] = p.batches[i];
      MatrixProduct<T>(false, false, p.m, p.n, p.k, T(1), a + ai * p.m * p.k, b + bi * p.k * p.n, T(0),
                       y + i * p.m * p.n, inner_threads);
    };
    // Many small products: one per task. Few large ones: parallel inside.
    const int64_t flops = p.m * p.n * std::max<int64_t>(p.k, 1);
    if (batches > 1 && flops < (int64_t{1} << 21)) {
      ParallelFor(threads, batches, flops, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) one(i, 1);
      });
    } else {
      for (int64_t i = 0; i < batches; ++i) one(i, threads);
    }
  }

  ir::OpDesc op_;
};

}  // namespace

void RegisterMatMulKernels(KernelTable& table) {
  const DataTypeSet types = SetOf(MatMulTypes{});
  table.Add({"Gemm",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new GemmKernel(op));
             },
             {types},
             {types}});
  table.Add({"MatMul",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new MatMulKernel(op));
             },
             {types},
             {types}});
}

}  // namespace ge::engine::host_cpu
