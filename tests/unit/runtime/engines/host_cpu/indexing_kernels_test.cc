// GatherElements and ScatterElements against their definition, written
// out with multi-indices: random ranks, axes and index shapes smaller than
// the data's in the other dims, negative and int32 indices, every element
// size and strings, the three reductions, and the index errors; TopK against
// a stable sort of each row.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::TensorEq;
using Ints = std::vector<int64_t>;

// The row-major multi-index of flat position `j` in `dims`.
Ints Unravel(int64_t j, const Ints& dims) {
  Ints at(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    at[d] = j % dims[d];
    j /= dims[d];
  }
  return at;
}

int64_t Ravel(const Ints& at, const Ints& dims) {
  int64_t j = 0;
  for (size_t d = 0; d < dims.size(); ++d) j = j * dims[d] + at[d];
  return j;
}

struct Problem {
  Ints data_dims, index_dims;
  int64_t axis = 0;
  std::vector<int64_t> indices;  // may be negative
};

Problem RandomProblem(std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> rank_d(1, 4), dim_d(1, 5);
  Problem p;
  const int64_t rank = rank_d(rng);
  for (int64_t d = 0; d < rank; ++d) p.data_dims.push_back(dim_d(rng));
  p.axis = std::uniform_int_distribution<int64_t>(-rank, rank - 1)(rng);
  const int64_t axis = p.axis < 0 ? p.axis + rank : p.axis;
  int64_t n = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t dim = d == axis ? dim_d(rng) : std::uniform_int_distribution<int64_t>(1, p.data_dims[d])(rng);
    p.index_dims.push_back(dim);
    n *= dim;
  }
  const int64_t along = p.data_dims[axis];
  std::uniform_int_distribution<int64_t> idx_d(-along, along - 1);
  for (int64_t j = 0; j < n; ++j) p.indices.push_back(idx_d(rng));
  return p;
}

// The data position element j of the indices names.
int64_t Source(const Problem& p, int64_t j) {
  const int64_t rank = static_cast<int64_t>(p.data_dims.size());
  const int64_t axis = p.axis < 0 ? p.axis + rank : p.axis;
  Ints at = Unravel(j, p.index_dims);
  const int64_t v = p.indices[j];
  at[axis] = v < 0 ? v + p.data_dims[axis] : v;
  return Ravel(at, p.data_dims);
}

Tensor Indices(const Problem& p, DataType dtype) {
  std::vector<double> v(p.indices.begin(), p.indices.end());
  return test::MakeTensor(dtype, v, Shape(p.index_dims));
}

Tensor Values(DataType dtype, const Ints& dims, int64_t salt) {
  const Shape shape(dims);
  std::vector<double> v(shape.NumElementsUnchecked());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((static_cast<int64_t>(i) * 7 + salt) % 23) - 11;
  return test::MakeTensor(dtype, v, shape);
}

TEST(GatherElementsKernel, MatchesTheDefinition) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const Problem p = RandomProblem(rng);
    for (DataType dtype : {DataType::kFloat, DataType::kInt8, DataType::kFloat16, DataType::kDouble}) {
      const Tensor data = Values(dtype, p.data_dims, trial);
      const DataType index_type = trial % 2 == 0 ? DataType::kInt64 : DataType::kInt32;
      const Tensor got = Host("GatherElements", {data, Indices(p, index_type)}, {{"axis", p.axis}});
      std::vector<double> want(p.indices.size());
      for (size_t j = 0; j < want.size(); ++j) want[j] = data.GetAsDouble(Source(p, static_cast<int64_t>(j)));
      ASSERT_TRUE(TensorEq(got, test::MakeTensor(dtype, want, Shape(p.index_dims))))
          << "trial " << trial << " axis " << p.axis << " data " << Shape(p.data_dims).ToString();
    }
  }
}

TEST(GatherElementsKernel, Strings) {
  const Tensor data = Tensor::FromVector<std::string>({"a", "b", "c", "d", "e", "f"}, Shape{2, 3});
  const Tensor got = Host("GatherElements", {data, I64({2, -3, 1, 1}, {2, 2})}, {{"axis", int64_t{1}}});
  EXPECT_TRUE(TensorEq(got, Tensor::FromVector<std::string>({"c", "a", "e", "e"}, Shape{2, 2})));
}

TEST(ScatterElementsKernel, MatchesTheDefinition) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 200; ++trial) {
    const Problem p = RandomProblem(rng);
    for (const char* reduction : {"none", "add", "mul"}) {
      const DataType dtype = trial % 3 == 0 ? DataType::kInt32 : DataType::kFloat;
      const Tensor data = Values(dtype, p.data_dims, trial);
      const Tensor updates = Values(dtype, p.index_dims, trial + 5);
      const Tensor got = Host("ScatterElements", {data, Indices(p, DataType::kInt64), updates},
                              {{"axis", p.axis}, {"reduction", std::string(reduction)}});
      std::vector<double> want(data.NumElements());
      for (size_t i = 0; i < want.size(); ++i) want[i] = data.GetAsDouble(static_cast<int64_t>(i));
      for (size_t j = 0; j < p.indices.size(); ++j) {
        double& o = want[Source(p, static_cast<int64_t>(j))];
        const double u = updates.GetAsDouble(static_cast<int64_t>(j));
        o = std::string(reduction) == "none" ? u : std::string(reduction) == "add" ? o + u : o * u;
      }
      ASSERT_TRUE(TensorEq(got, test::MakeTensor(dtype, want, Shape(p.data_dims))))
          << "trial " << trial << " " << reduction << " axis " << p.axis;
    }
  }
}

TEST(ScatterElementsKernel, Strings) {
  const Tensor data = Tensor::FromVector<std::string>({"a", "b", "c"}, Shape{3});
  const Tensor updates = Tensor::FromVector<std::string>({"x", "y"}, Shape{2});
  EXPECT_TRUE(TensorEq(Host("ScatterElements", {data, I64({-1, 0}, {2}), updates}),
                       Tensor::FromVector<std::string>({"y", "b", "x"}, Shape{3})));
}

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

TEST(IndexingKernels, ErrorsNameTheIndexOrTheShape) {
  const Tensor data = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  absl::Status s = RunError("GatherElements", {data, I64({0, 3}, {1, 2})}, {{"axis", int64_t{1}}});
  EXPECT_NE(s.message().find("index 3 at flat position 1 is out of range [-3, 3)"), absl::string_view::npos) << s;
  s = RunError("GatherElements", {data, I64({0, 0, 0}, {3, 1})}, {{"axis", int64_t{1}}});
  EXPECT_NE(s.message().find("exceed data"), absl::string_view::npos) << s;
  s = RunError("ScatterElements", {data, I64({0}, {1, 1}), F32({1}, {1, 1})}, {{"reduction", std::string("max")}});
  EXPECT_NE(s.message().find("reduction 'max'"), absl::string_view::npos) << s;
  // No element: nothing to check against the data's dims.
  EXPECT_EQ(Host("GatherElements", {data, I64({}, {4, 0})}).shape(), (Shape{4, 0}));
}

}  // namespace
}  // namespace ge::engine::host_cpu
