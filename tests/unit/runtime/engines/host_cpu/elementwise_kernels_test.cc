// Element-wise kernels of host_cpu: values against formulas, numpy
// broadcasting, every dtype the kernels claim, zero-sized tensors, integer
// edge cases and errors.
#include <cmath>
#include <limits>

#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::MakeTensor;
using test::TensorEq;
using test::TensorNear;

// Applies `f` to every element of a float tensor.
template <typename F>
Tensor MapF32(const Tensor& x, F f) {
  Tensor y = *Tensor::Allocate(DataType::kFloat, x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) y.data<float>()[i] = f(x.data<float>()[i]);
  return y;
}

TEST(UnaryKernels, ActivationsMatchFormulas) {
  const Tensor x = F32({-3.5f, -1.0f, -0.25f, 0.0f, 0.5f, 2.0f, 40.0f, -40.0f}, {2, 4});
  EXPECT_TRUE(TensorNear(Host("Relu", {x}), MapF32(x, [](float v) { return v > 0 ? v : 0.0f; })));
  EXPECT_TRUE(TensorNear(Host("Sigmoid", {x}),
                          MapF32(x, [](float v) { return 1.0f / (1.0f + std::exp(-v)); })));
  EXPECT_TRUE(TensorNear(Host("Tanh", {x}), MapF32(x, [](float v) { return std::tanh(v); })));
  EXPECT_TRUE(TensorNear(Host("Erf", {x}), MapF32(x, [](float v) { return std::erf(v); })));
  EXPECT_TRUE(TensorNear(Host("HardSigmoid", {x}, {{"alpha", 0.3f}, {"beta", 0.4f}}),
                          MapF32(x, [](float v) { return std::clamp(0.3f * v + 0.4f, 0.0f, 1.0f); })));
  EXPECT_TRUE(TensorNear(Host("HardSigmoid", {x}),  // schema defaults 0.2, 0.5
                          MapF32(x, [](float v) { return std::clamp(0.2f * v + 0.5f, 0.0f, 1.0f); })));
  EXPECT_TRUE(TensorNear(Host("LeakyRelu", {x}, {{"alpha", 0.1f}}),
                          MapF32(x, [](float v) { return v >= 0 ? v : 0.1f * v; })));
  EXPECT_TRUE(TensorNear(Host("Softplus", {x}),
                          MapF32(x, [](float v) { return static_cast<float>(std::log1p(std::exp(double{v}))); })));
  EXPECT_TRUE(TensorNear(Host("Neg", {x}), MapF32(x, [](float v) { return -v; })));
  EXPECT_TRUE(TensorNear(Host("Abs", {x}), MapF32(x, [](float v) { return std::fabs(v); })));
  EXPECT_TRUE(TensorNear(Host("Exp", {x}), MapF32(x, [](float v) { return std::exp(v); })));
  EXPECT_TRUE(TensorNear(Host("Ceil", {x}), MapF32(x, [](float v) { return std::ceil(v); })));
  EXPECT_TRUE(TensorNear(Host("Floor", {x}), MapF32(x, [](float v) { return std::floor(v); })));
  EXPECT_TRUE(TensorNear(Host("Sign", {x}),
                          MapF32(x, [](float v) { return v > 0 ? 1.0f : (v < 0 ? -1.0f : 0.0f); })));
}

