// cpu_dense's own element-wise tail after a oneDNN primitive
// (eltwise_tail.h, eltwise_loops.h).
//
// The loops of both ISAs (AVX-512 only where the CPU has it) against a
// double reference for every step kind: lengths 0 to 5000 (every vector
// tail, the 2048-float pieces' edges), values across exp's range and past
// it, 0, -0, infinities and NaN (NaN stays NaN). Then where a chain is
// split, and the Conv kernel with exp-based chains (SiLU, GELU, tanh, ELU,
// a residual add before them) on plain, channels-last and channel-blocked
// ports, one thread and a team, against host_cpu's Conv with the reference
// steps, with the split on (each ISA) and off; MatMul on oneDNN's path
// likewise.
#include "runtime/engines/cpu_dense/eltwise_tail.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/engines/sdk/cpu_features.h"
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

double RefStep(const GemmStep& s, double y) {
  switch (s.kind) {
    case 1: return std::max(y, 0.0) + s.alpha * std::min(y, 0.0);
    case 2: return std::min(std::max(y, static_cast<double>(s.alpha)), static_cast<double>(s.beta));
    case 3: return 1.0 / (1.0 + std::exp(-y));
    case 4: return std::tanh(y);
    case 5: return y > 0 ? y : s.alpha * (std::exp(y) - 1.0);
    case 6: return 0.5 * y * (1.0 + std::erf(y / std::sqrt(2.0)));
    case 7: return y * std::min(std::max(y + 3.0, 0.0), 6.0) / 6.0;
    case 8: return y / (1.0 + std::exp(-s.alpha * y));
    case 9: return s.alpha * y + s.beta;
    case 10: return 0.5 * y * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (y + 0.044715 * y * y * y)));
    default: return y;
  }
}

// NaN where the reference is NaN; else within 2e-6 absolute plus 2e-6
// relative (exp's polynomial, erf's approximation: below 1.5e-7 each).
::testing::AssertionResult Near(float got, double want) {
  if (std::isnan(want)) {
    if (std::isnan(got)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << got << " where NaN is expected";
  }
  if (std::isinf(want)) {
    if (got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << got << " where " << want << " is expected";
  }
  if (std::abs(got - want) <= 2e-6 + 2e-6 * std::abs(want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << got << " against " << want;
}

using Loop = void (*)(float*, int64_t, const GemmStep*, int32_t);

std::vector<std::pair<std::string, Loop>> Loops() {
  std::vector<std::pair<std::string, Loop>> loops;
  const sdk::VectorIsa isa = sdk::HostVectorIsa();
  if (isa != sdk::VectorIsa::kBase) loops.emplace_back("avx2", &avx2::EltwiseSteps);
  if (isa == sdk::VectorIsa::kAvx512) loops.emplace_back("avx512", &avx512::EltwiseSteps);
  return loops;
}

std::vector<float> Inputs(int64_t n) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {0.0f,  -0.0f,   inf,   -inf,   std::nanf(""), 1e-30f, -1e-30f, 88.5f, -88.5f,
                                      89.5f, -104.5f, 120.f, -120.f, 20.0f,         -20.0f, 9.0f,    -9.0f, 1e-4f};
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // Spread over [-30, 30] with the special values sprinkled in.
    x[i] = i % 7 == 3 ? special[(i / 7) % special.size()]
                      : -30.0f + 60.0f * static_cast<float>((i * 7919) % 1000) / 1000.0f;
  }
  return x;
}

TEST(EltwiseLoops, EveryStepMatchesTheReferenceOnEveryLength) {
  const auto loops = Loops();
  if (loops.empty()) GTEST_SKIP() << "no AVX2";
  const std::vector<GemmStep> kinds = {{1, 0.0f, 0.0f}, {1, 0.1f, 0.0f}, {2, -1.0f, 6.0f},  {3, 0.0f, 0.0f},
                                       {4, 0.0f, 0.0f}, {5, 1.0f, 0.0f}, {5, 0.3f, 0.0f},   {6, 0.0f, 0.0f},
                                       {7, 0.0f, 0.0f}, {8, 1.0f, 0.0f}, {8, 1.702f, 0.0f}, {9, 0.5f, -2.0f},
                                       {10, 0.0f, 0.0f}};
  for (const auto& [name, loop] : loops) {
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 2047, 2048, 2049, 5000}) {
      const std::vector<float> x = Inputs(n);
      for (const GemmStep& s : kinds) {
        std::vector<float> y = x;
        loop(y.data(), n, &s, 1);
        for (int64_t i = 0; i < n; ++i) {
          // Clip and relu of NaN: whatever max / min give, as oneDNN.
          if (std::isnan(x[i]) && (s.kind == 1 || s.kind == 2)) continue;
          ASSERT_TRUE(Near(y[i], RefStep(s, x[i])))
              << name << " kind " << s.kind << " alpha " << s.alpha << " n " << n << " at " << i << " x " << x[i];
        }
      }
    }
  }
}

