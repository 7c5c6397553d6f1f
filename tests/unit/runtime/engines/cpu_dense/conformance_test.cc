// What cpu_dense must refuse, its fallback to the reference kernel for
// shapes it could not see at placement, thread-budget independence (and
// small LayerNorms on one thread, SerialScope; the recurrent kernels' in
// recurrent_conformance_test.cc). The
// per-kernel conformance against host_cpu (the case tables of
// conformance_cases_*.cc) runs in tests/unit/runtime/engines/conformance
// beside cpu_vector's.
#include <omp.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "base/thread_pool.h"
#include "runtime/engines/cpu_dense/dense_ops.h"
#include "runtime/engines/cpu_dense/dnnl_util.h"
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
  ExpectRejected(
      MakeCase("MatMul", {rng.Random(DataType::kInt32, Shape{2, 2}), rng.Random(DataType::kInt32, Shape{2, 2})}),
      "dtype i32");
  ExpectRejected(MakeCase("Relu", {rng.Random(DataType::kFloat16, Shape{4})}), "dtype f16");
  ExpectRejected(MakeCase("Add", {rng.Random(DataType::kInt64, Shape{4}), rng.Random(DataType::kInt64, Shape{4})}),
                 "dtype i64");
}

TEST(CpuDenseRejects, AttributesAndOutputsItDoesNotHandle) {
  Rng rng(2);
  const Tensor x = rng.Random(DataType::kFloat, Shape{1, 2, 5, 5});
  ExpectRejected(MakeCase("MaxPool", {x}, {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{2, 2})}}, std::nullopt,
                          /*num_outputs=*/2),
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
  ExpectRejected(
      MakeCase("Sub", {rng.Random(DataType::kFloat, Shape{1, 3}), rng.Random(DataType::kFloat, Shape{2, 3})}),
      "broadcasts the second operand only");
  ExpectRejected(
      MakeCase("Add", {rng.Random(DataType::kFloat, Shape{2, 1}), rng.Random(DataType::kFloat, Shape{1, 3})}),
      "broadcasts the second operand only");
}

TEST(CpuDenseRejects, PostOpChainsOneDnnMiscomputes) {
  Rng rng(6);
  ir::AttrMap attrs = {{"base", ir::AttrValue("MatMul")},
                       {"post_ops", ir::AttrValue(std::vector<std::string>{"relu", "relu"})},
                       {"post_alpha", ir::AttrValue(std::vector<float>{0.0f, 0.1f})},
                       {"post_beta", ir::AttrValue(std::vector<float>{0.0f, 0.0f})}};
  ExpectRejected(
      MakeCase("_DenseFused", {rng.Random(DataType::kFloat, Shape{2, 3}), rng.Random(DataType::kFloat, Shape{3, 4})},
               attrs),
      "two relu post-ops with different parameters");
}

TEST(CpuDenseRejects, UnknownOpType) {
  ir::OpDesc op("n", "Erf");
  const absl::Status s = Dense().dense_info_store().CheckSupportedOp(op);
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(std::string(s.message()).find("no kernel for op type Erf"), std::string::npos) << s;
}

