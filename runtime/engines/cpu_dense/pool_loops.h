// The engine's own 2-D pooling of channel-blocked f32 activations (nChw8c,
// nChw16c): MaxPool and AveragePool (both pad rules) with any kernel,
// strides, dilations, pads and ceil_mode's extra end window.
//
// oneDNN 2.6's `jit:avx2` pooling took 0.8-0.9 ms for a 3x3 stride-2 max
// pool of 1x64x111x111 (SqueezeNet's first, ResNet's stem at 112) and 0.4 ms
// for an exclude-pad 3x3 average of 1x192x35x35 (Inception), several times
// what reading the input costs. A window is a rectangle of the input
// clipped to it, so the loop is separable: for each output row, one pass
// reduces the window's input rows column by column into a short row buffer
// (on the stack), and a second pass reduces the window's columns of that
// buffer for each output. Each input row is read once per output row that
// covers it, and the 8 or 16 lanes of a position are one vector. Output rows
// (with their batch index and channel block) are split over the team.
//
// The loop is compiled with AVX2 only (pool_loops.cc, its own object like
// the packed GEMM's); BlockedPoolSupported (pool_kernels.cc, baseline code)
// says no on other CPUs and the pooling stays on oneDNN there.
#pragma once

#include <cstdint>

#include "runtime/engines/cpu_dense/window2d.h"

namespace ge::engine::cpu_dense {

enum class BlockedPoolKind { kMax, kAverageExcludePad, kAverageIncludePad };

// A pooling's window (window2d.h) over a [N, C, H, W] tensor stored with C
// in blocks of `block` lanes (C a multiple of `block`; out_channels unused).
// Pads at the end may exceed the attribute's (ceil_mode's extra end window):
// only the begin pads place the windows, every window is clipped to the
// input.
// The widest window row (in input columns, dilation included) BlockedPool
// runs.
inline constexpr int64_t kBlockedPoolMaxSpan = 192;

// Whether BlockedPool runs this geometry on this CPU: AVX2, block 8 or 16,
// positive sizes, strides and dilations, non-negative begin pads, a window
// row of at most kBlockedPoolMaxSpan input columns. Windows that cover no
// input element are the caller's to reject (HasEmptyWindow).
bool BlockedPoolSupported(const Window2d& g, int64_t block);

// y[n, c, oh, ow] = the max, or the mean, of x over the window. The average
// divides by the window's input elements (exclude-pad) or by kernel_h *
// kernel_w (include-pad; the caller rejects windows past the explicit pads,
// which ONNX does not count). Splits rows over the OpenMP team unless called
// inside a parallel region or the output is small. AVX2 code: call only
// when BlockedPoolSupported(g).
namespace avx2 {
void BlockedPool(const Window2d& g, int64_t block, BlockedPoolKind kind, const float* x, float* y);
}  // namespace avx2

}  // namespace ge::engine::cpu_dense
