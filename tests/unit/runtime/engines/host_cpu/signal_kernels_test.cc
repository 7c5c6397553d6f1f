// FftPlan (fft.h) and the DFT / STFT kernels against direct O(n^2) transforms
// in long double: power-of-two lengths (radix-2) and others (Bluestein),
// forward and inverse, zero-padded and truncated dft_length, onesided,
// every signal axis, windows of odd and even length.
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "runtime/engines/host_cpu/fft.h"
#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using Complex = std::complex<long double>;
using test::TensorNear;
using Ints = std::vector<int64_t>;

// y[k] = sum_{j < in.size()} in[j] exp(sign 2 pi i j k / len), k < out_len.
std::vector<Complex> DirectDft(const std::vector<Complex>& in, int64_t len, int64_t out_len, bool inverse) {
  const long double sign = inverse ? 1 : -1;
  std::vector<Complex> out(static_cast<size_t>(out_len));
  for (int64_t k = 0; k < out_len; ++k) {
    Complex sum = 0;
    for (size_t j = 0; j < in.size(); ++j) {
      const long double angle = sign * 2 * M_PIl * static_cast<long double>((static_cast<int64_t>(j) * k) % len) /
                                static_cast<long double>(len);
      sum += in[j] * Complex(std::cos(angle), std::sin(angle));
    }
    out[k] = sum;
  }
  return out;
}

