// cpu_vector conformance generators: unary, binary, variadic, Clip, Where,
// Cast.
#include "tests/unit/runtime/engines/conformance/vector_cases.h"

#include "tests/testing/kernel_test_util.h"

namespace ge::engine::conformance {

Shape RandomShape(Rng& rng, int min_rank, int max_rank, int64_t max_dim, bool allow_empty) {
  const int rank = static_cast<int>(rng.Int(min_rank, max_rank));
  Shape s;
  for (int d = 0; d < rank; ++d) s.push_back(rng.Int(1, max_dim));
  if (allow_empty && rank > 0 && rng.Int(0, 7) == 0) s.set_dim(rng.Int(0, rank - 1), 0);
  return s;
}

Shape BroadcastFrom(Rng& rng, const Shape& out) {
  const int64_t drop = rng.Int(0, out.rank());
  Shape s;
  for (int64_t d = drop; d < out.rank(); ++d) s.push_back(rng.Int(0, 2) == 0 ? 1 : out.dim(d));
  return s;
}

Tensor Values(Rng& rng, DataType dtype, const Shape& shape, double lo, double hi) {
  switch (dtype) {
    case DataType::kBool: return rng.Random(dtype, shape, 0, 1);
    case DataType::kUint8: return rng.Random(dtype, shape, 0, 200);
    case DataType::kInt8: return rng.Random(dtype, shape, -100, 100);
    case DataType::kInt32:
    case DataType::kInt64: return rng.Random(dtype, shape, -1000, 1000);
    default: return rng.Random(dtype, shape, lo, hi);
  }
}

namespace {

bool IsFloat(DataType d) { return d == DataType::kFloat || d == DataType::kDouble || d == DataType::kFloat16; }

VectorCaseGenerator Unary(std::string type, double lo, double hi, std::function<ir::AttrMap(Rng&)> attrs = nullptr) {
  return [=](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 0, 4, 9);
    return cpu_dense::MakeCase(type, {Values(rng, dtype, shape, lo, hi)}, attrs ? attrs(rng) : ir::AttrMap{});
  };
}

// Operands broadcast to a random output shape; `b_lo` keeps divisors away
// from 0 for integer Div and Mod (1..50, with a random sign for signed types).
VectorCaseGenerator Binary(std::string type, bool nonzero_b, double lo = -2.0, double hi = 2.0,
                           ir::AttrMap attrs = {}) {
  return [=](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape out = RandomShape(rng, 0, 4, 7);
    const Shape sa = rng.Int(0, 3) == 0 ? out : BroadcastFrom(rng, out);
    const Shape sb = rng.Int(0, 3) == 0 ? out : BroadcastFrom(rng, out);
    Tensor b = Values(rng, dtype, sb, lo, hi);
    if (nonzero_b && !IsFloat(dtype)) {
      b = rng.Random(dtype, sb, 1, 50);
      if (dtype != DataType::kUint8 && rng.Bool()) {
        Tensor neg = rng.Random(dtype, sb, -50, -1);
        b = rng.Bool() ? neg : b;
      }
    }
    return cpu_dense::MakeCase(type, {Values(rng, dtype, sa, lo, hi), b}, attrs);
  };
}

VectorCaseGenerator Variadic(std::string type) {
  return [=](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape out = RandomShape(rng, 0, 3, 6);
    std::vector<Value> inputs;
    const int n = static_cast<int>(rng.Int(1, 4));
    for (int i = 0; i < n; ++i) inputs.emplace_back(Values(rng, dtype, i == 0 ? out : BroadcastFrom(rng, out)));
    return cpu_dense::MakeCase(type, std::move(inputs));
  };
}

}  // namespace

