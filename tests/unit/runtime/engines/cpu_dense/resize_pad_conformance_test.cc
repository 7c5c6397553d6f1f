// Resize, Pad and InstanceNormalization on channel-blocked (and, for
// Resize and Pad, channels-last) tensors against host_cpu on the plain
// ones; Resize's empty roi / scales inputs.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

// ---- Resize of channel-blocked tensors ----

// `t` (f32 [N, C, spatial...], C a multiple of `block`) in channel blocks.
Tensor ChannelBlocked(const Tensor& t, int64_t block) {
  Tensor out = *Tensor::Allocate(t.dtype(), t.shape());
  const int64_t n = t.shape().dim(0), c = t.shape().dim(1);
  const int64_t inner = n * c == 0 ? 0 : t.NumElements() / (n * c);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < inner; ++p) {
        out.data<float>()[((b * (c / block) + ch / block) * inner + p) * block + ch % block] =
            t.data<float>()[(b * c + ch) * inner + p];
      }
    }
  }
  return out;
}

// The layout pass hands a spatial Resize after a convolution its input's
// blocked layout on both ports: every mode and coordinate transformation,
// 2-D and 3-D, up and down, by scales and by sizes, equals host_cpu's plain
// result laid out alike. A Resize of the channels in a blocked layout (which
// the layout pass never asks for) still computes. Trials 24 on are
// channels-last (NHWC / NDHWC, as after a convolution oneDNN runs
// channels-last: one block of all C lanes, any C).
TEST(CpuDenseResize, ChannelBlockedLayoutsGiveTheLaidOutPlainResult) {
  Rng rng(13);
  const std::vector<std::string> transforms = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                               "tf_half_pixel_for_nn"};
  for (int trial = 0; trial < 40; ++trial) {
    const bool channels_last = trial >= 24;
    const int64_t rank = trial % 3 == 0 ? 5 : 4;
    int64_t block = trial % 2 == 0 ? 8 : 16;
    ir::Format format = block == 8 ? ir::Format::kNChw8c : ir::Format::kNChw16c;
    if (channels_last) {
      block = rng.Pick<int64_t>({1, 3, 13, 32, 40});
      format = rank == 5 ? ir::Format::kNDHWC : ir::Format::kNHWC;
    }
    Shape x{rng.Int(1, 3), channels_last ? block : block * rng.Int(1, 2)};
    for (int64_t d = 2; d < rank; ++d) x.push_back(rng.Int(1, 9));
    const bool linear = trial % 4 < 2;
    ir::AttrMap attrs = {{"mode", ir::AttrValue(std::string(linear ? "linear" : "nearest"))},
                         {"coordinate_transformation_mode", ir::AttrValue(transforms[trial % transforms.size()])}};
    if (!linear) attrs["nearest_mode"] = ir::AttrValue(std::string(trial % 3 == 1 ? "floor" : "round_prefer_ceil"));
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x), Value()};
    const bool channels = trial == 23;  // channels resized (generic rows)
    if (trial % 5 == 4) {
      Tensor sizes = *Tensor::Allocate(DataType::kInt64, Shape{rank});
      for (int64_t d = 0; d < rank; ++d) sizes.data<int64_t>()[d] = d < 2 ? x.dim(d) : rng.Int(1, 12);
      inputs.push_back(Value());
      inputs.push_back(Value(sizes));
    } else {
      Tensor scales = *Tensor::Allocate(DataType::kFloat, Shape{rank});
      for (int64_t d = 0; d < rank; ++d) {
        scales.data<float>()[d] = d >= 2 ? rng.Pick<float>({0.5f, 0.75f, 1.0f, 2.0f, 2.5f}) : 1.0f;
      }
      if (channels) scales.data<float>()[1] = 2.0f;
      inputs.push_back(Value(scales));
    }
    Case plain = MakeCase("Resize", inputs, attrs);
    auto want = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(Rejection(plain).ok()) << Rejection(plain);
    ir::OpDesc laid = plain.op;
    laid.mutable_input(0).type.mutable_tensor().format = format;
    test::RunOptions options;
    auto types = test::InferOutputTypes(plain.op, plain.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    options.output_types = *types;
    options.output_types[0].mutable_tensor().format = format;
    laid.mutable_output(0).type = options.output_types[0];
    std::vector<Value> laid_inputs = inputs;
    laid_inputs[0] = Value(ChannelBlocked(inputs[0].tensor(), block));
    const int64_t fallbacks = ReferenceRuns().load();
    auto got = test::RunKernel(Dense(), laid, laid_inputs, options);
    ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
    EXPECT_EQ(ReferenceRuns().load(), fallbacks);
    EXPECT_TRUE(
        test::TensorNear((*got)[0].tensor(), ChannelBlocked((*want)[0].tensor(), block), test::Tolerance{1e-5, 1e-5}))
        << "trial " << trial << " " << x.ToString() << " " << ir::FormatName(format);
  }
}

