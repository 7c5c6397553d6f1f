// GatherElements and ScatterElements against their definition, written
// out with multi-indices: random ranks, axes and index shapes smaller than
// the data's in the other dims, negative and int32 indices, every element
// size and strings, the three reductions, and the index errors.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

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