TEST(UnaryKernels, TrigonometricAndHyperbolic) {
  const Tensor x = F32({-0.9f, -0.3f, 0.0f, 0.4f, 0.8f}, {5});
  EXPECT_TRUE(TensorNear(Host("Sin", {x}), MapF32(x, [](float v) { return std::sin(v); })));
  EXPECT_TRUE(TensorNear(Host("Cos", {x}), MapF32(x, [](float v) { return std::cos(v); })));
  EXPECT_TRUE(TensorNear(Host("Tan", {x}), MapF32(x, [](float v) { return std::tan(v); })));
  EXPECT_TRUE(TensorNear(Host("Asin", {x}), MapF32(x, [](float v) { return std::asin(v); })));
  EXPECT_TRUE(TensorNear(Host("Acos", {x}), MapF32(x, [](float v) { return std::acos(v); })));
  EXPECT_TRUE(TensorNear(Host("Atan", {x}), MapF32(x, [](float v) { return std::atan(v); })));
  EXPECT_TRUE(TensorNear(Host("Sinh", {x}), MapF32(x, [](float v) { return std::sinh(v); })));
  EXPECT_TRUE(TensorNear(Host("Cosh", {x}), MapF32(x, [](float v) { return std::cosh(v); })));
  EXPECT_TRUE(TensorNear(Host("Asinh", {x}), MapF32(x, [](float v) { return std::asinh(v); })));
  EXPECT_TRUE(TensorNear(Host("Atanh", {x}), MapF32(x, [](float v) { return std::atanh(v); })));
  const Tensor big = F32({1.0f, 2.0f, 10.0f}, {3});
  EXPECT_TRUE(TensorNear(Host("Acosh", {big}), MapF32(big, [](float v) { return std::acosh(v); })));
}

TEST(UnaryKernels, MoreActivations) {
  const Tensor x = F32({-2.0f, -0.5f, 0.0f, 0.5f, 1.5f, 3.0f}, {6});
  EXPECT_TRUE(TensorNear(Host("Celu", {x}, {{"alpha", 2.0f}}), MapF32(x, [](float v) {
    return std::max(0.0f, v) + std::min(0.0f, 2.0f * (std::exp(v / 2.0f) - 1.0f));
  })));
  EXPECT_TRUE(TensorEq(Host("ThresholdedRelu", {x}), F32({0, 0, 0, 0, 1.5f, 3}, {6})));
  EXPECT_TRUE(TensorNear(Host("Shrink", {x}, {{"lambd", 1.0f}, {"bias", 0.5f}}), F32({-1.5f, 0, 0, 0, 1, 2.5f}, {6})));
  EXPECT_TRUE(TensorEq(Host("Shrink", {T1<int32_t>({-5, 0, 5}, {3})}, {{"lambd", 1.0f}, {"bias", 1.0f}}),
                       T1<int32_t>({-4, 0, 4}, {3})));
  EXPECT_TRUE(TensorNear(Host("Elu", {x}), MapF32(x, [](float v) { return v >= 0 ? v : std::exp(v) - 1.0f; })));
  EXPECT_TRUE(TensorNear(Host("Selu", {x}), MapF32(x, [](float v) {
    return 1.0507010f * (v > 0 ? v : 1.6732632f * (std::exp(v) - 1.0f));
  })));
  EXPECT_TRUE(TensorNear(Host("Softsign", {x}), MapF32(x, [](float v) { return v / (1 + std::fabs(v)); })));
  EXPECT_TRUE(TensorNear(Host("HardSwish", {x}),
                         MapF32(x, [](float v) { return v * std::clamp(v / 6 + 0.5f, 0.0f, 1.0f); })));
}

TEST(UnaryKernels, Predicates) {
  const Tensor x = F32({1.0f, NAN, INFINITY, -INFINITY}, {4});
  EXPECT_TRUE(TensorEq(Host("IsNaN", {x}), T1<bool>({false, true, false, false}, {4})));
  EXPECT_TRUE(TensorEq(Host("IsInf", {x}), T1<bool>({false, false, true, true}, {4})));
  EXPECT_TRUE(TensorEq(Host("IsInf", {x}, {{"detect_positive", 0}}), T1<bool>({false, false, false, true}, {4})));
  EXPECT_TRUE(TensorEq(Host("IsNaN", {test::MakeTensor(DataType::kFloat16, {0, NAN}, {2})}),
                       T1<bool>({false, true}, {2})));
}

TEST(UnaryKernels, SqrtLogReciprocalOnPositiveInputs) {
  const Tensor x = F32({0.25f, 1.0f, 2.0f, 100.0f}, {4});
  EXPECT_TRUE(TensorNear(Host("Sqrt", {x}), F32({0.5f, 1.0f, std::sqrt(2.0f), 10.0f}, {4})));
  EXPECT_TRUE(TensorNear(Host("Log", {x}), MapF32(x, [](float v) { return std::log(v); })));
  EXPECT_TRUE(TensorNear(Host("Reciprocal", {x}), F32({4.0f, 1.0f, 0.5f, 0.01f}, {4})));
  // NaN for negative input, -inf for zero, as IEEE says.
  const Tensor y = Host("Sqrt", {F32({-1.0f}, {1})});
  EXPECT_TRUE(std::isnan(y.data<float>()[0]));
  EXPECT_EQ(Host("Log", {F32({0.0f}, {1})}).data<float>()[0], -std::numeric_limits<float>::infinity());
}

