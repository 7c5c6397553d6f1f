// cpu_fused's kernels against the unfused ops on host_cpu, on seeded random
// shapes (batch and head dims, sequence lengths from 1, head sizes, with and
// without scale and mask, K given as K or K^T), with each ISA table the CPU
// has and with and without the intra-op pool; and the fused ops' shape
// inference (success, errors, unknown dims).
#include <random>

#include "base/ops/op_registry.h"
#include "runtime/engines/cpu_fused/fused_kernels.h"
#include "runtime/engines/cpu_fused/fused_ops.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_fused/fusion_test_util.h"

namespace ge::engine::cpu_fused {
namespace {

using test::RandomTensor;
using test::RunOp1;

const HostCpuEngine& Host() {
  static const HostCpuEngine* engine = new HostCpuEngine();
  return *engine;
}

constexpr test::Tolerance kTolerance{2e-5, 1e-4};

struct AttentionCase {
  std::vector<int64_t> batch;  // leading dims
  int64_t sq, sk, d, dv;
  bool k_transposed;
  int scale;                   // 0 none, 1 multiply, 2 divide
  std::vector<int64_t> mask;   // empty: no mask
};

std::vector<int64_t> Concat(std::vector<int64_t> a, std::initializer_list<int64_t> b) {
  a.insert(a.end(), b);
  return a;
}

std::string Describe(const AttentionCase& c) {
  return StrCat("batch ", Shape(c.batch).ToString(), " sq ", c.sq, " sk ", c.sk, " d ", c.d, " dv ", c.dv,
                " k_transposed ", c.k_transposed, " scale ", c.scale, " mask ",
                c.mask.empty() ? "none" : Shape(c.mask).ToString());
}

// softmax(Q Kt * s + M) V from host_cpu's MatMul, Transpose, Mul / Div, Add
// and Softmax.
absl::StatusOr<Tensor> Reference(const AttentionCase& c, const Tensor& q, const Tensor& k, const Tensor& v,
                                 const Tensor& s, const Tensor& m) {
  Tensor kt = k;
  if (!c.k_transposed) {
    std::vector<int64_t> perm;
    for (size_t i = 0; i < c.batch.size() + 2; ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    GE_ASSIGN_OR_RETURN(kt, RunOp1(Host(), "Transpose", {k}, {{"perm", ir::AttrValue(perm)}}));
  }
  GE_ASSIGN_OR_RETURN(Tensor scores, RunOp1(Host(), "MatMul", {q, kt}));
  if (c.scale != 0) {
    GE_ASSIGN_OR_RETURN(scores, RunOp1(Host(), c.scale == 2 ? "Div" : "Mul", {scores, s}));
  }
  if (!c.mask.empty()) {
    GE_ASSIGN_OR_RETURN(scores, RunOp1(Host(), "Add", {scores, m}));
  }
  GE_ASSIGN_OR_RETURN(Tensor p, RunOp1(Host(), "Softmax", {scores}, {{"axis", int64_t{-1}}}));
  return RunOp1(Host(), "MatMul", {p, v});
}

void ExpectAttentionMatches(const AttentionCase& c, uint64_t seed, ThreadPool* pool) {
  SCOPED_TRACE(Describe(c));
  const Tensor q = RandomTensor(DataType::kFloat, Shape(Concat(c.batch, {c.sq, c.d})), seed);
  const Tensor k = RandomTensor(DataType::kFloat,
                                Shape(Concat(c.batch, c.k_transposed ? std::initializer_list<int64_t>{c.d, c.sk}
                                                                     : std::initializer_list<int64_t>{c.sk, c.d})),
                                seed + 1);
  const Tensor v = RandomTensor(DataType::kFloat, Shape(Concat(c.batch, {c.sk, c.dv})), seed + 2);
  const Tensor s = RandomTensor(DataType::kFloat, Shape{}, seed + 3, 0.2, 3.0);
  const Tensor m = c.mask.empty() ? Tensor() : RandomTensor(DataType::kFloat, Shape(c.mask), seed + 4, -4.0, 0.0);
  auto expected = Reference(c, q, k, v, s, m);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<Value> inputs = {q, k, v};
  if (c.scale != 0 || !c.mask.empty()) inputs.push_back(c.scale != 0 ? Value(s) : Value());
  if (!c.mask.empty()) inputs.push_back(m);
  test::RunOptions options;
  options.thread_pool = pool;
  auto actual = RunOp1(TestEngine(), std::string(kFusedAttentionOp), inputs,
                       {{std::string(kAttrKTransposed), int64_t{c.k_transposed ? 1 : 0}},
                        {std::string(kAttrScaleDivides), int64_t{c.scale == 2 ? 1 : 0}}},
                       options);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_TRUE(test::TensorNear(*actual, *expected, kTolerance));
}

// The ISA tables this CPU runs; the engine's choice is restored after.
std::vector<bool> ForceAvx2Choices() {
  std::vector<bool> out = {true};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) out.push_back(false);
  return out;
}

TEST(FusedAttentionKernelTest, MatchesHostCpuOnRandomShapes) {
  TestEngine();
  std::mt19937_64 rng(20261125);
  auto pick = [&](std::initializer_list<int64_t> values) {
    return *(values.begin() + std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng));
  };
  for (bool avx2 : ForceAvx2Choices()) {
    ASSERT_TRUE(SelectLoops(avx2).ok());
    SCOPED_TRACE(Loops().name);
    for (int trial = 0; trial < 40; ++trial) {
      AttentionCase c;
      const int64_t rank = pick({2, 3, 4});
      if (rank >= 3) c.batch.push_back(pick({1, 2, 3}));
      if (rank == 4) c.batch.push_back(pick({1, 4, 12}));
      c.sq = pick({1, 2, 5, 16, 37, 64});
      c.sk = trial % 3 == 0 ? c.sq : pick({1, 3, 16, 33, 64});
      c.d = pick({1, 8, 16, 64});
      c.dv = trial % 2 == 0 ? c.d : pick({4, 32, 40});
      c.k_transposed = trial % 2 == 1;
      c.scale = static_cast<int>(trial % 3);
      switch (trial % 4) {
        case 0: break;
        case 1: c.mask = Concat(c.batch, {c.sq, c.sk}); break;
        case 2:  // BERT's padding mask: [B, 1, 1, Sk] (or its tail)
          c.mask = {c.sk};
          if (rank == 4) c.mask = {c.batch[0], 1, 1, c.sk};
          break;
        default: c.mask = {c.sq, 1}; break;
      }
      ExpectAttentionMatches(c, 1000 + trial, trial % 2 == 0 ? nullptr : test::TestThreadPool());
      if (HasFatalFailure()) return;
    }
  }
  ASSERT_TRUE(SelectLoops(false).ok());
}

TEST(FusedAttentionKernelTest, BertBaseHeadShapesOnThePool) {
  TestEngine();
  ExpectAttentionMatches({{1, 12}, 128, 128, 64, 64, true, 2, {1, 1, 1, 128}}, 7, test::TestThreadPool());
  ExpectAttentionMatches({{12}, 128, 128, 64, 64, true, 2, {}}, 8, test::TestThreadPool());
  ExpectAttentionMatches({{2, 12}, 1, 1, 64, 64, false, 1, {}}, 9, test::TestThreadPool());
}

TEST(FusedAttentionKernelTest, RejectsWhatItCannotRun) {
  TestEngine();
  const Tensor q16 = RandomTensor(DataType::kFloat16, Shape{2, 4}, 1);
  const Tensor kt16 = RandomTensor(DataType::kFloat16, Shape{4, 3}, 2);
  const Tensor v16 = RandomTensor(DataType::kFloat16, Shape{3, 4}, 3);
  auto op = test::OpBuilder(std::string(kFusedAttentionOp), "attn").Inputs({q16, kt16, v16}).Outputs(1).Build();
  EXPECT_EQ(CheckAttention(op).code(), absl::StatusCode::kUnimplemented);
  // Batch dims that differ fail at Prepare, naming the node.
  const Tensor q = RandomTensor(DataType::kFloat, Shape{2, 4, 8}, 4);
  const Tensor kt = RandomTensor(DataType::kFloat, Shape{1, 8, 4}, 5);
  const Tensor v = RandomTensor(DataType::kFloat, Shape{2, 4, 8}, 6);
  test::RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{2, 4, 8})};
  auto r = RunOp1(TestEngine(), std::string(kFusedAttentionOp), {q, kt, v}, {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("batch dims differ"), std::string::npos) << r.status();
}

