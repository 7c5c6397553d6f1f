// Conformance cases of `_FusedAttention` and `_FusedAddLayerNorm`: random
// batch and head dims, sequence lengths from 0, head sizes, masks of every
// broadcast form, scales that multiply or divide, K given either way; norms
// over one or more trailing axes with any subset of bias and residuals.
#include "tests/unit/runtime/engines/conformance/fused_cases.h"

#include "runtime/engines/cpu_fused/fused_ops.h"

namespace ge::engine::conformance {
namespace {

using cpu_dense::Case;
using cpu_dense::Host;
using cpu_dense::Rng;
using test::RunOp1;

constexpr test::Tolerance kTolerance{2e-5, 1e-4};

Tensor Floats(Rng& rng, const std::vector<int64_t>& dims, double lo = -1.0, double hi = 1.0) {
  return test::RandomTensor(DataType::kFloat, Shape(dims), rng.Int(0, 1 << 30), lo, hi);
}

std::vector<int64_t> With(std::vector<int64_t> dims, int64_t a, int64_t b) {
  dims.push_back(a);
  dims.push_back(b);
  return dims;
}

Case AttentionCase(Rng& rng) {
  std::vector<int64_t> batch;
  const int rank = static_cast<int>(rng.Int(2, 4));
  for (int i = 2; i < rank; ++i) batch.push_back(rng.Int(i == 2 && rng.Int(0, 9) == 0 ? 0 : 1, 4));
  const int64_t sq = rng.Int(0, 9) == 0 ? 0 : rng.Int(1, 40), sk = rng.Int(1, 40);
  const int64_t d = rng.Int(1, 70), dv = rng.Int(1, 70);
  const bool k_transposed = rng.Bool();
  const int scale = static_cast<int>(rng.Int(0, 2));  // none, multiply, divide
  std::vector<int64_t> mask;
  switch (rng.Int(0, 3)) {
    case 0: break;
    case 1: mask = With(batch, sq, sk); break;
    case 2: mask = {sk}; break;
    default: mask = {sq, 1}; break;
  }
  const Tensor q = Floats(rng, With(batch, sq, d));
  const Tensor k = Floats(rng, k_transposed ? With(batch, d, sk) : With(batch, sk, d));
  const Tensor v = Floats(rng, With(batch, sk, dv));
  const Tensor s = Floats(rng, {1}, 0.2, 3.0);
  const Tensor m = mask.empty() ? Tensor() : Floats(rng, mask, -4.0, 0.0);
  std::vector<Value> inputs = {q, k, v};
  if (scale != 0 || !mask.empty()) inputs.push_back(scale != 0 ? Value(s) : Value());
  if (!mask.empty()) inputs.push_back(m);
  Case c = cpu_dense::MakeCase(std::string(cpu_fused::kFusedAttentionOp), inputs,
                               {{std::string(cpu_fused::kAttrKTransposed), int64_t{k_transposed}},
                                {std::string(cpu_fused::kAttrScaleDivides), int64_t{scale == 2}}},
                               kTolerance);
  c.reference = [=]() -> absl::StatusOr<Tensor> {
    Tensor kt = k;
    if (!k_transposed) {
      std::vector<int64_t> perm;
      for (int i = 0; i < rank; ++i) perm.push_back(i);
      std::swap(perm[rank - 1], perm[rank - 2]);
      GE_ASSIGN_OR_RETURN(kt, RunOp1(Host(), "Transpose", {k}, {{"perm", ir::AttrValue(perm)}}));
    }
    GE_ASSIGN_OR_RETURN(Tensor scores, RunOp1(Host(), "MatMul", {q, kt}));
    if (scale != 0) {
      GE_ASSIGN_OR_RETURN(scores, RunOp1(Host(), scale == 2 ? "Div" : "Mul", {scores, s}));
    }
    if (!mask.empty()) {
      GE_ASSIGN_OR_RETURN(scores, RunOp1(Host(), "Add", {scores, m}));
    }
    GE_ASSIGN_OR_RETURN(Tensor p, RunOp1(Host(), "Softmax", {scores}, {{"axis", int64_t{-1}}}));
    return RunOp1(Host(), "MatMul", {p, v});
  };
  return c;
}

Case AddLayerNormCase(Rng& rng) {
  const int rank = static_cast<int>(rng.Int(1, 4));
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) dims.push_back(rng.Int(i == 0 && rng.Int(0, 9) == 0 ? 0 : 1, i + 1 == rank ? 96 : 6));
  const int64_t axis = rng.Int(-rank, rank - 1);
  const int64_t a = axis < 0 ? axis + rank : axis;
  const std::vector<int64_t> norm(dims.begin() + a, dims.end());
  const bool bias = rng.Bool(), residual = rng.Bool(), post = rng.Bool();
  const float epsilon = rng.Bool() ? 1e-5f : 1e-12f;
  const Tensor x = Floats(rng, dims, -3.0, 3.0), g = Floats(rng, norm, 0.5, 2.0), b = Floats(rng, norm);
  const Tensor r = Floats(rng, dims), p = Floats(rng, dims);
  std::vector<Value> inputs = {x, g, bias ? Value(b) : Value(), residual ? Value(r) : Value(), post ? Value(p) : Value()};
  while (inputs.size() > 2 && inputs.back().is_none()) inputs.pop_back();
  const ir::AttrMap attrs = {{"axis", axis}, {"epsilon", epsilon}};
  Case c = cpu_dense::MakeCase(std::string(cpu_fused::kFusedAddLayerNormOp), inputs, attrs, kTolerance);
  c.reference = [=]() -> absl::StatusOr<Tensor> {
    Tensor sum = x;
    if (residual) {
      GE_ASSIGN_OR_RETURN(sum, RunOp1(Host(), "Add", {x, r}));
    }
    std::vector<Value> ln = {sum, g};
    if (bias) ln.push_back(b);
    GE_ASSIGN_OR_RETURN(Tensor y, RunOp1(Host(), "LayerNormalization", ln, attrs));
    if (post) {
      GE_ASSIGN_OR_RETURN(y, RunOp1(Host(), "Add", {y, p}));
    }
    return y;
  };
  return c;
}

template <typename Make>
FusedCaseGenerator Repeat(Make make, int count) {
  return [make, count](Rng& rng) {
    std::vector<Case> cases;
    for (int i = 0; i < count; ++i) cases.push_back(make(rng));
    return cases;
  };
}

}  // namespace

const CpuFusedEngine& Fused() {
  static const CpuFusedEngine* engine = [] {
    auto* e = new CpuFusedEngine();
    const absl::Status s = e->Initialize({});
    if (!s.ok()) ADD_FAILURE() << "cpu_fused Initialize: " << s;
    return e;
  }();
  return *engine;
}

void AddFusedCases(FusedCaseTable& table) {
  Fused();  // the fused ops' schemas, before any case is typed
  table[std::string(cpu_fused::kFusedAttentionOp)] = Repeat(AttentionCase, 24);
  table[std::string(cpu_fused::kFusedAddLayerNormOp)] = Repeat(AddLayerNormCase, 24);
}

}  // namespace ge::engine::conformance