TEST(UnaryKernels, SigmoidDoesNotOverflow) {
  const Tensor y = Host("Sigmoid", {F32({-1000.0f, 1000.0f}, {2})});
  EXPECT_EQ(y.data<float>()[0], 0.0f);
  EXPECT_EQ(y.data<float>()[1], 1.0f);
}

TEST(UnaryKernels, RoundIsHalfToEven) {
  EXPECT_TRUE(TensorEq(Host("Round", {F32({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f}, {6})}),
                           F32({0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 3.0f}, {6})));
}

TEST(UnaryKernels, IntegerReluNegAbsSign) {
  const Tensor x = T1<int32_t>({-5, 0, 7, std::numeric_limits<int32_t>::min()}, {4});
  EXPECT_TRUE(TensorEq(Host("Relu", {x}), T1<int32_t>({0, 0, 7, 0}, {4})));
  // INT_MIN wraps (two's complement) instead of being undefined.
  EXPECT_TRUE(TensorEq(Host("Neg", {x}), T1<int32_t>({5, 0, -7, std::numeric_limits<int32_t>::min()}, {4})));
  EXPECT_TRUE(TensorEq(Host("Abs", {x}), T1<int32_t>({5, 0, 7, std::numeric_limits<int32_t>::min()}, {4})));
  EXPECT_TRUE(TensorEq(Host("Sign", {x}), T1<int32_t>({-1, 0, 1, -1}, {4})));
  EXPECT_TRUE(TensorEq(Host("Abs", {T1<uint8_t>({0, 200}, {2})}), T1<uint8_t>({0, 200}, {2})));
}

TEST(UnaryKernels, HalfTypesComputeInFloat) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    const Tensor x = MakeTensor(dtype, {-2.0, -0.5, 0.0, 1.0, 3.0}, {5});
    const Tensor expected =
        MakeTensor(dtype, {std::tanh(-2.0), std::tanh(-0.5), 0.0, std::tanh(1.0), std::tanh(3.0)}, {5});
    EXPECT_TRUE(TensorNear(Host("Tanh", {x}), expected)) << DataTypeName(dtype);
    EXPECT_TRUE(TensorNear(Host("Relu", {x}), MakeTensor(dtype, {0, 0, 0, 1, 3}, {5})));
  }
  const Tensor d = MakeTensor(DataType::kDouble, {0.1, 0.2}, {2});
  EXPECT_TRUE(TensorNear(Host("Exp", {d}), MakeTensor(DataType::kDouble, {std::exp(0.1), std::exp(0.2)}, {2})));
}

TEST(UnaryKernels, NotAndZeroSized) {
  EXPECT_TRUE(TensorEq(Host("Not", {T1<bool>({true, false}, {2})}), T1<bool>({false, true}, {2})));
  const Tensor empty = *Tensor::Allocate(DataType::kFloat, Shape{0, 3});
  EXPECT_EQ(Host("Relu", {empty}).shape(), (Shape{0, 3}));
  EXPECT_EQ(Host("Clip", {empty}).shape(), (Shape{0, 3}));
}

TEST(UnaryKernels, ParallelPathMatchesSerial) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{300, 500}, 7, -4, 4);
  test::RunOptions parallel;
  parallel.thread_pool = test::TestThreadPool();
  EXPECT_TRUE(TensorEq(Host("Sigmoid", {x}, {}, parallel), Host("Sigmoid", {x})));
}

