// Quantization parameters, support checks and element loops of cpu_dense's
// int8 kernels.
#include "runtime/engines/cpu_dense/int8_util.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/ops/shape_utils.h"
#include "runtime/engines/cpu_dense/graph_util.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine::cpu_dense {

Int8Ports PortsOf(std::string_view op_type) {
  Int8Ports p;
  if (op_type == "QLinearConv" || op_type == "QLinearMatMul") {
    p.x_scale = 1;
    p.x_zero = 2;
    p.w = 3;
    p.w_scale = 4;
    p.w_zero = 5;
    p.y_scale = 6;
    p.y_zero = 7;
    if (op_type == "QLinearConv") p.bias = 8;
  }
  return p;
}

bool IsPerTensorOrVector(const Shape& shape, int64_t n) {
  if (!shape.IsFullyKnown()) return true;
  const int64_t count = shape.NumElementsUnchecked();
  if (count == 1) return true;
  if (count != n) return false;
  return std::count_if(shape.dims().begin(), shape.dims().end(), [](int64_t d) { return d != 1; }) <= 1;
}

absl::StatusOr<std::vector<float>> QuantParam(const ir::OpDesc& op, const ExecuteContext& ctx, int i,
                                              std::string_view name, int64_t n, float absent) {
  if (i < 0 || !ctx.has_input(i)) return std::vector<float>(static_cast<size_t>(n), absent);
  const Tensor& t = ctx.input(i);
  if (t.NumElements() == 1) return std::vector<float>(static_cast<size_t>(n), static_cast<float>(t.GetAsDouble(0)));
  if (!IsPerTensorOrVector(t.shape(), n)) {
    return NodeError(op, name, " must have one element or ", n, ", got ", t.shape().ToString());
  }
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) out[c] = static_cast<float>(t.GetAsDouble(c));
  return out;
}

