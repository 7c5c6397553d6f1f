// What cpu_dense's int8 kernels (QLinearConv, ConvInteger, QLinearMatMul,
// MatMulInteger) share: reading scales and zero points, the support checks
// of their quantization parameters, and the element loops around oneDNN.
//
// What oneDNN 2.6 computes exactly on an AVX2 CPU without VNNI (measured;
// the unit tests hold it to host_cpu's reference at full range; with
// AVX-512 VNNI, Int8Vnni(), every u8 x s8 product is exact and nothing
// below splits):
// - convolution, u8 source x s8 weights: vpmaddubsw adds two u8 x s8
//   products into a saturating int16, so a pair can overflow once both
//   operands are large (255 * 127 * 2 > 32767). Exact when every weight is
//   within [-64, 64], or when every source value is within [0, 128]. The
//   conv kernel therefore runs one primitive for constant 7-bit weights
//   and otherwise splits the source into x >> 1 and x - (x >> 1) (both <=
//   128) and sums two primitives. An s8 source is shifted to u8 (+128,
//   zero point +128), exactly; oneDNN's own s8-source convolution halves
//   the weights on this CPU and is not exact.
// - matmul (oneDNN's int8 GEMM): s8 x s8 is exact at full range, u8 x s8
//   saturates; a u8 A is shifted to s8 (-128, zero point -128), exactly.
// - zero points: source and destination, per tensor (oneDNN counts padding
//   as the zero point, as ONNX does); weights' zero points must be zero
//   (CheckSupported places other nodes on host_cpu).
// - output scales: per tensor or per output channel; requantization is
//   round(acc * x_scale * w_scale / y_scale) + y_zero_point, saturated, as
//   ONNX Runtime computes it (oneDNN adds an int32 bias before scaling).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/node.h"
#include "base/ir/op_desc.h"
#include "base/tensor.h"
#include "runtime/engines/api/kernel.h"
#include "runtime/engines/cpu_dense/dense_kernel.h"

namespace ge::engine::cpu_dense {

// Whether oneDNN's int8 kernels use AVX-512 VNNI here: vpdpbusd adds four
// u8 x s8 products into int32 with no int16 step, so every product is
// exact at full range and the kernels never split their source.
bool Int8Vnni();

// The largest |weight| for which a u8 x s8 convolution cannot saturate.
inline constexpr int kMaxUnsplitWeight = 64;

// Products with fewer multiply-adds than this run on the calling thread
// alone: at batch 1 they take about 0.1 ms on one thread and no less on
// two (resnet18's 1x1 downsample convolutions, its classifier), while a
// team's second thread must be woken for each (OpenMP waits passively,
// base/openmp_env.h), which costs more than it saves on a busy machine.
inline constexpr int64_t kSerialMacs = int64_t{16} << 20;

// SerialScope (dnnl_util.h) runs such a plan's primitives on one thread.

// Input indices of each int8 op.
struct Int8Ports {
  int x = 0, x_scale = -1, x_zero = 2, w = 1, w_scale = -1, w_zero = 3, y_scale = -1, y_zero = -1, bias = -1;
  bool qlinear() const { return y_scale >= 0; }
};
Int8Ports PortsOf(std::string_view op_type);

// The values of a scale or zero-point input: one value (broadcast to `n`)
// or `n` values (a 1-D [n], or any shape with n elements whose other dims
// are 1); `absent` when the input is missing. InvalidArgument names the
// node otherwise.
absl::StatusOr<std::vector<float>> QuantParam(const ir::OpDesc& op, const ExecuteContext& ctx, int i,
                                              std::string_view name, int64_t n, float absent);

// Whether `t` has exactly one element or n elements in one dim.
bool IsPerTensorOrVector(const Shape& shape, int64_t n);

// OpDesc-level checks of the int8 ops (dtypes, parameter shapes known at
// placement).
absl::Status CheckInt8Conv(const ir::OpDesc& op, const DenseContext& ctx);
absl::Status CheckInt8MatMul(const ir::OpDesc& op, const DenseContext& ctx);
// Node-level check: the weights' zero point is absent or a constant zero.
absl::Status CheckInt8WeightZeroPoint(const ir::Node& node);
// The node-level checks of cpu_dense's kernels: CheckInt8WeightZeroPoint for
// the four int8 ops, OK for every other op type.
absl::Status NodeLevelCheck(const ir::Node& node);

// dst[i] = src[i] ^ 0x80 (s8 <-> u8 with the zero point moved by 128).
void FlipSign(const void* src, void* dst, int64_t n);
// lo[i] = x[i] >> 1, hi[i] = x[i] - lo[i] for a u8 x; `flip` first maps
// an s8 x to u8.
void SplitHalves(const void* x, bool flip, uint8_t* lo, uint8_t* hi, int64_t n);
// y = saturate(round(acc * multiplier[c]) + zero_point) with the channel
// c = (i / inner) % channels; y is u8 or s8.
void Requantize(const int32_t* acc, const std::vector<float>& multiplier, int64_t inner, int64_t channels,
                int32_t zero_point, DataType y_dtype, void* y, int64_t n);

}  // namespace ge::engine::cpu_dense