// Broadcasts that oneDNN's jit kernels take only in fewer dims (a [3, H, W]
// image normalized by a [3, 1, 1] mean: its reference kernel took 100 ms at
// 320x320; Swin's window masks) are accepted and compute; those it cannot take at all go to
// another engine.
TEST(CpuDenseBinary, BroadcastsDescribedInFewerDims) {
  Rng rng(8);
  const std::vector<std::pair<Shape, Shape>> accepted = {
      {Shape{3, 20, 24}, Shape{3, 1, 1}},
      {Shape{2, 3, 5, 7}, Shape{2, 3, 1, 1}},
      {Shape{6, 1, 5, 7}, Shape{6, 1, 1, 1}},
      {Shape{4, 9}, Shape{4, 1}},
      {Shape{4, 5, 6}, Shape{4, 1, 6}},
      {Shape{3, 4, 5}, Shape{3, 4, 1}},
      {Shape{1, 6, 3, 7, 7}, Shape{1, 6, 1, 7, 7}},  // Swin's shifted-window mask
      {Shape{2, 3, 4, 5}, Shape{2, 1, 1, 1}},
      {Shape{5, 8, 16}, Shape{1, 8, 1}},
  };
  for (const char* type : {"Sub", "Div", "Add", "Mul"}) {
    for (const auto& [a, b] : accepted) {
      Case c = MakeCase(type, {rng.Random(DataType::kFloat, a, -2, 2), rng.Random(DataType::kFloat, b, 0.5, 2)});
      const absl::Status s = Rejection(c);
      EXPECT_TRUE(s.ok()) << type << " " << a.ToString() << " " << b.ToString() << ": " << s;
      if (s.ok()) {
        EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs)) << type << " " << a.ToString();
      }
    }
  }
  ExpectRejected(MakeCase("Sub", {rng.Random(DataType::kFloat, Shape{2, 3, 4, 5}),
                                  rng.Random(DataType::kFloat, Shape{2, 1, 4, 1})}),
                 "reference kernel");
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
  Case c =
      MakeCase("MatMul", {rng.Random(DataType::kFloat, Shape{64, 300}), rng.Random(DataType::kFloat, Shape{300, 96})},
               {}, test::Tolerance{1e-4, 1e-4});
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance, options));
}

// SerialScope: one thread inside when asked, the team size back after;
// nothing changes when not asked.
TEST(CpuDenseThreads, SerialScopeSetsOneThreadAndRestores) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  {
    const SerialScope serial(true);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
  {
    const SerialScope serial(false);
    EXPECT_EQ(omp_get_max_threads(), 2);
  }
  omp_set_num_threads(saved);
}

// LayerNormalization below the serial bound (norm_kernels.cc: 8 rows of
// 64, a tabular MLP at batch 8) and above it (300 rows of 64), each with
// the device's team: both match the reference.
TEST(CpuDenseThreads, LayerNormOnBothSidesOfTheSerialBound) {
  Rng rng(9);
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  for (int64_t rows : {1, 8, 255, 256, 300}) {
    Case c = MakeCase("LayerNormalization",
                      {rng.Random(DataType::kFloat, Shape{rows, 64}, -3, 3), rng.Random(DataType::kFloat, Shape{64}),
                       rng.Random(DataType::kFloat, Shape{64})},
                      {{"axis", ir::AttrValue(int64_t{-1})}, {"epsilon", ir::AttrValue(1e-5f)}},
                      test::Tolerance{2e-5, 2e-5});
    EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance, options)) << rows << " rows";
  }
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

// A binary op of a laid-out operand (blocked or channels-last) and a plain
// one-element operand of rank 0, 1 or 4, either side when the op commutes,
// as the layout pass hands it: host_cpu's plain result laid out alike.
TEST(CpuDenseBinary, OneElementOperandBesideALaidOutOne) {
  Rng rng(31);
  for (const char* type : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    for (int trial = 0; trial < 6; ++trial) {
      const int64_t block = trial % 3 == 0 ? 8 : trial % 3 == 1 ? 16 : 0;
      const ir::Format format = block == 8    ? ir::Format::kNChw8c
                                : block == 16 ? ir::Format::kNChw16c
                                              : ir::Format::kNHWC;
      const int64_t c = block == 0 ? rng.Int(1, 20) : block * rng.Int(1, 2);
      const Shape xs{rng.Int(1, 3), c, rng.Int(1, 7), rng.Int(1, 9)};
      const Shape ss = trial < 2 ? Shape{} : trial < 4 ? Shape{1} : Shape{1, 1, 1, 1};
      const Tensor x = rng.Random(DataType::kFloat, xs);
      const Tensor s = rng.Random(DataType::kFloat, ss, 0.5, 2.0);
      const bool scalar_first = trial % 2 == 1 && std::string(type) != "Sub" && std::string(type) != "Div";
      std::vector<Value> inputs = scalar_first ? std::vector<Value>{s, x} : std::vector<Value>{x, s};
      Case plain = MakeCase(type, inputs);
      auto want = test::RunKernel(Host(), plain.op, plain.inputs);
      ASSERT_TRUE(want.ok()) << want.status();
      ir::OpDesc laid = plain.op;
      laid.mutable_input(scalar_first ? 1 : 0).type.mutable_tensor().format = format;
      test::RunOptions options;
      auto types = test::InferOutputTypes(plain.op, plain.inputs);
      ASSERT_TRUE(types.ok()) << types.status();
      options.output_types = *types;
      options.output_types[0].mutable_tensor().format = format;
      laid.mutable_output(0).type = options.output_types[0];
      std::vector<Value> laid_inputs = inputs;
      laid_inputs[scalar_first ? 1 : 0] = Value(LaidOut(x, block));
      auto got = test::RunKernel(Dense(), laid, laid_inputs, options);
      ASSERT_TRUE(got.ok()) << got.status() << " " << type << " trial " << trial;
      EXPECT_TRUE(
          test::TensorNear((*got)[0].tensor(), LaidOut((*want)[0].tensor(), block), test::Tolerance{1e-6, 1e-6}))
          << type << " trial " << trial << " " << xs.ToString() << " " << ss.ToString() << " "
          << ir::FormatName(format);
    }
  }
}