TEST(EltwiseLoops, AChainRunsItsStepsInOrderAndSkipsAnAdd) {
  const std::vector<GemmStep> chain = {{9, 2.0f, 1.0f}, {0, 0.0f, 0.0f}, {8, 1.0f, 0.0f}, {2, -0.5f, 3.0f}};
  for (const auto& [name, loop] : Loops()) {
    const std::vector<float> x = Inputs(3001);
    std::vector<float> y = x;
    loop(y.data(), static_cast<int64_t>(y.size()), chain.data(), static_cast<int32_t>(chain.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) continue;
      double want = x[i];
      for (const GemmStep& s : chain) want = RefStep(s, want);
      ASSERT_TRUE(Near(y[i], want)) << name << " at " << i << " x " << x[i];
    }
  }
}

class EltwiseTailTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = CurrentEltwiseTailPath(); }
  void TearDown() override { SetEltwiseTailPath(saved_); }

  // The paths this CPU runs, and off.
  static std::vector<EltwiseTailPath> Paths() {
    std::vector<EltwiseTailPath> paths = {EltwiseTailPath::kOff};
    for (auto p : {EltwiseTailPath::kAvx2, EltwiseTailPath::kAvx512}) {
      SetEltwiseTailPath(p);
      if (CurrentEltwiseTailPath() == p) paths.push_back(p);
    }
    return paths;
  }

 private:
  EltwiseTailPath saved_ = EltwiseTailPath::kOff;
};

PostOpChain Chain(std::vector<PostOpKind> kinds) {
  PostOpChain chain;
  for (PostOpKind k : kinds)
    chain.ops.push_back(
        {k, k == PostOpKind::kSwish || k == PostOpKind::kElu ? 1.0f : 0.0f, k == PostOpKind::kClip ? 6.0f : 0.0f});
  return chain;
}

TEST_F(EltwiseTailTest, SplitsAtTheFirstExpBasedStepWhenTheRestKeepsZero) {
  SetEltwiseTailPath(EltwiseTailPath::kAvx512);
  if (CurrentEltwiseTailPath() == EltwiseTailPath::kOff) GTEST_SKIP() << "no AVX2";
  using K = PostOpKind;
  struct Want {
    std::vector<K> chain;
    size_t head, tail;
  };
  const std::vector<Want> cases = {
      {{K::kSwish}, 0, 1},
      {{K::kAdd, K::kSwish}, 1, 1},                 // a residual before SiLU: oneDNN's sum, then the tail
      {{K::kLinear, K::kGeluErf, K::kClip}, 1, 2},  // clip 0..6 keeps 0
      {{K::kTanh}, 0, 1},
      {{K::kElu}, 0, 1},
      {{K::kGeluTanh}, 0, 1},
      {{K::kRelu, K::kHardSwish}, 2, 0},  // nothing exp-based
      {{K::kSigmoid}, 1, 0},              // sigmoid(0) = 0.5: padding would not stay zero
      {{K::kSwish, K::kAdd}, 2, 0},       // an add after: oneDNN keeps all
      {{}, 0, 0},
  };
  for (const Want& w : cases) {
    const EltwiseTail split = SplitEltwiseTail(Chain(w.chain), DataType::kFloat);
    EXPECT_EQ(split.head.ops.size(), w.head) << "chain of " << w.chain.size();
    EXPECT_EQ(split.steps.size(), w.tail) << "chain of " << w.chain.size();
  }
  EXPECT_TRUE(SplitEltwiseTail(Chain({K::kSwish}), DataType::kBFloat16).steps.empty());
  SetEltwiseTailPath(EltwiseTailPath::kOff);
  const EltwiseTail off = SplitEltwiseTail(Chain({K::kSwish}), DataType::kFloat);
  EXPECT_TRUE(off.steps.empty());
  EXPECT_EQ(off.head.ops.size(), 1u);
}

