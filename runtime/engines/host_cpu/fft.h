// FftPlan: the discrete Fourier transform of one length n >= 1 in O(n log n),
// in double, for DFT-17 and STFT-17 (signal_kernels.cc).
//
// y[k] = sum_{j < n} x[j] exp(sign 2 pi i j k / n), sign -1 (forward) or +1
// (inverse, unscaled: the caller divides by n). A power-of-two n runs an
// iterative radix-2 Cooley-Tukey transform; any other n runs Bluestein's
// chirp-z algorithm: with c[j] = exp(sign pi i j^2 / n), y[k] = c[k] *
// (a conv b)[k], a[j] = x[j] c[j] and b[j] = conj(c[j]), the circular
// convolution taken through power-of-two FFTs of length m >= 2n - 1. Every
// twiddle and chirp is one cos / sin of an exact angle (the exponent reduced
// modulo the period in integers), so the error grows like log n, not n.
//
// A plan is immutable after construction and shared by threads; each thread
// passes its own scratch (scratch_doubles()).
#pragma once

#include <cstdint>
#include <vector>

namespace ge::engine::host_cpu {

class FftPlan {
 public:
  FftPlan(int64_t n, bool inverse);

  int64_t size() const { return n_; }
  // Doubles of scratch one Transform needs.
  int64_t scratch_doubles() const { return bluestein_ ? 2 * m_ : 0; }
  // Complex multiply-adds of one transform, about (for work bounds).
  static double Work(int64_t n);

  // Transforms n complex values (re, im interleaved) in place.
  void Transform(double* data, double* scratch) const;

 private:
  bool bluestein_ = false;
  int64_t n_ = 1, m_ = 1;  // m_: the power-of-two length the radix-2 passes run at
  double sign_ = -1;
  std::vector<double> twiddles_;    // exp(sign 2 pi i k / m_), k < m_ / 2, interleaved
  std::vector<uint32_t> reversed_;  // bit-reversal permutation of m_
  std::vector<double> chirp_;       // Bluestein: c[j], j < n_, interleaved
  std::vector<double> filter_;      // Bluestein: FFT_m(b), interleaved

  void Radix2(double* data) const;
};

}  // namespace ge::engine::host_cpu