// A per-channel operand [N or 1, C, 1, 1] (squeeze-excite's scale) is
// stored alike plain and channels-last: read in place beside an NHWC one.
TEST(CpuDenseBinary, PerChannelOperandBesideAChannelsLastOne) {
  Rng rng(37);
  for (const char* type : {"Mul", "Add", "Sub"}) {
    for (int trial = 0; trial < 4; ++trial) {
      const Shape xs{rng.Int(1, 3), rng.Int(1, 40), rng.Int(1, 7), rng.Int(1, 9)};
      const Shape cs{trial % 2 == 0 ? 1 : xs.dim(0), xs.dim(1), 1, 1};
      const Tensor x = rng.Random(DataType::kFloat, xs);
      const Tensor s = rng.Random(DataType::kFloat, cs);
      Case plain = MakeCase(type, {x, s});
      auto want = test::RunKernel(Host(), plain.op, plain.inputs);
      ASSERT_TRUE(want.ok()) << want.status();
      ir::OpDesc laid = plain.op;
      laid.mutable_input(0).type.mutable_tensor().format = ir::Format::kNHWC;
      test::RunOptions options;
      auto types = test::InferOutputTypes(plain.op, plain.inputs);
      ASSERT_TRUE(types.ok()) << types.status();
      options.output_types = *types;
      options.output_types[0].mutable_tensor().format = ir::Format::kNHWC;
      laid.mutable_output(0).type = options.output_types[0];
      auto got = test::RunKernel(Dense(), laid, {Value(LaidOut(x, 0)), Value(s)}, options);
      ASSERT_TRUE(got.ok()) << got.status() << " " << type << " trial " << trial;
      EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), LaidOut((*want)[0].tensor(), 0), test::Tolerance{1e-6, 1e-6}))
          << type << " trial " << trial << " " << xs.ToString() << " " << cs.ToString();
    }
  }
}

