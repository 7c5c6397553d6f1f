#include "runtime/engines/host_cpu/fft.h"

#include <cmath>

namespace ge::engine::host_cpu {
namespace {

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

int Log2(int64_t m) {
  int bits = 0;
  while ((int64_t{1} << bits) < m) ++bits;
  return bits;
}

}  // namespace

double FftPlan::Work(int64_t n) {
  if (n <= 1) return 1;
  const int64_t m = IsPowerOfTwo(n) ? n : int64_t{1} << Log2(2 * n - 1);
  const double passes = static_cast<double>(m) / 2 * Log2(m);
  return IsPowerOfTwo(n) ? passes : 2 * passes + 3.0 * static_cast<double>(m);
}

FftPlan::FftPlan(int64_t n, bool inverse) : n_(n), sign_(inverse ? 1.0 : -1.0) {
  bluestein_ = !IsPowerOfTwo(n);
  m_ = bluestein_ ? int64_t{1} << Log2(2 * n - 1) : n;
  // The radix-2 passes run forward when they serve Bluestein's convolution
  // (its inverse is conj(FFT(conj(x))), see Transform).
  const double radix_sign = bluestein_ ? -1.0 : sign_;
  twiddles_.resize(static_cast<size_t>(m_));  // m_ / 2 complex values
  for (int64_t k = 0; k < m_ / 2; ++k) {
    const double angle = radix_sign * 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(m_);
    twiddles_[2 * k] = std::cos(angle);
    twiddles_[2 * k + 1] = std::sin(angle);
  }
  const int bits = Log2(m_);
  reversed_.resize(static_cast<size_t>(m_));
  for (int64_t i = 0; i < m_; ++i) {
    uint32_t r = 0;
    for (int b = 0; b < bits; ++b) r |= static_cast<uint32_t>((i >> b) & 1) << (bits - 1 - b);
    reversed_[i] = r;
  }
  if (!bluestein_) return;
  // c[j] = exp(sign pi i j^2 / n): j^2 taken modulo 2n incrementally
  // ((j + 1)^2 = j^2 + 2j + 1), so the angle is exact for any n.
  chirp_.resize(static_cast<size_t>(2 * n));
  int64_t square = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double angle = sign_ * M_PI * static_cast<double>(square) / static_cast<double>(n);
    chirp_[2 * j] = std::cos(angle);
    chirp_[2 * j + 1] = std::sin(angle);
    square = (square + 2 * j + 1) % (2 * n);
  }
  // b[j] = conj(c[|j|]) for -n < j < n, wrapped to [0, m); its transform.
  filter_.assign(static_cast<size_t>(2 * m_), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    filter_[2 * j] = chirp_[2 * j];
    filter_[2 * j + 1] = -chirp_[2 * j + 1];
    if (j > 0) {
      filter_[2 * (m_ - j)] = chirp_[2 * j];
      filter_[2 * (m_ - j) + 1] = -chirp_[2 * j + 1];
    }
  }
  Radix2(filter_.data());
}

void FftPlan::Radix2(double* data) const {
  const int64_t m = m_;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t r = reversed_[i];
    if (r > i) {
      std::swap(data[2 * i], data[2 * r]);
      std::swap(data[2 * i + 1], data[2 * r + 1]);
    }
  }
  const double* tw = twiddles_.data();
  for (int64_t half = 1; half < m; half *= 2) {
    const int64_t step = m / (2 * half);  // twiddle stride for this pass
    for (int64_t start = 0; start < m; start += 2 * half) {
      double* lo = data + 2 * start;
      double* hi = lo + 2 * half;
      for (int64_t j = 0; j < half; ++j) {
        const double wr = tw[2 * j * step], wi = tw[2 * j * step + 1];
        const double hr = hi[2 * j] * wr - hi[2 * j + 1] * wi;
        const double hi_ = hi[2 * j] * wi + hi[2 * j + 1] * wr;
        const double lr = lo[2 * j], li = lo[2 * j + 1];
        lo[2 * j] = lr + hr;
        lo[2 * j + 1] = li + hi_;
        hi[2 * j] = lr - hr;
        hi[2 * j + 1] = li - hi_;
      }
    }
  }
}

void FftPlan::Transform(double* data, double* scratch) const {
  if (!bluestein_) {
    Radix2(data);
    return;
  }
  // a = x * c, zero-padded to m; A = FFT(a); A *= FFT(b); conv = IFFT(A) as
  // conj(FFT(conj(A))) / m; y = c * conv.
  const double* c = chirp_.data();
  for (int64_t j = 0; j < n_; ++j) {
    const double xr = data[2 * j], xi = data[2 * j + 1];
    scratch[2 * j] = xr * c[2 * j] - xi * c[2 * j + 1];
    scratch[2 * j + 1] = xr * c[2 * j + 1] + xi * c[2 * j];
  }
  for (int64_t j = 2 * n_; j < 2 * m_; ++j) scratch[j] = 0.0;
  Radix2(scratch);
  const double* f = filter_.data();
  for (int64_t j = 0; j < m_; ++j) {
    const double ar = scratch[2 * j], ai = scratch[2 * j + 1];
    scratch[2 * j] = ar * f[2 * j] - ai * f[2 * j + 1];
    scratch[2 * j + 1] = -(ar * f[2 * j + 1] + ai * f[2 * j]);  // conjugated for the inverse
  }
  Radix2(scratch);
  const double scale = 1.0 / static_cast<double>(m_);
  for (int64_t k = 0; k < n_; ++k) {
    const double vr = scratch[2 * k] * scale, vi = -scratch[2 * k + 1] * scale;
    data[2 * k] = vr * c[2 * k] - vi * c[2 * k + 1];
    data[2 * k + 1] = vr * c[2 * k + 1] + vi * c[2 * k];
  }
}

}  // namespace ge::engine::host_cpu
