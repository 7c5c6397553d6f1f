// cpu_vector's TopK (and ArgMax / ArgMin, at the end) against an independent reference (a stable sort of each
// row's indices by value, NaN above every number, ties to the lower index)
// and against host_cpu: every dtype, both directions, any axis, K at its
// edges, ties, NaN, -0 and rows long enough for the bounded path.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "runtime/engines/cpu_vector/cpu_vector_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_vector/vector_test_engines.h"

namespace ge::engine::cpu_vector {
namespace {

Tensor K(int64_t k) { return Tensor::FromVector<int64_t>({k}, Shape{1}); }

// The reference: per row along `axis`, indices stably sorted by value
// (descending for largest, NaN first; ascending otherwise, NaN last), the
// first k kept. Values as doubles.
void Reference(const std::vector<double>& x, const Shape& shape, int64_t axis, int64_t k, bool largest,
               std::vector<double>* values, std::vector<int64_t>* indices) {
  const int64_t rank = shape.rank();
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape.dim(d);
  for (int64_t d = axis + 1; d < rank; ++d) inner *= shape.dim(d);
  const int64_t n = shape.dim(axis);
  values->assign(static_cast<size_t>(outer * k * inner), 0);
  indices->assign(values->size(), 0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const auto at = [&](int64_t j) { return x[static_cast<size_t>((o * n + j) * inner + i)]; };
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const double va = at(a), vb = at(b);
        if (std::isnan(va) || std::isnan(vb)) return std::isnan(va) != std::isnan(vb) && (largest == std::isnan(va));
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        const size_t p = static_cast<size_t>((o * k + j) * inner + i);
        (*values)[p] = at(order[static_cast<size_t>(j)]);
        (*indices)[p] = order[static_cast<size_t>(j)];
      }
    }
  }
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.NumElements()));
  for (int64_t i = 0; i < t.NumElements(); ++i) out[static_cast<size_t>(i)] = t.GetAsDouble(i);
  return out;
}

ir::AttrMap Attrs(int64_t axis, bool largest, bool sorted = true) {
  return {{"axis", ir::AttrValue(axis)},
          {"largest", ir::AttrValue(int64_t{largest ? 1 : 0})},
          {"sorted", ir::AttrValue(int64_t{sorted ? 1 : 0})}};
}

// Runs TopK on cpu_vector (threads when `threaded`) and checks values and
// indices against the reference, and against host_cpu.
void Check(const Tensor& x, int64_t axis, int64_t k, bool largest, bool threaded = false) {
  SCOPED_TRACE(StrCat(DataTypeName(x.dtype()), " ", x.shape().ToString(), " axis ", axis, " k ", k,
                      largest ? " largest" : " smallest"));
  test::RunOptions options;
  if (threaded) options.thread_pool = test::TestThreadPool();
  auto got = test::RunOp(Vector(), "TopK", {x, K(k)}, Attrs(axis, largest), 2, options);
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<double> want_values;
  std::vector<int64_t> want_indices;
  Reference(AsDoubles(x), x.shape(), axis, k, largest, &want_values, &want_indices);
  const Tensor& values = (*got)[0].tensor();
  const Tensor& indices = (*got)[1].tensor();
  ASSERT_EQ(values.dtype(), x.dtype());
  ASSERT_EQ(indices.dtype(), DataType::kInt64);
  ASSERT_EQ(values.NumElements(), static_cast<int64_t>(want_values.size()));
  for (size_t i = 0; i < want_values.size(); ++i) {
    const double v = values.GetAsDouble(static_cast<int64_t>(i));
    ASSERT_EQ(indices.data<int64_t>()[i], want_indices[i]) << "at " << i;
    if (std::isnan(want_values[i])) {
      ASSERT_TRUE(std::isnan(v)) << "at " << i;
    } else {
      ASSERT_EQ(v, want_values[i]) << "at " << i;
    }
  }
  EXPECT_TRUE(test::MatchesReference(Vector(), Host(),
                                     test::OpBuilder("TopK", "n")
                                         .Inputs({x, K(k)})
                                         .Outputs(2)
                                         .Attr("axis", ir::AttrValue(axis))
                                         .Attr("largest", ir::AttrValue(int64_t{largest}))
                                         .Build(),
                                     {x, K(k)}, std::nullopt, options));
}

Tensor Floats(const std::vector<float>& v, const Shape& s) { return Tensor::FromVector<float>(v, s); }

TEST(CpuVectorTopKTest, TiesGoToTheLowerIndexBothWays) {
  const Tensor x = Floats({3, 1, 3, 2, 1, 3, 2, 2}, Shape{8});
  for (bool largest : {true, false}) {
    for (int64_t k : {0, 1, 3, 5, 8}) Check(x, -1, k, largest);
  }
  auto got = test::RunOp(Vector(), "TopK", {x, K(4)}, Attrs(0, true), 2);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(test::TensorEq((*got)[1].tensor(), Tensor::FromVector<int64_t>({0, 2, 5, 3}, Shape{4})));
}

