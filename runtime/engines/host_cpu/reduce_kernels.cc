// Reductions: ReduceSum (axes input), ReduceMean, ReduceMax, ReduceMin,
// ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and
// ReduceSumSquare (axes attribute, or an axes input when the node has one),
// all with keepdims and noop_with_empty_axes; and ArgMax / ArgMin.
//
// Each output element reduces the input elements at its kept index: the
// kept dims and the reduced dims each become a strided walk (merged where
// linear), and the reduced offsets are listed once when they are few.
// Floating sums accumulate in double, integer sums in 64 bits (wrapping),
// LogSumExp with a running maximum so it never overflows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/sdk/broadcast.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

using ReduceTypes = Concat<FloatTypes, TypeList<int32_t, int64_t, uint32_t, uint64_t>>;
using ReduceMinMaxTypes = Concat<ReduceTypes, TypeList<int8_t, uint8_t>>;

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Accumulator of T: double for floats, 64-bit of T's signedness for ints.
template <typename T>
using SumAcc = std::conditional_t<kIsFloat<T>, double,
                                  std::conditional_t<std::is_signed_v<ComputeType<T>>, int64_t, uint64_t>>;

template <ReduceKind K, typename T>
struct Reducer {
  using C = ComputeType<T>;
  using A = SumAcc<T>;
  struct Acc {
    A value;
    double lse_max;  // LogSumExp: the running maximum
    double lse_sum;  // and the sum of exp(x - lse_max)
  };
  static Acc Init() {
    if constexpr (K == ReduceKind::kProd) return {A(1), 0, 0};
    if constexpr (K == ReduceKind::kLogSumExp) {
      return {A(0), -std::numeric_limits<double>::infinity(), 0};
    }
    return {A(0), 0, 0};
  }
  static void Step(Acc& acc, C v) {
    if constexpr (K == ReduceKind::kProd) {
      acc.value = WrapMul(acc.value, static_cast<A>(v));
    } else if constexpr (K == ReduceKind::kL1) {
      acc.value = WrapAdd(acc.value, static_cast<A>(v < C(0) ? WrapSub(C(0), v) : v));
    } else if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare) {
      acc.value = WrapAdd(acc.value, WrapMul(static_cast<A>(v), static_cast<A>(v)));
    } else if constexpr (K == ReduceKind::kLogSumExp) {
      const double d = static_cast<double>(v);
      if (d > acc.lse_max) {
        acc.lse_sum = acc.lse_sum * std::exp(acc.lse_max - d) + 1.0;
        acc.lse_max = d;
      } else {
        acc.lse_sum += std::exp(d - acc.lse_max);
      }
    } else {
      acc.value = WrapAdd(acc.value, static_cast<A>(v));
    }
  }
  static T Final(const Acc& acc, int64_t count) {
    const double v = static_cast<double>(acc.value);
    if constexpr (K == ReduceKind::kMean) {
      if constexpr (kIsFloat<T>) return StoreAs<T>(v / static_cast<double>(count));
      return count > 0 ? static_cast<T>(acc.value / static_cast<A>(count)) : T(0);
    } else if constexpr (K == ReduceKind::kL2) {
      return Out(std::sqrt(v));
    } else if constexpr (K == ReduceKind::kLogSum) {
      return Out(std::log(v));
    } else if constexpr (K == ReduceKind::kLogSumExp) {
      return Out(acc.lse_max + std::log(acc.lse_sum));
    } else {
      return static_cast<T>(StoreAs<T>(acc.value));
    }
  }
  static T Out(double v) {
    if constexpr (kIsFloat<T>) {
      return StoreAs<T>(v);
    } else {
      return FloatToInt<T>(v);
    }
  }
};

// Max and Min keep the element type; NaN propagates.
template <bool kMax, typename T>
struct MinMaxReducer {
  using C = ComputeType<T>;
  struct Acc {
    C value;
  };
  static Acc Init() {
    if constexpr (std::numeric_limits<C>::has_infinity) {
      return {kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity()};
    }
    return {kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max()};
  }
  static void Step(Acc& acc, C v) {
    if (kMax ? v > acc.value : v < acc.value) acc.value = v;
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(v)) acc.value = v;
    }
  }
  static T Final(const Acc& acc, int64_t) { return Narrow<T>(acc.value); }
};

