// cpu_dense's own small-output convolution (small_conv.h, conv_loops.h).
//
// The loop against a direct double reference over channel-blocked tensors:
// output sizes across every tile shape (1 to 13 pixels: the 1-3 pixel tail
// over several panels, 4- and 5-pixel tiles, 49 and 196), strides,
// dilations, asymmetric pads, non-square kernels, depths of one pass and of
// several (partial sums between passes), one and several panels and
// images, bias or none, each post-op step the loop applies, an add operand
// in the destination's own buffer, one thread and a team split by panels
// and by images. Then which geometries the path takes, and the Conv kernel
// with the layouts the layout pass gives (nChw8c on every port, a fused
// ReLU and residual add) against host_cpu, checking that the case really
// ran on the path and that turning it off gives oneDNN's result. Skipped
// on CPUs without AVX2 (the loop is AVX2 code; SmallConvEnabled says no).
#include "runtime/engines/cpu_dense/small_conv.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"
#include "tests/unit/runtime/engines/cpu_dense/conv_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

// Restores the path's switch when a test ends.
class SmallConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = SmallConvEnabled();
    SetSmallConvEnabled(true);
    if (!SmallConvEnabled()) GTEST_SKIP() << "no AVX2: the small-output convolution is off";
  }
  void TearDown() override { SetSmallConvEnabled(saved_); }

 private:
  bool saved_ = false;
};

using testing::Blocked;
using testing::ConvSpec;
using Spec = ConvSpec;

Window2d Geometry(const Spec& s) { return testing::GeometryOf(s); }

std::vector<float> Random(size_t n, std::mt19937& gen) { return testing::RandomFloats(n, gen); }

std::vector<float> Reference(const Window2d& g, const std::vector<float>& x, const std::vector<float>& w,
                             const float* bias, const std::vector<float>* add, const std::vector<GemmStep>& steps) {
  return testing::ReferenceConv(g, x, w, bias, add, steps, /*blocked=*/true);
}

// Runs `s` with the given options and compares with the reference.
void Check(const Spec& s, bool with_bias, const std::vector<GemmStep>& steps, bool add_in_place, int threads,
           std::mt19937& gen) {
  const Window2d g = Geometry(s);
  SCOPED_TRACE(::testing::Message() << "n" << s.n << " ic" << s.ic << " " << s.ih << "x" << s.iw << " oc" << s.oc
                                    << " k" << s.kh << "x" << s.kw << " s" << s.sh << "," << s.sw << " d" << s.dh << ","
                                    << s.dw << " pads " << s.pt << "," << s.pl << "," << s.pb << "," << s.pr << " -> "
                                    << g.out_h << "x" << g.out_w << " threads " << threads);
  const std::vector<float> x = Random(static_cast<size_t>(s.n * s.ic * s.ih * s.iw), gen);
  const std::vector<float> w = Random(static_cast<size_t>(s.oc * s.ic * s.kh * s.kw), gen);
  const std::vector<float> bias = Random(static_cast<size_t>(s.oc), gen);
  const size_t out_size = static_cast<size_t>(s.n * s.oc * g.out_h * g.out_w);
  const bool adds = std::any_of(steps.begin(), steps.end(), [](const GemmStep& st) { return st.kind == 0; });
  const std::vector<float> addend = Random(out_size, gen);
  const std::vector<float> want =
      Reference(g, x, w, with_bias ? bias.data() : nullptr, adds ? &addend : nullptr, steps);

  Tensor wt = *Tensor::Allocate(DataType::kFloat, Shape{s.oc, s.ic, s.kh, s.kw});
  std::copy(w.begin(), w.end(), wt.data<float>());
  SmallConvWeights weights;
  EXPECT_FALSE(weights.PackedFrom(wt));
  bool packed_now = false;
  const SmallConvWeights::Panels packed = weights.Get(wt, &packed_now);
  EXPECT_TRUE(packed_now);
  EXPECT_TRUE(weights.PackedFrom(wt));
  EXPECT_EQ(weights.Get(wt, &packed_now), packed);
  EXPECT_FALSE(packed_now);
  const SmallConvPlan plan(g);
  std::vector<float> padded(plan.padded_bytes() / sizeof(float), 7.0f);  // garbage the loop must not read
  std::vector<float> partial(plan.partial_bytes() / sizeof(float), 7.0f);
  std::vector<float> y(out_size, 9.0f);
  std::vector<float> separate_add = addend;
  const float* add = nullptr;
  if (adds) {
    if (add_in_place) y = addend;
    add = add_in_place ? y.data() : separate_add.data();
  }
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  plan.Run(x.data(), packed->data(), with_bias ? bias.data() : nullptr, add, y.data(), steps, padded.data(),
           partial.empty() ? nullptr : partial.data(), threads);
  omp_set_num_threads(saved);
  const double depth = static_cast<double>(s.ic * s.kh * s.kw);
  const double tolerance = 1e-5 * std::sqrt(depth) + 1e-5;
  double worst = 0.0;
  for (size_t i = 0; i < out_size; ++i) worst = std::max(worst, std::fabs(static_cast<double>(y[i]) - want[i]));
  EXPECT_LE(worst, tolerance);
}