// LayerNorm(X + R) * Scale + B + P from host_cpu's Add and
// LayerNormalization.
void CheckAddLayerNorm(const Shape& x_shape, int64_t axis, bool residual, bool bias, bool post, uint64_t seed,
                       ThreadPool* pool) {
  SCOPED_TRACE(StrCat(x_shape.ToString(), " axis ", axis, " residual ", residual, " bias ", bias, " post ", post));
  const int64_t a = axis < 0 ? axis + x_shape.rank() : axis;
  const Shape norm_shape(std::vector<int64_t>(x_shape.dims().begin() + a, x_shape.dims().end()));
  const Tensor x = RandomTensor(DataType::kFloat, x_shape, seed, -3.0, 3.0);
  const Tensor r = RandomTensor(DataType::kFloat, x_shape, seed + 1);
  const Tensor p = RandomTensor(DataType::kFloat, x_shape, seed + 2);
  const Tensor g = RandomTensor(DataType::kFloat, norm_shape, seed + 3, 0.5, 2.0);
  const Tensor b = RandomTensor(DataType::kFloat, norm_shape, seed + 4);
  const ir::AttrMap attrs = {{"axis", axis}, {"epsilon", 1e-5f}};
  Tensor sum = x;
  if (residual) {
    auto s = RunOp1(Host(), "Add", {x, r});
    ASSERT_TRUE(s.ok()) << s.status();
    sum = *s;
  }
  std::vector<Value> ln_inputs = {sum, g};
  if (bias) ln_inputs.push_back(b);
  auto expected = RunOp1(Host(), "LayerNormalization", ln_inputs, attrs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  if (post) {
    expected = RunOp1(Host(), "Add", {*expected, p});
    ASSERT_TRUE(expected.ok()) << expected.status();
  }
  std::vector<Value> inputs = {x, g, bias ? Value(b) : Value(), residual ? Value(r) : Value(), post ? Value(p) : Value()};
  while (inputs.size() > 2 && inputs.back().is_none()) inputs.pop_back();
  test::RunOptions options;
  options.thread_pool = pool;
  auto actual = RunOp1(TestEngine(), std::string(kFusedAddLayerNormOp), inputs, attrs, options);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_TRUE(test::TensorNear(*actual, *expected, kTolerance));
}

TEST(FusedAddLayerNormKernelTest, MatchesHostCpu) {
  TestEngine();
  for (bool avx2 : ForceAvx2Choices()) {
    ASSERT_TRUE(SelectLoops(avx2).ok());
    SCOPED_TRACE(Loops().name);
    int seed = 0;
    for (const Shape& shape : {Shape{1, 128, 768}, Shape{2, 16, 64}, Shape{3, 5}, Shape{1, 1, 7}, Shape{64, 33}}) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool residual = variant != 1, post = variant >= 1, bias = variant != 2;
        CheckAddLayerNorm(shape, -1, residual, bias, post, ++seed, variant % 2 ? test::TestThreadPool() : nullptr);
      }
    }
    CheckAddLayerNorm(Shape{3, 4, 8}, 1, true, true, true, 99, nullptr);
  }
  ASSERT_TRUE(SelectLoops(false).ok());
}

