// cpu_vector's ScatterElements (and ScatterND, at the end) against an element-by-element reference (the
// updates applied in row-major order) and against host_cpu: reductions
// none, add and mul, repeated targets, every axis (negative too), updates
// smaller than data off the axis, negative and int32 indices, several
// dtypes, large cases split over threads (sums must round as host_cpu's).
#include <cmath>

#include "runtime/engines/cpu_vector/cpu_vector_engine.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_vector/vector_test_engines.h"

namespace ge::engine::cpu_vector {
namespace {

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.NumElements()));
  for (int64_t i = 0; i < t.NumElements(); ++i) out[static_cast<size_t>(i)] = t.GetAsDouble(i);
  return out;
}

// Small integers of `dtype` (float products and sums stay exact).
Tensor Integers(DataType dtype, const Shape& shape, uint64_t seed, double lo, double hi) {
  std::vector<double> v = AsDoubles(test::RandomTensor(dtype, shape, seed, lo, hi));
  for (double& e : v) e = std::round(e);
  return test::MakeTensor(dtype, v, shape);
}

// The reference in doubles (exact for the small integers used).
std::vector<double> Reference(const Tensor& data, const Tensor& ind, const Tensor& upd, int64_t axis,
                              const std::string& reduction) {
  std::vector<double> out = AsDoubles(data);
  const std::vector<double> u = AsDoubles(upd), idx = AsDoubles(ind);
  const int64_t rank = data.shape().rank();
  if (axis < 0) axis += rank;
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  for (int64_t p = 0; p < ind.NumElements(); ++p) {
    int64_t rest = p, off = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = rest % ind.shape().dim(d);
      rest /= ind.shape().dim(d);
      if (d == axis) {
        c = static_cast<int64_t>(idx[static_cast<size_t>(p)]);
        if (c < 0) c += data.shape().dim(d);
      }
      off += c * stride;
      stride *= data.shape().dim(d);
    }
    double& o = out[static_cast<size_t>(off)];
    const double v = u[static_cast<size_t>(p)];
    o = reduction == "add" ? o + v : reduction == "mul" ? o * v : v;
  }
  return out;
}

void Check(const Tensor& data, const Tensor& ind, const Tensor& upd, int64_t axis, const std::string& reduction,
           bool threaded = false) {
  SCOPED_TRACE(StrCat(DataTypeName(data.dtype()), " ", data.shape().ToString(), " indices ", ind.shape().ToString(),
                      " axis ", axis, " ", reduction));
  const ir::AttrMap attrs = {{"axis", ir::AttrValue(axis)}, {"reduction", ir::AttrValue(reduction)}};
  test::RunOptions options;
  if (threaded) options.thread_pool = test::TestThreadPool();
  auto got = test::RunOp1(Vector(), "ScatterElements", {data, ind, upd}, attrs, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(
      test::TensorEq(*got, test::MakeTensor(data.dtype(), Reference(data, ind, upd, axis, reduction), data.shape())));
  ir::OpDesc op = test::OpBuilder("ScatterElements", "n").Inputs({data, ind, upd}).Outputs(1).Build();
  for (const auto& [k, v] : attrs) op.SetAttr(k, v);
  EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {data, ind, upd}, std::nullopt, options));
}

TEST(CpuVectorScatterElementsTest, RepeatedTargetsAxesAndReductions) {
  uint64_t seed = 70;
  const std::vector<std::pair<Shape, Shape>> shapes = {{Shape{5}, Shape{9}},
                                                       {Shape{4, 6}, Shape{3, 6}},
                                                       {Shape{4, 6}, Shape{4, 2}},
                                                       {Shape{3, 4, 5}, Shape{2, 7, 3}},
                                                       {Shape{2, 1, 3}, Shape{2, 1, 3}},
                                                       {Shape{3, 4}, Shape{3, 0}}};
  for (DataType dtype : {DataType::kFloat, DataType::kInt64, DataType::kFloat16, DataType::kUint8, DataType::kInt32}) {
    for (const auto& [ds, is] : shapes) {
      for (int64_t axis = -ds.rank(); axis < ds.rank(); ++axis) {
        const int64_t a = axis < 0 ? axis + ds.rank() : axis;
        Shape ishape = is;
        bool fits = ishape.rank() == ds.rank();
        for (int64_t d = 0; fits && d < ds.rank(); ++d) fits = d == a || ishape.dim(d) <= ds.dim(d);
        if (!fits) continue;
        const double extent = static_cast<double>(ds.dim(a));
        const Tensor data = Integers(dtype, ds, ++seed, 1, 4);
        const Tensor upd = Integers(dtype, ishape, ++seed, 1, 3);
        const DataType itype = seed % 2 ? DataType::kInt64 : DataType::kInt32;
        const Tensor ind = test::RandomTensor(itype, ishape, ++seed, -extent, extent - 1);
        for (const char* reduction : {"none", "add", "mul"}) Check(data, ind, upd, axis, reduction);
      }
    }
  }
  // bool moves with "none".
  const Tensor b = Tensor::FromVector<bool>({true, false, true, false}, Shape{4});
  const Tensor bu = Tensor::FromVector<bool>({false, true}, Shape{2});
  Check(b, Tensor::FromVector<int64_t>({0, -1}, Shape{2}), bu, 0, "none");
}

