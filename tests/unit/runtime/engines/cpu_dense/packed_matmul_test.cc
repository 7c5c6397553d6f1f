// The packed-weights path of cpu_dense's MatMul (packed_matmul.h): a
// constant B is packed once per kernel whatever the number of rows (a
// dynamic batch does not repack per batch size), new storage repacks, B
// computed at run time is never packed, products above the row bound run
// on oneDNN with the same results, and the result does not depend on the
// number of threads; a product deeper than one depth block (in equal
// blocks, partial sums through C) matches a double-precision reference
// with its bias and an added operand. The kernel paths themselves are checked against
// host_cpu by engine_conformance_test (cases with a constant B).
#include "runtime/engines/cpu_dense/packed_matmul.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "runtime/engines/cpu_dense/cpu_dense_engine.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr int64_t kK = 37, kN = 45;

// A MatMul [rows, kK] x [kK, kN] with an unknown row count, B marked
// constant or not.
std::unique_ptr<Kernel> MatMulKernel(bool constant_b) {
  test::OpBuilder b("MatMul", "mm");
  b.Inputs(
       {test::RandomTensor(DataType::kFloat, Shape{1, kK}, 1), test::RandomTensor(DataType::kFloat, Shape{kK, kN}, 2)})
      .Outputs(1);
  if (constant_b) b.Attr(kAttrConstInputs, ir::AttrValue(std::vector<int64_t>{1}));
  ir::OpDesc op = b.Build();
  op.mutable_input(0).type = ir::ValueType::Tensor(DataType::kFloat, Shape{-1, kK});
  op.mutable_output(0).type = ir::ValueType::Tensor(DataType::kFloat, Shape{-1, kN});
  auto kernel = PassTestEngine().kernel_factory().CreateKernel(op);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? *std::move(kernel) : nullptr;
}

// Runs the kernel on x, w (shapes unknown at prepare: plans at run time)
// and compares with host_cpu's MatMul.
void ExpectMatMul(Kernel& kernel, const Tensor& x, const Tensor& w) {
  const std::vector<Value> inputs = {x, w};
  const std::vector<ir::ValueType> types = {ir::ValueType::Tensor(DataType::kFloat, Shape{x.shape().dim(0), kN})};
  test::TestExecuteContext ctx(inputs, types, test::TestThreadPool(), 0);
  const absl::Status s = kernel.Compute(ctx);
  ASSERT_TRUE(s.ok()) << s;
  HostCpuEngine host;
  auto expected = test::RunOp1(host, "MatMul", inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_TRUE(test::TensorNear(ctx.outputs()[0].tensor(), *expected, {1e-4, 1e-4})) << x.shape().ToString();
}

class PackedMatMulTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PackedGemmMaxRows() == 0) GTEST_SKIP() << "no AVX2 and FMA, or GED_CPU_DENSE_GEMM=onednn";
  }
  void TearDown() override { SetPackedGemmMaxRows(kPackedGemmMaxRows); }
};

TEST_F(PackedMatMulTest, ConstantWeightsArePackedOnceForEveryRowCount) {
  auto kernel = MatMulKernel(/*constant_b=*/true);
  ASSERT_NE(kernel, nullptr);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{kK, kN}, 3);
  const int64_t before = WeightPacks().load();
  for (int64_t rows : {1, 4, 7, 13, 64, 4}) {
    ExpectMatMul(*kernel, test::RandomTensor(DataType::kFloat, Shape{rows, kK}, 10 + rows), w);
  }
  EXPECT_EQ(WeightPacks().load(), before + 1) << "a new row count packed the weights again";
  // Other storage: packed anew, and the result follows the new values.
  const Tensor w2 = test::RandomTensor(DataType::kFloat, Shape{kK, kN}, 4);
  ExpectMatMul(*kernel, test::RandomTensor(DataType::kFloat, Shape{4, kK}, 5), w2);
  EXPECT_EQ(WeightPacks().load(), before + 2);
}

TEST_F(PackedMatMulTest, WeightsComputedAtRunTimeAreNotPacked) {
  auto kernel = MatMulKernel(/*constant_b=*/false);
  ASSERT_NE(kernel, nullptr);
  Tensor w = test::RandomTensor(DataType::kFloat, Shape{kK, kN}, 6);
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{4, kK}, 7);
  const int64_t before = WeightPacks().load();
  ExpectMatMul(*kernel, x, w);
  for (int64_t i = 0; i < w.NumElements(); ++i) w.data<float>()[i] *= -0.5f;  // new values, same storage
  ExpectMatMul(*kernel, x, w);
  EXPECT_EQ(WeightPacks().load(), before);
}

