// Binary and n-ary element-wise kernels with numpy broadcasting: arithmetic
// (Add, Sub, Mul, Div, Mod, Pow, PRelu, BitShift), comparisons (Equal,
// Less, Greater, LessOrEqual, GreaterOrEqual), logic (And, Or, Xor), the
// variadic Max, Min, Sum and Mean, and Where. Integer arithmetic wraps like two's complement
// hardware; integer division by zero is an error naming the node rather than
// a trap.
#include <cmath>
#include <memory>
#include <utility>

#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Inputs [first, first + count) broadcast to `out`.
absl::Status CheckBroadcast(const ir::OpDesc& op, const ExecuteContext& ctx, int first, int count,
                            const Tensor& out) {
  for (int i = first; i < first + count; ++i) {
    GE_RETURN_IF_ERROR(CheckBroadcastsTo(op, ctx.input(i).shape(), i, out.shape()));
  }
  return absl::OkStatus();
}

absl::Status CheckSameDtype(const ir::OpDesc& op, const ExecuteContext& ctx, int first,
                            int count) {
  const DataType d = ctx.input(first).dtype();
  for (int i = first + 1; i < first + count; ++i) {
    if (ctx.input(i).dtype() != d) {
      return NodeError(op, "input ", i, " has dtype ", DataTypeName(ctx.input(i).dtype()),
                       " but input ", first, " has ", DataTypeName(d));
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status CheckNoZero(const ir::OpDesc& op, const Tensor& divisor) {
  if constexpr (kIsInt<T>) {
    const T* d = divisor.data<T>();
    for (int64_t i = 0; i < divisor.NumElements(); ++i) {
      if (d[i] == 0) return NodeError(op, "integer division by zero (divisor element ", i, ")");
    }
  }
  return absl::OkStatus();
}

// ---- Functors; `Op<T>` gets compute-type values of storage type T ----

struct AddFn {
  template <typename C>
  C operator()(C a, C b) const {
    return WrapAdd(a, b);
  }
};
struct SubFn {
  template <typename C>
  C operator()(C a, C b) const {
    return WrapSub(a, b);
  }
};
struct MulFn {
  template <typename C>
  C operator()(C a, C b) const {
    return WrapMul(a, b);
  }
};
struct DivFn {  // integers truncate toward zero; divisors are checked non-zero
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_signed_v<C> && std::is_integral_v<C>) {
      if (b == C(-1)) return WrapSub(C(0), a);  // INT_MIN / -1 would trap
    }
    return a / b;
  }
};
struct FmodFn {  // the result has the sign of the dividend (C's fmod)
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      return std::fmod(a, b);
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (b == C(-1)) return C(0);
      }
      return static_cast<C>(a % b);
    }
  }
};
struct IntModFn {  // the result has the sign of the divisor (Python's %)
  template <typename C>
  C operator()(C a, C b) const {
    C r = FmodFn{}(a, b);
    if constexpr (std::is_signed_v<C>) {
      if (r != 0 && ((r < 0) != (b < 0))) r = WrapAdd(r, b);
    }
    return r;
  }
};
struct MaxFn {  // NaN propagates
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
    }
    return a > b ? a : b;  // a NaN b falls through to b
  }
};
struct MinFn {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
    }
    return a < b ? a : b;
  }
};

#define GE_HOST_CPU_BINARY_FUNCTOR(Name, expr) \
  struct Name {                                \
    template <typename C>                      \
    auto operator()(C a, C b) const {          \
      return expr;                             \
    }                                          \
  }
GE_HOST_CPU_BINARY_FUNCTOR(EqualFn, a == b);
GE_HOST_CPU_BINARY_FUNCTOR(LessFn, a < b);
GE_HOST_CPU_BINARY_FUNCTOR(GreaterFn, a > b);
GE_HOST_CPU_BINARY_FUNCTOR(LessOrEqualFn, a <= b);
GE_HOST_CPU_BINARY_FUNCTOR(GreaterOrEqualFn, a >= b);
GE_HOST_CPU_BINARY_FUNCTOR(AndFn, a && b);
GE_HOST_CPU_BINARY_FUNCTOR(OrFn, a || b);
GE_HOST_CPU_BINARY_FUNCTOR(XorFn, a != b);
#undef GE_HOST_CPU_BINARY_FUNCTOR

// out = fn(a, b); a comparison writes bool, arithmetic writes T.
template <typename Types, typename Fn, bool kCompare, bool kDivides = false>
class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    GE_RETURN_IF_ERROR(CheckSameDtype(op_, ctx, 0, 2));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckBroadcast(op_, ctx, 0, 2, out));
    return DispatchType<Types>(a.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Out = std::conditional_t<kCompare, bool, T>;
      if constexpr (kDivides) GE_RETURN_IF_ERROR(CheckNoZero<T>(op_, b));
      BinaryBroadcast<T, T, Out>(a, b, out, Fn{}, ctx.num_threads());
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
};

