// Element-wise kernels: unary math and activations, Clip, binary
// arithmetic / comparison / logic with numpy broadcasting, variadic Max and
// Min, Where and Cast.
//
// Each kernel binds its ISA function once (at creation or Prepare, by
// dtype). Compute takes one of three paths: same-size operands or a
// 1-element operand run as one flat loop (the static tiny-tensor path: no
// plan, no allocation, no threads), anything else walks a broadcast plan
// built at Prepare (rebuilt only when Compute sees other shapes).
#include <cstring>
#include <tuple>

#include "base/status.h"
#include "runtime/engines/cpu_vector/elementwise_ops.h"
#include "runtime/engines/cpu_vector/vector_kernel.h"
#include "runtime/engines/sdk/broadcast.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_vector {
namespace {

using sdk::DataTypeSet;

// ---- Unary ----

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(const ir::OpDesc& op, UnaryOp kind, UnaryParams params, int64_t cost)
      : kind_(kind), params_(params), cost_(cost), op_(op) {}

  // Known shapes fix the element count and sizes once (the executors
  // prepare again whenever input shapes change).
  absl::Status Prepare(PrepareContext& ctx) override {
    prepared_ = false;
    if (ctx.input_types.empty() || !ctx.input_types[0].is_tensor() || ctx.output_types.empty() ||
        !ctx.output_types[0].is_tensor()) {
      return absl::OkStatus();
    }
    const ir::ValueType& in = ctx.input_types[0];
    const ir::ValueType& out = ctx.output_types[0];
    if (!Bind(in.dtype())) return absl::OkStatus();
    if (in.shape().IsFullyKnown() && out.shape().IsFullyKnown() && out.dtype() != DataType::kUndefined) {
      elements_ = in.shape().NumElementsUnchecked();
      prepared_ = out.shape().NumElementsUnchecked() == elements_;
      in_size_ = DataTypeSize(in.dtype());
      out_size_ = DataTypeSize(out.dtype());
    }
    return absl::OkStatus();
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != dtype_) {
      prepared_ = false;
      if (!Bind(x.dtype())) return NodeError(op_, "dtype ", DataTypeName(x.dtype()), " is not supported");
    }
    // Counts from Prepare only on the static path, whose plan fixed the
    // shapes; dynamic executors may prepare with declared types.
    Tensor* planned = ctx.planned_output(0);
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    int64_t n = elements_;
    size_t in_size = in_size_, out_size = out_size_;
    if (!prepared_ || planned == nullptr) {
      n = x.NumElements();
      if (y->NumElements() != n) return NodeError(op_, "output has ", y->NumElements(), " elements, input ", n);
      in_size = DataTypeSize(x.dtype());
      out_size = DataTypeSize(y->dtype());
    }
    const char* px = static_cast<const char*>(x.raw_data());
    char* py = static_cast<char*>(y->raw_data());
    const UnaryFn fn = fn_;
    Split(ctx, n, cost_, [&](int64_t b, int64_t e) { fn(px + b * in_size, py + b * out_size, e - b, params_); });
    return absl::OkStatus();
  }

 private:
  bool Bind(DataType d) {
    auto v = ToVDt(d);
    if (!v || Kernels().unary[int(kind_)][int(*v)] == nullptr) return false;
    fn_ = Kernels().unary[int(kind_)][int(*v)];
    dtype_ = d;
    return true;
  }

  // What Compute reads first, next to the vtable pointer: a static walk
  // over thousands of kernels touches one or two cache lines of each.
  UnaryFn fn_ = nullptr;
  DataType dtype_ = DataType::kUndefined;
  bool prepared_ = false;  // elements_ and the sizes hold for the current shapes
  int64_t elements_ = 0;
  size_t in_size_ = 0, out_size_ = 0;
  UnaryOp kind_;
  UnaryParams params_;
  int64_t cost_;
  ir::OpDesc op_;  // for errors only
};

// The dtypes `kind` has loops for, from the table itself.
DataTypeSet UnarySet(UnaryOp kind) {
  DataTypeSet set;
  for (DataType d : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32, DataType::kInt64,
                     DataType::kInt8, DataType::kUint8, DataType::kBool}) {
    if (Kernels().unary[int(kind)][int(*ToVDt(d))] != nullptr) set = set | DataTypeSet{d};
  }
  return set;
}