TEST(CpuVectorTopKTest, NanIsAboveEveryNumberAndMinusZeroIsZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tensor x = Floats({1, nan, 3, -0.0f, nan, -1, 0.0f, inf, -inf, 3}, Shape{10});
  for (bool largest : {true, false}) {
    for (int64_t k = 0; k <= 10; ++k) Check(x, 0, k, largest);
  }
  // largest: both NaNs first (lower index first), then inf; -0 and +0 tie.
  auto got = test::RunOp(Vector(), "TopK", {x, K(10)}, Attrs(0, true), 2);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(
      test::TensorEq((*got)[1].tensor(), Tensor::FromVector<int64_t>({1, 4, 7, 2, 9, 0, 3, 6, 5, 8}, Shape{10})));
}

TEST(CpuVectorTopKTest, EveryDtypeAxisAndEdgeShape) {
  const DataType dtypes[] = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32,
                             DataType::kInt64, DataType::kInt8,   DataType::kUint8};
  const Shape shapes[] = {Shape{1}, Shape{5}, Shape{3, 1}, Shape{2, 7, 3}, Shape{4, 1, 6}, Shape{2, 3, 0}};
  uint64_t seed = 1;
  for (DataType dtype : dtypes) {
    for (const Shape& shape : shapes) {
      // Few distinct values, so rows have ties.
      const Tensor x = test::RandomTensor(dtype, shape, ++seed, -3, 3);
      Tensor rounded = x;
      if (dtype == DataType::kFloat || dtype == DataType::kDouble || dtype == DataType::kFloat16) {
        rounded = test::MakeTensor(
            dtype,
            [&] {
              std::vector<double> v = AsDoubles(x);
              for (double& e : v) e = std::round(e);
              return v;
            }(),
            shape);
      }
      for (int64_t axis = -shape.rank(); axis < shape.rank(); ++axis) {
        const int64_t n = shape.dim(axis < 0 ? axis + shape.rank() : axis);
        for (int64_t k : {int64_t{0}, std::min<int64_t>(1, n), n / 2, n}) {
          Check(rounded, axis, k, true);
          Check(rounded, axis, k, false);
        }
      }
    }
  }
}

// Rows long enough for the bound (n >= 64, 8K <= n), ties and NaNs among
// the candidates, contiguous and strided, on threads.
TEST(CpuVectorTopKTest, LongRowsTakeTheBoundAndAgree) {
  for (DataType dtype : {DataType::kFloat, DataType::kInt64, DataType::kDouble, DataType::kFloat16}) {
    Tensor x = test::RandomTensor(dtype, Shape{37, 384}, 7, -20, 20);
    std::vector<double> v = AsDoubles(x);
    for (double& e : v) e = std::round(e);  // many ties
    if (dtype != DataType::kInt64) {
      v[5] = v[900] = v[901] = std::numeric_limits<double>::quiet_NaN();
    }
    x = test::MakeTensor(dtype, v, Shape{37, 384});
    for (int64_t k : {1, 12, 47, 48, 200, 384}) {
      Check(x, 1, k, true, true);
      Check(x, -1, k, false, true);
    }
    const Tensor y = test::MakeTensor(dtype, v, Shape{384, 37});
    Check(y, 0, 16, true, true);
    Check(y, 0, 16, false, true);
  }
}

TEST(CpuVectorTopKTest, RefusesKOutsideTheAxis) {
  const Tensor x = Floats({1, 2, 3}, Shape{3});
  test::RunOptions options;
  options.check_output_types = false;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{4}),
                          ir::ValueType::Tensor(DataType::kInt64, Shape{4})};
  auto got = test::RunOp(Vector(), "TopK", {x, K(4)}, Attrs(0, true), 2, options);
  EXPECT_FALSE(got.ok());
}

TEST(CpuVectorTopKTest, CheckSupportedTakesNumericTypesAndInt64K) {
  const auto& store = Vector().vector_info_store();
  const auto op = [](const Tensor& x, const Tensor& k) {
    ir::OpDesc desc = test::OpBuilder("TopK", "n").Inputs({x, k}).Outputs(2).Build();
    return desc;
  };
  EXPECT_TRUE(store.CheckSupportedOp(op(Floats({1}, Shape{1}), K(1))).ok());
  const Tensor b = Tensor::FromVector<bool>({true}, Shape{1});
  EXPECT_FALSE(store.CheckSupportedOp(op(b, K(1))).ok());
  const Tensor bf = test::RandomTensor(DataType::kBFloat16, Shape{2}, 1);
  EXPECT_FALSE(store.CheckSupportedOp(op(bf, K(1))).ok());
}

