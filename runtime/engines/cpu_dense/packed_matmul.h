// The packed-weights path of cpu_dense's MatMul / Gemm (gemm_loops.h): B
// packed once per kernel into 16-column panels, whatever the number of
// rows, and products run on an OpenMP team split by panels (or by rows
// when there are fewer panels than threads).
//
// MatMulKernel (matmul_kernel.cc) takes this path for f32 products whose B
// is constant (`_const_inputs`, or known at Prepare) and a matrix (batch
// dims of 1, A's batch folded into rows), A not transposed, alpha 1, C a
// bias row or absent, and an `add` operand of the output's shape or one
// row, when the CPU has AVX2 and FMA and the product has few rows
// (PackedGemmFits): oneDNN 2.6's f32 matmul on AVX2 repacks B on every
// call, which costs the most when there are few rows to spread it over. Every other product stays on oneDNN. The panels
// are shared by the kernel's plans (a dynamic batch packs once, not once per batch size).
//
// GED_CPU_DENSE_GEMM=onednn in the environment (read once) turns the path
// off, for comparisons; SetPackedGemmMaxRows moves the bound (0: off) for
// tests and benchmarks.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/tensor.h"
#include "runtime/engines/cpu_dense/gemm_loops.h"
#include "runtime/engines/cpu_dense/packed_weights.h"
#include "runtime/engines/cpu_dense/post_ops.h"

namespace ge::engine::cpu_dense {

inline constexpr int64_t kPackedGemmMaxRows = 64;
// Up to this many rows a product whose B is at least twice as wide as
// deep (a transformer's QKV projection or FFN up) or at least
// kPackedGemmMinCols wide takes the path too. With whole-depth tiles
// (gemm_loops.cc) the packed loop beats oneDNN's sgemm, which re-reads and
// repacks B on every call, on BERT-base's 768-wide projections and FFN
// down (128 rows: 12 % of the model's CPU time at 1 thread) and on
// encoders at 308 and 384 rows (16-20 %); on deit_tiny's 192-wide ones (197
// rows) it lost 8 %, and at 788 rows (a ViT at batch 4) it lost 5 %
// (docs/perf.md, "BERT-base and the transformer class").
inline constexpr int64_t kPackedGemmMaxWideRows = 512;
inline constexpr int64_t kPackedGemmMinCols = 512;

// The most rows a product on the packed path may have: kPackedGemmMaxRows,
// or 0 (off) without AVX2 and FMA or with GED_CPU_DENSE_GEMM=onednn.
int64_t PackedGemmMaxRows();
// Sets the bound (0: off; ignored without AVX2 and FMA). Not for kernels
// running at the same time.
void SetPackedGemmMaxRows(int64_t rows);
// Whether an [m, k] x [k, n] product takes the packed path (given the
// other conditions): m <= PackedGemmMaxRows(), or m <=
// kPackedGemmMaxWideRows and n >= min(2 k, kPackedGemmMinCols) while the
// path is on with its default bound.
bool PackedGemmFits(int64_t m, int64_t k, int64_t n);

// The chain as GemmSteps (every PostOpKind has one).
std::vector<GemmStep> ToGemmSteps(const PostOpChain& chain);

// `b` ([k, n] row-major, or [n, k] when transposed) written as
// GemmPanels(n) panels of [k][kGemmPanel] at `panels`, zero-padded past n.
void PackPanels(const float* b, int64_t k, int64_t n, bool transposed, float* panels);
// The inverse: the [k, n] (or [n, k]) matrix of `panels` written at `b`.
void UnpackPanels(const float* panels, int64_t k, int64_t n, bool transposed, float* b);

// The attribute of a constant matrix stored in panel order (PackPanels,
// n a multiple of kGemmPanel so that the panels hold exactly its k * n
// values under its own dims), and of the MatMul / Gemm / `_DenseFused`
// nodes reading it as B, which use it in place (weight_panels.h).
inline constexpr std::string_view kAttrGemmPanels = "_gemm_panels";

// B ([k, n], or [n, k] when transposed) packed into panels, shared by the
// plans of one kernel.
class PanelWeights {
 public:
  using Panels = StoragePackedWeights::Data;
  // The panels of `b` with these dims: the last packing when it was of the
  // same storage and dims, else packed now (`*packed` set to whether it
  // was); thread-safe as StoragePackedWeights::Get.
  Panels Get(const Tensor& b, int64_t k, int64_t n, bool transposed, bool* packed = nullptr);
  // Whether the last packing was of `b`'s storage with these dims.
  bool PackedFrom(const Tensor& b, int64_t k, int64_t n, bool transposed) const;

 private:
  StoragePackedWeights packing_{"gemm_panels"};
};

// Runs `args` (panel range ignored) on up to `threads` threads of an
// OpenMP team; small products stay on the calling thread.
void RunPackedGemm(const GemmArgs& args, int threads);

}  // namespace ge::engine::cpu_dense
