// The inner loops of cpu_dense's recurrent kernels (rnn_kernel.cc),
// compiled once per ISA.
//
// rnn_loops.cc is compiled twice (CMakeLists.txt): with the compiler's
// baseline flags into namespace `base`, and with AVX2+FMA into namespace
// `avx2`; RnnLoopsFor picks one table for the running CPU (the SDK's
// detector). This header is the whole interface between those translation
// units and the kernel: POD, constants and function pointers only, so no
// inline function of a shared header is emitted with AVX2 code.
//
// Weights are packed into panels of kRnnPanel columns: a [cols, k]
// row-major matrix W (one output per row, as ONNX stores W and R) becomes
// ceil(cols / kRnnPanel) panels, each [k][kRnnPanel] with W transposed
// and zero-padded past `cols`, so that a product walks each panel once,
// contiguously, while its accumulators stay in registers. Outputs of a
// product are kRnnPanel-padded rows (the caller sizes them with
// RnnPaddedCols).
#pragma once

#include <cstdint>

namespace ge::engine::cpu_dense {

inline constexpr int64_t kRnnPanel = 16;

inline constexpr int64_t RnnPaddedCols(int64_t cols) { return (cols + kRnnPanel - 1) / kRnnPanel * kRnnPanel; }

// Hidden units per group of the cells' rows (RnnCellArgs).
inline constexpr int64_t kRnnGroup = 8;

// c[r, 0..panels * kRnnPanel) = init[r] + sum_p a[r, p] * B[p, :] for r < rows,
// where B is `panels` packed panels of depth k and init is c itself
// (accumulate), `bias` (a padded row, same for every r), or zero.
struct RnnGemmArgs {
  const float* a;
  int64_t lda;
  int64_t rows;
  int64_t k;
  const float* packed;
  int64_t panels;
  float* c;
  int64_t ldc;
  const float* bias;  // null: none
  bool accumulate;
};

// `hidden` units of one batch row of a cell with ONNX's default activations
// (sigmoid for the gates, tanh otherwise), clip applied to every
// pre-activation when positive. The units come in groups of kRnnGroup; g
// is the row of the recurrent product: each group's gates side by side
// (ONNX's order: LSTM i o f c, GRU z r h, RNN one; kRnnGroup floats each),
// the groups `group` floats apart; xw the row of the input projection
// (biases included, the same layout), both read only; the peepholes
// likewise with three gates (p_i, p_o, p_f), groups 3 * kRnnGroup apart.
// h_prev is the state the step reads (GRU), h the one it writes (they may
// be the same), LSTM's c is updated in place; these three are plain rows.
struct RnnCellArgs {
  const float* g;
  const float* xw;
  const float* peephole;  // LSTM, or null
  float clip;             // 0: none
  const float* h_prev;
  float* h;
  float* c;  // LSTM only
  int64_t hidden;
  int64_t group;  // floats between groups of g and xw
};

struct RnnLoops {
  const char* name;
  void (*gemm)(const RnnGemmArgs& args);
  // In place over n floats: x = 1 / (1 + exp(-x)), and x = tanh(x).
  void (*sigmoid)(float* x, int64_t n);
  void (*tanh)(float* x, int64_t n);
  void (*lstm_row)(const RnnCellArgs& args);  // input_forget off
  void (*gru_row)(const RnnCellArgs& args);   // linear_before_reset on
  void (*rnn_row)(const RnnCellArgs& args);   // tanh
};

namespace base {
const RnnLoops& Loops();
}
namespace avx2 {
const RnnLoops& Loops();
}

}  // namespace ge::engine::cpu_dense
