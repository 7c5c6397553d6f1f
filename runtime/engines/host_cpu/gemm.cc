// Cache-blocked GEMM. The output is split into tiles run in parallel; each
// tile walks K in KC-deep slices, packs its slice of B into NR-wide column
// panels and of A into MR-high row panels (zero padded at the edges), and
// multiplies panel pairs with a micro-kernel that keeps an MR x NR block of
// C in registers. The micro-kernel is compiled three times — for AVX-512,
// for AVX2+FMA and for the baseline ISA — each with the tile shape that
// fills that ISA's register file, and the CPU's best is picked once at run
// time, so the library needs no -march flag.
#include "runtime/engines/host_cpu/gemm.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/cpu_features.h"

namespace ge::engine::host_cpu {
namespace {

constexpr int64_t kKC = 256;  // depth of a packed slice (A and B panels stay in L1/L2)
constexpr int64_t kMC = 96;   // rows of A packed at once
constexpr int64_t kNC = 768;  // columns of a tile's B slice

// Element (i, j) of op(A) given A's layout.
template <typename T>
struct MatrixView {
  const T* data;
  int64_t ld;
  bool trans;
  T at(int64_t i, int64_t j) const { return trans ? data[j * ld + i] : data[i * ld + j]; }
};

// Packs rows [i0, i0+mc) x cols [p0, p0+kc) of op(A) into MR-row panels:
// panel r holds ap[r*kc*MR + p*MR + i].
template <typename T, int MR>
void PackA(const MatrixView<T>& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, T* ap) {
  for (int64_t r = 0; r < mc; r += MR) {
    const int64_t rows = std::min<int64_t>(MR, mc - r);
    T* dst = ap + r * kc;
    for (int64_t p = 0; p < kc; ++p) {
      int64_t i = 0;
      for (; i < rows; ++i) dst[p * MR + i] = a.at(i0 + r + i, p0 + p);
      for (; i < MR; ++i) dst[p * MR + i] = T(0);
    }
  }
}

// Packs rows [p0, p0+kc) x cols [j0, j0+nc) of op(B) into NR-column panels:
// panel q holds bp[q*kc*NR + p*NR + j].
template <typename T, int NR>
void PackB(const MatrixView<T>& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, T* bp) {
  for (int64_t q = 0; q < nc; q += NR) {
    const int64_t cols = std::min<int64_t>(NR, nc - q);
    T* dst = bp + q * kc;
    for (int64_t p = 0; p < kc; ++p) {
      if (!b.trans && cols == NR) {
        std::memcpy(dst + p * NR, b.data + (p0 + p) * b.ld + j0 + q, sizeof(T) * NR);
        continue;
      }
      int64_t j = 0;
      for (; j < cols; ++j) dst[p * NR + j] = b.at(p0 + p, j0 + q + j);
      for (; j < NR; ++j) dst[p * NR + j] = T(0);
    }
  }
}

// Defines `name`, computing C[mc x nc] += alpha * Ap * Bp over packed panels
// for tile shape MR x NR, compiled with `target_attr`. A row of the MR x NR
// accumulator is one GCC vector of NR elements, so the compiler keeps the
// block in registers and emits broadcast + FMA for each step of k. (A macro
// rather than an inline template: GCC does not inline a default-target
// function into a function with another target.)
#define GE_GEMM_BLOCK(name, T, MR, NR, target_attr)                                       \
  target_attr void name(int64_t mc, int64_t nc, int64_t kc, const T* ap, const T* bp,    \
                        T alpha, T* c, int64_t ldc) {                                     \
    typedef T Vec __attribute__((vector_size(NR * sizeof(T))));                           \
    for (int64_t q = 0; q < nc; q += NR) {                                                \
      const T* bpanel = bp + q * kc;                                                      \
      const int64_t cols = std::min<int64_t>(NR, nc - q);                                 \
      for (int64_t r = 0; r < mc; r += MR) {                                              \
        const T* apanel = ap + r * kc;                                                    \
        Vec acc[MR];                                                                      \
        for (int i = 0; i < MR; ++i) acc[i] = Vec{};                                      \
        for (int64_t p = 0; p < kc; ++p) {                                                \
          Vec b;                                                                          \
          std::memcpy(&b, bpanel + p * NR, sizeof(Vec));                                  \
          for (int i = 0; i < MR; ++i) acc[i] += apanel[p * MR + i] * b;                  \
        }                                                                                 \
        T out[MR][NR];                                                                    \
        for (int i = 0; i < MR; ++i) std::memcpy(out[i], &acc[i], sizeof(Vec));           \
        const int64_t rows = std::min<int64_t>(MR, mc - r);                               \
        for (int64_t i = 0; i < rows; ++i) {                                              \
          T* crow = c + (r + i) * ldc + q;                                                \
          for (int64_t j = 0; j < cols; ++j) crow[j] += alpha * out[i][j];                \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
  }

// One compiled micro-kernel and the tile shape it was compiled for.
template <typename T>
struct BlockKernel {
  int mr, nr;
  void (*block)(int64_t, int64_t, int64_t, const T*, const T*, T, T*, int64_t);
};

#define GE_AVX512 __attribute__((target("arch=skylake-avx512")))
#define GE_AVX2 __attribute__((target("arch=haswell")))
#define GE_BASE
// Each accumulator row is exactly one native vector (GCC splits wider
// generic vectors poorly), and 8 rows give 8 independent FMA chains, enough
// to hide FMA latency. Measured on an AVX-512 EPYC: ~100 GFLOPS per core for
// the AVX-512 kernel, ~45 for AVX2, ~15 for SSE2.
GE_GEMM_BLOCK(BlockF32Avx512, float, 8, 16, GE_AVX512)
GE_GEMM_BLOCK(BlockF32Avx2, float, 8, 8, GE_AVX2)
GE_GEMM_BLOCK(BlockF32Base, float, 8, 4, GE_BASE)
GE_GEMM_BLOCK(BlockF64Avx512, double, 8, 8, GE_AVX512)
GE_GEMM_BLOCK(BlockF64Avx2, double, 8, 4, GE_AVX2)
GE_GEMM_BLOCK(BlockF64Base, double, 8, 2, GE_BASE)
#undef GE_GEMM_BLOCK
#undef GE_AVX512
#undef GE_AVX2
#undef GE_BASE

enum class Isa { kAvx512, kAvx2, kBase };

// The SDK's one CPU-feature detection picks the block kernels.
Isa DetectIsa() {
  switch (sdk::HostVectorIsa()) {
    case sdk::VectorIsa::kAvx512: return Isa::kAvx512;
    case sdk::VectorIsa::kAvx2: return Isa::kAvx2;
    case sdk::VectorIsa::kBase: return Isa::kBase;
  }
  return Isa::kBase;
}

template <typename T>
BlockKernel<T> SelectKernel() {
  if constexpr (std::is_same_v<T, float>) {
    switch (DetectIsa()) {
      case Isa::kAvx512: return {8, 16, &BlockF32Avx512};
      case Isa::kAvx2: return {8, 8, &BlockF32Avx2};
      case Isa::kBase: break;
    }
    return {8, 4, &BlockF32Base};
  } else {
    switch (DetectIsa()) {
      case Isa::kAvx512: return {8, 8, &BlockF64Avx512};
      case Isa::kAvx2: return {8, 4, &BlockF64Avx2};
      case Isa::kBase: break;
    }
    return {8, 2, &BlockF64Base};
  }
}

int64_t RoundUp(int64_t v, int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

template <typename T>
void ScaleTile(T beta, T* c, int64_t ldc, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  for (int64_t i = m0; i < m1; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) {
      std::fill(row + n0, row + n1, T(0));
    } else if (beta != T(1)) {
      for (int64_t j = n0; j < n1; ++j) row[j] *= beta;
    }
  }
}

// One output tile [m0, m1) x [n0, n1): scale by beta, then accumulate.
template <typename T, int MR, int NR>
void GemmTile(const BlockKernel<T>& kernel, const MatrixView<T>& a, const MatrixView<T>& b,
              int64_t k, T alpha, T beta, T* c, int64_t ldc, int64_t m0, int64_t m1, int64_t n0,
              int64_t n1) {
  ScaleTile(beta, c, ldc, m0, m1, n0, n1);
  const int64_t nc = n1 - n0;
  const int64_t kc_max = std::min(k, kKC);
  std::vector<T> bp(static_cast<size_t>(RoundUp(nc, NR) * kc_max));
  std::vector<T> ap(static_cast<size_t>(RoundUp(std::min(kMC, m1 - m0), MR) * kc_max));
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    const int64_t kc = std::min(kKC, k - p0);
    PackB<T, NR>(b, p0, kc, n0, nc, bp.data());
    for (int64_t i0 = m0; i0 < m1; i0 += kMC) {
      const int64_t mc = std::min(kMC, m1 - i0);
      PackA<T, MR>(a, i0, mc, p0, kc, ap.data());
      kernel.block(mc, nc, kc, ap.data(), bp.data(), alpha, c + i0 * ldc + n0, ldc);
    }
  }
}

template <typename T, int MR, int NR>
void GemmTiled(const BlockKernel<T>& kernel, const MatrixView<T>& a, const MatrixView<T>& b, int64_t m, int64_t n,
               int64_t k, T alpha, T beta, T* c, int64_t ldc, int threads) {
  // Tiles of up to kNC columns, with enough row tiles to give every thread
  // a couple of tasks.
  const int64_t n_tiles = (n + kNC - 1) / kNC;
  int64_t m_tile = RoundUp(m, MR);
  if (threads > 1 && n_tiles < 2 * threads) {
    const int64_t want = (2 * threads + n_tiles - 1) / n_tiles;
    m_tile = std::max<int64_t>(MR, RoundUp((m + want - 1) / want, MR));
  }
  const int64_t m_tiles = (m + m_tile - 1) / m_tile;
  const int64_t n_tile = RoundUp((n + n_tiles - 1) / n_tiles, NR);
  ParallelFor(threads, m_tiles * n_tiles, m_tile * n_tile * std::max<int64_t>(k, 1), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t m0 = (t / n_tiles) * m_tile;
      const int64_t n0 = (t % n_tiles) * n_tile;
      if (n0 >= n) continue;
      GemmTile<T, MR, NR>(kernel, a, b, k, alpha, beta, c, ldc, m0, std::min(m, m0 + m_tile), n0,
                          std::min(n, n0 + n_tile));
    }
  });
}

}  // namespace

template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, int threads) {
  if (m <= 0 || n <= 0) return;
  static const BlockKernel<T> kernel = SelectKernel<T>();
  const MatrixView<T> av{a, lda, trans_a};
  const MatrixView<T> bv{b, ldb, trans_b};
  // The packing routines are templated on the tile shape (MR is 8 for every
  // kernel; NR is the vector width).
  switch (kernel.nr) {
    case 16: return GemmTiled<T, 8, 16>(kernel, av, bv, m, n, k, alpha, beta, c, ldc, threads);
    case 8: return GemmTiled<T, 8, 8>(kernel, av, bv, m, n, k, alpha, beta, c, ldc, threads);
    case 4: return GemmTiled<T, 8, 4>(kernel, av, bv, m, n, k, alpha, beta, c, ldc, threads);
    default: return GemmTiled<T, 8, 2>(kernel, av, bv, m, n, k, alpha, beta, c, ldc, threads);
  }
}

template void Gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t, int);
template void Gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t, int);

}  // namespace ge::engine::host_cpu
