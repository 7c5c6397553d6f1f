// cpu_vector conformance generator of `_FusedElementwise`: random programs
// of 1 to 10 ops (unary with attributes, binary against extra inputs that
// broadcast, values read again) over random shapes, some of several
// blocks and some empty; the reference runs the same ops one by one on
// host_cpu. Rounding-sensitive ops (Floor, Ceil, Round) and ops whose
// domain a random program can leave (Log, Sqrt, Pow) are covered by the
// bit-exact unit tests against cpu_vector's single ops instead.
#include "runtime/engines/cpu_vector/fused_elementwise.h"
#include "tests/unit/runtime/engines/conformance/vector_cases.h"

namespace ge::engine::conformance {
namespace {

struct Unary {
  const char* type;
  const char* alpha;  // attribute names, or null
  const char* beta;
};

constexpr Unary kUnary[] = {
    {"Relu", nullptr, nullptr},    {"Neg", nullptr, nullptr},       {"Abs", nullptr, nullptr},
    {"Sigmoid", nullptr, nullptr}, {"Tanh", nullptr, nullptr},      {"Sin", nullptr, nullptr},
    {"Cos", nullptr, nullptr},     {"Softsign", nullptr, nullptr},  {"HardSwish", nullptr, nullptr},
    {"Erf", nullptr, nullptr},     {"LeakyRelu", "alpha", nullptr}, {"HardSigmoid", "alpha", "beta"},
    {"Elu", "alpha", nullptr}};
constexpr const char* kBinary[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};

std::optional<Case> FusedCase(Rng& rng, DataType dtype) {
  if (dtype != DataType::kFloat) return std::nullopt;
  const Shape out = rng.Int(0, 3) == 0 ? Shape({rng.Int(1, 3), rng.Int(100, 400)}) : RandomShape(rng, 0, 4, 7);
  std::vector<Value> inputs = {Values(rng, dtype, out)};
  const int extra = static_cast<int>(rng.Int(0, 3));
  for (int i = 0; i < extra; ++i) {
    const Shape s = rng.Int(0, 2) == 0 ? out : BroadcastFrom(rng, out);
    inputs.push_back(Values(rng, dtype, s, 0.5, 2.0));  // divisors away from 0
  }
  const int64_t n_in = static_cast<int64_t>(inputs.size());
  std::vector<std::string> ops;
  std::vector<int64_t> args;
  std::vector<float> alphas, betas;
  std::vector<ir::AttrMap> attrs;
  const int steps = static_cast<int>(rng.Int(1, 10));
  int64_t value = 0;  // the running value (input 0 first)
  int next_extra = 1;
  for (int k = 0; k < steps || next_extra < n_in; ++k) {
    const int64_t self = n_in + static_cast<int64_t>(ops.size());
    ir::AttrMap a;
    float alpha = 0.0f, beta = 0.0f;
    if (next_extra < n_in || rng.Int(0, 2) == 0) {
      ops.push_back(kBinary[rng.Int(0, 5)]);
      // The other operand: an unused extra input, else any earlier value
      // of the extra inputs or the program.
      int64_t other = next_extra < n_in ? next_extra++ : (self > 1 ? rng.Int(1, self - 1) : 0);
      if (other == 0) other = value;
      // Divisors: extra inputs only (bounded away from 0).
      if (ops.back() == std::string("Div") && other >= n_in) ops.back() = "Mul";
      const bool swap = ops.back() != std::string("Div") && rng.Bool();
      args.push_back(swap ? other : value);
      args.push_back(swap ? value : other);
    } else {
      const Unary& u = kUnary[rng.Int(0, std::size(kUnary) - 1)];
      ops.push_back(u.type);
      args.push_back(value);
      args.push_back(-1);
      if (u.alpha != nullptr) a[u.alpha] = alpha = rng.Float(0.05f, 0.9f);
      if (u.beta != nullptr) a[u.beta] = beta = rng.Float(0.1f, 0.6f);
    }
    alphas.push_back(alpha);
    betas.push_back(beta);
    attrs.push_back(std::move(a));
    value = self;
  }
  Case c = cpu_dense::MakeCase(std::string(cpu_vector::kFusedElementwiseOp), inputs,
                               {{"ops", ops}, {"args", args}, {"alphas", alphas}, {"betas", betas}},
                               test::Tolerance{1e-5, 1e-4});
  c.reference = [=]() -> absl::StatusOr<Tensor> {
    std::vector<Value> values = inputs;
    for (size_t k = 0; k < ops.size(); ++k) {
      std::vector<Value> in = {values[args[2 * k]]};
      if (args[2 * k + 1] >= 0) in.push_back(values[args[2 * k + 1]]);
      GE_ASSIGN_OR_RETURN(Tensor y, test::RunOp1(cpu_dense::Host(), ops[k], in, attrs[k]));
      values.push_back(y);
    }
    return values.back().tensor();
  };
  return c;
}

}  // namespace

void AddFusedElementwiseCases(VectorCaseTable& table) {
  table[std::string(cpu_vector::kFusedElementwiseOp)] = FusedCase;
}

}  // namespace ge::engine::conformance
