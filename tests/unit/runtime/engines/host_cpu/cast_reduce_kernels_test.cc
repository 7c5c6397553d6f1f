// Cast (every pair of numeric, bool and string dtypes, with ONNX's rules
// and ged's choices for out-of-range values) and the reduction kernels.
#include <cmath>
#include <limits>

#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::TensorEq;
using test::TensorNear;

Tensor Cast(const Tensor& x, DataType to) {
  return Host("Cast", {x}, {{"to", static_cast<int64_t>(to)}});
}

const std::vector<DataType> kNumericAndBool = {
    DataType::kFloat,  DataType::kDouble, DataType::kFloat16, DataType::kBFloat16, DataType::kInt8,
    DataType::kInt16,  DataType::kInt32,  DataType::kInt64,   DataType::kUint8,    DataType::kUint16,
    DataType::kUint32, DataType::kUint64, DataType::kBool};

TEST(CastKernel, EveryPairRoundTripsSmallIntegers) {
  for (DataType from : kNumericAndBool) {
    const bool is_bool = from == DataType::kBool;
    const Tensor x = test::MakeTensor(from, is_bool ? std::vector<double>{0, 1, 1} : std::vector<double>{0, 1, 100}, {3});
    for (DataType to : kNumericAndBool) {
      const Tensor y = Cast(x, to);
      ASSERT_EQ(y.dtype(), to);
      const bool lossy = to == DataType::kBool;
      const Tensor expected =
          test::MakeTensor(to, lossy || is_bool ? std::vector<double>{0, 1, 1} : std::vector<double>{0, 1, 100}, {3});
      EXPECT_TRUE(TensorEq(y, expected)) << DataTypeName(from) << " -> " << DataTypeName(to);
    }
    // Through string and back.
    EXPECT_TRUE(TensorEq(Cast(Cast(x, DataType::kString), from), x)) << DataTypeName(from);
  }
}

TEST(CastKernel, FloatToIntegerRules) {
  const Tensor x = F32({2.7f, -2.7f, NAN, 1e20f, -1e20f, -1.0f, 300.0f}, {7});
  // Truncation toward zero, NaN -> 0, out of the int64 range saturates.
  EXPECT_TRUE(TensorEq(Cast(x, DataType::kInt64),
                       I64({2, -2, 0, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -1, 300},
                           {7})));
  // Inside the int64 range values wrap like integer conversions (numpy).
  const Tensor u8 = Cast(x, DataType::kUint8);
  EXPECT_EQ(u8.data<uint8_t>()[5], 255);
  EXPECT_EQ(u8.data<uint8_t>()[6], 44);
  // Anything non-zero, NaN included, is true.
  EXPECT_TRUE(TensorEq(Cast(F32({0.0f, -0.0f, 0.5f, NAN}, {4}), DataType::kBool),
                       T1<bool>({false, false, true, true}, {4})));
}

TEST(CastKernel, StringsParseAndFormat) {
  const Tensor f = Cast(T1<std::string>({"3.5", "1e-2", "-INF", "+inf", "NaN"}, {5}), DataType::kFloat);
  EXPECT_EQ(f.data<float>()[0], 3.5f);
  EXPECT_FLOAT_EQ(f.data<float>()[1], 0.01f);
  EXPECT_EQ(f.data<float>()[2], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f.data<float>()[3], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f.data<float>()[4]));
  // Integers parse exactly; "100.5" truncates.
  EXPECT_TRUE(TensorEq(Cast(T1<std::string>({"9007199254740993", "100.5", "-12"}, {3}), DataType::kInt64),
                       I64({9007199254740993, 100, -12}, {3})));
  EXPECT_TRUE(TensorEq(Cast(F32({0.1f, -2.0f, INFINITY, NAN, 1e30f}, {5}), DataType::kString),
                       T1<std::string>({"0.1", "-2", "INF", "NaN", "1e+30"}, {5})));
  EXPECT_TRUE(TensorEq(Cast(T1<bool>({true, false}, {2}), DataType::kString), T1<std::string>({"1", "0"}, {2})));
  const absl::Status bad = RunError("Cast", {T1<std::string>({"1", "one"}, {2})}, {{"to", int64_t{1}}});
  EXPECT_NE(bad.message().find("\"one\""), absl::string_view::npos) << bad;
  EXPECT_NE(bad.message().find("test_Cast"), absl::string_view::npos) << bad;
}