TEST_F(PackedMatMulTest, RowsAboveTheBoundRunOnOneDnnAlike) {
  auto kernel = MatMulKernel(/*constant_b=*/true);
  ASSERT_NE(kernel, nullptr);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{kK, kN}, 8);
  const int64_t before = WeightPacks().load();
  ExpectMatMul(*kernel, test::RandomTensor(DataType::kFloat, Shape{kPackedGemmMaxWideRows + 1, kK}, 9), w);
  // oneDNN's f32 matmul keeps B plain on AVX2; on AVX-512 its brgemm
  // matmul wants B packed, once for the constant.
  EXPECT_LE(WeightPacks().load() - before, 1) << "the constant is packed at most once";
  SetPackedGemmMaxRows(0);  // off: every row count on oneDNN
  auto onednn = MatMulKernel(/*constant_b=*/true);
  ASSERT_NE(onednn, nullptr);
  ExpectMatMul(*onednn, test::RandomTensor(DataType::kFloat, Shape{4, kK}, 10), w);
}

TEST_F(PackedMatMulTest, ResultsDoNotDependOnTheThreads) {
  constexpr int64_t kRows = 40;  // enough work for a team of two either way
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{kRows, 300}, 11);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{300, 70}, 12);
  PanelWeights weights;
  const PanelWeights::Panels panels = weights.Get(w, 300, 70, /*transposed=*/false);
  std::vector<float> one(kRows * 70), two(kRows * 70), rows(kRows * 16);
  GemmArgs g{};
  g.a = x.data<float>();
  g.lda = 300;
  g.rows = kRows;
  g.k = 300;
  g.packed = panels->data();
  g.n = 70;
  g.ldc = 70;
  g.c = one.data();
  RunPackedGemm(g, 1);
  g.c = two.data();
  RunPackedGemm(g, 2);  // by panels
  g.n = 16;             // one panel: by rows
  g.ldc = 16;
  g.c = rows.data();
  RunPackedGemm(g, 2);
  EXPECT_EQ(one, two);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t j = 0; j < 16; ++j) EXPECT_EQ(rows[r * 16 + j], one[r * 70 + j]) << r << "," << j;
  }
}

TEST_F(PackedMatMulTest, RowBoundsFollowTheWidth) {
  EXPECT_TRUE(PackedGemmFits(kPackedGemmMaxRows, 4096, 16));   // few rows: any shape
  EXPECT_TRUE(PackedGemmFits(128, 768, 2304));                 // QKV: twice as wide as deep
  EXPECT_TRUE(PackedGemmFits(128, 3072, kPackedGemmMinCols));  // FFN down, 512 wide
  EXPECT_FALSE(PackedGemmFits(197, 768, 192));                 // narrow: oneDNN
  EXPECT_FALSE(PackedGemmFits(kPackedGemmMaxWideRows + 1, 768, 3072));
  SetPackedGemmMaxRows(0);
  EXPECT_FALSE(PackedGemmFits(1, 768, 3072));
}

TEST_F(PackedMatMulTest, DepthPastOneBlockMatchesReference) {
  // 3 blocks of the depth; 13 and 20 rows (more than two row blocks, so
  // the depth is blocked; tiles of 6 + 4 + 3 and 6 + 6 + 4 + 4 rows), 33
  // columns (a panel tail).
  constexpr int64_t kDepth = 2 * kGemmDepthBlock + 37, kCols = 33;
  for (int64_t rows : {13, 20}) {
    const Tensor x = test::RandomTensor(DataType::kFloat, Shape{rows, kDepth}, 20 + rows);
    const Tensor w = test::RandomTensor(DataType::kFloat, Shape{kDepth, kCols}, 21);
    const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{kCols}, 22);
    const Tensor add = test::RandomTensor(DataType::kFloat, Shape{rows, kCols}, 23);
    PanelWeights weights;
    const PanelWeights::Panels panels = weights.Get(w, kDepth, kCols, /*transposed=*/false);
    const std::vector<GemmStep> steps = {{0, 0.0f, 0.0f}, {1, 0.0f, 0.0f}};  // add, relu
    std::vector<float> out(rows * kCols);
    GemmArgs g{};
    g.a = x.data<float>();
    g.lda = kDepth;
    g.rows = rows;
    g.k = kDepth;
    g.packed = panels->data();
    g.n = kCols;
    g.c = out.data();
    g.ldc = kCols;
    g.bias = bias.data<float>();
    g.add = add.data<float>();
    g.add_ld = kCols;
    g.steps = steps.data();
    g.num_steps = static_cast<int32_t>(steps.size());
    RunPackedGemm(g, 1);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < kCols; ++j) {
        double sum = bias.data<float>()[j];
        for (int64_t p = 0; p < kDepth; ++p) {
          sum += static_cast<double>(x.data<float>()[r * kDepth + p]) * w.data<float>()[p * kCols + j];
        }
        const double expected = std::max(0.0, sum + add.data<float>()[r * kCols + j]);
        EXPECT_NEAR(out[r * kCols + j], expected, 1e-3 * (1.0 + std::abs(expected))) << rows << ": " << r << "," << j;
      }
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
