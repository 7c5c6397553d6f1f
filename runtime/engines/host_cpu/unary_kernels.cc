// Unary element-wise kernels: activations (Relu, Sigmoid, HardSigmoid,
// Tanh, LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, Shrink, ...), math
// (Erf, Sqrt, Exp, Log, Neg, Abs, Ceil, Floor, Round, Reciprocal, Sign, the
// trigonometric and hyperbolic functions), the predicates IsNaN and IsInf,
// Clip with optional min/max inputs, and logical Not. Each op is a small
// functor on compute-type values plugged into one templated kernel; the
// dtype is dispatched once per call.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

// y = fn(x) element-wise; y has x's dtype, or bool for predicates.
template <typename Types, typename Fn, bool kBoolOut = false>
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(const ir::OpDesc& op, Fn fn) : op_(op), fn_(std::move(fn)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckSameSize(op_, x, y));
    return DispatchType<Types>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Out = std::conditional_t<kBoolOut, bool, T>;
      UnaryLoop(x.data<T>(), y.data<Out>(), x.NumElements(), fn_, ctx.num_threads(), 4);
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  Fn fn_;
};

template <typename Types, typename MakeFn, bool kBoolOut = false>
void AddUnary(KernelTable& table, std::string type, MakeFn make) {
  KernelDef def;
  def.op_type = std::move(type);
  def.create = [make](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    using Fn = decltype(make(op));
    return std::unique_ptr<Kernel>(new UnaryKernel<Types, Fn, kBoolOut>(op, make(op)));
  };
  def.input_dtypes = {SetOf(Types{})};
  def.output_dtypes = {kBoolOut ? DataTypeSet{DataType::kBool} : SetOf(Types{})};
  table.Add(std::move(def));
}

// A predicate: the output is bool.
template <typename Types, typename MakeFn>
void AddPredicate(KernelTable& table, std::string type, MakeFn make) {
  AddUnary<Types, MakeFn, /*kBoolOut=*/true>(table, std::move(type), make);
}

// ---- Functors (C is the compute type: float, double or an integer) ----

struct Relu {
  template <typename C>
  C operator()(C x) const {
    return x > C(0) ? x : C(0);
  }
};
struct Neg {
  template <typename C>
  C operator()(C x) const {
    return WrapSub(C(0), x);
  }
};
struct Abs {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return x < C(0) ? WrapSub(C(0), x) : x;
    }
  }
};
struct Sign {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
    }
    return x > C(0) ? C(1) : (x < C(0) ? static_cast<C>(-1) : C(0));
  }
};
struct Sigmoid {
  template <typename C>
  C operator()(C x) const {
    // Written so that neither branch overflows exp.
    if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
    const C e = std::exp(x);
    return e / (C(1) + e);
  }
};
struct HardSigmoid {
  float alpha, beta;
  template <typename C>
  C operator()(C x) const {
    return std::clamp(static_cast<C>(alpha) * x + static_cast<C>(beta), C(0), C(1));
  }
};
struct HardSwish {
  template <typename C>
  C operator()(C x) const {
    return x * std::clamp(x / C(6) + C(0.5), C(0), C(1));
  }
};
struct LeakyRelu {
  float alpha;
  template <typename C>
  C operator()(C x) const {
    return x >= C(0) ? x : static_cast<C>(alpha) * x;
  }
};
struct Elu {
  float alpha;
  template <typename C>
  C operator()(C x) const {
    return x >= C(0) ? x : static_cast<C>(alpha) * (std::exp(x) - C(1));
  }
};
struct Selu {
  float alpha, gamma;
  template <typename C>
  C operator()(C x) const {
    const C y = x > C(0) ? x : static_cast<C>(alpha) * (std::exp(x) - C(1));
    return static_cast<C>(gamma) * y;
  }
};
struct Softplus {
  template <typename C>
  C operator()(C x) const {
    // log(1 + e^x) without overflow for large x.
    return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};
struct Softsign {
  template <typename C>
  C operator()(C x) const {
    return x / (C(1) + std::abs(x));
  }
};
struct Celu {
  float alpha;
  template <typename C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha);
    return std::max(C(0), x) + std::min(C(0), a * (std::exp(x / a) - C(1)));
  }
};
struct ThresholdedRelu {
  float alpha;
  template <typename C>
  C operator()(C x) const {
    return x > static_cast<C>(alpha) ? x : C(0);
  }
};
struct Shrink {
  float bias, lambd;
  template <typename C>
  C operator()(C x) const {
    const double v = static_cast<double>(x);
    const double y = v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0);
    if constexpr (std::is_integral_v<C>) {
      return FloatToInt<C>(y);
    } else {
      return static_cast<C>(y);
    }
  }
};
struct IsNaN {
  template <typename C>
  bool operator()(C x) const {
    return std::isnan(x);
  }
};
struct IsInf {
  bool negative, positive;
  template <typename C>
  bool operator()(C x) const {
    return std::isinf(x) && (x > C(0) ? positive : negative);
  }
};
struct Erf {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      // Truncated like a cast of the real result: 0 except for |x| >= 6.
      return static_cast<C>(std::erf(static_cast<double>(x)));
    } else {
      return std::erf(x);
    }
  }
};

