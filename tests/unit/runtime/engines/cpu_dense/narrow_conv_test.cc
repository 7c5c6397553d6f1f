// cpu_dense's own few-output-channel convolution (narrow_conv.h,
// narrow_conv_loops.h).
//
// The loop against a direct double reference: output channels 1 to 11
// (every channel grouping: 1, 2, 3, 4, 3 + 2, 3 + 3 + 1, 3 + 3 + 3, ...),
// output widths across every tile size and the row's edges (1 to 19
// pixels), strides, dilations 2/4/6, asymmetric pads, pads wider than the
// kernel reaches (pixels whose window is all padding: bias and steps only),
// 1x1 to 9x9 and non-square kernels, a channel-blocked source, a plain
// one of 1, 3, 12 channels (blocked in scratch, padded lanes zero) and a
// channels-last one (read in place in 8s; 3 and 12 channels blocked in
// scratch), batches,
// bias or none, every post-op step the loop applies, an add operand in the
// destination's own buffer, one thread and two. Then which geometries the
// path takes, and the Conv kernel as the layout pass hands it an image head
// (nChw8c or NHWC source, plain destination; a plain source too) against
// host_cpu, and the layout the kernel asks its neighbours for (a plain
// destination whatever the source), both
// checking that the case ran on the path and that oneDNN agrees with it off.
// Skipped on CPUs without AVX2.
#include "runtime/engines/cpu_dense/narrow_conv.h"

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

class NarrowConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = NarrowConvEnabled();
    SetNarrowConvEnabled(true);
    if (!NarrowConvEnabled()) GTEST_SKIP() << "no AVX2: the few-output-channel convolution is off";
  }
  void TearDown() override { SetNarrowConvEnabled(saved_); }

 private:
  bool saved_ = false;
};

using testing::Blocked;
using testing::ConvSpec;
using testing::Plain;
using Spec = ConvSpec;

Window2d Geometry(const Spec& s) { return testing::GeometryOf(s); }

std::vector<float> Random(size_t n, std::mt19937& gen) { return testing::RandomFloats(n, gen); }

std::vector<float> Reference(const Window2d& g, const std::vector<float>& x, const std::vector<float>& w,
                             const float* bias, const std::vector<float>* add, const std::vector<GemmStep>& steps) {
  return testing::ReferenceConv(g, x, w, bias, add, steps, /*blocked=*/false);
}

struct Options {
  bool bias = true;
  std::vector<GemmStep> steps;
  bool add_in_place = false;
  int threads = 1;
  NarrowSource source = NarrowSource::kBlocked;  // kBlocked: ic in 8s
};

const char* Name(NarrowSource s) {
  return s == NarrowSource::kBlocked ? " blocked" : s == NarrowSource::kChannelsLast ? " channels-last" : " plain";
}