using ParamsFn = std::function<UnaryParams(const ir::OpDesc&)>;

void AddUnary(VectorKernelTable& table, std::string type, UnaryOp kind, int64_t cost, ParamsFn params = nullptr) {
  const DataTypeSet set = UnarySet(kind);
  table.Add({std::move(type),
             [set](const ir::OpDesc& op) { return CheckInputDtype(op, 0, set); },
             [kind, cost, params](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new UnaryKernel(op, kind, params ? params(op) : UnaryParams{}, cost));
             }});
}

// Clip: bounds are optional scalar inputs of X's dtype, read per Compute
// (two loads) unless absent.
class ClipKernel final : public Kernel {
 public:
  explicit ClipKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto v = ToVDt(x.dtype());
    const UnaryFn fn = v ? Kernels().unary[int(UnaryOp::kClip)][int(*v)] : nullptr;
    if (fn == nullptr) return NodeError(op_, "dtype ", DataTypeName(x.dtype()), " is not supported");
    UnaryParams p;
    p.lo = -__builtin_inf();
    p.hi = __builtin_inf();
    const bool is_float = x.dtype() == DataType::kFloat || x.dtype() == DataType::kDouble || x.dtype() == DataType::kFloat16;
    p.ilo = x.dtype() == DataType::kUint8 ? 0 : (x.dtype() == DataType::kInt8 ? -128 : (x.dtype() == DataType::kInt32 ? INT32_MIN : INT64_MIN));
    p.ihi = x.dtype() == DataType::kUint8 ? 255 : (x.dtype() == DataType::kInt8 ? 127 : (x.dtype() == DataType::kInt32 ? INT32_MAX : INT64_MAX));
    for (int i = 1; i <= 2; ++i) {
      if (!ctx.has_input(i)) continue;
      const Tensor& bound = ctx.input(i);
      if (bound.NumElements() != 1 || bound.dtype() != x.dtype()) {
        return NodeError(op_, "input ", i, " must be a scalar of dtype ", DataTypeName(x.dtype()));
      }
      if (is_float) {
        (i == 1 ? p.lo : p.hi) = bound.GetAsDouble(0);
      } else {
        (i == 1 ? p.ilo : p.ihi) = bound.GetAsInt64(0);
      }
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const int64_t n = x.NumElements();
    if (y.NumElements() != n) return NodeError(op_, "output size differs from the input's");
    const size_t size = DataTypeSize(x.dtype());
    const char* px = static_cast<const char*>(x.raw_data());
    char* py = static_cast<char*>(y.raw_data());
    Split(ctx.num_threads(), n, 1, [&](int64_t b, int64_t e) { fn(px + b * size, py + b * size, e - b, p); });
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

// ---- Binary (and variadic) ----

// out = op(a, b) over `out`'s shape; the plan is cached by operand shapes.
class BroadcastRunner {
 public:
  // `static_path`: `out` is the static plan's tensor, so the shapes Plan saw
  // are the ones running (dynamic executors may prepare with declared types).
  absl::Status Run(const ir::OpDesc& op, BinaryFn fn, const Tensor& a, const Tensor& b, const Tensor& out,
                   ExecuteContext& ctx, int64_t cost, bool static_path = false) {
    // Counts and sizes from Plan (the executors plan again when shapes
    // change), else from the tensors.
    const bool counted = planned_ && counts_.n >= 0 && static_path;
    const int64_t n = counted ? counts_.n : out.NumElements();
    if (n == 0) return absl::OkStatus();
    const size_t es = counted ? counts_.es : DataTypeSize(a.dtype());
    const size_t os = counted ? counts_.os : DataTypeSize(out.dtype());
    const char* pa = static_cast<const char*>(a.raw_data());
    const char* pb = static_cast<const char*>(b.raw_data());
    char* po = static_cast<char*>(out.raw_data());
    const int64_t na = counted ? counts_.na : a.NumElements();
    const int64_t nb = counted ? counts_.nb : b.NumElements();
    if ((na == n || na == 1) && (nb == n || nb == 1)) {
      const int64_t sa = na == n ? 1 : 0;
      const int64_t sb = nb == n ? 1 : 0;
      Split(ctx, n, cost, [&](int64_t s, int64_t e) {
        fn(pa + s * sa * es, sa, pb + s * sb * es, sb, po + s * os, e - s);
      });
      return absl::OkStatus();
    }
    const int threads = ctx.num_threads();
    if (!planned_ || a.shape() != a_shape_ || b.shape() != b_shape_ || out.shape() != out_shape_) {
      GE_RETURN_IF_ERROR(sdk::CheckBroadcastsTo(op, a.shape(), 0, out.shape()));
      GE_RETURN_IF_ERROR(sdk::CheckBroadcastsTo(op, b.shape(), 1, out.shape()));
      plan_ = sdk::MakeBroadcastPlan(out.shape().span(), {a.shape().span(), b.shape().span()});
      a_shape_ = a.shape();
      b_shape_ = b.shape();
      out_shape_ = out.shape();
      counts_ = {};
      planned_ = true;
    }
    const int64_t sa = plan_.inner_stride(0);
    const int64_t sb = plan_.inner_stride(1);
    sdk::ParallelRows<2>(threads, plan_, cost, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t m) {
      fn(pa + off[0] * es, sa, pb + off[1] * es, sb, po + o * os, m);
    });
    return absl::OkStatus();
  }

  // Builds the plan ahead of Compute when the shapes are known.
  void Plan(const ir::ValueType& a, const ir::ValueType& b, const ir::ValueType& out) {
    planned_ = false;
    if (!a.shape().IsFullyKnown() || !b.shape().IsFullyKnown() || !out.shape().IsFullyKnown()) return;
    plan_ = sdk::MakeBroadcastPlan(out.shape().span(), {a.shape().span(), b.shape().span()});
    a_shape_ = a.shape();
    b_shape_ = b.shape();
    out_shape_ = out.shape();
    counts_ = {};
    if (a.dtype() != DataType::kUndefined && out.dtype() != DataType::kUndefined) {
      counts_ = {out.shape().NumElementsUnchecked(), a.shape().NumElementsUnchecked(),
                 b.shape().NumElementsUnchecked(), DataTypeSize(a.dtype()), DataTypeSize(out.dtype())};
    }
    planned_ = true;
  }

 private:
  struct Counts {
    int64_t n = -1, na = 0, nb = 0;  // n < 0: not counted
    size_t es = 0, os = 0;
  };
  bool planned_ = false;
  Counts counts_;
  Shape a_shape_, b_shape_, out_shape_;
  sdk::BroadcastPlan plan_;
};

bool IsIntDtype(DataType d) {
  return d == DataType::kInt32 || d == DataType::kInt64 || d == DataType::kInt8 || d == DataType::kUint8;
}

absl::Status CheckNoZero(const ir::OpDesc& op, const Tensor& t) {
  const char* p = static_cast<const char*>(t.raw_data());
  const size_t es = DataTypeSize(t.dtype());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    bool zero = true;
    for (size_t k = 0; k < es; ++k) zero = zero && p[i * es + k] == 0;
    if (zero) return NodeError(op, "integer division by zero (divisor element ", i, ")");
  }
  return absl::OkStatus();
}

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const ir::OpDesc& op, BinaryOp kind, int64_t cost) : kind_(kind), cost_(cost), op_(op) {}

  absl::Status Prepare(PrepareContext& ctx) override {
    if (ctx.input_types.size() >= 2 && ctx.output_types.size() >= 1 && ctx.input_types[0].is_tensor() &&
        ctx.input_types[1].is_tensor() && ctx.output_types[0].is_tensor()) {
      Bind(ctx.input_types[0].dtype());
      runner_.Plan(ctx.input_types[0], ctx.input_types[1], ctx.output_types[0]);
    }
    return absl::OkStatus();
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != dtype_ && !Bind(a.dtype())) return NodeError(op_, "dtype ", DataTypeName(a.dtype()), " is not supported");
    if (b.dtype() != a.dtype()) return NodeError(op_, "input 1 has dtype ", DataTypeName(b.dtype()), ", input 0 ", DataTypeName(a.dtype()));
    if (divides_) GE_RETURN_IF_ERROR(CheckNoZero(op_, b));
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * out, OutputOf(ctx, 0, holder));
    return runner_.Run(op_, fn_, a, b, *out, ctx, cost_, /*static_path=*/out != &holder);
  }

 private:
  bool Bind(DataType d) {
    auto v = ToVDt(d);
    if (!v || Kernels().binary[int(kind_)][int(*v)] == nullptr) return false;
    fn_ = Kernels().binary[int(kind_)][int(*v)];
    dtype_ = d;
    divides_ = IsIntDtype(d) && (kind_ == BinaryOp::kDiv || kind_ == BinaryOp::kMod || kind_ == BinaryOp::kFmod);
    return true;
  }

  // Hot fields first (see UnaryKernel); the runner's counts follow them.
  BinaryFn fn_ = nullptr;
  DataType dtype_ = DataType::kUndefined;
  bool divides_ = false;
  BinaryOp kind_;
  int64_t cost_;
  BroadcastRunner runner_;
  ir::OpDesc op_;  // for errors only
};