TEST_F(SmallConvTest, EveryTileShapeAndGeometryMatchesTheReference) {
  std::mt19937 gen(3);
  const std::vector<GemmStep> relu = {{1, 0.0f, 0.0f}};
  // Output widths 1..13 (one row): tails of 1-3 pixels, tiles of 4 and 5.
  for (int64_t ow = 1; ow <= 13; ++ow)
    Check({1, 16, 3, ow + 2, 32, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0}, true, relu, false, 1, gen);
  // ResNet's shapes (one and several depth passes), a team split by panels.
  Check({1, 64, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, true, relu, false, 1, gen);
  Check({1, 136, 7, 7, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, true, {}, false, 2, gen);
  Check({1, 32, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, false, relu, false, 2, gen);
  Check({1, 64, 14, 14, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, true, relu, false, 2, gen);
  // Dilations, asymmetric pads, non-square kernels, strides per axis.
  Check({1, 16, 9, 8, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, true, {}, false, 1, gen);
  Check({1, 24, 6, 11, 32, 1, 3, 1, 2, 1, 1, 0, 1, 0, 2}, true, relu, false, 1, gen);
  Check({1, 8, 10, 5, 16, 5, 2, 2, 1, 1, 1, 2, 0, 1, 1}, false, {}, false, 1, gen);
  // Batches: one thread, and a team split by images (one panel).
  Check({3, 16, 5, 5, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, true, relu, false, 1, gen);
  Check({4, 64, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, true, relu, false, 2, gen);
}

TEST_F(SmallConvTest, PostOpStepsAndAnAddInTheDestinationsBuffer) {
  std::mt19937 gen(5);
  const Spec one_pass{2, 16, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  const Spec passes{1, 128, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};  // depth 1152: two passes
  const std::vector<std::vector<GemmStep>> chains = {
      {{0, 0.0f, 0.0f}, {1, 0.0f, 0.0f}},   // residual add, ReLU
      {{1, 0.1f, 0.0f}},                    // LeakyReLU
      {{2, 0.0f, 6.0f}},                    // ReLU6
      {{9, 0.5f, 0.25f}, {2, 0.0f, 1.0f}},  // HardSigmoid
  };
  for (const Spec& s : {one_pass, passes}) {
    for (const auto& steps : chains) {
      for (bool in_place : {false, true}) {
        for (int threads : {1, 2}) Check(s, true, steps, in_place, threads, gen);
      }
    }
  }
}

TEST_F(SmallConvTest, TakesSmallWideOutputsOnly) {
  const auto fits = [](const Spec& s) { return SmallConvFits(Geometry(s)); };
  EXPECT_TRUE(fits({1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));     // ResNet's 7x7 stage
  EXPECT_TRUE(fits({1, 256, 14, 14, 512, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}));   // its stride-2 entry
  EXPECT_TRUE(fits({8, 256, 8, 8, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));     // 64 pixels, any batch
  EXPECT_FALSE(fits({1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));  // 196 pixels: oneDNN's
  EXPECT_FALSE(fits({1, 1024, 7, 7, 256, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}));   // 1x1: oneDNN's
  EXPECT_FALSE(fits({1, 36, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));      // channels not in 8s
  EXPECT_FALSE(fits({1, 64, 7, 7, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));      // outputs not in 16s
  EXPECT_FALSE(fits({1, 16, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));      // depth 144
  SetSmallConvEnabled(false);
  EXPECT_FALSE(fits({1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));
}

// The Conv kernel as the layout pass hands it a 7x7 stage (nChw8c on every
// port, constant weights, fused ReLU and residual add) against host_cpu's
// plain result laid out alike; the same with the path off (oneDNN).
Tensor Blocked8(const Tensor& t) {
  Tensor out = *Tensor::Allocate(t.dtype(), t.shape());
  const int64_t n = t.shape().dim(0), c = t.shape().dim(1), h = t.shape().dim(2), w = t.shape().dim(3);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          out.data<float>()[Blocked(b, ch, y, x, c, h, w)] = t.data<float>()[((b * c + ch) * h + y) * w + x];
        }
      }
    }
  }
  return out;
}

TEST_F(SmallConvTest, ConvKernelOnBlockedLayoutsMatchesTheReference) {
  Rng rng(17);
  for (int trial = 0; trial < 6; ++trial) {
    const bool fused = trial % 2 == 1;
    const int64_t n = trial < 4 ? 1 : 3, c = trial % 3 == 0 ? 64 : trial % 3 == 1 ? 72 : 128, m = 32;
    const int64_t stride = trial == 2 ? 2 : 1;
    const Shape x{n, c, 7 * stride, 7 * stride};
    ir::AttrMap attrs = {{"pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1})},
                         {"strides", ir::AttrValue(std::vector<int64_t>{stride, stride})}};
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x), rng.Random(DataType::kFloat, Shape{m, c, 3, 3}),
                                 rng.Random(DataType::kFloat, Shape{m})};
    Case plain = MakeCase("Conv", inputs, attrs);
    auto conv = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(conv.ok()) << conv.status();
    Tensor want = (*conv)[0].tensor();
    ir::OpDesc op = plain.op;
    std::vector<Value> laid_inputs = {Value(Blocked8(inputs[0].tensor())), inputs[1], inputs[2]};
    if (fused) {
      const Tensor residual = rng.Random(DataType::kFloat, want.shape());
      auto sum = HostOp("Add", {Value(want), Value(residual)});
      ASSERT_TRUE(sum.ok()) << sum.status();
      auto relu = HostOp("Relu", {Value(*sum)});
      ASSERT_TRUE(relu.ok()) << relu.status();
      want = *relu;
      attrs["base"] = ir::AttrValue(std::string("Conv"));
      attrs["post_ops"] = ir::AttrValue(std::vector<std::string>{"add", "relu"});
      attrs["post_alpha"] = ir::AttrValue(std::vector<float>{0.0f, 0.0f});
      attrs["post_beta"] = ir::AttrValue(std::vector<float>{0.0f, 0.0f});
      std::vector<Value> fused_inputs = inputs;
      fused_inputs.push_back(Value(residual));
      op = MakeCase("_DenseFused", fused_inputs, attrs).op;
      laid_inputs.push_back(Value(Blocked8(residual)));
      op.mutable_input(3).type.mutable_tensor().format = ir::Format::kNChw8c;
    }
    op.mutable_input(0).type.mutable_tensor().format = ir::Format::kNChw8c;
    test::RunOptions options;
    auto types = test::InferOutputTypes(plain.op, plain.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    options.output_types = *types;
    options.output_types[0].mutable_tensor().format = ir::Format::kNChw8c;
    op.mutable_output(0).type = options.output_types[0];
    options.const_inputs = {1};
    if (trial % 2 == 0) options.thread_pool = test::TestThreadPool();
    for (bool on : {true, false}) {
      SetSmallConvEnabled(on);
      const int64_t runs = SmallConvRuns().load();
      const int64_t fallbacks = ReferenceRuns().load();
      auto got = test::RunKernel(Dense(), op, laid_inputs, options);
      ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
      EXPECT_EQ(SmallConvRuns().load() > runs, on) << "trial " << trial;
      EXPECT_EQ(ReferenceRuns().load(), fallbacks);
      EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), Blocked8(want), test::Tolerance{1e-4, 1e-4}))
          << "trial " << trial << (on ? " own path" : " oneDNN");
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