// The GNN form: [B, N * K, C] updates scattered along axis 1 into [B, N, C],
// many repeated targets, float sums over threads equal host_cpu's bit for bit.
TEST(CpuVectorScatterElementsTest, LargeSumsRoundAsTheSequentialOrder) {
  const Tensor data = test::RandomTensor(DataType::kFloat, Shape{2, 64, 96}, 1);
  const Tensor upd = test::RandomTensor(DataType::kFloat, Shape{2, 512, 96}, 2);
  const Tensor idx_row = test::RandomTensor(DataType::kInt64, Shape{2, 512, 1}, 3, -64, 63);
  auto ind = test::RunOp1(Host(), "Expand", {idx_row, Tensor::FromVector<int64_t>({2, 512, 96}, Shape{3})});
  ASSERT_TRUE(ind.ok()) << ind.status();
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  const ir::AttrMap attrs = {{"axis", ir::AttrValue(int64_t{1})}, {"reduction", ir::AttrValue(std::string("add"))}};
  ir::OpDesc op = test::OpBuilder("ScatterElements", "n").Inputs({data, *ind, upd}).Outputs(1).Build();
  for (const auto& [k, v] : attrs) op.SetAttr(k, v);
  auto got = test::RunKernel(Vector(), op, {data, *ind, upd}, options);
  auto want = test::RunKernel(Host(), op, {data, *ind, upd});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(test::TensorEq((*got)[0].tensor(), (*want)[0].tensor()));
}

TEST(CpuVectorScatterElementsTest, RefusesBadIndicesAndReductions) {
  const Tensor data = test::RandomTensor(DataType::kFloat, Shape{3}, 1);
  const Tensor upd = test::RandomTensor(DataType::kFloat, Shape{1}, 2);
  for (int64_t v : {3, -4}) {
    EXPECT_FALSE(
        test::RunOp1(Vector(), "ScatterElements", {data, Tensor::FromVector<int64_t>({v}, Shape{1}), upd}).ok());
  }
  ir::OpDesc op = test::OpBuilder("ScatterElements", "n")
                      .Inputs({data, Tensor::FromVector<int64_t>({0}, Shape{1}), upd})
                      .Outputs(1)
                      .Attr("reduction", ir::AttrValue(std::string("max")))
                      .Build();
  EXPECT_FALSE(Vector().vector_info_store().CheckSupportedOp(op).ok());
}

// ScatterND: index tuples of every depth, repeated tuples, negative
// indices, every reduction, against host_cpu bit for bit; slices long
// enough to split over threads.
TEST(CpuVectorScatterNDTest, TuplesOfEveryDepthAndReductions) {
  uint64_t seed = 90;
  const Shape ds{4, 3, 5};
  for (int64_t q = 1; q <= 3; ++q) {
    for (DataType dtype : {DataType::kFloat, DataType::kInt64, DataType::kFloat16, DataType::kUint8}) {
      const int64_t tuples = 6;
      std::vector<int64_t> idx;
      for (int64_t t = 0; t < tuples; ++t) {
        for (int64_t j = 0; j < q; ++j) {
          const int64_t dim = ds.dim(j);
          idx.push_back((static_cast<int64_t>(seed * 7 + t * 3 + j) % (2 * dim)) - dim);  // negatives too
        }
        ++seed;
      }
      const Tensor ind = Tensor::FromVector<int64_t>(idx, Shape{2, 3, q});
      Shape us{2, 3};
      for (int64_t d = q; d < ds.rank(); ++d) us.push_back(ds.dim(d));
      const Tensor data = Integers(dtype, ds, ++seed, 1, 4);
      const Tensor upd = Integers(dtype, us, ++seed, 1, 3);
      for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
        SCOPED_TRACE(StrCat("q ", q, " ", DataTypeName(dtype), " ", reduction));
        ir::OpDesc op = test::OpBuilder("ScatterND", "n")
                            .Inputs({data, ind, upd})
                            .Outputs(1)
                            .Attr("reduction", ir::AttrValue(std::string(reduction)))
                            .Build();
        EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {data, ind, upd}, test::Tolerance{0, 0}));
      }
    }
  }
  // Repeated tuple: "none" keeps the last, "add" sums in order.
  const Tensor data = Tensor::FromVector<float>({0, 0, 0}, Shape{3});
  const Tensor ind = Tensor::FromVector<int64_t>({1, -2, 0}, Shape{3, 1});
  const Tensor upd = Tensor::FromVector<float>({5, 7, 2}, Shape{3});
  auto none = test::RunOp1(Vector(), "ScatterND", {data, ind, upd});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(test::TensorEq(*none, Tensor::FromVector<float>({2, 7, 0}, Shape{3})));
  auto add = test::RunOp1(Vector(), "ScatterND", {data, ind, upd}, {{"reduction", ir::AttrValue(std::string("add"))}});
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_TRUE(test::TensorEq(*add, Tensor::FromVector<float>({2, 12, 0}, Shape{3})));
  // Long slices over threads, many repeated tuples.
  const Tensor big = test::RandomTensor(DataType::kFloat, Shape{16, 4096}, 3);
  const Tensor rows = test::RandomTensor(DataType::kInt64, Shape{64, 1}, 4, -16, 15);
  const Tensor vals = test::RandomTensor(DataType::kFloat, Shape{64, 4096}, 5);
  ir::OpDesc op = test::OpBuilder("ScatterND", "n")
                      .Inputs({big, rows, vals})
                      .Outputs(1)
                      .Attr("reduction", ir::AttrValue(std::string("add")))
                      .Build();
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {big, rows, vals}, test::Tolerance{0, 0}, options));
  EXPECT_FALSE(
      test::RunOp1(Vector(), "ScatterND",
                   {data, Tensor::FromVector<int64_t>({3}, Shape{1, 1}), Tensor::FromVector<float>({1}, Shape{1})})
          .ok());
}

}  // namespace
}  // namespace ge::engine::cpu_vector