DataTypeSet BinarySet(BinaryOp kind) {
  DataTypeSet set;
  for (DataType d : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32, DataType::kInt64,
                     DataType::kInt8, DataType::kUint8, DataType::kBool}) {
    if (Kernels().binary[int(kind)][int(*ToVDt(d))] != nullptr) set = set | DataTypeSet{d};
  }
  return set;
}

absl::Status CheckSameDtypes(const ir::OpDesc& op, DataTypeSet set) {
  if (op.num_inputs() < 1) return Unsupported(op, "it has no inputs");
  for (int i = 0; i < op.num_inputs(); ++i) {
    GE_RETURN_IF_ERROR(CheckInputDtype(op, i, set));
    if (InputDtype(op, i) != InputDtype(op, 0)) return Unsupported(op, "inputs of different dtypes");
  }
  return absl::OkStatus();
}

void AddBinary(VectorKernelTable& table, std::string type, BinaryOp kind, int64_t cost = 1) {
  const DataTypeSet set = BinarySet(kind);
  table.Add({std::move(type),
             [set](const ir::OpDesc& op) {
               if (op.num_inputs() != 2) return Unsupported(op, "it takes two inputs");
               return CheckSameDtypes(op, set);
             },
             [kind, cost](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new BinaryKernel(op, kind, cost));
             }});
}

