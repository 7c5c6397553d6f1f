// `_QLinearAdd` on cpu_dense: the int8 residual Add of a quantized network
// (what the QDQ fusion pass makes of DQ(A), DQ(B) -> Add [-> Relu] -> Q).
//
// Element-wise over two same-shape tensors, so any layout both share is
// fine (the blocked-layout pass hands it channels-last int8 activations and
// keeps its output so). A B that broadcasts as a suffix of A (its dims,
// leading 1s dropped, are A's last dims: a bias over the last axis; or one
// element) is read cyclically: the layout pass keeps such an Add plain. The
// formula is the SDK's (sdk/qlinear_add.h), the
// one host_cpu's reference computes: an AVX2 + FMA loop where the CPU has
// both (8 elements per step: widen, two FMAs, clamp, round half to even,
// narrow), the SDK's scalar form elsewhere and for the tail; both give the
// same bits. Parameters are per tensor; CheckSupported places others on
// host_cpu.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/cpu_features.h"
#include "runtime/engines/sdk/qlinear_add.h"

namespace ge::engine::cpu_dense {
namespace {

template <typename T>
void AddScalar(const T* a, const T* b, T* c, int64_t begin, int64_t end, const sdk::QLinearAddParams& p) {
  for (int64_t i = begin; i < end; ++i) c[i] = sdk::QLinearAddOne(a[i], b[i], p);
}

template <typename T>
__attribute__((target("avx2,fma"))) __m256 Widen(const T* p) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m256i w = std::is_same_v<T, uint8_t> ? _mm256_cvtepu8_epi32(v) : _mm256_cvtepi8_epi32(v);
  return _mm256_cvtepi32_ps(w);
}

// [begin, end) in steps of 8, the tail by the scalar form.
template <typename T>
__attribute__((target("avx2,fma"))) void AddAvx2(const T* a, const T* b, T* c, int64_t begin, int64_t end,
                                                 const sdk::QLinearAddParams& p) {
  const __m256 ra = _mm256_set1_ps(p.ra), rb = _mm256_set1_ps(p.rb), k = _mm256_set1_ps(p.k);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(p.lo)), hi = _mm256_set1_ps(static_cast<float>(p.hi));
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 t = _mm256_fmadd_ps(Widen(b + i), rb, k);
    __m256 v = _mm256_fmadd_ps(Widen(a + i), ra, t);
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);  // (v > lo ? v : lo), then (v < hi ? v : hi)
    const __m256i r = _mm256_cvtps_epi32(v);      // round half to even (the default MXCSR mode)
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    const __m128i w8 = std::is_same_v<T, uint8_t> ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(c + i), w8);
  }
  AddScalar(a, b, c, i, end, p);
}

absl::StatusOr<float> ScalarParam(const ir::OpDesc& op, const ExecuteContext& ctx, int i) {
  const Tensor& t = ctx.input(i);
  if (t.NumElements() != 1) return NodeError(op, "input ", i, " must have one element, got ", t.shape().ToString());
  return static_cast<float>(t.GetAsDouble(0));
}

// Whether B, of `nb` elements, repeats along A as a suffix of its dims
// (or is one element).
bool SuffixBroadcast(const Shape& a, const Shape& b) {
  if (b.unknown_rank() || a.unknown_rank()) return false;
  if (b.IsFullyKnown() && b.NumElementsUnchecked() == 1) return true;
  int lead = 0;
  while (lead < b.rank() && b.dim(lead) == 1) ++lead;
  const int k = b.rank() - lead;
  if (k > a.rank()) return false;
  for (int d = 0; d < k; ++d) {
    if (b.dim(lead + d) < 0 || b.dim(lead + d) != a.dim(a.rank() - k + d)) return false;
  }
  return true;
}