// MaxPool and AveragePool with the blocked layout on both ports (as the
// layout pass hands them after a convolution) against host_cpu's plain
// result laid out alike: strides, pads, dilations, ceil_mode, both pad
// rules, one thread and a team. 2-D f32 max and exclude-pad pools run the
// engine's own loop on AVX2 CPUs, the rest oneDNN's; neither falls back.
TEST(CpuDensePool, ChannelBlockedLayoutsGiveTheLaidOutPlainResult) {
  Rng rng(21);
  for (int trial = 0; trial < 32; ++trial) {
    const bool max = trial % 3 != 2;
    const int64_t block = trial % 2 == 0 ? 8 : 16;
    const ir::Format format = block == 8 ? ir::Format::kNChw8c : ir::Format::kNChw16c;
    const Shape x{rng.Int(1, 3), block * rng.Int(1, 2), rng.Int(3, 40), rng.Int(3, 40)};
    const int64_t kh = rng.Int(1, 3), kw = rng.Int(1, 3);
    const int64_t ph = rng.Int(0, kh - 1), pw = rng.Int(0, kw - 1);
    ir::AttrMap attrs = {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{kh, kw})},
                         {"strides", ir::AttrValue(std::vector<int64_t>{rng.Int(1, 2), rng.Int(1, 3)})},
                         {"pads", ir::AttrValue(std::vector<int64_t>{ph, pw, ph, pw})},
                         {"ceil_mode", ir::AttrValue(int64_t{rng.Bool()})}};
    if (max) attrs["dilations"] = ir::AttrValue(std::vector<int64_t>{rng.Int(1, 2), 1});
    if (!max) attrs["count_include_pad"] = ir::AttrValue(int64_t{trial % 4 == 3});
    Case plain = MakeCase(max ? "MaxPool" : "AveragePool", {rng.Random(DataType::kFloat, x, -50, 50)}, attrs);
    if (!Rejection(plain).ok()) continue;
    auto want = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    ir::OpDesc laid = plain.op;
    laid.mutable_input(0).type.mutable_tensor().format = format;
    test::RunOptions options;
    auto types = test::InferOutputTypes(plain.op, plain.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    options.output_types = *types;
    options.output_types[0].mutable_tensor().format = format;
    laid.mutable_output(0).type = options.output_types[0];
    if (trial % 4 < 2) options.thread_pool = test::TestThreadPool();
    const int64_t fallbacks = ReferenceRuns().load();
    auto got = test::RunKernel(Dense(), laid, {LaidOut(plain.inputs[0].tensor(), block)}, options);
    ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
    EXPECT_EQ(ReferenceRuns().load(), fallbacks);
    EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), LaidOut((*want)[0].tensor(), block), test::Tolerance{1e-5, 1e-5}))
        << "trial " << trial << " " << plain.op.type() << " " << x.ToString() << " " << ir::FormatName(format);
  }
}

// Conv with channels-last on both ports (what the layout pass hands a
// convolution between channels-last neighbours, grouped ones included:
// the kernel then builds a channels-last primitive when oneDNN has a JIT
// one) against host_cpu's plain result laid out alike: groups from 1 to
// depthwise, strides, pads, bias, batch 1-2, odd channel counts, one
// thread and a team. None falls back to the reference.
TEST(CpuDenseConv, ChannelsLastPortsGiveTheLaidOutPlainResult) {
  Rng rng(33);
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t group = std::vector<int64_t>{1, 2, 4, 0}[trial % 4];  // 0: depthwise
    const int64_t per_group = group == 0 ? 1 : rng.Int(1, 3) * (trial % 3 == 0 ? 3 : 8);
    const int64_t groups = group == 0 ? rng.Int(3, 40) : group;
    const int64_t c = per_group * groups, oc = group == 0 ? c : groups * rng.Int(1, 3) * 8;
    const int64_t k = rng.Int(1, 3), stride = rng.Int(1, 2), pad = rng.Int(0, k - 1);
    const Shape x{rng.Int(1, 2), c, rng.Int(3, 17), rng.Int(3, 17)};
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x),
                                 rng.Random(DataType::kFloat, Shape{oc, per_group, k, k})};
    if (trial % 2 == 0) inputs.push_back(rng.Random(DataType::kFloat, Shape{oc}));
    Case plain = MakeCase("Conv", std::move(inputs),
                          {{"group", ir::AttrValue(groups)},
                           {"strides", ir::AttrValue(std::vector<int64_t>{stride, stride})},
                           {"pads", ir::AttrValue(std::vector<int64_t>{pad, pad, pad, pad})}});
    auto want = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    ir::OpDesc laid = plain.op;
    laid.mutable_input(0).type.mutable_tensor().format = ir::Format::kNHWC;
    test::RunOptions options;
    auto types = test::InferOutputTypes(plain.op, plain.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    options.output_types = *types;
    options.output_types[0].mutable_tensor().format = ir::Format::kNHWC;
    laid.mutable_output(0).type = options.output_types[0];
    if (trial % 4 < 2) options.thread_pool = test::TestThreadPool();
    std::vector<Value> laid_inputs = plain.inputs;
    laid_inputs[0] = LaidOut(plain.inputs[0].tensor(), 0);
    const int64_t fallbacks = ReferenceRuns().load();
    auto got = test::RunKernel(Dense(), laid, laid_inputs, options);
    ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
    EXPECT_EQ(ReferenceRuns().load(), fallbacks);
    EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), LaidOut((*want)[0].tensor(), 0), test::Tolerance{1e-4, 1e-4}))
        << "trial " << trial << " " << x.ToString() << " group " << groups << " oc " << oc << " k " << k;
  }
}