// Max / Min over any number of inputs: out = op(in0, in1), then
// out = op(out, in_k), which keeps host_cpu's left-to-right NaN rules.
class VariadicKernel final : public Kernel {
 public:
  VariadicKernel(const ir::OpDesc& op, BinaryOp kind) : op_(op), kind_(kind) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const int n = ctx.num_inputs();
    const Tensor& a = ctx.input(0);
    auto v = ToVDt(a.dtype());
    const BinaryFn fn = v ? Kernels().binary[int(kind_)][int(*v)] : nullptr;
    if (fn == nullptr) return NodeError(op_, "dtype ", DataTypeName(a.dtype()), " is not supported");
    for (int i = 1; i < n; ++i) {
      if (ctx.input(i).dtype() != a.dtype()) return NodeError(op_, "inputs of different dtypes");
    }
    // The planned output on the static path (no shape or buffer copy).
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * planned, OutputOf(ctx, 0, holder));
    const Tensor& out = *planned;
    if (runners_.size() < static_cast<size_t>(std::max(1, n - 1))) runners_.resize(std::max(1, n - 1));
    if (n == 1) {
      GE_RETURN_IF_ERROR(sdk::CheckBroadcastsTo(op_, a.shape(), 0, out.shape()));
      return runners_[0].Run(op_, fn, a, a, out, ctx, 1);
    }
    GE_RETURN_IF_ERROR(runners_[0].Run(op_, fn, a, ctx.input(1), out, ctx, 1));
    for (int i = 2; i < n; ++i) GE_RETURN_IF_ERROR(runners_[i - 1].Run(op_, fn, out, ctx.input(i), out, ctx, 1));
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  BinaryOp kind_;
  std::vector<BroadcastRunner> runners_;
};

void AddVariadic(VectorKernelTable& table, std::string type, BinaryOp kind) {
  const DataTypeSet set = BinarySet(kind);
  table.Add({std::move(type), [set](const ir::OpDesc& op) { return CheckSameDtypes(op, set); },
             [kind](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new VariadicKernel(op, kind));
             }});
}