TEST(ClipKernel, OptionalBoundsAndOrder) {
  const Tensor x = F32({-2.0f, -0.5f, 0.5f, 2.0f, NAN}, {5});
  const Tensor lo = Tensor::Scalar<float>(-1.0f), hi = Tensor::Scalar<float>(1.0f);
  Tensor y = Host("Clip", {x, lo, hi});
  EXPECT_EQ(y.data<float>()[0], -1.0f);
  EXPECT_EQ(y.data<float>()[3], 1.0f);
  EXPECT_TRUE(std::isnan(y.data<float>()[4]));
  // Only max (min absent), only min.
  y = Host("Clip", {x, Value(), hi});
  EXPECT_EQ(y.data<float>()[0], -2.0f);
  EXPECT_EQ(y.data<float>()[3], 1.0f);
  y = Host("Clip", {x, lo});
  EXPECT_EQ(y.data<float>()[0], -1.0f);
  EXPECT_EQ(y.data<float>()[3], 2.0f);
  // min > max: everything becomes max.
  y = Host("Clip", {F32({-5.0f, 5.0f}, {2}), Tensor::Scalar<float>(2.0f), Tensor::Scalar<float>(1.0f)});
  EXPECT_TRUE(TensorEq(y, F32({1.0f, 1.0f}, {2})));
  // Integers.
  EXPECT_TRUE(TensorEq(Host("Clip", {T1<int8_t>({-100, 3, 100}, {3}), Tensor::Scalar<int8_t>(-10),
                                        Tensor::Scalar<int8_t>(10)}),
                           T1<int8_t>({-10, 3, 10}, {3})));
}

TEST(ClipKernel, NonScalarBoundIsAnError) {
  test::RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{2})};
  const absl::Status s =
      RunError("Clip", {F32({1, 2}, {2}), F32({0, 0}, {2})}, {}, 1, options);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("test_Clip"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("min"), absl::string_view::npos) << s;
}

// ---- Binary ----

TEST(BinaryKernels, ArithmeticSameShape) {
  const Tensor a = F32({1, 2, 3, 4}, {2, 2}), b = F32({10, 20, 30, 40}, {2, 2});
  EXPECT_TRUE(TensorEq(Host("Add", {a, b}), F32({11, 22, 33, 44}, {2, 2})));
  EXPECT_TRUE(TensorEq(Host("Sub", {a, b}), F32({-9, -18, -27, -36}, {2, 2})));
  EXPECT_TRUE(TensorEq(Host("Mul", {a, b}), F32({10, 40, 90, 160}, {2, 2})));
  EXPECT_TRUE(TensorNear(Host("Div", {a, b}), F32({0.1f, 0.1f, 0.1f, 0.1f}, {2, 2})));
}

TEST(BinaryKernels, NumpyBroadcasting) {
  // [2,3,1] + [1,4]: every shape pattern of the row loop (both strided,
  // scalar, row broadcast, column broadcast).
  std::vector<float> av(6), bv(4), expected(24);
  for (int i = 0; i < 6; ++i) av[i] = static_cast<float>(i);
  for (int j = 0; j < 4; ++j) bv[j] = static_cast<float>(100 * j);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 4; ++j) expected[i * 4 + j] = av[i] + bv[j];
  }
  const Tensor a = F32(av, {2, 3, 1}), b = F32(bv, {1, 4});
  EXPECT_TRUE(TensorEq(Host("Add", {a, b}), F32(expected, {2, 3, 4})));
  // Scalar on either side.
  EXPECT_TRUE(TensorEq(Host("Sub", {Tensor::Scalar<float>(1.0f), F32({1, 2}, {2})}), F32({0, -1}, {2})));
  EXPECT_TRUE(TensorEq(Host("Sub", {F32({1, 2}, {2}), Tensor::Scalar<float>(1.0f)}), F32({0, 1}, {2})));
  // Channel bias [1,C,1,1] on [N,C,H,W].
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3, 4, 5}, 1);
  const Tensor bias = F32({1, 2, 3}, {1, 3, 1, 1});
  const Tensor y = Host("Add", {x, bias});
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    ASSERT_EQ(y.data<float>()[i], x.data<float>()[i] + static_cast<float>((i / 20) % 3 + 1)) << i;
  }
}