#define GE_HOST_CPU_MATH_FUNCTOR(Name, expr) \
  struct Name {                              \
    template <typename C>                    \
    C operator()(C x) const {                \
      return expr;                           \
    }                                        \
  }
GE_HOST_CPU_MATH_FUNCTOR(Tanh, std::tanh(x));
GE_HOST_CPU_MATH_FUNCTOR(Sqrt, std::sqrt(x));
GE_HOST_CPU_MATH_FUNCTOR(Exp, std::exp(x));
GE_HOST_CPU_MATH_FUNCTOR(Log, std::log(x));
GE_HOST_CPU_MATH_FUNCTOR(Ceil, std::ceil(x));
GE_HOST_CPU_MATH_FUNCTOR(Floor, std::floor(x));
GE_HOST_CPU_MATH_FUNCTOR(Round, std::nearbyint(x));  // half to even
GE_HOST_CPU_MATH_FUNCTOR(Reciprocal, C(1) / x);
GE_HOST_CPU_MATH_FUNCTOR(Sin, std::sin(x));
GE_HOST_CPU_MATH_FUNCTOR(Cos, std::cos(x));
GE_HOST_CPU_MATH_FUNCTOR(Tan, std::tan(x));
GE_HOST_CPU_MATH_FUNCTOR(Asin, std::asin(x));
GE_HOST_CPU_MATH_FUNCTOR(Acos, std::acos(x));
GE_HOST_CPU_MATH_FUNCTOR(Atan, std::atan(x));
GE_HOST_CPU_MATH_FUNCTOR(Sinh, std::sinh(x));
GE_HOST_CPU_MATH_FUNCTOR(Cosh, std::cosh(x));
GE_HOST_CPU_MATH_FUNCTOR(Asinh, std::asinh(x));
GE_HOST_CPU_MATH_FUNCTOR(Acosh, std::acosh(x));
GE_HOST_CPU_MATH_FUNCTOR(Atanh, std::atanh(x));
GE_HOST_CPU_MATH_FUNCTOR(Not, !x);
#undef GE_HOST_CPU_MATH_FUNCTOR

// ---- Clip: min and max are optional scalar inputs ----

class ClipKernel final : public Kernel {
 public:
  explicit ClipKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckSameSize(op_, x, y));
    for (int i = 1; i <= 2; ++i) {
      if (!ctx.has_input(i)) continue;
      const Tensor& bound = ctx.input(i);
      if (bound.NumElements() != 1 || bound.dtype() != x.dtype()) {
        return NodeError(op_, "input ", i, " (", i == 1 ? "min" : "max",
                         ") must be a scalar of dtype ", DataTypeName(x.dtype()), ", got ",
                         DataTypeName(bound.dtype()), bound.shape().ToString());
      }
    }
    return DispatchType<NumericTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const C lo = ctx.has_input(1) ? Widen(ctx.input(1).data<T>()[0])
                                    : std::numeric_limits<C>::lowest();
      const C hi = ctx.has_input(2) ? Widen(ctx.input(2).data<T>()[0])
                                    : std::numeric_limits<C>::max();
      // min(max(x, lo), hi): when lo > hi every element becomes hi, as in
      // ONNX; NaN passes through.
      auto clip = [lo, hi](C v) {
        v = v < lo ? lo : v;
        return v > hi ? hi : v;
      };
      UnaryLoop(x.data<T>(), y.data<T>(), x.NumElements(), clip, ctx.num_threads());
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
};

template <typename Fn>
auto Make() {
  return [](const ir::OpDesc&) { return Fn{}; };
}

}  // namespace