// ---- Where ----

class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    if (c.dtype() != DataType::kBool || x.dtype() != y.dtype()) return NodeError(op_, "bad input dtypes");
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    const int64_t n = out.NumElements();
    if (n == 0) return absl::OkStatus();
    for (int i = 0; i < 3; ++i) GE_RETURN_IF_ERROR(sdk::CheckBroadcastsTo(op_, ctx.input(i).shape(), i, out.shape()));
    const size_t es = DataTypeSize(x.dtype());
    const int size_index = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3;
    const WhereFn fn = Kernels().where[size_index];
    const bool* pc = c.data<bool>();
    const char* px = static_cast<const char*>(x.raw_data());
    const char* py = static_cast<const char*>(y.raw_data());
    char* po = static_cast<char*>(out.raw_data());
    if (c.shape() != shape_[0] || x.shape() != shape_[1] || y.shape() != shape_[2] || out.shape() != shape_[3]) {
      plan_ = sdk::MakeBroadcastPlan(out.shape().span(), {c.shape().span(), x.shape().span(), y.shape().span()});
      shape_ = {c.shape(), x.shape(), y.shape(), out.shape()};
    }
    const int64_t sc = plan_.inner_stride(0), sx = plan_.inner_stride(1), sy = plan_.inner_stride(2);
    sdk::ParallelRows<3>(ctx.num_threads(), plan_, 1, [&](int64_t o, const std::array<int64_t, 3>& off, int64_t m) {
      fn(pc + off[0], sc, px + off[1] * es, sx, py + off[2] * es, sy, po + o * es, m);
    });
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  std::array<Shape, 4> shape_{Shape::UnknownRank(), Shape::UnknownRank(), Shape::UnknownRank(), Shape::UnknownRank()};
  sdk::BroadcastPlan plan_;
};

// ---- Cast ----

class CastKernel final : public Kernel {
 public:
  CastKernel(const ir::OpDesc& op, DataType to) : op_(op), to_(to) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto s = ToVDt(x.dtype());
    auto d = ToVDt(to_);
    if (!s || !d) return NodeError(op_, "cast from ", DataTypeName(x.dtype()), " is not supported");
    const CastFn fn = Kernels().cast[int(*s)][int(*d)];
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const int64_t n = x.NumElements();
    if (y.NumElements() != n || y.dtype() != to_) return NodeError(op_, "output does not match the input");
    const size_t in = DataTypeSize(x.dtype()), out = DataTypeSize(to_);
    const char* px = static_cast<const char*>(x.raw_data());
    char* py = static_cast<char*>(y.raw_data());
    Split(ctx.num_threads(), n, 2, [&](int64_t b, int64_t e) { fn(px + b * in, py + b * out, e - b); });
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  DataType to_;
};

constexpr DataTypeSet kCastSet = kNumericSet | kBoolSet;

}  // namespace

