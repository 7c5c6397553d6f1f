// `_FusedElementwise`: programs run bit for bit like cpu_vector's single
// ops (chains, broadcast and one-element inputs, several blocks, threads,
// empty tensors, each ISA table), and the decoder refuses bad programs.
#include "runtime/engines/cpu_vector/fused_elementwise.h"

#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "gtest/gtest.h"
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::engine::cpu_vector {
namespace {

const CpuVectorEngine& Vector() {
  static const CpuVectorEngine* e = [] {
    auto* engine = new CpuVectorEngine();
    EXPECT_TRUE(engine->Initialize({}).ok());
    return engine;
  }();
  return *e;
}

struct Step {
  Step(std::string t, int64_t x, int64_t y, ir::AttrMap m = {}) : type(std::move(t)), a(x), b(y), attrs(std::move(m)) {}
  std::string type;
  int64_t a, b;  // values; b = -1 for unary ops
  ir::AttrMap attrs;
};

ir::OpDesc FusedOp(const std::vector<Value>& inputs, const std::vector<Step>& steps) {
  std::vector<std::string> ops;
  std::vector<int64_t> args;
  std::vector<float> alphas, betas;
  for (const Step& s : steps) {
    ops.push_back(s.type);
    args.push_back(s.a);
    args.push_back(s.b);
    auto get = [&](const char* name) {
      auto it = s.attrs.find(name);
      return it == s.attrs.end() ? 0.0f : *it->second.get<float>();
    };
    alphas.push_back(get("alpha"));
    betas.push_back(get("beta"));
  }
  test::OpBuilder b(std::string(kFusedElementwiseOp), "f");
  b.Inputs(inputs).Outputs(1).Attr("ops", ops).Attr("args", args).Attr("alphas", alphas).Attr("betas", betas);
  return b.Build();
}

// The steps one op at a time on cpu_vector's own kernels.
Tensor Unfused(const std::vector<Value>& inputs, const std::vector<Step>& steps) {
  std::vector<Value> values = inputs;
  for (const Step& s : steps) {
    std::vector<Value> in = {values[s.a]};
    if (s.b >= 0) in.push_back(values[s.b]);
    auto y = test::RunOp1(Vector(), s.type, in, s.attrs);
    EXPECT_TRUE(y.ok()) << s.type << ": " << y.status();
    values.push_back(y.ok() ? *y : Tensor());
  }
  return values.back().tensor();
}

void ExpectSame(const std::vector<Value>& inputs, const std::vector<Step>& steps, ThreadPool* pool = nullptr) {
  test::RunOptions options;
  options.thread_pool = pool;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (isa == Isa::kAvx512 && !CpuHasAvx512()) continue;
    ASSERT_TRUE(ForceIsa(isa).ok());
    SCOPED_TRACE(Kernels().name);
    const Tensor want = Unfused(inputs, steps);
    auto got = test::RunKernel(Vector(), FusedOp(inputs, steps), inputs, options);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(test::TensorEq((*got)[0].tensor(), want));
  }
  ASSERT_TRUE(SelectIsa(false).ok());
}

Tensor Rand(const std::vector<int64_t>& dims, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  return test::RandomTensor(DataType::kFloat, Shape(dims), seed, lo, hi);
}

TEST(FusedElementwiseTest, ChainMatchesSingleOpsBitForBit) {
  const std::vector<Value> in = {Rand({37}, 1), Rand({37}, 2, 0.5, 1.5), Rand({37}, 3)};
  ExpectSame(in, {{"Sin", 0, -1},
                  {"Mul", 3, 1},
                  {"Tanh", 4, -1},
                  {"Floor", 5, -1},
                  {"Max", 6, 2},
                  {"Softsign", 7, -1},
                  {"Div", 8, 1},
                  {"Sigmoid", 9, -1},
                  {"Sub", 2, 10},
                  {"Cos", 11, -1},
                  {"Min", 12, 0},
                  {"Ceil", 13, -1},
                  {"Abs", 14, -1},
                  {"Relu", 15, -1},
                  {"Neg", 16, -1}});
}

TEST(FusedElementwiseTest, AttributesAndSiluHardSwishGelu) {
  const std::vector<Value> in = {Rand({3, 50}, 4, -4.0, 4.0), Rand({1}, 5, 1.0, 1.5)};
  ExpectSame(in, {{"LeakyRelu", 0, -1, {{"alpha", 0.1f}}},
                  {"HardSigmoid", 2, -1, {{"alpha", 0.3f}, {"beta", 0.4f}}},
                  {"Mul", 2, 3},
                  {"Elu", 4, -1, {{"alpha", 0.7f}}},
                  {"Sigmoid", 5, -1},
                  {"Mul", 5, 6},
                  {"HardSwish", 7, -1},
                  {"Div", 8, 1},
                  {"Erf", 9, -1},
                  {"Add", 10, 1},
                  {"Mul", 9, 11}});
}

TEST(FusedElementwiseTest, BroadcastInputsAcrossBlocks) {
  // Y is [3,4,50] (600 elements: three blocks, the last partial); inputs of
  // every form: full, trailing, middle, leading-broadcast and one element.
  const std::vector<Value> in = {Rand({3, 4, 50}, 6), Rand({50}, 7),       Rand({4, 1}, 8),
                                 Rand({3, 1, 1}, 9),  Rand({1, 1, 1}, 10), Rand({3, 1, 50}, 11, 0.5, 1.5)};
  ExpectSame(in, {{"Add", 0, 1}, {"Mul", 6, 2}, {"Sub", 3, 7}, {"Max", 8, 4}, {"Div", 9, 5}});
  // The first operand broadcast: a small input on the left of every op.
  ExpectSame({Rand({4, 1}, 12), Rand({2, 4, 300}, 13)}, {{"Sub", 0, 1}, {"Pow", 0, 2}, {"Relu", 3, -1}});
}

TEST(FusedElementwiseTest, OneElementOperandOfAUnaryOp) {
  // A unary op straight on a one-element input that another input
  // broadcasts to more elements.
  ExpectSame({Rand({1}, 14), Rand({5, 7}, 15)}, {{"Tanh", 0, -1}, {"Add", 2, 1}});
}

TEST(FusedElementwiseTest, SplitsAcrossThreads) {
  ThreadPool pool(1, "fused_test");
  ExpectSame({Rand({70001}, 16), Rand({70001}, 17)}, {{"Sin", 0, -1}, {"Mul", 2, 1}, {"Cos", 3, -1}, {"Add", 4, 0}},
             &pool);
}

TEST(FusedElementwiseTest, EmptyAndScalarTensors) {
  ExpectSame({Rand({0, 5}, 18), Rand({5}, 19)}, {{"Add", 0, 1}, {"Neg", 2, -1}});
  ExpectSame({Rand({}, 20), Rand({}, 21)}, {{"Mul", 0, 1}, {"Exp", 2, -1}});
}

TEST(FusedElementwiseTest, DecoderRefusesBadPrograms) {
  const std::vector<Value> in = {Rand({4}, 22)};
  auto refuses = [&](const std::vector<Step>& steps, const std::string& why) {
    auto program = DecodeFusedProgram(FusedOp(in, steps));
    EXPECT_FALSE(program.ok()) << why;
    EXPECT_FALSE(Vector().vector_info_store().CheckSupportedOp(FusedOp(in, steps)).ok()) << why;
  };
  refuses({{"Relu", 1, -1}}, "a value defined later");
  refuses({{"Add", 0, 1}}, "the op's own value");
  refuses({{"Relu", 0, 0}}, "a unary op with a second argument");
  refuses({{"Less", 0, 0}}, "a comparison");
  refuses({{"Clip", 0, -1}}, "Clip");
  refuses({{"Relu", 0, -1}, {"Neg", 0, -1}}, "a value never used");
  auto ok = DecodeFusedProgram(FusedOp(in, {{"Relu", 0, -1}, {"Neg", 1, -1}, {"Add", 2, 1}}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  // Two values live at once (1 and 2), the last writes Y.
  EXPECT_EQ(ok->num_registers, 2);
  EXPECT_EQ(ok->code.back().dst, -1);
  EXPECT_NE(ok->code[1].dst, ok->code[0].dst);
  // Other dtypes are refused by the check.
  const std::vector<Value> f64 = {test::RandomTensor(DataType::kDouble, Shape({4}), 23)};
  EXPECT_FALSE(Vector().vector_info_store().CheckSupportedOp(FusedOp(f64, {{"Relu", 0, -1}})).ok());
}

}  // namespace
}  // namespace ge::engine::cpu_vector
