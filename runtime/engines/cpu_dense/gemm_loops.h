// cpu_dense's own f32 GEMM over pre-packed weights (packed_matmul.cc), the
// path of MatMul / Gemm / _DenseFused with a constant B on AVX2 CPUs.
//
// oneDNN 2.6 has no packed-weights GEMM for AVX2: its matmul runs the
// sgemm driver on B as stored, repacking B's panels on every call, which
// dominates small-M products (four rows times a 2048 x 2048 matrix ran 10x
// slower than one row). Here B is packed once into panels of
// kGemmPanel columns: a [k, n] matrix becomes ceil(n / kGemmPanel) panels,
// each [k][kGemmPanel] row-major and zero-padded past n, so a product
// walks each panel contiguously while a register tile of up to 6 rows x
// kGemmPanel columns of C stays in registers. A tile walks the whole
// depth up to kGemmDepthBlock (deeper products in equal blocks), so C is
// written once; the post-ops (post_ops.h) run on the tile before it is
// stored.
//
// gemm_loops.cc is compiled with AVX2+FMA only; this header (POD, constants
// and one function) is the whole interface, so no inline function of a
// shared header is emitted with AVX2 code.
#pragma once

#include <cstdint>

namespace ge::engine::cpu_dense {

inline constexpr int64_t kGemmPanel = 16;
inline constexpr int64_t kGemmDepthBlock = 4096;

inline constexpr int64_t GemmPanels(int64_t n) { return (n + kGemmPanel - 1) / kGemmPanel; }

// One post-op step on the product (the codes follow PostOpKind's order).
struct GemmStep {
  int32_t kind;  // 0 add, 1 relu, 2 clip, 3 sigmoid, 4 tanh, 5 elu, 6 gelu_erf, 7 hardswish, 8 swish, 9 linear,
                 // 10 gelu_tanh
  float alpha, beta;
};

// c[r, j] = steps(bias[j] + sum_p a[r, p] * B[p, j]) for r < rows and
// panels [panel_begin, panel_end). The `add` step reads add[r * add_ld + j]
// (add_ld 0: one row for every r).
struct GemmArgs {
  const float* a;
  int64_t lda;
  int64_t rows;
  int64_t k;
  const float* packed;  // GemmPanels(n) panels of [k][kGemmPanel]
  int64_t n;
  float* c;
  int64_t ldc;
  const float* bias;  // n floats, or null
  const float* add;   // null unless a step adds
  int64_t add_ld;
  const GemmStep* steps;
  int32_t num_steps;
  int64_t panel_begin, panel_end;
};

namespace avx2 {
void PackedGemm(const GemmArgs& args);
}

}  // namespace ge::engine::cpu_dense