TEST(BinaryKernels, BroadcastingZeroSizedAndLarge) {
  const Tensor empty = *Tensor::Allocate(DataType::kFloat, Shape{0, 4});
  EXPECT_EQ(Host("Mul", {empty, F32({1, 2, 3, 4}, {4})}).shape(), (Shape{0, 4}));
  EXPECT_EQ(Host("Equal", {empty, F32({1}, {1})}).shape(), (Shape{0, 4}));
  const Tensor a = test::RandomTensor(DataType::kFloat, Shape{64, 1, 512}, 2);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{1, 16, 512}, 3);
  test::RunOptions parallel;
  parallel.thread_pool = test::TestThreadPool();
  EXPECT_TRUE(TensorEq(Host("Add", {a, b}, {}, parallel), Host("Add", {a, b})));
}

TEST(BinaryKernels, EveryNumericDtype) {
  for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16,
                         DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64,
                         DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64}) {
    const Tensor a = MakeTensor(dtype, {6, 8, 10}, {3}), b = MakeTensor(dtype, {2}, {1});
    EXPECT_TRUE(TensorEq(Host("Add", {a, b}), MakeTensor(dtype, {8, 10, 12}, {3}))) << DataTypeName(dtype);
    EXPECT_TRUE(TensorEq(Host("Mul", {a, b}), MakeTensor(dtype, {12, 16, 20}, {3})));
    EXPECT_TRUE(TensorEq(Host("Div", {a, b}), MakeTensor(dtype, {3, 4, 5}, {3})));
    EXPECT_TRUE(TensorEq(Host("Sub", {a, b}), MakeTensor(dtype, {4, 6, 8}, {3})));
    EXPECT_TRUE(TensorEq(Host("Less", {a, MakeTensor(dtype, {8}, {1})}),
                             T1<bool>({true, false, false}, {3})));
    EXPECT_TRUE(TensorEq(Host("GreaterOrEqual", {a, MakeTensor(dtype, {8}, {1})}),
                             T1<bool>({false, true, true}, {3})));
    EXPECT_TRUE(TensorEq(Host("Max", {a, MakeTensor(dtype, {7}, {1})}), MakeTensor(dtype, {7, 8, 10}, {3})));
  }
}

TEST(BinaryKernels, IntegerWrapAndTruncation) {
  const int32_t kMin = std::numeric_limits<int32_t>::min(), kMax = std::numeric_limits<int32_t>::max();
  EXPECT_TRUE(TensorEq(Host("Add", {T1<int32_t>({kMax}, {1}), T1<int32_t>({1}, {1})}),
                           T1<int32_t>({kMin}, {1})));
  EXPECT_TRUE(TensorEq(Host("Mul", {T1<uint16_t>({65535}, {1}), T1<uint16_t>({65535}, {1})}),
                           T1<uint16_t>({1}, {1})));
  // Division truncates toward zero; INT_MIN / -1 wraps instead of trapping.
  EXPECT_TRUE(TensorEq(Host("Div", {T1<int32_t>({7, -7, kMin}, {3}), T1<int32_t>({2, 2, -1}, {3})}),
                           T1<int32_t>({3, -3, kMin}, {3})));
}