template <typename Types, typename Fn, bool kCompare = false, bool kDivides = false>
void AddBinary(KernelTable& table, std::string type, DataTypeSet out_types) {
  table.Add({std::move(type),
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new BinaryKernel<Types, Fn, kCompare, kDivides>(op));
             },
             {SetOf(Types{})},
             {out_types}});
}

// ---- Mod: `fmod` chooses C's or Python's sign convention ----

class ModKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const int64_t fmod = IntAttr(op, "fmod", 0);
    if (fmod != 0 && fmod != 1) return NodeError(op, "attribute fmod must be 0 or 1, got ", fmod);
    return std::unique_ptr<Kernel>(new ModKernel(op, fmod == 1));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    GE_RETURN_IF_ERROR(CheckSameDtype(op_, ctx, 0, 2));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (!fmod_ && IsFloatingPoint(a.dtype())) {
      return NodeError(op_, "fmod=0 is not defined for dtype ", DataTypeName(a.dtype()),
                       "; floating-point Mod needs fmod=1");
    }
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckBroadcast(op_, ctx, 0, 2, out));
    return DispatchType<NumericTypes>(a.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      GE_RETURN_IF_ERROR(CheckNoZero<T>(op_, b));
      if (fmod_) {
        BinaryBroadcast<T, T, T>(a, b, out, FmodFn{}, ctx.num_threads());
      } else if constexpr (kIsInt<T>) {
        BinaryBroadcast<T, T, T>(a, b, out, IntModFn{}, ctx.num_threads());
      }
      return absl::OkStatus();
    });
  }

 private:
  ModKernel(const ir::OpDesc& op, bool fmod) : op_(op), fmod_(fmod) {}
  ir::OpDesc op_;
  bool fmod_;
};

// ---- Pow: the exponent may have another dtype than the base ----

using PowBaseTypes = TypeList<int32_t, int64_t, float, double, Float16, BFloat16>;

template <typename T>
T IntPow(T base, int64_t e) {
  if (e < 0) {
    if (base == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (base == T(-1)) return (e & 1) ? T(-1) : T(1);
    }
    return T(0);  // |base| > 1 (or 0): the exact result truncates to 0
  }
  T result = 1;
  while (e > 0) {
    if (e & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return result;
}

class PowKernel final : public Kernel {
 public:
  explicit PowKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckBroadcast(op_, ctx, 0, 2, out));
    const int threads = ctx.num_threads();
    return DispatchType<PowBaseTypes>(a.dtype(), op_, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      if constexpr (kIsInt<T>) {
        if (IsInteger(b.dtype())) {
          GE_ASSIGN_OR_RETURN(Tensor e, ConvertTensor(b, DataType::kInt64));
          BinaryBroadcast<T, int64_t, T>(
              a, e, out, [](T x, int64_t y) { return IntPow<T>(x, y); }, threads);
        } else {
          GE_ASSIGN_OR_RETURN(Tensor e, ConvertTensor(b, DataType::kDouble));
          BinaryBroadcast<T, double, T>(
              a, e, out, [](T x, double y) { return FloatToInt<T>(std::pow(static_cast<double>(x), y)); }, threads);
        }
      } else {
        using C = ComputeType<T>;
        GE_ASSIGN_OR_RETURN(Tensor e, ConvertTensor(b, DataTypeOf<C>::value));
        BinaryBroadcast<T, C, T>(
            a, e, out, [](C x, C y) { return std::pow(x, y); }, threads, 8);
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
};

// ---- PRelu and BitShift ----

struct PReluFn {  // the slope broadcasts to X (unidirectionally)
  template <typename C>
  C operator()(C x, C slope) const {
    return x < C(0) ? WrapMul(x, slope) : x;
  }
};
using PReluTypes = Concat<FloatTypes, TypeList<int32_t, int64_t, uint32_t, uint64_t>>;

template <bool kLeft>
struct ShiftFn {  // shifting by the bit width or more gives 0
  template <typename C>
  C operator()(C x, C n) const {
    constexpr C kBits = static_cast<C>(sizeof(C) * 8);
    if (n >= kBits) return C(0);
    return kLeft ? static_cast<C>(x << n) : static_cast<C>(x >> n);
  }
};

class BitShiftKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const std::string direction = StringAttr(op, "direction", "");
    if (direction != "LEFT" && direction != "RIGHT") {
      return NodeError(op, "attribute direction must be LEFT or RIGHT, got '", direction, "'");
    }
    return std::unique_ptr<Kernel>(new BitShiftKernel(op, direction == "LEFT"));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    GE_RETURN_IF_ERROR(CheckSameDtype(op_, ctx, 0, 2));
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckBroadcast(op_, ctx, 0, 2, out));
    return DispatchType<UnsignedIntTypes>(ctx.input(0).dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (left_) {
        BinaryBroadcast<T, T, T>(ctx.input(0), ctx.input(1), out, ShiftFn<true>{}, ctx.num_threads());
      } else {
        BinaryBroadcast<T, T, T>(ctx.input(0), ctx.input(1), out, ShiftFn<false>{}, ctx.num_threads());
      }
      return absl::OkStatus();
    });
  }

 private:
  BitShiftKernel(const ir::OpDesc& op, bool left) : op_(op), left_(left) {}
  ir::OpDesc op_;
  bool left_;
};