class QLinearAddKernel final : public Kernel {
 public:
  explicit QLinearAddKernel(const ir::OpDesc& op) : op_(op), vector_(UseVector()) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    if ((a.shape() != b.shape() && !SuffixBroadcast(a.shape(), b.shape())) || a.dtype() != b.dtype()) {
      return NodeError(op_, "A ", a.shape().ToString(), " and B ", b.shape().ToString(),
                       " must have one shape (or B A's last dims) and one dtype");
    }
    float s[8] = {};
    for (int i : {1, 2, 4, 5, 6, 7}) {
      GE_ASSIGN_OR_RETURN(s[i], ScalarParam(op_, ctx, i));
    }
    if (!(s[6] > 0) || !std::isfinite(s[6])) return NodeError(op_, "C_scale must be positive, got ", s[6]);
    GE_ASSIGN_OR_RETURN(Tensor c, ctx.Output(0, a.shape()));
    if (c.dtype() != a.dtype()) return NodeError(op_, "C must have A's dtype");
    const auto z = [&](int i) { return static_cast<int32_t>(s[i]); };
    const int64_t n = a.NumElements();
    const int64_t nb = b.NumElements();
    SetDnnlThreads(ctx.num_threads());
    if (a.dtype() == DataType::kUint8) {
      Dispatch(a.data<uint8_t>(), b.data<uint8_t>(), c.data<uint8_t>(), n, nb,
               sdk::MakeQLinearAddParams<uint8_t>(s[1], z(2), s[4], z(5), s[6], z(7)));
    } else {
      Dispatch(a.data<int8_t>(), b.data<int8_t>(), c.data<int8_t>(), n, nb,
               sdk::MakeQLinearAddParams<int8_t>(s[1], z(2), s[4], z(5), s[6], z(7)));
    }
    return absl::OkStatus();
  }

 private:
  static bool UseVector() {
    const sdk::CpuFeatures& f = sdk::HostCpuFeatures();
    return f.avx2 && f.fma;
  }

  // A B of nb < n elements repeats every nb elements of A: B tiled to at
  // least kTile elements (a whole number of copies) is added to each piece
  // of A of the tile's length, every piece starting at a multiple of nb.
  template <typename T>
  void Dispatch(const T* a, const T* b, T* c, int64_t n, int64_t nb, const sdk::QLinearAddParams& p) const {
    if (nb == n) return Run(a, b, c, n, p);
    if (n == 0 || nb == 0) return;
    constexpr int64_t kTile = 256;
    std::vector<T> tile;
    const T* row = b;
    int64_t len = nb;
    if (nb < kTile) {
      const int64_t copies = (kTile + nb - 1) / nb;
      tile.resize(static_cast<size_t>(copies * nb));
      for (int64_t k = 0; k < copies; ++k) std::copy(b, b + nb, tile.begin() + k * nb);
      row = tile.data();
      len = copies * nb;
    }
    const int64_t pieces = (n + len - 1) / len;
#pragma omp parallel for schedule(static) if (n >= 4 * (1 << 14))
    for (int64_t k = 0; k < pieces; ++k) {
      const int64_t begin = k * len, count = std::min(len, n - begin);
      if (vector_) {
        AddAvx2(a + begin, row, c + begin, 0, count, p);
      } else {
        AddScalar(a + begin, row, c + begin, 0, count, p);
      }
    }
  }

  template <typename T>
  void Run(const T* a, const T* b, T* c, int64_t n, const sdk::QLinearAddParams& p) const {
    constexpr int64_t kChunk = 1 << 14;  // a multiple of 8: only the last chunk has a tail
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    // Below 4 chunks (tens of microseconds on one thread) waking a team
    // costs more than it saves.
#pragma omp parallel for schedule(static) if (chunks >= 4)
    for (int64_t k = 0; k < chunks; ++k) {
      const int64_t begin = k * kChunk, end = std::min(n, begin + kChunk);
      if (vector_) {
        AddAvx2(a, b, c, begin, end, p);
      } else {
        AddScalar(a, b, c, begin, end, p);
      }
    }
  }

  ir::OpDesc op_;
  bool vector_;
};

// Per-tensor parameters, one dtype for A, B and C, one shape for A and B
// or B A's last dims (SuffixBroadcast).
absl::Status CheckQLinearAdd(const ir::OpDesc& op, const DenseContext&) {
  if (op.num_inputs() != 8) return Unsupported(op, "it takes 8 inputs");
  for (int i : {1, 2, 4, 5, 6, 7}) {
    const Shape s = InputShape(op, i);
    if (!s.IsFullyKnown() || s.NumElementsUnchecked() != 1) return Unsupported(op, "input ", i, " is not per tensor");
  }
  const DataType d = InputDtype(op, 0);
  if (InputDtype(op, 3) != d || op.output(0).type.dtype() != d) return Unsupported(op, "A, B and C differ in dtype");
  const Shape a = InputShape(op, 0), b = InputShape(op, 3);
  // Unknown dims: one shape, or B a known suffix of A's dims.
  if (a != b && !SuffixBroadcast(a, b)) {
    return Unsupported(op, "B ", b.ToString(), " is neither A's shape ", a.ToString(), " nor its last dims");
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterInt8AddKernels(DenseKernelTable& table) {
  table.Add({"_QLinearAdd",
             {DataType::kUint8, DataType::kInt8},
             CheckQLinearAdd,
             [](const ir::OpDesc& op, const DenseContext&) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new QLinearAddKernel(op));
             }});
}

}  // namespace ge::engine::cpu_dense
