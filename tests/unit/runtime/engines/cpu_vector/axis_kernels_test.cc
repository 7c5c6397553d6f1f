// cpu_vector's Tile, Trilu and CumSum: hand-computed cases for the
// semantics, then every edge (zero repeats, k beyond the matrix, negative
// axes, exclusive / reverse, f16 and wrapping int8 sums, long inner runs on
// threads) against host_cpu, bit for bit.
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_vector/vector_test_engines.h"

namespace ge::engine::cpu_vector {
namespace {

Tensor F(const std::vector<float>& v, const Shape& s) { return Tensor::FromVector<float>(v, s); }
Tensor I64s(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(v, Shape{static_cast<int64_t>(v.size())});
}

void SameAsHost(const std::string& type, const std::vector<Value>& inputs, const ir::AttrMap& attrs = {},
                bool threaded = false) {
  ir::OpDesc op = test::OpBuilder(type, "n").Inputs(inputs).Outputs(1).Build();
  for (const auto& [k, v] : attrs) op.SetAttr(k, v);
  test::RunOptions options;
  if (threaded) options.thread_pool = test::TestThreadPool();
  EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, inputs, test::Tolerance{0, 0}, options)) << type;
}

TEST(CpuVectorTileTest, RepeatsEveryAxis) {
  const Tensor x = F({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  auto got = test::RunOp1(Vector(), "Tile", {x, I64s({2, 2})});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(
      test::TensorEq(*got, F({1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, Shape{4, 6})));
  uint64_t seed = 1;
  for (DataType dtype : {DataType::kFloat, DataType::kInt64, DataType::kUint8, DataType::kBool, DataType::kFloat16}) {
    const Tensor t = test::RandomTensor(dtype, Shape{2, 1, 3}, ++seed, -5, 5);
    for (const auto& r : std::vector<std::vector<int64_t>>{{1, 1, 1}, {3, 4, 1}, {1, 1, 5}, {0, 2, 2}, {2, 3, 2}}) {
      SameAsHost("Tile", {t, I64s(r)});
    }
  }
  SameAsHost("Tile", {test::RandomTensor(DataType::kFloat, Shape{64, 257}, 9), I64s({3, 2})}, {}, true);
  SameAsHost("Tile", {Tensor::Scalar<float>(2.5f), I64s({})});
}

TEST(CpuVectorTriluTest, UpperLowerAndEveryDiagonal) {
  const Tensor x = F({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{3, 4});
  auto upper = test::RunOp1(Vector(), "Trilu", {x, Tensor::Scalar<int64_t>(1)});
  ASSERT_TRUE(upper.ok()) << upper.status();
  EXPECT_TRUE(test::TensorEq(*upper, F({0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}, Shape{3, 4})));
  auto lower = test::RunOp1(Vector(), "Trilu", {x}, {{"upper", ir::AttrValue(int64_t{0})}});
  ASSERT_TRUE(lower.ok()) << lower.status();
  EXPECT_TRUE(test::TensorEq(*lower, F({1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}, Shape{3, 4})));
  uint64_t seed = 20;
  for (DataType dtype : {DataType::kFloat, DataType::kInt32, DataType::kBool, DataType::kDouble}) {
    for (const Shape& s : {Shape{5, 3}, Shape{2, 3, 6}, Shape{1, 1}, Shape{2, 0, 4}}) {
      const Tensor t = test::RandomTensor(dtype, s, ++seed, -5, 5);
      for (int64_t k : {-7, -2, -1, 0, 1, 3, 9}) {
        for (int64_t up : {0, 1}) SameAsHost("Trilu", {t, Tensor::Scalar<int64_t>(k)}, {{"upper", ir::AttrValue(up)}});
      }
      SameAsHost("Trilu", {t});
    }
  }
  SameAsHost("Trilu", {test::RandomTensor(DataType::kFloat, Shape{4, 300, 300}, 3)}, {}, true);
}

TEST(CpuVectorCumSumTest, ExclusiveReverseAxesAndDtypes) {
  const Tensor x = F({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const auto run = [&](int64_t axis, int64_t exclusive, int64_t reverse) {
    auto got = test::RunOp1(Vector(), "CumSum", {x, Tensor::Scalar<int64_t>(axis)},
                            {{"exclusive", ir::AttrValue(exclusive)}, {"reverse", ir::AttrValue(reverse)}});
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : Tensor();
  };
  EXPECT_TRUE(test::TensorEq(run(1, 0, 0), F({1, 3, 6, 4, 9, 15}, Shape{2, 3})));
  EXPECT_TRUE(test::TensorEq(run(-1, 1, 0), F({0, 1, 3, 0, 4, 9}, Shape{2, 3})));
  EXPECT_TRUE(test::TensorEq(run(1, 0, 1), F({6, 5, 3, 15, 11, 6}, Shape{2, 3})));
  EXPECT_TRUE(test::TensorEq(run(0, 1, 1), F({4, 5, 6, 0, 0, 0}, Shape{2, 3})));
  uint64_t seed = 30;
  for (DataType dtype :
       {DataType::kFloat, DataType::kFloat16, DataType::kInt8, DataType::kInt64, DataType::kDouble, DataType::kUint8}) {
    // int8 and uint8 sums wrap as host_cpu's.
    const Tensor t = test::RandomTensor(dtype, Shape{3, 40, 5}, ++seed, -100, 100);
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      for (int64_t ex : {0, 1}) {
        for (int64_t rev : {0, 1}) {
          SameAsHost("CumSum", {t, Tensor::Scalar<int32_t>(static_cast<int32_t>(axis))},
                     {{"exclusive", ir::AttrValue(ex)}, {"reverse", ir::AttrValue(rev)}});
        }
      }
    }
  }
  SameAsHost("CumSum", {test::RandomTensor(DataType::kFloat, Shape{8, 64, 700}, 5), Tensor::Scalar<int64_t>(1)}, {},
             true);
}

}  // namespace
}  // namespace ge::engine::cpu_vector