namespace {

// InputShape / InputDtype for port indices that may be -1 (absent from
// the op type).
Shape ShapeAt(const ir::OpDesc& op, int i) { return i < 0 ? Shape::UnknownRank() : InputShape(op, i); }
DataType DtypeAt(const ir::OpDesc& op, int i) { return i < 0 ? DataType::kUndefined : InputDtype(op, i); }

bool IsQuantType(DataType d) { return d == DataType::kInt8 || d == DataType::kUint8; }

// Shared dtype checks: activations u8 or s8, weights s8, outputs u8 / s8
// (QLinear*) or int32 (*Integer), parameters f32 scales.
absl::Status CheckInt8Types(const ir::OpDesc& op, const Int8Ports& p) {
  const DataType x = DtypeAt(op, p.x), w = DtypeAt(op, p.w);
  if (x != DataType::kUndefined && !IsQuantType(x)) return Unsupported(op, "input dtype ", DataTypeName(x));
  if (w == DataType::kUint8) return Unsupported(op, "u8 weights (oneDNN's int8 primitives take s8 weights)");
  if (w != DataType::kUndefined && w != DataType::kInt8) return Unsupported(op, "weights dtype ", DataTypeName(w));
  const DataType y = op.num_outputs() > 0 ? op.output(0).type.dtype() : DataType::kUndefined;
  if (y != DataType::kUndefined) {
    if (p.qlinear() ? !IsQuantType(y) : y != DataType::kInt32) {
      return Unsupported(op, "output dtype ", DataTypeName(y));
    }
  }
  for (int s : {p.x_scale, p.w_scale, p.y_scale}) {
    if (s >= 0 && DtypeAt(op, s) != DataType::kUndefined && DtypeAt(op, s) != DataType::kFloat) {
      return Unsupported(op, "scale input ", s, " is not f32");
    }
  }
  if (p.bias >= 0 && DtypeAt(op, p.bias) != DataType::kUndefined && DtypeAt(op, p.bias) != DataType::kInt32) {
    return Unsupported(op, "bias is not int32");
  }
  // Per-tensor parameters of the activations and the output.
  for (int i : {p.x_scale, p.x_zero, p.y_scale, p.y_zero}) {
    const Shape s = ShapeAt(op, i);
    if (i >= 0 && s.IsFullyKnown() && s.NumElementsUnchecked() != 1) {
      return Unsupported(op, "input ", i, " ", s.ToString(), " is not per tensor");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckInt8Conv(const ir::OpDesc& op, const DenseContext& ctx) {
  (void)ctx;
  const Int8Ports p = PortsOf(op.type());
  GE_RETURN_IF_ERROR(CheckInt8Types(op, p));
  auto attrs = ops::WindowAttrsFromOp(op);
  if (!attrs.ok()) return Unsupported(op, attrs.status().message());
  if (attrs->group < 1) return Unsupported(op, "group ", attrs->group, " is not positive");
  for (int64_t pad : attrs->pads) {
    if (pad < 0) return Unsupported(op, "negative pads");
  }
  const Shape x = ShapeAt(op, p.x), w = ShapeAt(op, p.w);
  if (x.rank() >= 0 && (x.rank() < 3 || x.rank() > 5)) {
    return Unsupported(op, "input rank ", x.rank(), " (1-D to 3-D convolutions only)");
  }
  if (x.IsFullyKnown() && w.IsFullyKnown()) {
    auto g = ops::ConvOutputShape(x, w, *attrs);
    if (!g.ok()) return Unsupported(op, g.status().message());
    for (size_t i = 0; i < g->pads_begin.size(); ++i) {
      if (g->pads_begin[i] < 0 || g->pads_end[i] < 0) return Unsupported(op, "negative pads");
    }
  }
  if (w.rank() >= 1 && w.IsFullyKnown()) {
    const int64_t m = w.dim(0);
    for (int i : {p.w_scale, p.w_zero}) {
      if (i >= 0 && !IsPerTensorOrVector(ShapeAt(op, i), m)) {
        return Unsupported(op, "input ", i, " ", ShapeAt(op, i).ToString(), " is neither per tensor nor per channel");
      }
    }
    const Shape b = p.bias >= 0 ? ShapeAt(op, p.bias) : Shape::UnknownRank();
    if (b.IsFullyKnown() && (b.rank() != 1 || b.dim(0) != m)) return Unsupported(op, "bias ", b.ToString());
  }
  return absl::OkStatus();
}

absl::Status CheckInt8MatMul(const ir::OpDesc& op, const DenseContext& ctx) {
  (void)ctx;
  const Int8Ports p = PortsOf(op.type());
  GE_RETURN_IF_ERROR(CheckInt8Types(op, p));
  const Shape a = ShapeAt(op, p.x), b = ShapeAt(op, p.w);
  for (const Shape* s : {&a, &b}) {
    if (s->rank() == 0) return Unsupported(op, "a scalar operand");
    if (s->rank() > DNNL_MAX_NDIMS) return Unsupported(op, "rank ", s->rank());
  }
  if (b.IsFullyKnown()) {
    const int64_t n = b.rank() == 1 ? 1 : b.dim(b.rank() - 1);
    for (int i : {p.w_scale, p.w_zero}) {
      const Shape s = ShapeAt(op, i);
      if (i >= 0 && s.IsFullyKnown() && s.NumElementsUnchecked() != 1 && (s.rank() > 2 || !IsPerTensorOrVector(s, n))) {
        return Unsupported(op, "input ", i, " ", s.ToString(), " is neither per tensor nor per column");
      }
    }
  }
  // a_zero_point per row is not oneDNN's (MatMulInteger's input 2 may be).
  const Shape za = ShapeAt(op, p.x_zero);
  if (za.IsFullyKnown() && za.NumElementsUnchecked() != 1) {
    return Unsupported(op, "a_zero_point ", za.ToString(), " is not per tensor");
  }
  return absl::OkStatus();
}

absl::Status CheckInt8WeightZeroPoint(const ir::Node& node) {
  const Int8Ports p = PortsOf(node.type());
  if (p.w_zero >= node.num_inputs() || !node.input(p.w_zero)) return absl::OkStatus();
  const Tensor* zero = ConstInput(node, p.w_zero);
  if (zero == nullptr) {
    return Unsupported(node.op_desc(), "the weights' zero point is computed at run time (oneDNN takes zero only)");
  }
  for (int64_t i = 0; i < zero->NumElements(); ++i) {
    if (zero->GetAsInt64(i) != 0) {
      return Unsupported(node.op_desc(), "non-zero weight zero point ", zero->GetAsInt64(i),
                         " (oneDNN's int8 primitives take zero only)");
    }
  }
  return absl::OkStatus();
}

absl::Status NodeLevelCheck(const ir::Node& node) {
  const std::string& t = node.type();
  if (t == "QLinearConv" || t == "ConvInteger" || t == "QLinearMatMul" || t == "MatMulInteger") {
    return CheckInt8WeightZeroPoint(node);
  }
  return absl::OkStatus();
}

void FlipSign(const void* src, void* dst, int64_t n) {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(s[i] ^ 0x80u);
}

bool Int8Vnni() {
  static const bool vnni = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512_vnni = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_vnni);
    return (isa & avx512_vnni) == avx512_vnni;
  }();
  return vnni;
}

void SplitHalves(const void* x, bool flip, uint8_t* lo, uint8_t* hi, int64_t n) {
  const auto* s = static_cast<const uint8_t*>(x);
  const uint8_t mask = flip ? 0x80u : 0u;
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<uint8_t>(s[i] ^ mask);
    lo[i] = static_cast<uint8_t>(v >> 1);
    hi[i] = static_cast<uint8_t>(v - lo[i]);
  }
}

namespace {

template <typename T>
void RequantizeAs(const int32_t* acc, const std::vector<float>& multiplier, int64_t inner, int64_t channels,
                  int32_t zero_point, T* y, int64_t n) {
  const auto lo = static_cast<float>(std::numeric_limits<T>::min());
  const auto hi = static_cast<float>(std::numeric_limits<T>::max());
  const int64_t rows = inner > 0 ? n / inner : 0;
#pragma omp parallel for schedule(static) if (n > (1 << 15))
  for (int64_t r = 0; r < rows; ++r) {
    const float m = multiplier[r % channels];
    for (int64_t i = r * inner; i < (r + 1) * inner; ++i) {
      const float v = std::nearbyint(static_cast<float>(acc[i]) * m) + static_cast<float>(zero_point);
      y[i] = static_cast<T>(std::min(std::max(v, lo), hi));
    }
  }
}

}  // namespace

void Requantize(const int32_t* acc, const std::vector<float>& multiplier, int64_t inner, int64_t channels,
                int32_t zero_point, DataType y_dtype, void* y, int64_t n) {
  if (y_dtype == DataType::kUint8) {
    RequantizeAs(acc, multiplier, inner, channels, zero_point, static_cast<uint8_t*>(y), n);
  } else {
    RequantizeAs(acc, multiplier, inner, channels, zero_point, static_cast<int8_t*>(y), n);
  }
}

}  // namespace ge::engine::cpu_dense