TEST(FusedAddLayerNormKernelTest, RejectsAScaleOfAnotherSize) {
  TestEngine();
  const Tensor x = RandomTensor(DataType::kFloat, Shape{4, 8}, 1);
  const Tensor g = RandomTensor(DataType::kFloat, Shape{4}, 2);
  test::RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{4, 8})};
  auto r = RunOp1(TestEngine(), std::string(kFusedAddLayerNormOp), {x, g}, {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("must hold 8 elements"), std::string::npos) << r.status();
}

// ---- Shape inference ----

absl::StatusOr<ir::ValueType> Infer(std::string_view type, const std::vector<std::string>& inputs,
                                    ir::AttrMap attrs = {}) {
  TestEngine();
  ir::OpDesc op("n", std::string(type));
  std::vector<ir::ValueType> types;
  for (const std::string& in : inputs) {
    auto t = in.empty() ? absl::StatusOr<ir::ValueType>(ir::ValueType()) : ir::ValueType::Parse(in);
    if (!t.ok()) return t.status();
    types.push_back(*t);
  }
  std::vector<const ir::ValueType*> ptrs;
  for (size_t i = 0; i < types.size(); ++i) {
    op.AddInput({"", types[i]});
    ptrs.push_back(inputs[i].empty() ? nullptr : &types[i]);
  }
  op.AddOutput({});
  for (auto& [k, v] : attrs) op.SetAttr(k, v);
  GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> out, ops::InferOutputTypes(op, ptrs, {}));
  return out[0];
}