TEST(BinaryKernels, IntegerDivisionByZeroIsAnError) {
  const absl::Status s = RunError("Div", {T1<int32_t>({1, 2}, {2}), T1<int32_t>({1, 0}, {2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("division by zero"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("test_Div"), absl::string_view::npos) << s;
  // Floats follow IEEE.
  EXPECT_TRUE(std::isinf(Host("Div", {F32({1}, {1}), F32({0}, {1})}).data<float>()[0]));
}

TEST(BinaryKernels, ModSignConventions) {
  const Tensor a = T1<int32_t>({7, -7, 7, -7}, {4}), b = T1<int32_t>({3, 3, -3, -3}, {4});
  EXPECT_TRUE(TensorEq(Host("Mod", {a, b}), T1<int32_t>({1, 2, -2, -1}, {4})));  // Python
  EXPECT_TRUE(TensorEq(Host("Mod", {a, b}, {{"fmod", 1}}), T1<int32_t>({1, -1, 1, -1}, {4})));  // C
  EXPECT_TRUE(TensorNear(Host("Mod", {F32({7.5f, -7.5f}, {2}), F32({2, 2}, {2})}, {{"fmod", 1}}),
                          F32({1.5f, -1.5f}, {2})));
  EXPECT_FALSE(RunError("Mod", {F32({1}, {1}), F32({1}, {1})}).ok());  // fmod=0 on floats
  EXPECT_FALSE(RunError("Mod", {T1<int32_t>({1}, {1}), T1<int32_t>({1}, {1})}, {{"fmod", 2}}).ok());
}

TEST(BinaryKernels, PowMixedTypes) {
  EXPECT_TRUE(TensorNear(Host("Pow", {F32({2, 4, 9}, {3}), F32({3, 0.5f, 0.5f}, {3})}), F32({8, 2, 3}, {3})));
  EXPECT_TRUE(TensorNear(Host("Pow", {F32({2, 3}, {2}), T1<int64_t>({2}, {1})}), F32({4, 9}, {2})));
  EXPECT_TRUE(TensorEq(Host("Pow", {T1<int64_t>({3, -2, 10}, {3}), T1<int32_t>({4, 3, 18}, {3})}),
                           T1<int64_t>({81, -8, 1000000000000000000}, {3})));
  EXPECT_TRUE(TensorEq(Host("Pow", {T1<int32_t>({2, 1, -1, 4}, {4}), T1<int32_t>({-1, -5, -3, 0}, {4})}),
                           T1<int32_t>({0, 1, -1, 1}, {4})));
  EXPECT_TRUE(TensorEq(Host("Pow", {T1<int32_t>({4, 9}, {2}), F32({0.5f, 0.5f}, {2})}),
                           T1<int32_t>({2, 3}, {2})));
  EXPECT_TRUE(TensorNear(Host("Pow", {MakeTensor(DataType::kFloat16, {2, 3}, {2}), F32({2, 2}, {2})}),
                          MakeTensor(DataType::kFloat16, {4, 9}, {2})));
}

TEST(BinaryKernels, ComparisonsAndLogic) {
  const Tensor a = F32({1, 2, 3}, {3}), b = F32({2, 2, 2}, {3});
  EXPECT_TRUE(TensorEq(Host("Equal", {a, b}), T1<bool>({false, true, false}, {3})));
  EXPECT_TRUE(TensorEq(Host("Less", {a, b}), T1<bool>({true, false, false}, {3})));
  EXPECT_TRUE(TensorEq(Host("Greater", {a, b}), T1<bool>({false, false, true}, {3})));
  EXPECT_TRUE(TensorEq(Host("LessOrEqual", {a, b}), T1<bool>({true, true, false}, {3})));
  EXPECT_TRUE(TensorEq(Host("Equal", {T1<bool>({true, false}, {2}), T1<bool>({true}, {1})}),
                           T1<bool>({true, false}, {2})));
  const Tensor p = T1<bool>({true, true, false, false}, {4}), q = T1<bool>({true, false, true, false}, {4});
  EXPECT_TRUE(TensorEq(Host("And", {p, q}), T1<bool>({true, false, false, false}, {4})));
  EXPECT_TRUE(TensorEq(Host("Or", {p, q}), T1<bool>({true, true, true, false}, {4})));
  EXPECT_TRUE(TensorEq(Host("Xor", {p, q}), T1<bool>({false, true, true, false}, {4})));
  // NaN compares unequal to everything.
  EXPECT_TRUE(TensorEq(Host("Equal", {F32({NAN}, {1}), F32({NAN}, {1})}), T1<bool>({false}, {1})));
}

TEST(BinaryKernels, MismatchedDtypesAreAnError) {
  test::RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{1})};
  EXPECT_FALSE(RunError("Add", {F32({1}, {1}), T1<int32_t>({1}, {1})}, {}, 1, options).ok());
}

TEST(BinaryKernels, PReluAndBitShift) {
  const Tensor x = F32({-2, -1, 0, 3, -4, 5}, {2, 3});
  EXPECT_TRUE(TensorEq(Host("PRelu", {x, F32({0.5f, 2, 1}, {3})}), F32({-1, -2, 0, 3, -8, 5}, {2, 3})));
  EXPECT_TRUE(TensorEq(Host("PRelu", {x, F32({0.1f}, {1})}), F32({-0.2f, -0.1f, 0, 3, -0.4f, 5}, {2, 3})));
  const Tensor v = T1<uint8_t>({1, 16, 255}, {3}), n = T1<uint8_t>({1, 2, 9}, {3});
  EXPECT_TRUE(TensorEq(Host("BitShift", {v, n}, {{"direction", "LEFT"}}), T1<uint8_t>({2, 64, 0}, {3})));
  EXPECT_TRUE(TensorEq(Host("BitShift", {v, n}, {{"direction", "RIGHT"}}), T1<uint8_t>({0, 4, 0}, {3})));
  EXPECT_FALSE(RunError("BitShift", {v, n}, {{"direction", "UP"}}).ok());
}

// An executor handing a kernel an output that does not fit its inputs gets
// an error naming the node, never an out-of-bounds access.
TEST(BinaryKernels, OutputsThatDoNotFitAreRejected) {
  test::RunOptions options;
  options.check_output_types = false;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{5})};
  absl::Status s = RunError("Add", {F32({1, 2, 3}, {3}), F32({1, 2, 3}, {3})}, {}, 1, options);
  EXPECT_NE(s.message().find("does not broadcast"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("test_Add"), absl::string_view::npos) << s;
  s = RunError("Where", {T1<bool>({true}, {1}), F32({1, 2}, {2}), F32({1, 2, 3}, {3})}, {}, 1, options);
  EXPECT_FALSE(s.ok());
  s = RunError("Max", {F32({1, 2, 3, 4, 5, 6}, {6})}, {}, 1, options);
  EXPECT_FALSE(s.ok());
  s = RunError("Softmax", {F32({1, 2}, {2})}, {}, 1, options);
  EXPECT_FALSE(s.ok());
  s = RunError("Sigmoid", {F32({1, 2}, {2})}, {}, 1, options);
  EXPECT_FALSE(s.ok());
}

TEST(VariadicKernels, MaxMinSumMean) {
  const Tensor a = F32({1, 5, 3}, {3}), b = F32({4}, {1}), c = F32({2, 2, 9}, {1, 3});
  EXPECT_TRUE(TensorEq(Host("Max", {a}), a));
  EXPECT_TRUE(TensorEq(Host("Max", {a, b, c}), F32({4, 5, 9}, {1, 3})));
  EXPECT_TRUE(TensorEq(Host("Min", {a, b, c}), F32({1, 2, 3}, {1, 3})));
  EXPECT_TRUE(TensorEq(Host("Sum", {a, b, c}), F32({7, 11, 16}, {1, 3})));
  EXPECT_TRUE(TensorNear(Host("Mean", {a, b, c}), F32({7 / 3.0f, 11 / 3.0f, 16 / 3.0f}, {1, 3})));
  const Tensor m = Host("Max", {F32({NAN, 1}, {2}), F32({0, NAN}, {2})});
  EXPECT_TRUE(std::isnan(m.data<float>()[0]) && std::isnan(m.data<float>()[1]));
}

TEST(WhereKernel, BroadcastsEveryOperandAndHandlesStrings) {
  const Tensor cond = T1<bool>({true, false, true}, {3});
  EXPECT_TRUE(TensorEq(Host("Where", {cond, F32({1, 2, 3}, {3}), Tensor::Scalar<float>(0.0f)}),
                           F32({1, 0, 3}, {3})));
  const Tensor col = T1<bool>({true, false}, {2, 1});
  EXPECT_TRUE(TensorEq(Host("Where", {col, F32({1, 2, 3}, {3}), F32({-1, -2, -3}, {3})}),
                           F32({1, 2, 3, -1, -2, -3}, {2, 3})));
  const Tensor s = Host("Where", {cond, T1<std::string>({"a", "b", "c"}, {3}), T1<std::string>({"x"}, {1})});
  EXPECT_TRUE(TensorEq(s, T1<std::string>({"a", "x", "c"}, {3})));
}

}  // namespace
}  // namespace ge::engine::host_cpu