// `t` ([N, C, H, W] f32) with its bytes channels-last (block 0) or in
// channel blocks of `block` (C a multiple of it).
Tensor Laid(const Tensor& t, int64_t block) {
  Tensor out = *Tensor::Allocate(t.dtype(), t.shape());
  const int64_t n = t.shape().dim(0), c = t.shape().dim(1), hw = t.shape().dim(2) * t.shape().dim(3);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t to =
            block == 0 ? (b * hw + p) * c + ch : ((b * (c / block) + ch / block) * hw + p) * block + ch % block;
        out.data<float>()[to] = t.data<float>()[(b * c + ch) * hw + p];
      }
    }
  }
  return out;
}

TEST_F(EltwiseTailTest, ConvWithExpBasedChainsMatchesTheReferenceOnEveryLayout) {
  Rng rng(41);
  const std::vector<std::vector<std::string>> chains = {{"swish"},        {"gelu_erf"},      {"tanh"},     {"elu"},
                                                        {"add", "swish"}, {"swish", "clip"}, {"gelu_tanh"}};
  const auto paths = Paths();
  for (int trial = 0; trial < 21; ++trial) {
    const std::vector<std::string>& names = chains[trial % chains.size()];
    // Layouts in turn: plain, channels-last, nChw8c, nChw16c.
    const int layout = trial % 4;
    const int64_t block = layout == 2 ? 8 : layout == 3 ? 16 : 0;
    const ir::Format format = layout == 0   ? ir::Format::kND
                              : layout == 1 ? ir::Format::kNHWC
                              : layout == 2 ? ir::Format::kNChw8c
                                            : ir::Format::kNChw16c;
    const bool depthwise = trial % 3 == 1;
    // Odd channel counts on plain and channels-last ports (oneDNN may pad
    // its own destination); multiples of the block on blocked ones.
    const int64_t c = block > 0 ? block * rng.Int(1, 3) : rng.Int(1, 40);
    const int64_t m = depthwise ? c : (block > 0 ? block * rng.Int(1, 3) : rng.Int(1, 40));
    const int64_t k = depthwise ? 3 : rng.Int(1, 3), pad = k / 2;
    const Shape x{rng.Int(1, 2), c, rng.Int(1, 40), rng.Int(1, 40)};
    ir::AttrMap attrs = {{"pads", ir::AttrValue(std::vector<int64_t>{pad, pad, pad, pad})},
                         {"group", ir::AttrValue(depthwise ? c : int64_t{1})}};
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x, -2.0, 2.0),
                                 rng.Random(DataType::kFloat, Shape{m, depthwise ? 1 : c, k, k}),
                                 rng.Random(DataType::kFloat, Shape{m})};
    Case plain = MakeCase("Conv", inputs, attrs);
    auto conv = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(conv.ok()) << conv.status();
    Tensor want = (*conv)[0].tensor();
    const Tensor residual = rng.Random(DataType::kFloat, want.shape());
    std::vector<float> alphas, betas;
    for (const std::string& name : names) {
      alphas.push_back(name == "swish" || name == "elu" ? 1.0f : name == "clip" ? -0.5f : 0.0f);
      betas.push_back(name == "clip" ? 2.0f : 0.0f);
    }
    float* w = want.data<float>();
    for (int64_t i = 0; i < want.NumElements(); ++i) {
      double v = w[i];
      for (size_t s = 0; s < names.size(); ++s) {
        const auto kind = ParsePostOpName(names[s]);
        ASSERT_TRUE(kind.has_value()) << names[s];
        if (*kind == PostOpKind::kAdd) {
          v += residual.data<float>()[i];
        } else {
          v = RefStep({static_cast<int32_t>(*kind), alphas[s], betas[s]}, v);
        }
      }
      w[i] = static_cast<float>(v);
    }
    attrs["base"] = ir::AttrValue(std::string("Conv"));
    attrs["post_ops"] = ir::AttrValue(names);
    attrs["post_alpha"] = ir::AttrValue(alphas);
    attrs["post_beta"] = ir::AttrValue(betas);
    std::vector<Value> fused_inputs = inputs;
    const bool adds = names[0] == "add";
    if (adds) fused_inputs.push_back(Value(residual));
    ir::OpDesc op = MakeCase("_DenseFused", fused_inputs, attrs).op;
    test::RunOptions options;
    auto types = test::InferOutputTypes(plain.op, plain.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    options.output_types = *types;
    std::vector<Value> laid_inputs = fused_inputs;
    if (layout > 0) {
      op.mutable_input(0).type.mutable_tensor().format = format;
      options.output_types[0].mutable_tensor().format = format;
      op.mutable_output(0).type = options.output_types[0];
      laid_inputs[0] = Value(Laid(inputs[0].tensor(), block));
      if (adds) {
        op.mutable_input(kFusedAddInput).type.mutable_tensor().format = format;
        laid_inputs[kFusedAddInput] = Value(Laid(residual, block));
      }
    }
    const Tensor expected = layout > 0 ? Laid(want, block) : want;
    options.const_inputs = {1};
    if (trial % 2 == 0) options.thread_pool = test::TestThreadPool();
    for (EltwiseTailPath path : paths) {
      SetEltwiseTailPath(path);
      const int64_t fallbacks = ReferenceRuns().load();
      auto got = test::RunKernel(Dense(), op, laid_inputs, options);
      ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
      EXPECT_EQ(ReferenceRuns().load(), fallbacks) << "trial " << trial;
      EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), expected, test::Tolerance{1e-4, 1e-4}))
          << "trial " << trial << " " << names[0] << (names.size() > 1 ? "," + names[1] : "") << " x " << x.ToString()
          << " m " << m << " k " << k << " layout " << layout << " path " << static_cast<int>(path);
    }
  }
}