std::string InferText(std::string_view type, const std::vector<std::string>& inputs, ir::AttrMap attrs = {}) {
  auto t = Infer(type, inputs, std::move(attrs));
  return t.ok() ? t->ToString() : std::string(t.status().message());
}

TEST(FusedOpInferenceTest, Attention) {
  EXPECT_EQ(InferText(kFusedAttentionOp, {"f32[2,4,16,8]", "f32[2,4,8,10]", "f32[2,4,10,32]"}), "f32[2,4,16,32]");
  EXPECT_EQ(InferText(kFusedAttentionOp, {"f32[2,4,16,8]", "f32[2,4,10,8]", "f32[2,4,10,8]", "f32[]", "f32[2,1,1,10]"},
                      {{std::string(kAttrKTransposed), int64_t{0}}}),
            "f32[2,4,16,8]");
  // Unknown dims: taken from whichever input knows them.
  EXPECT_EQ(InferText(kFusedAttentionOp, {"f32[-1,16,8]", "f32[3,8,-1]", "f32[-1,-1,4]", "", "f32[-1]"}),
            "f32[3,16,4]");
  EXPECT_EQ(InferText(kFusedAttentionOp, {"f32[?]", "f32[3,8,5]", "f32[3,5,4]"}), "f32[?]");
  EXPECT_NE(InferText(kFusedAttentionOp, {"f32[2,16,8]", "f32[2,7,10]", "f32[2,10,8]"}).find("head size"),
            std::string::npos);
  EXPECT_NE(InferText(kFusedAttentionOp, {"f32[2,16,8]", "f32[2,8,10]", "f32[2,9,8]"}).find("key length"),
            std::string::npos);
  EXPECT_NE(InferText(kFusedAttentionOp, {"f32[2,16,8]", "f32[3,8,10]", "f32[2,10,8]"}).find("batch dim 0"),
            std::string::npos);
  EXPECT_NE(InferText(kFusedAttentionOp, {"f32[16,8]", "f32[8,10]", "f32[10,8]", "f32[2]"}).find("one element"),
            std::string::npos);
  EXPECT_NE(InferText(kFusedAttentionOp, {"f32[16,8]", "f32[8,10]", "f32[10,8]", "", "f32[3,10]"}).find("mask"),
            std::string::npos);
  EXPECT_NE(InferText(kFusedAttentionOp, {"f32[8]", "f32[8]", "f32[8]"}).find("rank"), std::string::npos);
}

TEST(FusedOpInferenceTest, AddLayerNorm) {
  EXPECT_EQ(InferText(kFusedAddLayerNormOp, {"f32[2,16,64]", "f32[64]", "f32[64]", "f32[2,16,64]"}), "f32[2,16,64]");
  EXPECT_EQ(InferText(kFusedAddLayerNormOp, {"f32[-1,16,64]", "f32[64]", "", "f32[4,16,-1]", "f32[-1,-1,64]"}),
            "f32[4,16,64]");
  EXPECT_NE(InferText(kFusedAddLayerNormOp, {"f32[2,16,64]", "f32[64]", "", "f32[2,8,64]"}).find("X's shape"),
            std::string::npos);
  EXPECT_NE(InferText(kFusedAddLayerNormOp, {"f32[2,16]", "f32[16]"}, {{"axis", int64_t{2}}}).find("out of range"),
            std::string::npos);
}

}  // namespace
}  // namespace ge::engine::cpu_fused