// ArgMax / ArgMin: the first (or last) index of the extreme non-NaN value,
// 0 when the row starts with NaN (ORT's and host_cpu's answer).
int64_t ArgReference(const std::vector<double>& row, bool max, bool last) {
  if (std::isnan(row[0])) return 0;
  int64_t arg = -1;
  for (size_t i = 0; i < row.size(); ++i) {
    if (std::isnan(row[i])) continue;
    if (arg < 0) {
      arg = static_cast<int64_t>(i);
      continue;
    }
    const double b = row[static_cast<size_t>(arg)];
    const bool better = max ? (row[i] > b || (last && row[i] == b)) : (row[i] < b || (last && row[i] == b));
    if (better) arg = static_cast<int64_t>(i);
  }
  return arg < 0 ? 0 : arg;
}

void CheckArg(const Tensor& x, int64_t axis, bool max, bool last, bool keepdims, bool threaded = false) {
  const std::string type = max ? "ArgMax" : "ArgMin";
  SCOPED_TRACE(StrCat(type, " ", DataTypeName(x.dtype()), " ", x.shape().ToString(), " axis ", axis,
                      last ? " last" : "", keepdims ? " keepdims" : ""));
  const ir::AttrMap attrs = {{"axis", ir::AttrValue(axis)},
                             {"keepdims", ir::AttrValue(int64_t{keepdims})},
                             {"select_last_index", ir::AttrValue(int64_t{last})}};
  test::RunOptions options;
  if (threaded) options.thread_pool = test::TestThreadPool();
  auto got = test::RunOp1(Vector(), type, {x}, attrs, options);
  ASSERT_TRUE(got.ok()) << got.status();
  const int64_t rank = x.shape().rank(), a = axis < 0 ? axis + rank : axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= x.shape().dim(d);
  for (int64_t d = a + 1; d < rank; ++d) inner *= x.shape().dim(d);
  const int64_t n = x.shape().dim(a);
  const std::vector<double> v = AsDoubles(x);
  ASSERT_EQ(got->NumElements(), outer * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<double> row(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = v[static_cast<size_t>((o * n + j) * inner + i)];
      ASSERT_EQ(got->data<int64_t>()[o * inner + i], ArgReference(row, max, last)) << "at " << o << ", " << i;
    }
  }
  ir::OpDesc op = test::OpBuilder(type, "n").Inputs({x}).Outputs(1).Build();
  for (const auto& [k, val] : attrs) op.SetAttr(k, val);
  EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {x}, std::nullopt, options));
}

TEST(CpuVectorArgTest, TiesNanAxesAndKeepdims) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Floats({1, nan, 3, 3, nan, -1, 2, -1, nan, 1, 0, 0, 5, 5, 1, 1}, Shape{2, 8});
  for (bool max : {true, false}) {
    for (bool last : {false, true}) {
      for (int64_t axis : {0, 1, -1, -2}) {
        CheckArg(x, axis, max, last, true);
        CheckArg(x, axis, max, last, false);
      }
    }
  }
  auto got = test::RunOp1(Vector(), "ArgMax", {x}, {{"axis", ir::AttrValue(int64_t{1})}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(test::TensorEq(*got, Tensor::FromVector<int64_t>({2, 0}, Shape{2, 1})));
}

TEST(CpuVectorArgTest, EveryDtypeShapeAndLongInnerRuns) {
  const DataType dtypes[] = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32,
                             DataType::kInt64, DataType::kInt8,   DataType::kUint8};
  uint64_t seed = 40;
  for (DataType dtype : dtypes) {
    for (const Shape& shape : {Shape{1}, Shape{7}, Shape{3, 1, 5}, Shape{2, 9, 300}, Shape{4, 0, 3}}) {
      Tensor x = test::RandomTensor(dtype, shape, ++seed, -3, 3);
      std::vector<double> v = AsDoubles(x);
      for (double& e : v) e = std::round(e);
      x = test::MakeTensor(dtype, v, shape);
      for (int64_t axis = -shape.rank(); axis < shape.rank(); ++axis) {
        if (shape.dim(axis < 0 ? axis + shape.rank() : axis) == 0) continue;  // refused below
        for (bool max : {true, false}) CheckArg(x, axis, max, axis % 2 == 0, axis % 3 == 0, true);
      }
    }
  }
  const Tensor empty_axis = test::RandomTensor(DataType::kFloat, Shape{2, 0}, 1);
  EXPECT_FALSE(test::RunOp1(Vector(), "ArgMax", {empty_axis}, {{"axis", ir::AttrValue(int64_t{1})}}).ok());
}

}  // namespace
}  // namespace ge::engine::cpu_vector