// MatMul on oneDNN's path (B not constant: the packed GEMM's in-register
// steps do not apply) with exp-based chains, a residual add first too.
TEST_F(EltwiseTailTest, MatMulOnOneDnnWithExpBasedChainsMatchesTheReference) {
  Rng rng(43);
  const std::vector<std::vector<std::string>> chains = {{"gelu_erf"}, {"add", "swish"}, {"tanh"}, {"gelu_tanh"}};
  const auto paths = Paths();
  for (int trial = 0; trial < 8; ++trial) {
    const std::vector<std::string>& names = chains[trial % chains.size()];
    const int64_t batch = rng.Int(1, 3), m = rng.Int(1, 70), k = rng.Int(1, 40), n = rng.Int(1, 50);
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, Shape{batch, m, k}, -2.0, 2.0),
                                 rng.Random(DataType::kFloat, Shape{k, n})};
    Case plain = MakeCase("MatMul", inputs);
    auto product = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(product.ok()) << product.status();
    Tensor want = (*product)[0].tensor();
    const Tensor residual = rng.Random(DataType::kFloat, want.shape());
    std::vector<float> alphas(names.size(), 0.0f), betas(names.size(), 0.0f);
    for (size_t s = 0; s < names.size(); ++s) alphas[s] = names[s] == "swish" ? 1.0f : 0.0f;
    float* w = want.data<float>();
    for (int64_t i = 0; i < want.NumElements(); ++i) {
      double v = w[i];
      for (size_t s = 0; s < names.size(); ++s) {
        const auto kind = ParsePostOpName(names[s]);
        ASSERT_TRUE(kind.has_value()) << names[s];
        v = *kind == PostOpKind::kAdd ? v + residual.data<float>()[i]
                                      : RefStep({static_cast<int32_t>(*kind), alphas[s], betas[s]}, v);
      }
      w[i] = static_cast<float>(v);
    }
    ir::AttrMap attrs = {{"base", ir::AttrValue(std::string("MatMul"))},
                         {"post_ops", ir::AttrValue(names)},
                         {"post_alpha", ir::AttrValue(alphas)},
                         {"post_beta", ir::AttrValue(betas)}};
    std::vector<Value> fused_inputs = inputs;
    if (names[0] == "add") {
      fused_inputs.push_back(Value());  // no bias
      fused_inputs.push_back(Value(residual));
    }
    const ir::OpDesc op = MakeCase("_DenseFused", fused_inputs, attrs).op;
    test::RunOptions options;
    if (trial % 2 == 0) options.thread_pool = test::TestThreadPool();
    for (EltwiseTailPath path : paths) {
      SetEltwiseTailPath(path);
      const int64_t fallbacks = ReferenceRuns().load();
      auto got = test::RunKernel(Dense(), op, fused_inputs, options);
      ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
      EXPECT_EQ(ReferenceRuns().load(), fallbacks) << "trial " << trial;
      EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), want, test::Tolerance{1e-4, 1e-4}))
          << "trial " << trial << " " << names.back() << " [" << batch << "," << m << "," << k << "] x [" << k << ","
          << n << "] path " << static_cast<int>(path);
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