// The input walks of a reduction: which offsets belong to an output
// element (kept dims) and to its reduced set.
struct ReducePlan {
  BroadcastPlan kept;     // rows over the output elements
  BroadcastPlan reduced;  // rows over one output's reduced elements
  int64_t count = 0;      // reduced elements per output
  std::vector<int64_t> offsets;  // the reduced offsets, when few enough to list
};

ReducePlan MakeReducePlan(const Shape& x, const std::vector<bool>& reduce) {
  const auto strides = ContiguousStrides(x.span());
  std::vector<int64_t> kd, ks, rd, rs;
  for (size_t d = 0; d < reduce.size(); ++d) {
    (reduce[d] ? rd : kd).push_back(x.dim(d));
    (reduce[d] ? rs : ks).push_back(strides[d]);
  }
  ReducePlan p;
  p.kept = MakeStridedPlan(kd, {ks});
  p.reduced = MakeStridedPlan(rd, {rs});
  p.count = DimProduct(rd, 0, rd.size());
  if (p.count <= (int64_t{1} << 16)) {
    p.offsets.reserve(p.count);
    if (p.count > 0) {
      ForEachRow<1>(p.reduced, 0, p.reduced.num_rows(),
                    [&](int64_t, const std::array<int64_t, 1>& off, int64_t n) {
                      for (int64_t i = 0; i < n; ++i) {
                        p.offsets.push_back(off[0] + i * p.reduced.inner_stride(0));
                      }
                    });
    }
  }
  return p;
}

template <typename R, typename T>
T ReduceOne(const ReducePlan& p, const T* base) {
  typename R::Acc acc = R::Init();
  if (!p.offsets.empty() || p.count == 0) {
    for (int64_t off : p.offsets) R::Step(acc, Widen(base[off]));
  } else {
    const int64_t s = p.reduced.inner_stride(0);
    ForEachRow<1>(p.reduced, 0, p.reduced.num_rows(),
                  [&](int64_t, const std::array<int64_t, 1>& off, int64_t n) {
                    for (int64_t i = 0; i < n; ++i) R::Step(acc, Widen(base[off[0] + i * s]));
                  });
  }
  return R::Final(acc, p.count);
}

template <typename R, typename T>
void RunReduce(const ReducePlan& p, const T* x, T* y, int threads) {
  ParallelRows<1>(threads, p.kept, std::max<int64_t>(p.count, 1),
                  [&](int64_t o, const std::array<int64_t, 1>& off, int64_t n) {
                    const int64_t s = p.kept.inner_stride(0);
                    for (int64_t i = 0; i < n; ++i) y[o + i] = ReduceOne<R, T>(p, x + off[0] + i * s);
                  });
}

template <ReduceKind K, typename T>
auto PickReducer() {
  if constexpr (K == ReduceKind::kMax) {
    return TypeTag<MinMaxReducer<true, T>>{};
  } else if constexpr (K == ReduceKind::kMin) {
    return TypeTag<MinMaxReducer<false, T>>{};
  } else {
    return TypeTag<Reducer<K, T>>{};
  }
}

