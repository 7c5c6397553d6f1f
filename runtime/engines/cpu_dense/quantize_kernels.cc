// QuantizeLinear and DequantizeLinear on cpu_dense, per tensor: the float
// edges of a QDQ graph that stay between the int8 kernels (a residual Add
// between its DequantizeLinear and QuantizeLinear nodes), kept on the
// engine so that they do not cross to host_cpu and back. Computes as ONNX
// (and host_cpu) defines: y = saturate(round_half_even(x / scale) + zp),
// x = (q - zp) * scale (QuantizeLinear 8 elements a step with AVX2, the
// same bits). Per-axis scales run on host_cpu.
//
// DynamicQuantizeLinear too (ONNX Runtime's dynamic quantization puts one
// before every MatMulInteger / ConvInteger, whose kernels are here): the
// range [min(x, 0), max(x, 0)] (AVX2, 8 lanes), scale = range / 255 and
// zero point = round(-min / scale) as ONNX defines them in f32, then the
// QuantizeLinear loop above; the same bits as host_cpu's reference.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/cpu_features.h"

namespace ge::engine::cpu_dense {
namespace {

bool IsQuantType(DataType d) { return d == DataType::kInt8 || d == DataType::kUint8; }

absl::Status CheckPerTensor(const ir::OpDesc& op, const DenseContext& ctx) {
  (void)ctx;
  for (int i = 1; i < std::min(op.num_inputs(), 3); ++i) {
    const Shape s = InputShape(op, i);
    if (InputDtype(op, i) == DataType::kUndefined) continue;
    if (!s.IsFullyKnown() || s.NumElementsUnchecked() != 1)
      return Unsupported(op, "scale or zero point is not per tensor");
  }
  if (InputDtype(op, 1) != DataType::kUndefined && InputDtype(op, 1) != DataType::kFloat) {
    return Unsupported(op, "scale is not f32");
  }
  const bool quantize = op.type() == "QuantizeLinear";
  const DataType in = InputDtype(op, 0);
  const DataType out = op.num_outputs() > 0 ? op.output(0).type.dtype() : DataType::kUndefined;
  if (in != DataType::kUndefined && (quantize ? in != DataType::kFloat : !IsQuantType(in))) {
    return Unsupported(op, "input dtype ", DataTypeName(in));
  }
  if (out != DataType::kUndefined && (quantize ? !IsQuantType(out) : out != DataType::kFloat)) {
    return Unsupported(op, "output dtype ", DataTypeName(out));
  }
  return absl::OkStatus();
}

// The per-tensor scale and zero point of the running node.
absl::Status Params(const ir::OpDesc& op, const ExecuteContext& ctx, float& scale, int32_t& zero) {
  const Tensor& s = ctx.input(1);
  if (s.NumElements() != 1 || s.dtype() != DataType::kFloat) {
    return NodeError(op, "cpu_dense takes a per-tensor f32 scale, got ", s.shape().ToString());
  }
  scale = s.data<float>()[0];
  zero = 0;
  if (ctx.has_input(2)) {
    const Tensor& z = ctx.input(2);
    if (z.NumElements() != 1) return NodeError(op, "cpu_dense takes a per-tensor zero point");
    zero = static_cast<int32_t>(z.GetAsInt64(0));
  }
  return absl::OkStatus();
}

template <typename T>
void QuantizeScalar(const float* x, T* y, int64_t begin, int64_t end, float scale, int32_t zero, float lo, float hi) {
  for (int64_t i = begin; i < end; ++i) {
    const float q = std::nearbyint(std::clamp(x[i] / scale, lo, hi));
    y[i] = static_cast<T>(static_cast<int32_t>(q) + zero);
  }
}

// The same steps 8 at a time: the f32 quotient, the clamp, rounding half to
// even (nearbyint in the default rounding mode), the zero point added in
// int32, narrowed (in range already); the same bits as the scalar form.
template <typename T>
__attribute__((target("avx2"))) void QuantizeAvx2(const float* x, T* y, int64_t begin, int64_t end, float scale,
                                                  int32_t zero, float lo, float hi) {
  const __m256 vs = _mm256_set1_ps(scale), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256i vz = _mm256_set1_epi32(zero);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
    v = _mm256_min_ps(_mm256_max_ps(v, vlo), vhi);
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i r = _mm256_add_epi32(_mm256_cvtps_epi32(v), vz);
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    const __m128i w8 = std::is_same_v<T, uint8_t> ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), w8);
  }
  QuantizeScalar(x, y, i, end, scale, zero, lo, hi);
}

template <typename T>
void Quantize(const float* x, T* y, int64_t n, float scale, int32_t zero) {
  // Clamped before rounding, as ONNX Runtime's MLAS does; the quotient in
  // f32, as ONNX's reference and ONNX Runtime divide.
  const auto lo = static_cast<float>(std::numeric_limits<T>::min() - zero);
  const auto hi = static_cast<float>(std::numeric_limits<T>::max() - zero);
  static const bool avx2 = sdk::HostCpuFeatures().avx2;
  constexpr int64_t kChunk = 1 << 14;  // a multiple of 8: only the last chunk has a tail
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 2)
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t begin = k * kChunk, end = std::min(n, begin + kChunk);
    if (avx2) {
      QuantizeAvx2(x, y, begin, end, scale, zero, lo, hi);
    } else {
      QuantizeScalar(x, y, begin, end, scale, zero, lo, hi);
    }
  }
}