void RegisterElementwiseKernels(VectorKernelTable& table) {
  AddUnary(table, "Relu", UnaryOp::kRelu, 1);
  AddUnary(table, "Neg", UnaryOp::kNeg, 1);
  AddUnary(table, "Abs", UnaryOp::kAbs, 1);
  AddUnary(table, "Sign", UnaryOp::kSign, 1);
  AddUnary(table, "Sigmoid", UnaryOp::kSigmoid, 4);
  AddUnary(table, "Tanh", UnaryOp::kTanh, 4);
  AddUnary(table, "Exp", UnaryOp::kExp, 4);
  AddUnary(table, "Log", UnaryOp::kLog, 16);
  AddUnary(table, "Sqrt", UnaryOp::kSqrt, 2);
  AddUnary(table, "Erf", UnaryOp::kErf, 16);
  AddUnary(table, "Ceil", UnaryOp::kCeil, 1);
  AddUnary(table, "Floor", UnaryOp::kFloor, 1);
  AddUnary(table, "Round", UnaryOp::kRound, 1);
  AddUnary(table, "Reciprocal", UnaryOp::kReciprocal, 2);
  AddUnary(table, "Sin", UnaryOp::kSin, 16);
  AddUnary(table, "Cos", UnaryOp::kCos, 16);
  AddUnary(table, "Softplus", UnaryOp::kSoftplus, 16);
  AddUnary(table, "Softsign", UnaryOp::kSoftsign, 2);
  AddUnary(table, "HardSwish", UnaryOp::kHardSwish, 2);
  AddUnary(table, "Not", UnaryOp::kNot, 1);
  AddUnary(table, "IsNaN", UnaryOp::kIsNaN, 1);
  // Attributes as the fused programs read them (elementwise_ops.h).
  for (auto [type, kind, cost] :
       {std::tuple{"LeakyRelu", UnaryOp::kLeakyRelu, 1}, std::tuple{"HardSigmoid", UnaryOp::kHardSigmoid, 1},
        std::tuple{"Elu", UnaryOp::kElu, 4}}) {
    AddUnary(table, type, kind, cost, [kind](const ir::OpDesc& op) { return ReadUnaryParams(op, kind); });
  }
  const DataTypeSet clip_set = UnarySet(UnaryOp::kClip);
  table.Add({"Clip",
             [clip_set](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, clip_set));
               for (int i = 1; i < op.num_inputs(); ++i) {
                 GE_RETURN_IF_ERROR(CheckInputDtype(op, i, DataTypeSet{InputDtype(op, 0)}, /*optional=*/true));
               }
               return absl::OkStatus();
             },
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ClipKernel(op));
             }});

  AddBinary(table, "Add", BinaryOp::kAdd);
  AddBinary(table, "Sub", BinaryOp::kSub);
  AddBinary(table, "Mul", BinaryOp::kMul);
  AddBinary(table, "Div", BinaryOp::kDiv, 2);
  AddBinary(table, "Pow", BinaryOp::kPow, 16);
  AddBinary(table, "PRelu", BinaryOp::kPRelu);
  AddBinary(table, "Equal", BinaryOp::kEqual);
  AddBinary(table, "Less", BinaryOp::kLess);
  AddBinary(table, "Greater", BinaryOp::kGreater);
  AddBinary(table, "LessOrEqual", BinaryOp::kLessOrEqual);
  AddBinary(table, "GreaterOrEqual", BinaryOp::kGreaterOrEqual);
  AddBinary(table, "And", BinaryOp::kAnd);
  AddBinary(table, "Or", BinaryOp::kOr);
  AddBinary(table, "Xor", BinaryOp::kXor);
  AddVariadic(table, "Max", BinaryOp::kMax);
  AddVariadic(table, "Min", BinaryOp::kMin);
  const DataTypeSet mod_set = BinarySet(BinaryOp::kFmod);
  table.Add({"Mod",
             [mod_set](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckSameDtypes(op, mod_set));
               const bool fmod = sdk::IntAttr(op, "fmod", 0) == 1;
               if (!fmod && !IsIntDtype(InputDtype(op, 0))) return Unsupported(op, "fmod=0 needs integers");
               return absl::OkStatus();
             },
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               const int64_t fmod = sdk::IntAttr(op, "fmod", 0);
               if (fmod != 0 && fmod != 1) return NodeError(op, "attribute fmod must be 0 or 1, got ", fmod);
               return std::unique_ptr<Kernel>(new BinaryKernel(op, fmod == 1 ? BinaryOp::kFmod : BinaryOp::kMod, 4));
             }});
  table.Add({"Where",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kBoolSet));
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 1, kCopySet));
               return CheckInputDtype(op, 2, DataTypeSet{InputDtype(op, 1)});
             },
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new WhereKernel(op));
             }});
  table.Add({"Cast",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCastSet));
               const DataType to = static_cast<DataType>(sdk::IntAttr(op, "to", 0));
               if (!kCastSet.Contains(to)) return Unsupported(op, "cast to ", DataTypeName(to), " is not supported");
               return absl::OkStatus();
             },
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               const int64_t to = sdk::IntAttr(op, "to", 0);
               if (!IsValidDataType(static_cast<int32_t>(to)))
                 return NodeError(op, "attribute to is not a dtype: ", to);
               return std::unique_ptr<Kernel>(new CastKernel(op, static_cast<DataType>(to)));
             }});
}

}  // namespace ge::engine::cpu_vector
