// Entry points shared between cpu_dense's kernel families: the fused op
// reuses the Conv and MatMul/Gemm kernels and their support checks.
#pragma once

#include <atomic>

#include <memory>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "runtime/engines/api/kernel.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"
#include "runtime/engines/cpu_dense/post_ops.h"

namespace ge::engine::cpu_dense {

// `base` is the Conv (or MatMul / Gemm) the kernel computes, `op` the node
// itself (the base op or the _DenseFused node holding it), `chain` the
// post-ops (empty for plain nodes).
absl::StatusOr<std::unique_ptr<Kernel>> CreateConvKernel(const ir::OpDesc& op,
                                                         const ir::OpDesc& base,
                                                         PostOpChain chain,
                                                         const DenseContext& ctx);
absl::StatusOr<std::unique_ptr<Kernel>> CreateMatMulKernel(const ir::OpDesc& op,
                                                           const ir::OpDesc& base,
                                                           PostOpChain chain,
                                                           const DenseContext& ctx);

// oneDNN 2.6's brgconv holds about 1 KB per output sample in a 1-D
// convolution's primitive once the row is long (8 MB for 8 -> 8 channels
// over 8,192 samples, 62 MB over 65,536: a vocoder's last stages), where its
// direct JIT kernel holds 0.3 MB and takes the same CPU time (within 5%; 25%
// more for 16 channels at kernel 3). A Conv whose output is [N, C, W] with
// W >= kLongSignalWidth runs on that kernel, in the layouts brgconv chose,
// when oneDNN has it (docs/design/cpu_dense.md, "Long 1-D signals").
inline constexpr int64_t kLongSignalWidth = 2048;
bool LongSignalConv(const Shape& output);
// Convolution primitives built on the direct kernel by that rule (tests).
std::atomic<int64_t>& LongSignalConvBuilds();

// Support checks of the base ops (what cpu_dense's CheckSupported runs).
absl::Status CheckConv(const ir::OpDesc& op, const DenseContext& ctx);
absl::Status CheckMatMul(const ir::OpDesc& op, const DenseContext& ctx);
absl::Status CheckGemm(const ir::OpDesc& op, const DenseContext& ctx);

// The layout oneDNN's convolution for `op` (Conv, or _DenseFused over a
// Conv, with concrete types) writes fastest: kNChw16c, kNChw8c, kNHWC, or
// kND for anything else. The layout pass keeps that layout downstream.
// With `arriving` channels-last (the input's layout), kNHWC whenever oneDNN
// runs a channels-last primitive on a JIT kernel (the Conv kernel then
// builds that one), so a convolution between channels-last neighbours
// costs no reorders. With `want` channel-blocked (the layout pass's
// depthwise blocks), `want` when the kernel, reading `arriving`, runs a
// JIT primitive writing that layout (else the answer above).
absl::StatusOr<ir::Format> ConvPreferredFormat(const ir::OpDesc& op, const DenseContext& ctx,
                                               ir::Format arriving = ir::Format::kND,
                                               ir::Format want = ir::Format::kND);
// The same for a ConvTranspose (oneDNN's deconvolution), `arriving` alike.
absl::StatusOr<ir::Format> DeconvPreferredFormat(const ir::OpDesc& op, const DenseContext& ctx,
                                                 ir::Format arriving = ir::Format::kND);
// ConvTranspose's own path for a kernel equal to its stride between
// channels-last ports (conv_transpose_kernel.cc): on with AVX2 and FMA
// unless GED_CPU_DENSE_CONV=onednn (read once); SetStrideDeconvEnabled
// moves it for tests (kernels decide when they build a plan);
// StrideDeconvRuns counts its runs.
bool StrideDeconvEnabled();
void SetStrideDeconvEnabled(bool on);
std::atomic<int64_t>& StrideDeconvRuns();

// Whether a MatMul / Gemm node can take `chain` (its add operand's shape
// `add_shape`, unknown rank when the chain has no add). Used by the
// fused op's check and by the fusion pass before it fuses.
absl::Status CheckMatMulPostOps(const ir::OpDesc& base, const PostOpChain& chain,
                                const Shape& add_shape);

}  // namespace ge::engine::cpu_dense