void Check(const Spec& s, const Options& opt, std::mt19937& gen) {
  const Window2d g = Geometry(s);
  SCOPED_TRACE(::testing::Message() << "n" << s.n << " ic" << s.ic << " " << s.ih << "x" << s.iw << " oc" << s.oc
                                    << " k" << s.kh << "x" << s.kw << " s" << s.sh << "," << s.sw << " d" << s.dh << ","
                                    << s.dw << " pads " << s.pt << "," << s.pl << "," << s.pb << "," << s.pr << " -> "
                                    << g.out_h << "x" << g.out_w << " threads " << opt.threads << Name(opt.source));
  const std::vector<float> x = Random(static_cast<size_t>(s.n * s.ic * s.ih * s.iw), gen);
  const std::vector<float> w = Random(static_cast<size_t>(s.oc * s.ic * s.kh * s.kw), gen);
  const std::vector<float> bias = Random(static_cast<size_t>(s.oc), gen);
  const size_t out_size = static_cast<size_t>(s.n * s.oc * g.out_h * g.out_w);
  const bool adds = std::any_of(opt.steps.begin(), opt.steps.end(), [](const GemmStep& st) { return st.kind == 0; });
  const std::vector<float> addend = Random(out_size, gen);
  const std::vector<float> want =
      Reference(g, x, w, opt.bias ? bias.data() : nullptr, adds ? &addend : nullptr, opt.steps);

  std::vector<float> source = x;
  if (opt.source == NarrowSource::kBlocked) {
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.ic; ++c)
        for (int64_t y = 0; y < s.ih; ++y)
          for (int64_t xx = 0; xx < s.iw; ++xx)
            source[Blocked(n, c, y, xx, s.ic, s.ih, s.iw)] = x[Plain(n, c, y, xx, s.ic, s.ih, s.iw)];
  }
  if (opt.source == NarrowSource::kChannelsLast) {
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.ic; ++c)
        for (int64_t y = 0; y < s.ih; ++y)
          for (int64_t xx = 0; xx < s.iw; ++xx)
            source[((n * s.ih + y) * s.iw + xx) * s.ic + c] = x[Plain(n, c, y, xx, s.ic, s.ih, s.iw)];
  }
  Tensor wt = *Tensor::Allocate(DataType::kFloat, Shape{s.oc, s.ic, s.kh, s.kw});
  std::copy(w.begin(), w.end(), wt.data<float>());
  NarrowConvWeights weights;
  EXPECT_FALSE(weights.PackedFrom(wt));
  bool packed_now = false;
  const NarrowConvWeights::Packed packed = weights.Get(wt, &packed_now);
  EXPECT_TRUE(packed_now);
  EXPECT_TRUE(weights.PackedFrom(wt));
  const NarrowConvPlan plan(g, opt.source);
  // Channels-last in 8s is read in place: no scratch.
  if (opt.source == NarrowSource::kChannelsLast && s.ic % 8 == 0) {
    EXPECT_EQ(plan.scratch_bytes(), 0u);
  }
  std::vector<float> scratch(plan.scratch_bytes() / sizeof(float), 7.0f);  // garbage the loop must overwrite
  std::vector<float> y(out_size, 9.0f);
  std::vector<float> separate_add = addend;
  const float* add = nullptr;
  if (adds) {
    if (opt.add_in_place) y = addend;
    add = opt.add_in_place ? y.data() : separate_add.data();
  }
  const int saved = omp_get_max_threads();
  omp_set_num_threads(opt.threads);
  plan.Run(source.data(), packed->data(), opt.bias ? bias.data() : nullptr, add, y.data(), opt.steps,
           scratch.empty() ? nullptr : scratch.data(), opt.threads);
  omp_set_num_threads(saved);
  const double tolerance = 1e-5 * std::sqrt(static_cast<double>(s.ic * s.kh * s.kw)) + 1e-5;
  double worst = 0.0;
  for (size_t i = 0; i < out_size; ++i) worst = std::max(worst, std::fabs(static_cast<double>(y[i]) - want[i]));
  EXPECT_LE(worst, tolerance);
}

