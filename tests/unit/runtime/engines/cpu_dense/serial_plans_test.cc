// Memory-bound plans below kSerialElements run on the calling thread alone
// (DenseKernel::MemoryBoundElements): for each kernel that declares its
// elements, shapes on both sides of the bound (and one element, odd sizes,
// a broadcast operand), run with a team of several threads, match the
// reference and run serially exactly when they are small.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

// [N, C, H, W] f32 with its bytes channels-last.
Tensor ChannelsLast(const Tensor& t) {
  Tensor out = *Tensor::Allocate(t.dtype(), t.shape());
  const int64_t n = t.shape().dim(0), c = t.shape().dim(1), hw = t.shape().dim(2) * t.shape().dim(3);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < hw; ++p)
        out.data<float>()[(b * hw + p) * c + ch] = t.data<float>()[(b * c + ch) * hw + p];
    }
  }
  return out;
}

// Runs `c` on cpu_dense with a team of several threads and checks it
// against `want` (host_cpu's result when null) and whether it ran serially.
void Check(const Case& c, bool serial, const Tensor* want = nullptr) {
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  const int64_t before = SerialRuns().load();
  auto got = test::RunKernel(Dense(), c.op, c.inputs, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(SerialRuns().load() - before, serial ? 1 : 0)
      << c.op.type() << " " << c.inputs[0].tensor().shape().ToString();
  Tensor expected;
  if (want != nullptr) {
    expected = *want;
  } else {
    auto host = test::RunKernel(Host(), c.op, c.inputs, options);
    ASSERT_TRUE(host.ok()) << host.status();
    expected = (*host)[0].tensor();
  }
  EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), expected, c.tolerance))
      << c.op.type() << " " << c.inputs[0].tensor().shape().ToString();
}

// Spatial sizes of [2, 8, H, W] inputs: 16 elements, odd ones, just below,
// at and above the bound (kSerialElements = 16 * 1024 = 2 * 8 * 1024).
struct Size {
  int64_t h, w;
};
const Size kSizes[] = {{1, 1}, {3, 7}, {31, 33}, {32, 32}, {33, 35}};

bool Small(const Shape& s) { return s.NumElementsUnchecked() < kSerialElements; }

TEST(CpuDenseSerialPlans, UnaryAndBinaryOpsOnBothSidesOfTheBound) {
  Rng rng(11);
  for (const Size& sz : kSizes) {
    const Shape x{2, 8, sz.h, sz.w};
    const Tensor a = rng.Random(DataType::kFloat, x, -3, 3);
    for (const char* type : {"Relu", "Tanh", "Sigmoid"}) Check(MakeCase(type, {a}), Small(x));
    // A per-channel operand broadcast over the spatial dims, on either side.
    const Tensor scale = rng.Random(DataType::kFloat, Shape{1, 8, 1, 1});
    Check(MakeCase("Mul", {a, scale}), Small(x));
    Check(MakeCase("Add", {scale, a}), Small(x));
    Check(MakeCase("Sub", {a, rng.Random(DataType::kFloat, x)}), Small(x));
  }
  // One element: serial.
  const Tensor one = rng.Random(DataType::kFloat, Shape{1});
  Check(MakeCase("Relu", {one}), true);
  Check(MakeCase("Add", {one, one}), true);
}

TEST(CpuDenseSerialPlans, PoolingConcatAndNormalizationsOnBothSidesOfTheBound) {
  Rng rng(12);
  for (const Size& sz : kSizes) {
    const Shape x{2, 8, sz.h, sz.w};
    const Tensor a = rng.Random(DataType::kFloat, x, -3, 3);
    Check(MakeCase("MaxPool", {a},
                   {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{1, 1})},
                    {"strides", ir::AttrValue(std::vector<int64_t>{1, 1})}}),
          Small(x));
    if (sz.h >= 3 && sz.w >= 3) {
      Check(MakeCase("AveragePool", {a},
                     {{"kernel_shape", ir::AttrValue(std::vector<int64_t>{3, 3})},
                      {"pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1})}}),
            Small(x));
    }
    Check(MakeCase("GlobalAveragePool", {a}), Small(x));
    // Concat: the elements of both inputs count.
    const Shape half{2, 4, sz.h, sz.w};
    Check(MakeCase("Concat", {rng.Random(DataType::kFloat, half), rng.Random(DataType::kFloat, half)},
                   {{"axis", ir::AttrValue(int64_t{1})}}),
          Small(x));
    const Tensor c8 = rng.Random(DataType::kFloat, Shape{8});
    const Tensor var = rng.Random(DataType::kFloat, Shape{8}, 0.5, 2.0);
    Check(MakeCase("BatchNormalization", {a, c8, c8, c8, var}, {}, test::Tolerance{1e-5, 1e-5}), Small(x));
    Check(MakeCase("Softmax", {a}, {{"axis", ir::AttrValue(int64_t{-1})}}, test::Tolerance{1e-6, 1e-5}), Small(x));
    const Tensor w = rng.Random(DataType::kFloat, Shape{sz.w});
    Check(MakeCase("LayerNormalization", {a, w, rng.Random(DataType::kFloat, Shape{sz.w})},
                   {{"axis", ir::AttrValue(int64_t{-1})}, {"epsilon", ir::AttrValue(1e-5f)}},
                   test::Tolerance{2e-5, 2e-5}),
          Small(x));
  }
}

TEST(CpuDenseSerialPlans, LayoutConversionsOnBothSidesOfTheBound) {
  Rng rng(13);
  for (const Size& sz : kSizes) {
    const Shape x{2, 8, sz.h, sz.w};
    const Tensor plain = rng.Random(DataType::kFloat, x);
    const Tensor nhwc = ChannelsLast(plain);
    Check(MakeCase("TransData", {plain}, {{"src_format", ir::AttrValue("ND")}, {"dst_format", ir::AttrValue("NHWC")}}),
          Small(x), &nhwc);
    Check(MakeCase("TransData", {nhwc}, {{"src_format", ir::AttrValue("NHWC")}, {"dst_format", ir::AttrValue("ND")}}),
          Small(x), &plain);
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