void AddElementwiseCases(VectorCaseTable& t) {
  for (const char* type : {"Relu", "Neg", "Abs", "Sign", "Sigmoid", "Tanh", "Ceil", "Floor", "Round", "Softsign",
                           "HardSwish", "Not", "Sin", "Cos", "Erf"}) {
    t[type] = Unary(type, -4.0, 4.0);
  }
  t["Exp"] = Unary("Exp", -20.0, 20.0);
  t["Softplus"] = Unary("Softplus", -20.0, 20.0);
  t["Log"] = Unary("Log", 0.01, 10.0);
  t["Sqrt"] = Unary("Sqrt", 0.0, 10.0);
  t["Reciprocal"] = Unary("Reciprocal", 0.5, 4.0);
  t["IsNaN"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    // 0 * inf style NaNs come from Log of negatives: half the values.
    const Shape shape = RandomShape(rng, 1, 3, 8);
    Tensor x = Values(rng, dtype, shape, -1.0, 1.0);
    if (IsFloat(dtype) && x.NumElements() > 0) {
      auto logged = cpu_dense::HostOp("Log", {x});
      if (logged.ok()) x = *logged;
    }
    return cpu_dense::MakeCase("IsNaN", {x});
  };
  t["LeakyRelu"] = Unary("LeakyRelu", -3.0, 3.0, [](Rng& rng) {
    return ir::AttrMap{{"alpha", ir::AttrValue(rng.Float(0.0f, 0.5f))}};
  });
  t["HardSigmoid"] = Unary("HardSigmoid", -5.0, 5.0, [](Rng& rng) {
    return ir::AttrMap{{"alpha", ir::AttrValue(rng.Float(0.1f, 0.5f))}, {"beta", ir::AttrValue(rng.Float(0.2f, 0.7f))}};
  });
  t["Elu"] = Unary("Elu", -5.0, 3.0, [](Rng& rng) { return ir::AttrMap{{"alpha", ir::AttrValue(rng.Float(0.5f, 2.0f))}}; });
  t["Clip"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 0, 4, 8);
    std::vector<Value> inputs = {Values(rng, dtype, shape)};
    const int64_t bounds = rng.Int(0, 2);
    Tensor lo = Values(rng, dtype, Shape{}, -1.0, 0.0);
    Tensor hi = Values(rng, dtype, Shape{}, 0.0, 1.0);
    if (bounds >= 1) inputs.emplace_back(lo);
    if (bounds >= 2) inputs.emplace_back(hi);
    return cpu_dense::MakeCase("Clip", std::move(inputs));
  };

  for (const char* type : {"Add", "Sub", "Mul", "PRelu", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                           "And", "Or", "Xor"}) {
    t[type] = Binary(type, false);
  }
  t["Div"] = Binary("Div", true);
  t["Pow"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    // A third of the cases raise signed bases to a scalar 2 or 3 (the
    // kernel's products for a constant square or cube).
    if (rng.Int(0, 2) == 0) {
      const Shape out = RandomShape(rng, 0, 4, 9);
      const Shape e = rng.Bool() ? Shape{} : Shape{1};
      return cpu_dense::MakeCase(
          "Pow", {Values(rng, dtype, out, -3.0, 3.0), test::MakeTensor(dtype, {rng.Bool() ? 2.0 : 3.0}, e)});
    }
    return Binary("Pow", false, 0.1, 3.0)(rng, dtype);
  };
  t["PRelu"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {  // the slope broadcasts to X only
    const Shape x = RandomShape(rng, 1, 4, 6);
    return cpu_dense::MakeCase("PRelu", {Values(rng, dtype, x), Values(rng, dtype, BroadcastFrom(rng, x))});
  };
  t["Mod"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const bool fmod = IsFloat(dtype) || rng.Bool();
    return Binary("Mod", true, -5.0, 5.0, {{"fmod", ir::AttrValue(int64_t{fmod ? 1 : 0})}})(rng, dtype);
  };
  t["Max"] = Variadic("Max");
  t["Min"] = Variadic("Min");
  t["Where"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape out = RandomShape(rng, 0, 4, 6);
    return cpu_dense::MakeCase("Where", {Values(rng, DataType::kBool, BroadcastFrom(rng, out)),
                                         Values(rng, dtype, rng.Bool() ? out : BroadcastFrom(rng, out)),
                                         Values(rng, dtype, BroadcastFrom(rng, out))});
  };
  t["Cast"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    static const std::vector<DataType> kTo = {DataType::kFloat, DataType::kDouble, DataType::kFloat16,
                                              DataType::kInt32, DataType::kInt64, DataType::kInt8,
                                              DataType::kUint8, DataType::kBool};
    const DataType to = rng.Pick(kTo);
    const Shape shape = RandomShape(rng, 0, 3, 9);
    Tensor x = Values(rng, dtype, shape, -300.0, 300.0);
    return cpu_dense::MakeCase("Cast", {x}, {{"to", ir::AttrValue(static_cast<int64_t>(to))}},
                               test::DefaultTolerance(to));
  };
}

}  // namespace ge::engine::conformance