// ConvTranspose likewise (a UNet's upsampling between channels-last
// convolutions): groups, strides, pads, output_padding, bias.
// (DeconvPreferredFormat refuses shapes oneDNN cannot run, so those stay
// plain.)
TEST(CpuDenseConvTranspose, ChannelsLastPortsGiveTheLaidOutPlainResult) {
  Rng rng(34);
  for (int trial = 0; trial < 16; ++trial) {
    const int64_t groups = trial % 3 == 2 ? 2 : 1;
    const int64_t c = groups * rng.Int(1, 3) * (trial % 4 == 0 ? 3 : 8), m = groups * rng.Int(1, 3) * 8;
    const int64_t k = rng.Int(1, 3), stride = rng.Int(1, 2), pad = rng.Int(0, k - 1);
    const int64_t out_pad = stride > 1 && trial % 2 == 1 ? 1 : 0;
    const Shape x{rng.Int(1, 2), c, rng.Int(2, 12), rng.Int(2, 12)};
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x),
                                 rng.Random(DataType::kFloat, Shape{c, m / groups, k, k})};
    if (trial % 2 == 0) inputs.push_back(rng.Random(DataType::kFloat, Shape{m}));
    Case plain = MakeCase("ConvTranspose", std::move(inputs),
                          {{"group", ir::AttrValue(groups)},
                           {"strides", ir::AttrValue(std::vector<int64_t>{stride, stride})},
                           {"output_padding", ir::AttrValue(std::vector<int64_t>{out_pad, out_pad})},
                           {"pads", ir::AttrValue(std::vector<int64_t>{pad, pad, pad, pad})}});
    auto want = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    // Shapes oneDNN cannot take (a negative right pad) run host_cpu's kernel
    // on plain tensors; the layout pass never gives them another layout.
    const int64_t before = ReferenceRuns().load();
    ASSERT_TRUE(test::RunKernel(Dense(), plain.op, plain.inputs).ok());
    if (ReferenceRuns().load() != before) continue;
    ir::OpDesc laid = plain.op;
    laid.mutable_input(0).type.mutable_tensor().format = ir::Format::kNHWC;
    test::RunOptions options;
    auto types = test::InferOutputTypes(plain.op, plain.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    options.output_types = *types;
    options.output_types[0].mutable_tensor().format = ir::Format::kNHWC;
    laid.mutable_output(0).type = options.output_types[0];
    if (trial % 4 < 2) options.thread_pool = test::TestThreadPool();
    std::vector<Value> laid_inputs = plain.inputs;
    laid_inputs[0] = LaidOut(plain.inputs[0].tensor(), 0);
    const int64_t fallbacks = ReferenceRuns().load();
    auto got = test::RunKernel(Dense(), laid, laid_inputs, options);
    ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
    EXPECT_EQ(ReferenceRuns().load(), fallbacks);
    EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), LaidOut((*want)[0].tensor(), 0), test::Tolerance{1e-4, 1e-4}))
        << "trial " << trial << " " << x.ToString() << " group " << groups << " m " << m << " k " << k;
  }
}

