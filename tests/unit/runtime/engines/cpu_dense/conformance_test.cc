// What cpu_dense must refuse, its fallback to the reference kernel for
// shapes it could not see at placement, and thread-budget independence. The
// per-kernel conformance against host_cpu (the case tables of
// conformance_cases_*.cc) runs in tests/unit/runtime/engines/conformance
// beside cpu_vector's.
#include <functional>
#include <tuple>

#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

// ---- What cpu_dense refuses, and why ----

void ExpectRejected(const Case& c, std::string_view reason) {
  const absl::Status s = Rejection(c);
  EXPECT_FALSE(s.ok()) << c.op.type() << " should be rejected (" << reason << ")";
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(std::string(s.message()).find(reason), std::string::npos) << s;
}

TEST(CpuDenseRejects, DtypesOneDnnDoesNotRun) {
  Rng rng(1);
  ExpectRejected(MakeCase("Conv", {rng.Random(DataType::kDouble, Shape{1, 1, 3, 3}),
                                   rng.Random(DataType::kDouble, Shape{1, 1, 1, 1})}),
                 "dtype f64");
  ExpectRejected(MakeCase("MatMul", {rng.Random(DataType::kInt32, Shape{2, 2}),
                                     rng.Random(DataType::kInt32, Shape{2, 2})}),
                 "dtype i32");
  ExpectRejected(MakeCase("Relu", {rng.Random(DataType::kFloat16, Shape{4})}), "dtype f16");
  ExpectRejected(MakeCase("Add", {rng.Random(DataType::kInt64, Shape{4}), rng.Random(DataType::kInt64, Shape{4})}),
                 "dtype i64");
}

TEST(CpuDenseRejects, AttributesAndOutputsItDoesNotHandle) {
  Rng rng(2);
  const Tensor x = rng.Random(DataType::kFloat, Shape{1, 2, 5, 5});
  ExpectRejected(MakeCase("MaxPool", {x}, {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{2, 2})}},
                          std::nullopt, /*num_outputs=*/2),
                 "Indices");
  const Tensor c = rng.Random(DataType::kFloat, Shape{2});
  ExpectRejected(MakeCase("BatchNormalization", {x, c, c, c, c}, {{"training_mode", ir::AttrValue(int64_t{1})}}),
                 "training_mode");
  ExpectRejected(MakeCase("LayerNormalization", {x, rng.Random(DataType::kFloat, Shape{5})}, {}, std::nullopt, 3),
                 "InvStdDev");
  ExpectRejected(MakeCase("AveragePool", {rng.Random(DataType::kFloat, Shape{1, 1, 5, 5})},
                          {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{2, 2})},
                           {"strides", ir::AttrValue(std::vector<int64_t>{2, 2})},
                           {"ceil_mode", ir::AttrValue(int64_t{1})},
                           {"count_include_pad", ir::AttrValue(int64_t{1})}}),
                 "count_include_pad");
  ExpectRejected(MakeCase("Softmax", {Tensor::Scalar<float>(1.0f)}), "scalar");
}

TEST(CpuDenseRejects, BroadcastsOneDnnCannotExpress) {
  Rng rng(3);
  ExpectRejected(MakeCase("Sub", {rng.Random(DataType::kFloat, Shape{1, 3}), rng.Random(DataType::kFloat, Shape{2, 3})}),
                 "broadcasts the second operand only");
  ExpectRejected(MakeCase("Add", {rng.Random(DataType::kFloat, Shape{2, 1}), rng.Random(DataType::kFloat, Shape{1, 3})}),
                 "broadcasts the second operand only");
}

TEST(CpuDenseRejects, PostOpChainsOneDnnMiscomputes) {
  Rng rng(6);
  ir::AttrMap attrs = {{"base", ir::AttrValue("MatMul")},
                       {"post_ops", ir::AttrValue(std::vector<std::string>{"relu", "relu"})},
                       {"post_alpha", ir::AttrValue(std::vector<float>{0.0f, 0.1f})},
                       {"post_beta", ir::AttrValue(std::vector<float>{0.0f, 0.0f})}};
  ExpectRejected(MakeCase("_DenseFused", {rng.Random(DataType::kFloat, Shape{2, 3}), rng.Random(DataType::kFloat, Shape{3, 4})},
                          attrs),
                 "two relu post-ops with different parameters");
}