std::vector<float> Uniform(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

TEST(FftPlan, MatchesTheDirectTransformAtEveryLengthKind) {
  for (const int64_t n :
       {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 32, 60, 64, 97, 100, 128, 255, 256, 400, 512, 1000, 1024}) {
    for (const bool inverse : {false, true}) {
      const std::vector<float> v = Uniform(static_cast<size_t>(2 * n), static_cast<uint32_t>(n));
      std::vector<Complex> in(static_cast<size_t>(n));
      std::vector<double> data(static_cast<size_t>(2 * n));
      for (int64_t j = 0; j < n; ++j) {
        in[j] = Complex(v[2 * j], v[2 * j + 1]);
        data[2 * j] = v[2 * j];
        data[2 * j + 1] = v[2 * j + 1];
      }
      const FftPlan plan(n, inverse);
      std::vector<double> scratch(static_cast<size_t>(plan.scratch_doubles()));
      plan.Transform(data.data(), scratch.data());
      const std::vector<Complex> want = DirectDft(in, n, n, inverse);
      double worst = 0;
      for (int64_t k = 0; k < n; ++k) {
        worst = std::max(worst, static_cast<double>(std::abs(Complex(data[2 * k], data[2 * k + 1]) - want[k])));
      }
      // |y| is about sqrt(n); double rounding over log n passes.
      EXPECT_LT(worst, 1e-12 * std::sqrt(static_cast<double>(n)) * (1 + std::log2(static_cast<double>(n))))
          << "n=" << n << " inverse=" << inverse;
    }
  }
}

// DFT-17 on x [outer, signal, inner, channels] along `axis` against DirectDft.
void CheckDft(const Shape& shape, int64_t axis, int64_t dft_length, bool onesided, bool inverse) {
  const int64_t rank = shape.rank();
  int64_t elements = 1;
  for (int64_t d = 0; d < rank; ++d) elements *= shape.dim(d);
  const std::vector<float> v = Uniform(static_cast<size_t>(elements), 7);
  const Tensor x = F32(v, shape);
  ir::AttrMap attrs{{"axis", axis}, {"onesided", int64_t{onesided}}, {"inverse", int64_t{inverse}}};
  const Tensor y = dft_length > 0 ? Host("DFT", {x, I64({dft_length}, {})}, attrs) : Host("DFT", {x}, attrs);
  const int64_t dim = shape.dim(axis), len = dft_length > 0 ? dft_length : dim;
  const int64_t out_len = onesided ? len / 2 + 1 : len, channels = shape.dim(rank - 1);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape.dim(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= shape.dim(d);
  ASSERT_EQ(y.NumElements(), outer * out_len * inner * 2);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<Complex> in;
      for (int64_t n = 0; n < std::min(dim, len); ++n) {
        const int64_t at = ((o * dim + n) * inner + i) * channels;
        in.emplace_back(v[at], channels == 2 ? v[at + 1] : 0.0f);
      }
      const std::vector<Complex> want = DirectDft(in, len, out_len, inverse);
      for (int64_t k = 0; k < out_len; ++k) {
        const int64_t at = ((o * out_len + k) * inner + i) * 2;
        const long double scale = inverse ? 1.0L / len : 1.0L;
        EXPECT_NEAR(y.GetAsDouble(at), static_cast<double>(want[k].real() * scale), 1e-5) << o << "," << i << "," << k;
        EXPECT_NEAR(y.GetAsDouble(at + 1), static_cast<double>(want[k].imag() * scale), 1e-5)
            << o << "," << i << "," << k;
      }
    }
}

TEST(SignalKernels, DftAlongEveryAxisAndLength) {
  CheckDft(Shape{2, 8, 3, 1}, 1, 0, false, false);   // radix-2, real, inner stride 3
  CheckDft(Shape{2, 7, 3, 2}, 1, 0, false, false);   // Bluestein, complex
  CheckDft(Shape{2, 7, 3, 2}, 2, 0, false, true);    // inverse along the last signal axis
  CheckDft(Shape{1, 6, 5, 1}, 2, 0, true, false);    // onesided, odd length
  CheckDft(Shape{1, 6, 4, 1}, 1, 0, true, false);    // onesided, even length
  CheckDft(Shape{3, 5, 1}, 1, 12, false, false);     // zero-padded to a non-power of two
  CheckDft(Shape{3, 10, 2}, 1, 4, false, true);      // truncated, inverse
  CheckDft(Shape{2, 1, 1}, 1, 0, false, false);      // length 1
  CheckDft(Shape{1, 100, 2}, 1, 0, false, false);    // longer Bluestein
  CheckDft(Shape{1, 128, 2, 1}, 1, 0, true, false);  // longer radix-2, onesided
}

TEST(SignalKernels, StftMatchesWindowedDirectTransforms) {
  for (const int64_t frame : {12, 16, 9}) {
    for (const bool onesided : {true, false}) {
      const int64_t batch = 2, length = 50, step = 7;
      const std::vector<float> v = Uniform(static_cast<size_t>(batch * length), 3);
      const std::vector<float> w = Uniform(static_cast<size_t>(frame), 4);
      const Tensor y = Host("STFT", {F32(v, {batch, length, 1}), I64({step}, {}), F32(w, {frame})},
                            {{"onesided", int64_t{onesided}}});
      const int64_t frames = (length - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
      ASSERT_EQ(y.shape(), (Shape{batch, frames, bins, 2}));
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t f = 0; f < frames; ++f) {
          std::vector<Complex> in;
          for (int64_t n = 0; n < frame; ++n) in.emplace_back(v[b * length + f * step + n] * w[n], 0.0f);
          const std::vector<Complex> want = DirectDft(in, frame, bins, false);
          for (int64_t k = 0; k < bins; ++k) {
            const int64_t at = ((b * frames + f) * bins + k) * 2;
            EXPECT_NEAR(y.GetAsDouble(at), static_cast<double>(want[k].real()), 1e-5);
            EXPECT_NEAR(y.GetAsDouble(at + 1), static_cast<double>(want[k].imag()), 1e-5);
          }
        }
    }
  }
}

TEST(SignalKernels, NanStaysInItsSignal) {
  // A NaN reaches every bin of its own signal and no other.
  std::vector<float> v(16, 0.5f);
  v[3] = NAN;
  const Tensor y = Host("DFT", {F32(v, {2, 8, 1})}, {{"axis", 1}});
  for (int64_t k = 0; k < 8; ++k) {
    EXPECT_TRUE(std::isnan(y.GetAsDouble(2 * k))) << k;
    EXPECT_FALSE(std::isnan(y.GetAsDouble(16 + 2 * k))) << k;
  }
}

}  // namespace
}  // namespace ge::engine::host_cpu
