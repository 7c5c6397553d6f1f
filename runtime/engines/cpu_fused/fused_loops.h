// The inner loops of cpu_fused's kernels, compiled once per ISA.
//
// fused_loops.cc is compiled twice (CMakeLists.txt), with AVX2+FMA into
// namespace `avx2` and with AVX-512 into namespace `avx512`, as cpu_vector
// does with its loops; SelectLoops (fused_kernels.cc) picks one table per
// process. This header is the whole interface between those translation
// units and the rest of the engine: POD and function pointers only, so no
// inline function of a shared header is emitted with AVX-512 code.
#pragma once

#include <cstdint>

namespace ge::engine::cpu_fused {

// One attention head: Y = softmax(scale * Q Kt + mask) V, row by row.
//   q  [sq, d] rows `q_stride` apart     kt [d, sk] (K transposed, dense)
//   v  [sk, dv] dense                    y  [sq, dv] dense
//   mask: null, or the row of query i at mask + i * mask_row_stride, its
//         element j at j * mask_col_stride (0 or 1: broadcast or dense)
// `scratch` holds kAttentionRowBlock * sk floats: the scores of one block
// of query rows, which stay in L1 between the two products.
struct AttentionHeadArgs {
  const float* q;
  int64_t q_stride;
  const float* kt;
  const float* v;
  const float* mask;
  int64_t mask_row_stride;
  int64_t mask_col_stride;
  float* y;
  int64_t sq, sk, d, dv;
  float scale;
  float* scratch;
};
inline constexpr int64_t kAttentionRowBlock = 4;

// Rows [begin, end) of LayerNorm(x + r) * gamma + beta + p over rows of
// `n` elements; r, beta and p may be null (r and p have x's shape, gamma
// and beta `n` elements).
struct AddLayerNormArgs {
  const float* x;
  const float* r;
  const float* gamma;
  const float* beta;
  const float* p;
  float* y;
  int64_t n;
  float epsilon;
};

struct FusedLoops {
  const char* name;
  void (*attention_head)(const AttentionHeadArgs& args);
  void (*add_layer_norm)(const AddLayerNormArgs& args, int64_t begin, int64_t end);
  // y[k, n] = x[n, k] for a dense [rows, cols] x (K to Kt).
  void (*transpose)(const float* x, int64_t rows, int64_t cols, float* y);
};

namespace avx2 {
const FusedLoops& Loops();
}
namespace avx512 {
const FusedLoops& Loops();
}

}  // namespace ge::engine::cpu_fused