// ConvTranspose with its kernel equal to its stride between channels-last
// ports (a UNet's 2x2 stride-2 upsampling): the own tiles' path against
// host_cpu, with it on (checking that it ran) and off; channel counts off
// the 16-column panels, non-square kernels, batches, bias or none, a team.
// A padded one keeps oneDNN.
TEST(CpuDenseConvTranspose, KernelEqualToStrideRunsOwnTilesOnChannelsLastPorts) {
  Rng rng(35);
  const bool saved = StrideDeconvEnabled();
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t kh = trial % 3 == 2 ? 3 : 2, kw = trial % 4 == 3 ? 3 : 2;
    const int64_t c = std::vector<int64_t>{1, 3, 16, 37}[trial % 4], m = std::vector<int64_t>{2, 17, 32, 5}[trial % 4];
    const bool padded = trial == 11;
    const Shape x{trial % 2 == 0 ? 1 : 2, c, rng.Int(1, 9), rng.Int(1, 9)};
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x), rng.Random(DataType::kFloat, Shape{c, m, kh, kw})};
    if (trial % 3 != 1) inputs.push_back(rng.Random(DataType::kFloat, Shape{m}));
    const int64_t pad = padded ? 1 : 0;
    Case plain = MakeCase("ConvTranspose", std::move(inputs),
                          {{"strides", ir::AttrValue(std::vector<int64_t>{kh, kw})},
                           {"pads", ir::AttrValue(std::vector<int64_t>{pad, pad, pad, pad})}});
    auto want = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    ir::OpDesc laid = plain.op;
    laid.mutable_input(0).type.mutable_tensor().format = ir::Format::kNHWC;
    test::RunOptions options;
    auto types = test::InferOutputTypes(plain.op, plain.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    options.output_types = *types;
    options.output_types[0].mutable_tensor().format = ir::Format::kNHWC;
    laid.mutable_output(0).type = options.output_types[0];
    options.const_inputs = {1};
    if (trial % 2 == 1) options.thread_pool = test::TestThreadPool();
    std::vector<Value> laid_inputs = plain.inputs;
    laid_inputs[0] = LaidOut(plain.inputs[0].tensor(), 0);
    for (bool on : {true, false}) {
      SetStrideDeconvEnabled(on);
      const int64_t runs = StrideDeconvRuns().load();
      const int64_t fallbacks = ReferenceRuns().load();
      auto got = test::RunKernel(Dense(), laid, laid_inputs, options);
      ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
      EXPECT_EQ(ReferenceRuns().load(), fallbacks);
      if (StrideDeconvEnabled()) {
        EXPECT_EQ(StrideDeconvRuns().load() > runs, !padded) << "trial " << trial;
      }
      EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), LaidOut((*want)[0].tensor(), 0), test::Tolerance{1e-4, 1e-4}))
          << "trial " << trial << " " << x.ToString() << " m " << m << " k " << kh << "x" << kw
          << (on ? " own tiles" : " oneDNN");
    }
  }
  SetStrideDeconvEnabled(saved);
}