TEST(CastKernel, HalfPrecisionRounding) {
  const Tensor h = Cast(F32({1.0f, 65504.0f, 1e6f, 0.1f}, {4}), DataType::kFloat16);
  const Tensor back = Cast(h, DataType::kFloat);
  EXPECT_EQ(back.data<float>()[1], 65504.0f);
  EXPECT_TRUE(std::isinf(back.data<float>()[2]));
  EXPECT_NEAR(back.data<float>()[3], 0.1f, 1e-4);
  EXPECT_NEAR(Cast(Cast(F32({3.14159f}, {1}), DataType::kBFloat16), DataType::kFloat).data<float>()[0], 3.14159f, 2e-2);
}

TEST(CastKernel, BadTarget) {
  ir::OpDesc op = test::OpBuilder("Cast", "cast9").Attr("to", int64_t{99}).Build();
  auto kernel = Engine().kernel_factory().CreateKernel(op);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("cast9"), absl::string_view::npos);
  EXPECT_FALSE(Engine().kernel_factory().CreateKernel(test::OpBuilder("Cast").Build()).ok());  // no `to`
}

// ---- Reductions ----

TEST(ReduceKernels, AxesKeepdimsAndEveryKind) {
  const Tensor x = F32({1, -2, 3, 4, 5, -6}, {2, 3});
  const ir::AttrMap axis1{{"axes", std::vector<int64_t>{1}}, {"keepdims", 0}};
  EXPECT_TRUE(TensorNear(Host("ReduceSum", {x, I64s({1})}, {{"keepdims", 0}}), F32({2, 3}, {2})));
  EXPECT_TRUE(TensorNear(Host("ReduceMean", {x}, axis1), F32({2.0f / 3, 1}, {2})));
  EXPECT_TRUE(TensorEq(Host("ReduceMax", {x}, axis1), F32({3, 5}, {2})));
  EXPECT_TRUE(TensorEq(Host("ReduceMin", {x}, axis1), F32({-2, -6}, {2})));
  EXPECT_TRUE(TensorNear(Host("ReduceProd", {x}, axis1), F32({-6, -120}, {2})));
  EXPECT_TRUE(TensorNear(Host("ReduceL1", {x}, axis1), F32({6, 15}, {2})));
  EXPECT_TRUE(TensorNear(Host("ReduceL2", {x}, axis1), F32({std::sqrt(14.0f), std::sqrt(77.0f)}, {2})));
  EXPECT_TRUE(TensorNear(Host("ReduceSumSquare", {x}, axis1), F32({14, 77}, {2})));
  EXPECT_TRUE(TensorNear(Host("ReduceLogSum", {F32({1, 2, 3, 4}, {2, 2})}, axis1),
                         F32({std::log(3.0f), std::log(7.0f)}, {2})));
  const float lse0 = static_cast<float>(std::log(std::exp(1.0) + std::exp(-2.0) + std::exp(3.0)));
  const float lse1 = static_cast<float>(std::log(std::exp(4.0) + std::exp(5.0) + std::exp(-6.0)));
  EXPECT_TRUE(TensorNear(Host("ReduceLogSumExp", {x}, axis1), F32({lse0, lse1}, {2})));
  // LogSumExp of large values does not overflow.
  EXPECT_TRUE(TensorNear(Host("ReduceLogSumExp", {F32({1000, 1000}, {2})}, {{"keepdims", 0}}),
                         Tensor::Scalar<float>(1000.0f + std::log(2.0f))));
  // Axis 0, keepdims (default 1), all axes.
  EXPECT_TRUE(TensorEq(Host("ReduceMax", {x}, {{"axes", std::vector<int64_t>{0}}}), F32({4, 5, 3}, {1, 3})));
  EXPECT_TRUE(TensorNear(Host("ReduceSum", {x}), F32({5}, {1, 1})));
  EXPECT_TRUE(TensorNear(Host("ReduceMean", {x}, {{"keepdims", 0}}), Tensor::Scalar<float>(5.0f / 6)));
}