template <ReduceKind K, typename Types>
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const ir::OpDesc& op)
      : op_(op),
        keepdims_(IntAttr(op, "keepdims", 1) != 0),
        noop_(IntAttr(op, "noop_with_empty_axes", 0) != 0),
        attr_axes_(IntsAttr(op, "axes")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.shape().rank();
    std::vector<int64_t> axes = ctx.has_input(1) ? ReadInts(ctx.input(1)) : attr_axes_;
    if (axes.empty() && noop_) return ctx.SetOutputValue(0, Value(x));
    std::vector<bool> reduce(rank, axes.empty());
    auto normalized = ops::NormalizeAxes(axes, rank);
    if (!normalized.ok()) return NodeError(op_, normalized.status().message());
    for (int64_t a : *normalized) reduce[a] = true;
    Shape out;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduce[d]) {
        out.push_back(x.shape().dim(d));
      } else if (keepdims_) {
        out.push_back(1);
      }
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    if (y.NumElements() == 0) return absl::OkStatus();
    const ReducePlan plan = MakeReducePlan(x.shape(), reduce);
    return DispatchType<Types>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using R = typename decltype(PickReducer<K, T>())::type;
      RunReduce<R, T>(plan, x.data<T>(), y.data<T>(), ctx.num_threads());
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  bool keepdims_, noop_;
  std::vector<int64_t> attr_axes_;
};

// ---- ArgMax / ArgMin ----

template <bool kMax>
class ArgReduceKernel final : public Kernel {
 public:
  explicit ArgReduceKernel(const ir::OpDesc& op)
      : op_(op),
        axis_(IntAttr(op, "axis", 0)),
        keepdims_(IntAttr(op, "keepdims", 1) != 0),
        last_(IntAttr(op, "select_last_index", 0) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const auto dims = x.shape().span();
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, x.shape().rank()));
    Shape out_shape;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (static_cast<int64_t>(d) != axis) {
        out_shape.push_back(dims[d]);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out_shape));
    const int64_t outer = DimProduct(dims, 0, axis), n = dims[axis];
    const int64_t inner = DimProduct(dims, axis + 1, dims.size());
    if (y.NumElements() > 0 && n == 0) {
      return NodeError(op_, "cannot take the arg of an empty axis ", axis, " of ",
                       x.shape().ToString());
    }
    return DispatchType<NumericTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      int64_t* py = y.data<int64_t>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          const T* base = px + o * n * inner + j;
          auto best = Widen(base[0]);
          int64_t arg = 0;
          for (int64_t i = 1; i < n; ++i) {
            const auto v = Widen(base[i * inner]);
            const bool better = kMax ? (last_ ? v >= best : v > best) : (last_ ? v <= best : v < best);
            if (better) best = v, arg = i;
          }
          py[o * inner + j] = arg;
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
  bool keepdims_, last_;
};

template <ReduceKind K, typename Types>
void AddReduce(KernelTable& table, std::string type) {
  table.Add({std::move(type),
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ReduceKernel<K, Types>(op));
             },
             {SetOf(Types{}), DataTypeSet{DataType::kInt64}},
             {SetOf(Types{})}});
}

}  // namespace

void RegisterReduceKernels(KernelTable& table) {
  AddReduce<ReduceKind::kSum, ReduceTypes>(table, "ReduceSum");
  AddReduce<ReduceKind::kMean, ReduceTypes>(table, "ReduceMean");
  AddReduce<ReduceKind::kMax, ReduceMinMaxTypes>(table, "ReduceMax");
  AddReduce<ReduceKind::kMin, ReduceMinMaxTypes>(table, "ReduceMin");
  AddReduce<ReduceKind::kProd, ReduceTypes>(table, "ReduceProd");
  AddReduce<ReduceKind::kL1, ReduceTypes>(table, "ReduceL1");
  AddReduce<ReduceKind::kL2, ReduceTypes>(table, "ReduceL2");
  AddReduce<ReduceKind::kLogSum, ReduceTypes>(table, "ReduceLogSum");
  AddReduce<ReduceKind::kLogSumExp, ReduceTypes>(table, "ReduceLogSumExp");
  AddReduce<ReduceKind::kSumSquare, ReduceTypes>(table, "ReduceSumSquare");
  const DataTypeSet numeric = SetOf(NumericTypes{});
  table.Add({"ArgMax",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ArgReduceKernel<true>(op));
             },
             {numeric},
             {DataTypeSet{DataType::kInt64}}});
  table.Add({"ArgMin",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ArgReduceKernel<false>(op));
             },
             {numeric},
             {DataTypeSet{DataType::kInt64}}});
}

}  // namespace ge::engine::host_cpu