// `_ChannelShuffle` (channel_shuffle.h) on plain and channels-last ports,
// f32 and bf16, ranks 3 to 5, groups 1 to 4 (two groups' interleaving path
// with every start and length), odd channel counts, parts of
// the shuffle from any channel, batches 1 to 3, the join of two or three
// inputs, a team: every element
// against the shuffle spelled out (X viewed as [N, g, C/g, S], the two
// channel axes swapped), element for element (a copy).
TEST(CpuDenseChannelShuffle, PlainAndChannelsLastPortsGiveTheShuffledChannels) {
  Rng rng(41);
  for (int trial = 0; trial < 48; ++trial) {
    // Trials 36 on: two groups, f32, channels-last (the interleaving path),
    // up to 40 channels, odd and even starts.
    const bool two = trial >= 36;
    const bool channels_last = two || trial % 2 == 1;
    const DataType dtype = !two && trial % 6 >= 4 ? DataType::kBFloat16 : DataType::kFloat;
    const int64_t rank = two ? 4 : 3 + trial % 3, g = two ? 2 : rng.Int(1, 4), c = g * rng.Int(1, two ? 20 : 9);
    std::vector<int64_t> dims = {rng.Int(1, 3), c};
    for (int64_t d = 2; d < rank; ++d) dims.push_back(trial >= 30 && !two ? rng.Int(9, 40) : rng.Int(1, 6));
    const Shape x_shape(dims);
    const int64_t begin = trial % 4 == 0 ? 0 : rng.Int(0, c - 1);
    const int64_t count = trial % 4 == 0 ? c - begin : rng.Int(0, c - begin);
    const Tensor x = rng.Random(dtype, x_shape);
    const int64_t n = x_shape.dim(0), inner = x.NumElements() / (n * c);
    // The shuffled channel order, from the views and the transpose.
    std::vector<int64_t> shuffled;
    for (int64_t ci = 0; ci < c / g; ++ci) {
      for (int64_t gi = 0; gi < g; ++gi) shuffled.push_back(gi * (c / g) + ci);
    }
    Shape y_shape = x_shape;
    y_shape.set_dim(1, count);
    Tensor want = *Tensor::Allocate(dtype, y_shape);
    const size_t elem = DataTypeSize(dtype);
    // Plain or channels-last offsets of (image, channel, position).
    auto at = [&](int64_t b, int64_t ch, int64_t p, int64_t channels) {
      return channels_last ? (b * inner + p) * channels + ch : (b * channels + ch) * inner + p;
    };
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t j = 0; j < count; ++j) {
        for (int64_t p = 0; p < inner; ++p) {
          std::memcpy(static_cast<char*>(want.raw_data()) + at(b, j, p, count) * elem,
                      static_cast<const char*>(x.raw_data()) + at(b, shuffled[begin + j], p, c) * elem, elem);
        }
      }
    }
    // Every third trial: x as the join of two or three parts along the
    // channels (a Concat the shuffle reads through).
    std::vector<Value> parts;
    int64_t offset = 0;
    // Two groups: two equal halves (ShuffleNet's join: one run per input).
    const bool halves = two && trial % 3 == 2;
    const int64_t pieces = halves ? 2 : trial % 3 == 2 ? std::min<int64_t>(c, rng.Int(2, 3)) : 1;
    for (int64_t k = 0; k < pieces; ++k) {
      const int64_t width = halves ? c / 2 : k + 1 == pieces ? c - offset : rng.Int(1, c - offset - (pieces - 1 - k));
      std::vector<int64_t> part_dims = dims;
      part_dims[1] = width;
      Tensor part = *Tensor::Allocate(dtype, Shape(part_dims));
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < width; ++ch) {
          for (int64_t p = 0; p < inner; ++p) {
            std::memcpy(static_cast<char*>(part.raw_data()) + at(b, ch, p, width) * elem,
                        static_cast<const char*>(x.raw_data()) + at(b, offset + ch, p, c) * elem, elem);
          }
        }
      }
      parts.emplace_back(std::move(part));
      offset += width;
    }
    Case cs = MakeCase("_ChannelShuffle", std::move(parts),
                       {{"group", ir::AttrValue(g)}, {"begin", ir::AttrValue(begin)}, {"count", ir::AttrValue(count)}});
    test::RunOptions options;
    auto types = test::InferOutputTypes(cs.op, cs.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    ASSERT_EQ((*types)[0].shape(), y_shape);
    options.output_types = *types;
    if (channels_last) {
      const ir::Format f = rank == 5 ? ir::Format::kNDHWC : rank == 4 ? ir::Format::kNHWC : ir::Format::kND;
      if (f == ir::Format::kND) continue;  // no channels-last name for rank 3
      for (int i = 0; i < cs.op.num_inputs(); ++i) cs.op.mutable_input(i).type.mutable_tensor().format = f;
      options.output_types[0].mutable_tensor().format = f;
      cs.op.mutable_output(0).type = options.output_types[0];
    }
    if (trial >= 30 && trial % 2 == 0) options.thread_pool = test::TestThreadPool();
    const absl::Status supported = Dense().dense_info_store().CheckSupportedOp(cs.op);
    ASSERT_TRUE(supported.ok() || dtype == DataType::kBFloat16) << supported << " trial " << trial;
    if (!supported.ok()) continue;  // bf16 without the CPU's support
    auto got = test::RunKernel(Dense(), cs.op, cs.inputs, options);
    ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
    const Tensor& y = (*got)[0].tensor();
    ASSERT_EQ(y.shape(), y_shape);
    EXPECT_EQ(std::memcmp(y.raw_data(), want.raw_data(), static_cast<size_t>(y.NumElements()) * elem), 0)
        << "trial " << trial << " " << x_shape.ToString() << " group " << g << " [" << begin << ", " << begin + count
        << ")" << (channels_last ? " channels-last" : " plain");
  }
}