TEST_F(NarrowConvTest, EveryChannelGroupTileAndEdgeMatchesTheReference) {
  std::mt19937 gen(7);
  // Every output channel count the path takes (groupings of 1 to 4).
  for (int64_t oc = 1; oc <= 11; ++oc) {
    if (oc == 8) continue;
    Check({1, 16, 12, 21, oc, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {}, gen);
  }
  // Output widths 1 to 19: whole tiles, every remainder, edges only.
  for (int64_t ow = 1; ow <= 19; ++ow) {
    Check({1, 8, 3, ow, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {}, gen);
    Check({1, 8, 2, ow, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {}, gen);
  }
  // Strides, dilations 2/4/6, asymmetric pads, non-square and large kernels.
  Check({1, 16, 20, 23, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, {}, gen);
  Check({1, 8, 24, 25, 1, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, {}, gen);
  Check({1, 16, 30, 29, 9, 3, 3, 1, 1, 4, 4, 4, 4, 4, 4}, {}, gen);
  Check({1, 8, 31, 33, 2, 3, 3, 1, 1, 6, 6, 6, 6, 6, 6}, {}, gen);
  Check({1, 24, 13, 17, 5, 1, 3, 1, 2, 1, 1, 0, 1, 0, 2}, {}, gen);
  Check({1, 8, 17, 15, 3, 5, 2, 2, 1, 1, 1, 2, 0, 1, 1}, {}, gen);
  Check({1, 16, 20, 20, 3, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4}, {}, gen);  // a style-transfer head
  Check({1, 32, 9, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, {}, gen);   // 1x1
  Check({1, 8, 10, 10, 7, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2}, {}, gen);   // 5x5 (unrolled columns)
  // Pads wider than the kernel reaches: windows all in padding.
  Check({1, 8, 6, 7, 3, 3, 3, 1, 1, 1, 1, 4, 5, 4, 5}, {}, gen);
  Check({1, 8, 5, 5, 1, 1, 1, 1, 1, 1, 1, 2, 3, 1, 2}, {}, gen);
  // Plain sources: channels not in 8s (padded lanes zero), 1 and 3 channels.
  Options plain;
  plain.source = NarrowSource::kPlain;
  Check({1, 1, 16, 19, 3, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2}, plain, gen);
  Check({2, 3, 17, 18, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, plain, gen);
  Check({1, 12, 15, 16, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, plain, gen);
  // Batches and teams (rows split over two threads, plain blocked on both).
  Options two;
  two.threads = 2;
  Check({3, 16, 20, 19, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {}, gen);
  Check({2, 32, 40, 41, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, two, gen);
  two.source = NarrowSource::kPlain;
  Check({2, 12, 40, 33, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, two, gen);
  two.source = NarrowSource::kChannelsLast;
  Check({2, 32, 40, 41, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, two, gen);
  Check({2, 12, 40, 33, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, two, gen);
  // Channels-last: in place (8, 16, 32, 64 channels) over every tile,
  // edge, stride, dilation and kernel size; converted (1, 3, 12 channels).
  Options last;
  last.source = NarrowSource::kChannelsLast;
  for (int64_t oc = 1; oc <= 11; ++oc) {
    if (oc == 8) continue;
    Check({1, 16, 12, 21, oc, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, last, gen);
  }
  for (int64_t ow = 1; ow <= 19; ++ow) Check({2, 8, 3, ow, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, last, gen);
  Check({1, 32, 20, 23, 1, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2}, last, gen);  // SRCNN's 5x5 into one channel
  Check({1, 64, 31, 33, 2, 3, 3, 1, 1, 6, 6, 6, 6, 6, 6}, last, gen);
  Check({1, 24, 13, 17, 5, 1, 3, 1, 2, 1, 1, 0, 1, 0, 2}, last, gen);
  Check({1, 16, 20, 20, 3, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4}, last, gen);
  Check({1, 64, 9, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, last, gen);
  Check({1, 8, 6, 7, 3, 3, 3, 1, 1, 1, 1, 4, 5, 4, 5}, last, gen);  // windows all in padding
  Check({1, 1, 16, 19, 3, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2}, last, gen);
  Check({2, 3, 17, 18, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, last, gen);
  Check({1, 12, 15, 16, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, last, gen);
  last.bias = false;
  last.steps = {{0, 0.0f, 0.0f}, {4, 0.0f, 0.0f}};
  last.add_in_place = true;
  Check({2, 16, 18, 17, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, last, gen);
  Options nobias;
  nobias.bias = false;
  Check({1, 8, 11, 13, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, nobias, gen);
}

TEST_F(NarrowConvTest, PostOpStepsAndAnAddInTheDestinationsBuffer) {
  std::mt19937 gen(11);
  const std::vector<std::vector<GemmStep>> chains = {
      {{0, 0.0f, 0.0f}, {1, 0.0f, 0.0f}},   // residual add, ReLU
      {{1, 0.1f, 0.0f}},                    // LeakyReLU
      {{2, 0.0f, 1.0f}},                    // clamp to [0, 1]
      {{3, 0.0f, 0.0f}},                    // Sigmoid (a mask or depth head)
      {{4, 0.0f, 0.0f}},                    // Tanh
      {{9, 0.5f, 0.25f}, {2, 0.0f, 1.0f}},  // HardSigmoid
  };
  for (const auto& steps : chains) {
    for (bool in_place : {false, true}) {
      for (int threads : {1, 2}) {
        Options opt;
        opt.steps = steps;
        opt.add_in_place = in_place;
        opt.threads = threads;
        Check({2, 16, 18, 17, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, opt, gen);
      }
    }
  }
}

TEST_F(NarrowConvTest, TakesFewOutputChannelsAtHighResolutionOnly) {
  const auto fits = [](const Spec& s) { return NarrowConvFits(Geometry(s)); };
  EXPECT_TRUE(fits({1, 32, 96, 96, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));    // ESPCN's PixelShuffle input
  EXPECT_TRUE(fits({1, 16, 128, 128, 3, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4}));  // style transfer's RGB output
  EXPECT_TRUE(fits({1, 64, 224, 224, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}));  // a mask head
  EXPECT_TRUE(fits({1, 1, 16, 16, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));    // 256 pixels, 11 channels
  EXPECT_FALSE(fits({1, 64, 96, 96, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));   // whole blocks: oneDNN's
  EXPECT_FALSE(fits({1, 64, 96, 96, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));  // 12 of 16 lanes: oneDNN's
  EXPECT_FALSE(fits({1, 64, 96, 96, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_FALSE(fits({1, 256, 15, 15, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));  // 225 pixels
  SetNarrowConvEnabled(false);
  EXPECT_FALSE(fits({1, 32, 96, 96, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}));
}

// The Conv kernel as the layout pass hands it an image head: a blocked or
// plain source, a plain destination, constant weights; fused or not.
Tensor Blocked8(const Tensor& t) {
  Tensor out = *Tensor::Allocate(t.dtype(), t.shape());
  const int64_t n = t.shape().dim(0), c = t.shape().dim(1), h = t.shape().dim(2), w = t.shape().dim(3);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          out.data<float>()[Blocked(b, ch, y, x, c, h, w)] = t.data<float>()[Plain(b, ch, y, x, c, h, w)];
  return out;
}

Tensor ChannelsLast(const Tensor& t) {
  Tensor out = *Tensor::Allocate(t.dtype(), t.shape());
  const int64_t n = t.shape().dim(0), c = t.shape().dim(1), h = t.shape().dim(2), w = t.shape().dim(3);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          out.data<float>()[((b * h + y) * w + x) * c + ch] = t.data<float>()[Plain(b, ch, y, x, c, h, w)];
  return out;
}

TEST_F(NarrowConvTest, ConvKernelOnAnImageHeadMatchesTheReference) {
  Rng rng(23);
  // Trials 0-3: nChw8c sources; 4-5 plain; 6-9 channels-last (32 channels
  // read in place, 12 converted).
  for (int trial = 0; trial < 10; ++trial) {
    const bool fused = trial % 2 == 1, blocked = trial < 4, last = trial >= 6;
    const int64_t n = trial == 3 || trial == 7 ? 2 : 1;
    const int64_t c = blocked || trial == 6 || trial == 7 ? 32 : last ? 12 : 3;
    const int64_t m = trial % 3 == 0 ? 9 : trial % 3 == 1 ? 3 : 1;
    const Shape x{n, c, 24, 23};
    ir::AttrMap attrs = {{"pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1})}};
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x), rng.Random(DataType::kFloat, Shape{m, c, 3, 3}),
                                 rng.Random(DataType::kFloat, Shape{m})};
    Case plain = MakeCase("Conv", inputs, attrs);
    auto conv = test::RunKernel(Host(), plain.op, plain.inputs);
    ASSERT_TRUE(conv.ok()) << conv.status();
    Tensor want = (*conv)[0].tensor();
    ir::OpDesc op = plain.op;
    std::vector<Value> laid_inputs = {blocked ? Value(Blocked8(inputs[0].tensor()))
                                      : last  ? Value(ChannelsLast(inputs[0].tensor()))
                                              : inputs[0],
                                      inputs[1], inputs[2]};
    if (fused) {
      const Tensor residual = rng.Random(DataType::kFloat, want.shape());
      auto sum = HostOp("Add", {Value(want), Value(residual)});
      ASSERT_TRUE(sum.ok()) << sum.status();
      auto sigmoid = HostOp("Sigmoid", {Value(*sum)});
      ASSERT_TRUE(sigmoid.ok()) << sigmoid.status();
      want = *sigmoid;
      attrs["base"] = ir::AttrValue(std::string("Conv"));
      attrs["post_ops"] = ir::AttrValue(std::vector<std::string>{"add", "sigmoid"});
      attrs["post_alpha"] = ir::AttrValue(std::vector<float>{0.0f, 0.0f});
      attrs["post_beta"] = ir::AttrValue(std::vector<float>{0.0f, 0.0f});
      std::vector<Value> fused_inputs = inputs;
      fused_inputs.push_back(Value(residual));
      op = MakeCase("_DenseFused", fused_inputs, attrs).op;
      laid_inputs.push_back(Value(residual));
    }
    if (blocked) op.mutable_input(0).type.mutable_tensor().format = ir::Format::kNChw8c;
    if (last) op.mutable_input(0).type.mutable_tensor().format = ir::Format::kNHWC;
    test::RunOptions options;
    auto types = test::InferOutputTypes(plain.op, plain.inputs);
    ASSERT_TRUE(types.ok()) << types.status();
    options.output_types = *types;
    options.const_inputs = {1};
    if (trial % 2 == 0) options.thread_pool = test::TestThreadPool();
    for (bool on : {true, false}) {
      SetNarrowConvEnabled(on);
      const int64_t runs = NarrowConvRuns().load();
      const int64_t fallbacks = ReferenceRuns().load();
      auto got = test::RunKernel(Dense(), op, laid_inputs, options);
      ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
      EXPECT_EQ(NarrowConvRuns().load() > runs, on) << "trial " << trial;
      EXPECT_EQ(ReferenceRuns().load(), fallbacks);
      EXPECT_TRUE(test::TensorNear((*got)[0].tensor(), want, test::Tolerance{1e-4, 1e-4}))
          << "trial " << trial << (on ? " own path" : " oneDNN");
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense
