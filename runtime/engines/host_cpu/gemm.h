// Matrix multiplication for the host_cpu kernels (Conv through im2col,
// Gemm, MatMul).
//
// Gemm<float> and Gemm<double> are cache-blocked: panels of A and B are
// packed into contiguous buffers sized for L1/L2 and multiplied by a
// register-tiled micro-kernel written for the auto-vectorizer (compiled per
// ISA and chosen at run time). The integer types use a plain loop.
#pragma once

#include <cstdint>

#include "runtime/engines/host_cpu/kernel_registry.h"

namespace ge::engine::host_cpu {

// C = alpha * op(A) * op(B) + beta * C, all row-major.
//   op(A) is m x k: A is m x k (lda >= k), or k x m when trans_a (lda >= m).
//   op(B) is k x n: B is k x n (ldb >= n), or n x k when trans_b (ldb >= k).
//   C is m x n (ldc >= n). When beta == 0, C's prior contents are ignored
// (NaN in C does not propagate). `threads` may be null.
template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, int threads);

// The same contract for any arithmetic T (the integer types), as a plain
// i-k-j loop; integer arithmetic wraps.
template <typename T>
void GemmReference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
                   const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = beta == T(0) ? T(0) : WrapMul(beta, row[j]);
    for (int64_t p = 0; p < k; ++p) {
      const T av = WrapMul(alpha, trans_a ? a[p * lda + i] : a[i * lda + p]);
      if (trans_b) {
        for (int64_t j = 0; j < n; ++j) row[j] = WrapAdd(row[j], WrapMul(av, b[j * ldb + p]));
      } else {
        const T* brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) row[j] = WrapAdd(row[j], WrapMul(av, brow[j]));
      }
    }
  }
}

}  // namespace ge::engine::host_cpu