// ---- Concat as contiguous copies ----

// A channel Concat of plain inputs, of channel-blocked inputs with the
// blocked output, and of channels-last ones (a row per input and position;
// at batch 3 with channel counts that are not multiples of 16 floats, so
// every row has a tail after its 64-byte moves) against host_cpu's plain
// result: at batch 1 and 3, small (one thread) and large enough to split
// over a team of the test pool, so every copy's offsets are checked on
// both paths.
TEST(CpuDenseConcat, CopiesEveryLayoutItTakesAndKeepsOneDnnForOthers) {
  Rng rng(11);
  struct Layout {
    ir::Format format;
    int64_t block;
  };
  for (Layout layout : {Layout{ir::Format::kND, -1}, Layout{ir::Format::kNChw8c, 8}, Layout{ir::Format::kNChw16c, 16},
                        Layout{ir::Format::kNHWC, 0}}) {
    for (int64_t n : {1, 3}) {
      for (int64_t hw : {3, 28}) {
        for (bool team : {false, true}) {
          std::vector<Value> plain, laid;
          const std::vector<int64_t> channels =
              layout.block == 0 && n == 3 ? std::vector<int64_t>{3, 17, 1, 40} : std::vector<int64_t>{64, 32, 16, 48};
          for (int64_t c : channels) {
            const Tensor x = rng.Random(DataType::kFloat, Shape{n, c, hw, hw});
            plain.push_back(x);
            laid.push_back(layout.block < 0 ? x : LaidOut(x, layout.block));
          }
          auto want = HostOp("Concat", plain, {{"axis", ir::AttrValue(int64_t{1})}});
          ASSERT_TRUE(want.ok()) << want.status();
          Case c = MakeCase("Concat", laid, {{"axis", ir::AttrValue(int64_t{1})}});
          for (int i = 0; i < c.op.num_inputs(); ++i)
            c.op.mutable_input(i).type.mutable_tensor().format = layout.format;
          test::RunOptions options;
          options.output_types = {ir::ValueType::Tensor(DataType::kFloat, want->shape())};
          options.output_types[0].mutable_tensor().format = layout.format;
          if (team) options.thread_pool = test::TestThreadPool();
          const int64_t reference_runs = ReferenceRuns().load();
          auto got = test::RunKernel(Dense(), c.op, c.inputs, options);
          ASSERT_TRUE(got.ok()) << got.status();
          EXPECT_EQ(ReferenceRuns().load(), reference_runs);
          const Tensor expected = layout.block < 0 ? *want : LaidOut(*want, layout.block);
          EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), expected, test::Tolerance{0, 0}))
              << ir::FormatName(layout.format) << " batch " << n << " " << hw << "x" << hw << " team " << team;
        }
      }
    }
  }
}

// Concat along an inner axis of plain inputs: one run per index of the
// dims before it.
TEST(CpuDenseConcat, InnerAxesCopyRunsPerOuterIndex) {
  Rng rng(12);
  for (int64_t axis : {0, 2, 3, -1}) {
    for (bool team : {false, true}) {
      std::vector<Value> inputs;
      for (int64_t k : {5, 1, 70}) {
        Shape s{2, 3, 40, 33};
        s.set_dim(axis < 0 ? axis + 4 : axis, k);
        inputs.push_back(rng.Random(DataType::kFloat, s));
      }
      auto want = HostOp("Concat", inputs, {{"axis", ir::AttrValue(axis)}});
      ASSERT_TRUE(want.ok()) << want.status();
      Case c = MakeCase("Concat", inputs, {{"axis", ir::AttrValue(axis)}});
      test::RunOptions options;
      if (team) options.thread_pool = test::TestThreadPool();
      auto got = test::RunKernel(Dense(), c.op, c.inputs, options);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), *want, test::Tolerance{0, 0})) << "axis " << axis;
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