// Exporters pass an empty roi (and empty scales beside sizes) for "not
// given": cpu_dense computes such a Resize itself (it ran on the reference
// kernel before), with the same result as host_cpu, in every combination
// of absent and empty, nearest and linear, upsampling and down, odd sizes.
TEST(CpuDenseResize, EmptyRoiAndScalesMeanAbsent) {
  Rng rng(29);
  const Tensor empty_f32 = *Tensor::Allocate(DataType::kFloat, Shape{0});
  for (int trial = 0; trial < 16; ++trial) {
    const Shape x{rng.Int(1, 2), rng.Int(1, 5), rng.Int(1, 7), rng.Int(1, 9)};
    const bool linear = trial % 2 == 0;
    ir::AttrMap attrs = {{"mode", ir::AttrValue(std::string(linear ? "linear" : "nearest"))}};
    const bool empty_roi = trial % 4 < 2;
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x), empty_roi ? Value(empty_f32) : Value()};
    if (trial % 8 < 4) {  // by sizes, scales empty
      Tensor sizes = *Tensor::Allocate(DataType::kInt64, Shape{4});
      for (int64_t d = 0; d < 4; ++d) sizes.data<int64_t>()[d] = d < 2 ? x.dim(d) : rng.Int(1, 17);
      inputs.push_back(Value(empty_f32));
      inputs.push_back(Value(sizes));
    } else {  // by scales, sizes empty or absent
      Tensor scales = *Tensor::Allocate(DataType::kFloat, Shape{4});
      for (int64_t d = 0; d < 4; ++d)
        scales.data<float>()[d] = d < 2 ? 1.0f : rng.Pick<float>({0.5f, 2.0f, 3.0f, 16.0f});
      inputs.push_back(Value(scales));
      if (trial % 3 == 0) inputs.push_back(Value(*Tensor::Allocate(DataType::kInt64, Shape{0})));
    }
    Case c = MakeCase("Resize", inputs, attrs);
    auto want = test::RunKernel(Host(), c.op, c.inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(Rejection(c).ok()) << Rejection(c);
    const int64_t fallbacks = ReferenceRuns().load();
    auto got = test::RunKernel(Dense(), c.op, c.inputs);
    ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
    EXPECT_EQ(ReferenceRuns().load(), fallbacks) << "trial " << trial << ": ran on the reference kernel";
    EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), (*want)[0].tensor(), test::Tolerance{1e-5, 1e-5}))
        << "trial " << trial << " " << x.ToString();
  }
  // An empty data input still runs the reference (it computes the empty result).
  Tensor sizes = *Tensor::Allocate(DataType::kInt64, Shape{4});
  for (int64_t d = 0; d < 4; ++d) sizes.data<int64_t>()[d] = d == 0 ? 0 : 3;
  Case empty = MakeCase(
      "Resize",
      {Value(*Tensor::Allocate(DataType::kFloat, Shape{0, 3, 2, 2})), Value(empty_f32), Value(empty_f32), Value(sizes)},
      {{"mode", ir::AttrValue(std::string("linear"))}});
  auto got = test::RunKernel(Dense(), empty.op, empty.inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].tensor().shape(), (Shape{0, 3, 3, 3}));
}

// ---- Pad and InstanceNormalization in channel-blocked layouts ----

// Both follow their input's layout (the layout pass): the blocked kernel
// against host_cpu's plain result, laid out, without the reference path.
// Trials 24 on: Pad of channels-last tensors (NHWC / NDHWC, any C; the
// layout pass gives InstanceNormalization a plain copy of those).
TEST(CpuDensePadNorm, ChannelBlockedLayoutsGiveTheLaidOutPlainResult) {
  Rng rng(17);
  const std::vector<std::string> modes = {"constant", "reflect", "edge"};
  for (int trial = 0; trial < 36; ++trial) {
    const bool channels_last = trial >= 24;
    const int64_t rank = trial % 3 == 0 ? 5 : 4;
    int64_t block = trial % 2 == 0 ? 8 : 16;
    ir::Format format = block == 8 ? ir::Format::kNChw8c : ir::Format::kNChw16c;
    if (channels_last) {
      block = rng.Pick<int64_t>({1, 5, 24, 33});
      format = rank == 5 ? ir::Format::kNDHWC : ir::Format::kNHWC;
    }
    Shape x{rng.Int(1, 3), channels_last ? block : block * rng.Int(1, 2)};
    for (int64_t d = 2; d < rank; ++d) x.push_back(rng.Int(2, 9));
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x, -1, 3)};
    Case plain;
    if (trial % 2 == 0 || channels_last) {
      Tensor pads = *Tensor::Allocate(DataType::kInt64, Shape{2 * rank});
      for (int64_t i = 0; i < 2 * rank; ++i) {
        const int64_t d = i % rank;
        pads.data<int64_t>()[i] = d < 2 ? 0 : std::min(rng.Int(0, 3), x.dim(d) - 1);
      }
      inputs.push_back(Value(pads));
      plain = MakeCase("Pad", inputs, {{"mode", ir::AttrValue(modes[(trial / 2) % 3])}});
    } else {
      inputs.push_back(rng.Random(DataType::kFloat, Shape{x.dim(1)}));
      inputs.push_back(rng.Random(DataType::kFloat, Shape{x.dim(1)}));
      plain = MakeCase("InstanceNormalization", inputs, {{"epsilon", ir::AttrValue(1e-3f)}});
    }
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
    std::vector<Value> laid_inputs = inputs;
    laid_inputs[0] = Value(ChannelBlocked(inputs[0].tensor(), block));
    const int64_t fallbacks = ReferenceRuns().load();
    auto got = test::RunKernel(Dense(), laid, laid_inputs, options);
    ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
    EXPECT_EQ(ReferenceRuns().load(), fallbacks);
    EXPECT_TRUE(
        test::TensorNear((*got)[0].tensor(), ChannelBlocked((*want)[0].tensor(), block), test::Tolerance{1e-5, 1e-5}))
        << "trial " << trial << " " << plain.op.type() << " " << x.ToString() << " " << ir::FormatName(format);
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