// ---- Variadic Max, Min, Sum, Mean ----

template <typename Types, typename Fn, bool kMean = false>
class VariadicKernel final : public Kernel {
 public:
  explicit VariadicKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const int n = ctx.num_inputs();
    if (n < 1) return NodeError(op_, "needs at least one input");
    GE_RETURN_IF_ERROR(CheckSameDtype(op_, ctx, 0, n));
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckBroadcast(op_, ctx, 0, n, out));
    const int threads = ctx.num_threads();
    return DispatchType<Types>(ctx.input(0).dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      // Fold left into the output: after the first step the output holds the
      // partial result in its final shape, and each further input
      // broadcasts into it.
      if (n == 1) {
        GE_RETURN_IF_ERROR(BroadcastCopy(op_, ctx.input(0), out, threads));
      } else {
        BinaryBroadcast<T, T, T>(ctx.input(0), ctx.input(1), out, Fn{}, threads);
      }
      for (int i = 2; i < n; ++i) {
        BinaryBroadcast<T, T, T>(out, ctx.input(i), out, Fn{}, threads);
      }
      if constexpr (kMean) {
        const C scale = C(1) / static_cast<C>(n);
        T* p = out.data<T>();
        UnaryLoop(
            p, p, out.NumElements(), [scale](C v) { return v * scale; }, threads);
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
};

template <typename Types, typename Fn, bool kMean = false>
void AddVariadic(KernelTable& table, std::string type) {
  table.Add({std::move(type),
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new VariadicKernel<Types, Fn, kMean>(op));
             },
             {SetOf(Types{})},
             {SetOf(Types{})}});
}

// ---- Where ----

class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    if (ctx.input(0).dtype() != DataType::kBool) {
      return NodeError(op_, "condition must be bool, got ", DataTypeName(ctx.input(0).dtype()));
    }
    GE_RETURN_IF_ERROR(CheckSameDtype(op_, ctx, 1, 2));
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckBroadcast(op_, ctx, 0, 3, out));
    return DispatchType<AllTypes>(ctx.input(1).dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      TernaryBroadcast<bool, T, T, T>(
          ctx.input(0), ctx.input(1), ctx.input(2), out,
          [](bool c, const T& x, const T& y) -> const T& { return c ? x : y; }, ctx.num_threads());
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
};

}  // namespace

void RegisterBinaryKernels(KernelTable& table) {
  const DataTypeSet kNumeric = SetOf(NumericTypes{});
  const DataTypeSet kBool = SetOf(BoolTypes{});
  AddBinary<NumericTypes, AddFn>(table, "Add", kNumeric);
  AddBinary<NumericTypes, SubFn>(table, "Sub", kNumeric);
  AddBinary<NumericTypes, MulFn>(table, "Mul", kNumeric);
  AddBinary<NumericTypes, DivFn, false, /*kDivides=*/true>(table, "Div", kNumeric);
  AddBinary<NumericAndBoolTypes, EqualFn, true>(table, "Equal", kBool);
  AddBinary<NumericTypes, LessFn, true>(table, "Less", kBool);
  AddBinary<NumericTypes, GreaterFn, true>(table, "Greater", kBool);
  AddBinary<NumericTypes, LessOrEqualFn, true>(table, "LessOrEqual", kBool);
  AddBinary<NumericTypes, GreaterOrEqualFn, true>(table, "GreaterOrEqual", kBool);
  AddBinary<BoolTypes, AndFn, true>(table, "And", kBool);
  AddBinary<BoolTypes, OrFn, true>(table, "Or", kBool);
  AddBinary<BoolTypes, XorFn, true>(table, "Xor", kBool);
  AddBinary<PReluTypes, PReluFn>(table, "PRelu", SetOf(PReluTypes{}));
  table.Add({"BitShift", [](const ir::OpDesc& op) { return BitShiftKernel::Create(op); },
             {SetOf(UnsignedIntTypes{})}, {SetOf(UnsignedIntTypes{})}});
  AddVariadic<NumericTypes, MaxFn>(table, "Max");
  AddVariadic<NumericTypes, MinFn>(table, "Min");
  AddVariadic<FloatTypes, AddFn>(table, "Sum");
  AddVariadic<FloatTypes, AddFn, /*kMean=*/true>(table, "Mean");
  table.Add({"Mod",
             [](const ir::OpDesc& op) { return ModKernel::Create(op); },
             {kNumeric},
             {kNumeric}});
  table.Add({"Pow",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new PowKernel(op));
             },
             {SetOf(PowBaseTypes{}), kNumeric},
             {SetOf(PowBaseTypes{})}});
  table.Add({"Where",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new WhereKernel(op));
             },
             {kBool, SetOf(AllTypes{})},
             {SetOf(AllTypes{})}});
}

}  // namespace ge::engine::host_cpu