TEST(CpuDenseRejects, UnknownOpType) {
  ir::OpDesc op("n", "Erf");
  const absl::Status s = Dense().dense_info_store().CheckSupportedOp(op);
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(std::string(s.message()).find("no kernel for op type Erf"), std::string::npos) << s;
}

// Shapes unknown at placement that oneDNN cannot run still compute: the
// kernel runs host_cpu's for them.
TEST(CpuDenseFallback, RunsReferenceForShapesItCannotPlan) {
  Rng rng(4);
  for (const char* type : {"Sub", "Add", "Div"}) {
    Case c = MakeCase(type, {rng.Random(DataType::kFloat, Shape{2, 1}), rng.Random(DataType::kFloat, Shape{1, 3})});
    EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs));
  }
  Case pool = MakeCase("AveragePool", {rng.Random(DataType::kFloat, Shape{1, 1, 5, 5})},
                       {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{2, 2})},
                        {"strides", ir::AttrValue(std::vector<int64_t>{2, 2})},
                        {"ceil_mode", ir::AttrValue(int64_t{1})},
                        {"count_include_pad", ir::AttrValue(int64_t{1})}});
  EXPECT_TRUE(test::MatchesReference(Dense(), Host(), pool.op, pool.inputs));
}

// The device's thread budget reaches oneDNN (OpenMP) and results do not
// depend on it.
TEST(CpuDenseThreads, ResultsDoNotDependOnTheThreadBudget) {
  Rng rng(5);
  Case c = MakeCase("MatMul", {rng.Random(DataType::kFloat, Shape{64, 300}), rng.Random(DataType::kFloat, Shape{300, 96})},
                    {}, test::Tolerance{1e-4, 1e-4});
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance, options));
}

// ---- Global pooling of laid-out inputs ----

// `t` ([N, C, H, W] f32) with its bytes channels-last (block 0) or in
// channel blocks of `block` (C a multiple of it).
Tensor LaidOut(const Tensor& t, int64_t block) {
  Tensor out = *Tensor::Allocate(t.dtype(), t.shape());
  const int64_t n = t.shape().dim(0), c = t.shape().dim(1), hw = t.shape().dim(2) * t.shape().dim(3);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t to =
            block == 0 ? (b * hw + p) * c + ch : ((b * (c / block) + ch / block) * hw + p) * block + ch % block;
        out.data<float>()[to] = t.data<float>()[(b * c + ch) * hw + p];
      }
    }
  }
  return out;
}

TEST(CpuDenseGlobalPool, ChannelsLastAndBlockedInputsGiveThePlainResult) {
  Rng rng(9);
  for (const char* type : {"GlobalAveragePool", "GlobalMaxPool"}) {
    for (auto [format, block, c] : {std::tuple{ir::Format::kNHWC, int64_t{0}, int64_t{13}},
                                    std::tuple{ir::Format::kNChw8c, int64_t{8}, int64_t{24}}}) {
      const Tensor x = rng.Random(DataType::kFloat, Shape{2, c, 7, 5});
      Case plain = MakeCase(type, {x});
      auto want = test::RunKernel(Dense(), plain.op, plain.inputs);
      ASSERT_TRUE(want.ok()) << want.status();
      ir::OpDesc laid = plain.op;
      laid.mutable_input(0).type.mutable_tensor().format = format;
      auto got = test::RunKernel(Dense(), laid, {LaidOut(x, block)});
      ASSERT_TRUE(got.ok()) << got.status();
      // [N, C, 1, 1] plain: the same bytes as the input's layout.
      EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), (*want)[0].tensor(), test::Tolerance{1e-6, 1e-6}))
          << type << " " << ir::FormatName(format);
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