void RegisterUnaryKernels(KernelTable& table) {
  using SignedNumeric = Concat<FloatTypes, SignedIntTypes>;
  AddUnary<SignedNumeric>(table, "Relu", Make<Relu>());
  AddUnary<SignedNumeric>(table, "Neg", Make<Neg>());
  AddUnary<NumericTypes>(table, "Abs", Make<Abs>());
  AddUnary<NumericTypes>(table, "Sign", Make<Sign>());
  AddUnary<NumericTypes>(table, "Erf", Make<Erf>());
  AddUnary<FloatTypes>(table, "Sigmoid", Make<Sigmoid>());
  AddUnary<FloatTypes>(table, "Tanh", Make<Tanh>());
  AddUnary<FloatTypes>(table, "Sqrt", Make<Sqrt>());
  AddUnary<FloatTypes>(table, "Exp", Make<Exp>());
  AddUnary<FloatTypes>(table, "Log", Make<Log>());
  AddUnary<FloatTypes>(table, "Ceil", Make<Ceil>());
  AddUnary<FloatTypes>(table, "Floor", Make<Floor>());
  AddUnary<FloatTypes>(table, "Round", Make<Round>());
  AddUnary<FloatTypes>(table, "Reciprocal", Make<Reciprocal>());
  AddUnary<FloatTypes>(table, "Sin", Make<Sin>());
  AddUnary<FloatTypes>(table, "Cos", Make<Cos>());
  AddUnary<FloatTypes>(table, "Tan", Make<Tan>());
  AddUnary<FloatTypes>(table, "Asin", Make<Asin>());
  AddUnary<FloatTypes>(table, "Acos", Make<Acos>());
  AddUnary<FloatTypes>(table, "Atan", Make<Atan>());
  AddUnary<FloatTypes>(table, "Sinh", Make<Sinh>());
  AddUnary<FloatTypes>(table, "Cosh", Make<Cosh>());
  AddUnary<FloatTypes>(table, "Asinh", Make<Asinh>());
  AddUnary<FloatTypes>(table, "Acosh", Make<Acosh>());
  AddUnary<FloatTypes>(table, "Atanh", Make<Atanh>());
  AddPredicate<FloatTypes>(table, "IsNaN", Make<IsNaN>());
  AddPredicate<TypeList<float, double>>(table, "IsInf", [](const ir::OpDesc& op) {
    return IsInf{IntAttr(op, "detect_negative", 1) != 0, IntAttr(op, "detect_positive", 1) != 0};
  });
  AddUnary<FloatTypes>(table, "Celu", [](const ir::OpDesc& op) {
    return Celu{FloatAttr(op, "alpha", 1.0f)};
  });
  AddUnary<FloatTypes>(table, "ThresholdedRelu", [](const ir::OpDesc& op) {
    return ThresholdedRelu{FloatAttr(op, "alpha", 1.0f)};
  });
  AddUnary<NumericTypes>(table, "Shrink", [](const ir::OpDesc& op) {
    return Shrink{FloatAttr(op, "bias", 0.0f), FloatAttr(op, "lambd", 0.5f)};
  });
  AddUnary<FloatTypes>(table, "Softplus", Make<Softplus>());
  AddUnary<FloatTypes>(table, "Softsign", Make<Softsign>());
  AddUnary<FloatTypes>(table, "HardSwish", Make<HardSwish>());
  AddUnary<BoolTypes>(table, "Not", Make<Not>());
  AddUnary<FloatTypes>(table, "HardSigmoid", [](const ir::OpDesc& op) {
    return HardSigmoid{FloatAttr(op, "alpha", 0.2f), FloatAttr(op, "beta", 0.5f)};
  });
  AddUnary<FloatTypes>(table, "LeakyRelu", [](const ir::OpDesc& op) {
    return LeakyRelu{FloatAttr(op, "alpha", 0.01f)};
  });
  AddUnary<FloatTypes>(table, "Elu", [](const ir::OpDesc& op) {
    return Elu{FloatAttr(op, "alpha", 1.0f)};
  });
  AddUnary<FloatTypes>(table, "Selu", [](const ir::OpDesc& op) {
    return Selu{FloatAttr(op, "alpha", 1.67326319217681884765625f),
                FloatAttr(op, "gamma", 1.05070102214813232421875f)};
  });
  table.Add({"Clip",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ClipKernel(op));
             },
             {SetOf(NumericTypes{})},
             {SetOf(NumericTypes{})}});
}

}  // namespace ge::engine::host_cpu
