// TopK against a stable sort of each row: short rows of every shape and
// axis (the heap), long rows with small K (the bound), ties, NaN rows,
// strided rows, one thread and a team.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::TensorEq;
using Ints = std::vector<int64_t>;

// TopK against its definition: each row along the axis stably sorted (best
// first, a tie to the lower index), its first K kept. Random shapes and
// axes (rows strided when the axis is not the last), K from 0 to the whole
// row, both directions, values drawn from a few integers (many ties), f32
// and i32.
TEST(TopKKernel, MatchesAStableSortOfEachRow) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int64_t> rank_d(1, 3), dim_d(1, 40), value_d(-4, 4);
  for (int trial = 0; trial < 300; ++trial) {
    Ints dims(static_cast<size_t>(rank_d(rng)));
    for (int64_t& d : dims) d = dim_d(rng);
    const int64_t axis = std::uniform_int_distribution<int64_t>(0, static_cast<int64_t>(dims.size()) - 1)(rng);
    const int64_t n = dims[axis];
    const int64_t k = std::uniform_int_distribution<int64_t>(0, n)(rng);
    const bool largest = trial % 2 == 0;
    const DataType dtype = trial % 3 == 0 ? DataType::kInt32 : DataType::kFloat;
    int64_t total = 1;
    for (int64_t d : dims) total *= d;
    std::vector<double> values(static_cast<size_t>(total));
    for (double& v : values) v = static_cast<double>(value_d(rng)) * (dtype == DataType::kFloat ? 0.5 : 1.0);
    const Tensor x = test::MakeTensor(dtype, values, Shape(dims));
    auto out = test::RunOp(Engine(), "TopK", {x, I64s({k})},
                           {{"axis", ir::AttrValue(axis)}, {"largest", ir::AttrValue(int64_t{largest ? 1 : 0})}}, 2);
    ASSERT_TRUE(out.ok()) << out.status();
    Ints out_dims = dims;
    out_dims[axis] = k;
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
    const int64_t outer = total / (n * inner);
    std::vector<double> want_values, want_indices(static_cast<size_t>(outer * k * inner));
    want_values.resize(want_indices.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        Ints order(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) order[j] = j;
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          const double va = values[(o * n + a) * inner + i], vb = values[(o * n + b) * inner + i];
          return largest ? va > vb : va < vb;
        });
        for (int64_t j = 0; j < k; ++j) {
          want_values[(o * k + j) * inner + i] = values[(o * n + order[j]) * inner + i];
          want_indices[(o * k + j) * inner + i] = static_cast<double>(order[j]);
        }
      }
    }
    EXPECT_TRUE(TensorEq((*out)[0].tensor(), test::MakeTensor(dtype, want_values, Shape(out_dims))))
        << "trial " << trial << " " << Shape(dims).ToString() << " axis " << axis << " k " << k;
    EXPECT_TRUE(TensorEq((*out)[1].tensor(), test::MakeTensor(DataType::kInt64, want_indices, Shape(out_dims))))
        << "trial " << trial << " " << Shape(dims).ToString() << " axis " << axis << " k " << k;
  }
}

// Long rows (a k-nearest-neighbour graph's distances): K small against the
// row takes a bound from K blocks' bests; ties (values from a few
// integers), NaNs in some rows (which take the heap), rows strided or
// contiguous, both directions, on one thread and a team of four.
TEST(TopKKernel, LongRowsMatchAStableSortOnOneThreadAndATeam) {
  std::mt19937 rng(11);
  ThreadPool pool(3, "topk-test");
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t n = std::uniform_int_distribution<int64_t>(60, 700)(rng);
    const int64_t rows = std::uniform_int_distribution<int64_t>(1, 40)(rng);
    const int64_t k = std::uniform_int_distribution<int64_t>(1, trial % 4 == 0 ? n : std::max<int64_t>(1, n / 4))(rng);
    const bool largest = trial % 2 == 0, last_axis = trial % 5 != 0, ties = trial % 3 == 0;
    const bool nans = trial % 7 == 0;
    std::vector<float> values(static_cast<size_t>(rows * n));
    std::uniform_real_distribution<float> real(-100.0f, 100.0f);
    std::uniform_int_distribution<int> few(-3, 3);
    for (float& v : values) v = ties ? static_cast<float>(few(rng)) : real(rng);
    if (nans) values[static_cast<size_t>(std::uniform_int_distribution<int64_t>(0, rows * n - 1)(rng))] = NAN;
    // value(r, j): row r's element j, laid out [rows, n] or [n, rows].
    const auto at = [&](int64_t r, int64_t j) { return last_axis ? r * n + j : j * rows + r; };
    const Shape shape = last_axis ? Shape{rows, n} : Shape{n, rows};
    const Tensor x = Tensor::FromVector<float>(values, shape);
    for (ThreadPool* threads : {static_cast<ThreadPool*>(nullptr), &pool}) {
      test::RunOptions options;
      options.thread_pool = threads;
      auto out = test::RunOp(
          Engine(), "TopK", {x, I64s({k})},
          {{"axis", ir::AttrValue(int64_t{last_axis ? 1 : 0})}, {"largest", ir::AttrValue(int64_t{largest ? 1 : 0})}},
          2, options);
      ASSERT_TRUE(out.ok()) << out.status();
      const Tensor& got_values = (*out)[0].tensor();
      const Tensor& got_indices = (*out)[1].tensor();
      for (int64_t r = 0; r < rows; ++r) {
        bool row_nan = false;
        for (int64_t j = 0; j < n; ++j) row_nan |= std::isnan(values[at(r, j)]);
        if (row_nan) continue;  // NaN's place is the heap's (the case above has none)
        Ints order(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) order[j] = j;
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return largest ? values[at(r, a)] > values[at(r, b)] : values[at(r, a)] < values[at(r, b)];
        });
        for (int64_t j = 0; j < k; ++j) {
          const int64_t o = last_axis ? r * k + j : j * rows + r;
          ASSERT_EQ(got_indices.data<int64_t>()[o], order[j]) << "trial " << trial << " row " << r << " rank " << j;
          ASSERT_EQ(got_values.data<float>()[o], values[at(r, order[j])]) << "trial " << trial;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ge::engine::host_cpu