TEST(ReduceKernels, MultipleNonAdjacentAxesAgainstLoops) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{3, 4, 5, 6}, 3);
  const Tensor y = Host("ReduceSum", {x, I64s({0, 2})});
  ASSERT_EQ(y.shape(), (Shape{1, 4, 1, 6}));
  for (int b = 0; b < 4; ++b) {
    for (int d = 0; d < 6; ++d) {
      double s = 0;
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 5; ++c) s += x.data<float>()[((a * 4 + b) * 5 + c) * 6 + d];
      EXPECT_NEAR(y.data<float>()[b * 6 + d], s, 1e-5);
    }
  }
  test::RunOptions parallel;
  parallel.thread_pool = test::TestThreadPool();
  const Tensor big = test::RandomTensor(DataType::kFloat, Shape{64, 128, 16}, 4);
  EXPECT_TRUE(TensorEq(Host("ReduceMean", {big}, {{"axes", std::vector<int64_t>{1}}}, parallel),
                       Host("ReduceMean", {big}, {{"axes", std::vector<int64_t>{1}}})));
}

TEST(ReduceKernels, NoopWithEmptyAxesZeroSizedAndIntegers) {
  const Tensor x = F32({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(TensorEq(Host("ReduceSum", {x, I64s({})}, {{"noop_with_empty_axes", 1}}), x));
  EXPECT_TRUE(TensorEq(Host("ReduceSum", {x}, {{"noop_with_empty_axes", 1}}), x));
  EXPECT_TRUE(TensorEq(Host("ReduceSum", {x, I64s({})}), F32({10}, {1, 1})));
  // Reducing an empty axis gives the identity of the reduction.
  const Tensor empty = *Tensor::Allocate(DataType::kFloat, Shape{2, 0});
  EXPECT_TRUE(TensorEq(Host("ReduceSum", {empty, I64s({1})}), F32({0, 0}, {2, 1})));
  EXPECT_TRUE(TensorEq(Host("ReduceProd", {empty}, {{"axes", std::vector<int64_t>{1}}}), F32({1, 1}, {2, 1})));
  EXPECT_EQ(Host("ReduceSum", {empty, I64s({0})}).shape(), (Shape{1, 0}));
  // Integer sums accumulate in 64 bits and wrap on the store; means truncate.
  EXPECT_TRUE(TensorEq(Host("ReduceSum", {T1<int32_t>({2147483647, 1}, {2})}, {{"keepdims", 0}}),
                       Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::min())));
  EXPECT_TRUE(TensorEq(Host("ReduceMean", {T1<int64_t>({-7, 0}, {2})}, {{"keepdims", 0}}), Tensor::Scalar<int64_t>(-3)));
  EXPECT_TRUE(TensorEq(Host("ReduceMax", {T1<uint8_t>({3, 250, 7}, {3})}, {{"keepdims", 0}}), Tensor::Scalar<uint8_t>(250)));
  EXPECT_TRUE(TensorNear(Host("ReduceMean", {test::MakeTensor(DataType::kFloat16, {1, 2}, {2})}, {{"keepdims", 0}}),
                         test::MakeTensor(DataType::kFloat16, {1.5}, {})));
}

TEST(ArgReduceKernels, FirstOrLastIndex) {
  const Tensor x = F32({1, 5, 5, 2, 0, 9}, {2, 3});
  EXPECT_TRUE(TensorEq(Host("ArgMax", {x}, {{"axis", 1}}), I64({1, 2}, {2, 1})));
  EXPECT_TRUE(TensorEq(Host("ArgMax", {x}, {{"axis", 1}, {"select_last_index", 1}, {"keepdims", 0}}), I64s({2, 2})));
  EXPECT_TRUE(TensorEq(Host("ArgMin", {x}, {{"axis", 0}, {"keepdims", 0}}), I64s({0, 1, 0})));
  EXPECT_TRUE(TensorEq(Host("ArgMin", {T1<int8_t>({3, -1, -1}, {3})}, {{"select_last_index", 1}}), I64({2}, {1})));
}

}  // namespace
}  // namespace ge::engine::host_cpu