template <typename T>
void Dequantize(const T* x, float* y, int64_t n, float scale, int32_t zero) {
#pragma omp parallel for schedule(static) if (n > (1 << 15))
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zero) * scale;
}

// The range of x[0, n) widened to include 0; false when x has a NaN.
__attribute__((target("avx2"))) bool RangeAvx2(const float* x, int64_t n, float* lo, float* hi) {
  __m256 vlo = _mm256_setzero_ps(), vhi = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    vlo = _mm256_min_ps(vlo, v);
    vhi = _mm256_max_ps(vhi, v);
  }
  if (_mm256_movemask_ps(nan) != 0) return false;
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, vlo);
  _mm256_store_ps(h, vhi);
  float a = 0, b = 0;
  for (int k = 0; k < 8; ++k) {
    a = std::min(a, l[k]);
    b = std::max(b, h[k]);
  }
  for (; i < n; ++i) {
    if (std::isnan(x[i])) return false;
    a = std::min(a, x[i]);
    b = std::max(b, x[i]);
  }
  *lo = a;
  *hi = b;
  return true;
}

bool Range(const float* x, int64_t n, float* lo, float* hi) {
  static const bool avx2 = sdk::HostCpuFeatures().avx2;
  if (avx2) return RangeAvx2(x, n, lo, hi);
  float a = 0, b = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return false;
    a = std::min(a, x[i]);
    b = std::max(b, x[i]);
  }
  *lo = a;
  *hi = b;
  return true;
}

class DynamicQuantizeKernel final : public Kernel {
 public:
  explicit DynamicQuantizeKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t n = x.NumElements();
    float lo = 0, hi = 0;
    if (!Range(x.data<float>(), n, &lo, &hi)) return NodeError(op_, "x has a NaN");
    if (std::isinf(lo) || std::isinf(hi)) return NodeError(op_, "x has an infinite value");
    const float scale = (hi - lo) / 255.0f;
    const float zero = scale > 0 ? std::clamp(std::nearbyint((0.0f - lo) / scale), 0.0f, 255.0f) : 0.0f;
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, x.shape()));
    SetDnnlThreads(ctx.num_threads());
    if (scale > 0) {
      Quantize(x.data<float>(), y.data<uint8_t>(), n, scale, static_cast<int32_t>(zero));
    } else if (n > 0) {
      std::fill(y.data<uint8_t>(), y.data<uint8_t>() + n, uint8_t{0});
    }
    if (ctx.num_outputs() > 1) {
      GE_ASSIGN_OR_RETURN(Tensor s, ctx.Output(1, Shape{}));
      s.data<float>()[0] = scale;
    }
    if (ctx.num_outputs() > 2) {
      GE_ASSIGN_OR_RETURN(Tensor z, ctx.Output(2, Shape{}));
      z.data<uint8_t>()[0] = static_cast<uint8_t>(zero);
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

absl::Status CheckDynamicQuantize(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (InputDtype(op, 0) != DataType::kUndefined && InputDtype(op, 0) != DataType::kFloat) {
    return Unsupported(op, "input dtype ", DataTypeName(InputDtype(op, 0)));
  }
  return absl::OkStatus();
}

class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(const ir::OpDesc& op, bool quantize) : op_(op), quantize_(quantize) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    float scale = 1;
    int32_t zero = 0;
    GE_RETURN_IF_ERROR(Params(op_, ctx, scale, zero));
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, x.shape()));
    const int64_t n = x.NumElements();
    SetDnnlThreads(ctx.num_threads());
    if (quantize_) {
      if (!(scale > 0) && !(scale < 0)) return NodeError(op_, "y_scale is zero");
      if (y.dtype() == DataType::kUint8) {
        Quantize(x.data<float>(), y.data<uint8_t>(), n, scale, zero);
      } else {
        Quantize(x.data<float>(), y.data<int8_t>(), n, scale, zero);
      }
    } else if (x.dtype() == DataType::kUint8) {
      Dequantize(x.data<uint8_t>(), y.data<float>(), n, scale, zero);
    } else {
      Dequantize(x.data<int8_t>(), y.data<float>(), n, scale, zero);
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  bool quantize_;
};

}  // namespace

void RegisterQuantizeKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet types{DataType::kFloat, DataType::kUint8, DataType::kInt8};
  for (std::string_view type : {"QuantizeLinear", "DequantizeLinear"}) {
    table.Add({std::string(type), types, CheckPerTensor,
               [](const ir::OpDesc& op, const DenseContext&) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                 return std::unique_ptr<Kernel>(new QuantizeKernel(op, op.type() == "QuantizeLinear"));
               }});
  }
  table.Add({"DynamicQuantizeLinear", sdk::DataTypeSet{DataType::kFloat, DataType::kUint8}, CheckDynamicQuantize,
             [](const ir::OpDesc& op, const DenseContext&) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new DynamicQuantizeKernel(op));
             }});
}

}  // namespace ge::engine::cpu_dense
