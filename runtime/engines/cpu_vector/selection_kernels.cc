// Along one axis: TopK over ordered keys; ArgMax, ArgMin and CumSum (below).
//
// Each element of a row becomes one unsigned *composite key* whose order is
// the answer's order: the value's ordered bits in the high part (float bits
// with the sign folded so that unsigned order is numeric order, -0 taken as
// +0, every NaN one key above +inf; integers with the sign bit flipped;
// inverted for `largest` = 0) and the complement of the index in the low 32
// bits, so equal values put the lower index first and no two keys are equal.
// Selecting the K largest keys of distinct integers then needs no tie or
// NaN logic: ties go to the lower index as ONNX asks (ORT agrees), and NaN
// counts as larger than every number (torch.topk's and numpy's order: first
// for `largest`, last otherwise; ORT's order with NaN is unspecified).
// Values are read back from the input by index, so NaN payloads survive.
//
// Keys are 64-bit for 1-, 2- and 4-byte types (f16 widened to f32) and
// 128-bit for f64 and i64. A row much longer than K takes a bound first:
// its 4K blocks each have a largest key, the K-th largest of those is no
// larger than the row's K-th largest (the blocks' maxima are K distinct
// elements at least that large), so only the keys at or above it (usually
// little more than K) are sorted. Rows (contiguous or strided, any axis) go
// to threads in blocks; each block keeps one key buffer.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "base/status.h"
#include "runtime/engines/cpu_vector/vector_kernel.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_vector {
namespace {

using sdk::DataTypeSet;

// Ordered 32-bit keys of a float: unsigned order is numeric order, -0 is +0,
// every NaN is one key above +inf.
inline uint32_t FloatKey(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof(u));
  if (v != v) u = 0x7FC00000u;  // one NaN, above +inf (0x7F800000)
  if (u == 0x80000000u) u = 0;  // -0 == +0
  return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
}
inline uint64_t DoubleKey(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  if (v != v) u = 0x7FF8000000000000ull;
  if (u == 0x8000000000000000ull) u = 0;
  return (u & 0x8000000000000000ull) != 0 ? ~u : (u | 0x8000000000000000ull);
}

// The ordered key of one element (value bits only) and the composite type.
template <typename T>
struct Keys {
  using Composite = uint64_t;
  static constexpr int kIndexBits = 32;
  static uint64_t Of(T v) {
    if constexpr (std::is_same_v<T, float>) {
      return FloatKey(v);
    } else if constexpr (std::is_same_v<T, Float16>) {
      return FloatKey(static_cast<float>(v));
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u;
    } else {
      return static_cast<uint32_t>(v);
    }
  }
};
template <>
struct Keys<double> {
  using Composite = unsigned __int128;
  static constexpr int kIndexBits = 64;
  static uint64_t Of(double v) { return DoubleKey(v); }
};
template <>
struct Keys<int64_t> {
  using Composite = unsigned __int128;
  static constexpr int kIndexBits = 64;
  static uint64_t Of(int64_t v) { return static_cast<uint64_t>(v) ^ 0x8000000000000000ull; }
};

// The K largest composite keys of a row of n, largest first, in out[0..k).
// `keys` holds the row's n keys (reordered on return); `scratch` is
// workspace of at least n (for the bound's block maxima and candidates).
template <typename C>
void SelectLargest(C* keys, int64_t n, int64_t k, C* scratch, C* out) {
  const auto desc = [](C a, C b) { return a > b; };
  int64_t count = n;
  C* cand = keys;
  if (n >= 64 && k * 8 <= n) {
    const int64_t blocks = 4 * k;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t j0 = n * b / blocks, j1 = n * (b + 1) / blocks;
      C m = keys[j0];
      for (int64_t j = j0 + 1; j < j1; ++j) m = keys[j] > m ? keys[j] : m;
      scratch[b] = m;
    }
    std::nth_element(scratch, scratch + (k - 1), scratch + blocks, desc);
    const C bound = scratch[k - 1];
    // Branch-free compaction of the keys at or above the bound.
    count = 0;
    for (int64_t j = 0; j < n; ++j) {
      scratch[count] = keys[j];
      count += keys[j] >= bound ? 1 : 0;
    }
    cand = scratch;
  }
  if (count > k) std::nth_element(cand, cand + (k - 1), cand + count, desc);
  std::sort(cand, cand + k, desc);
  std::copy(cand, cand + k, out);
}

class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const ir::OpDesc& op)
      : op_(op), axis_(sdk::IntAttr(op, "axis", -1)), largest_(sdk::IntAttr(op, "largest", 1) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    if (ctx.input(1).NumElements() != 1) return NodeError(op_, "K must hold one value");
    const int64_t k = ctx.input(1).GetAsInt64(0);
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op_, axis_, xs.rank()));
    const int64_t n = xs.dim(axis);
    if (k < 0 || k > n) return NodeError(op_, "K = ", k, " is outside [0, ", n, "] for ", xs.ToString());
    if (n > int64_t{0xFFFFFFFF}) return NodeError(op_, "axis of ", n, " elements is above 2^32 - 1");
    Tensor values_holder, indices_holder;
    GE_ASSIGN_OR_RETURN(Tensor * values, OutputOf(ctx, 0, values_holder));
    GE_ASSIGN_OR_RETURN(Tensor * indices, OutputOf(ctx, 1, indices_holder));
    if (values->shape().rank() != xs.rank() || values->shape().dim(axis) != k || indices->shape() != values->shape()) {
      return NodeError(op_, "outputs ", values->shape().ToString(), " do not hold K = ", k, " of ", xs.ToString());
    }
    if (k == 0 || x.NumElements() == 0) return absl::OkStatus();
    const int64_t outer = sdk::DimProduct(xs.span(), 0, static_cast<size_t>(axis));
    const int64_t inner = sdk::DimProduct(xs.span(), static_cast<size_t>(axis) + 1, static_cast<size_t>(xs.rank()));
    const auto run = [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      using K = Keys<T>;
      using C = typename K::Composite;
      const T* in = x.data<T>();
      T* pv = values->data<T>();
      int64_t* pi = indices->data<int64_t>();
      const C flip = largest_ ? C{0} : ~C{0} << K::kIndexBits;  // invert the value part for smallest
      const C low = (C{1} << K::kIndexBits) - 1;
      Split(ctx, outer * inner, n + k * 4, [&](int64_t begin, int64_t end) {
        std::unique_ptr<C[]> buffer(new C[static_cast<size_t>(2 * n + k)]);
        C* keys = buffer.get();
        C* scratch = keys + n;
        C* best = scratch + n;
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r / inner, i = r % inner;
          const T* row = in + o * n * inner + i;
          for (int64_t j = 0; j < n; ++j) {
            keys[j] = ((static_cast<C>(K::Of(row[j * inner])) << K::kIndexBits) ^ flip) | (low - static_cast<C>(j));
          }
          SelectLargest(keys, n, k, scratch, best);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t index = static_cast<int64_t>(low - (best[j] & low));
            pv[(o * k + j) * inner + i] = row[index * inner];
            pi[(o * k + j) * inner + i] = index;
          }
        }
      });
      return absl::OkStatus();
    };
    switch (x.dtype()) {
      case DataType::kFloat: return run(sdk::TypeTag<float>{});
      case DataType::kDouble: return run(sdk::TypeTag<double>{});
      case DataType::kFloat16: return run(sdk::TypeTag<Float16>{});
      case DataType::kInt32: return run(sdk::TypeTag<int32_t>{});
      case DataType::kInt64: return run(sdk::TypeTag<int64_t>{});
      case DataType::kInt8: return run(sdk::TypeTag<int8_t>{});
      case DataType::kUint8: return run(sdk::TypeTag<uint8_t>{});
      default: return NodeError(op_, "dtype ", DataTypeName(x.dtype()), " is not supported");
    }
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
  bool largest_;
};

// ArgMax / ArgMin: per position off the axis, the index of the best value
// along it, the first of equals (the last with select_last_index). The
// comparison is the one ORT and host_cpu make element by element: a NaN
// never beats the best so far, and one at index 0 stays. Work goes in tiles
// of one outer index and up to kArgTile positions of the inner run: the
// running best and index of each position sit in a small array and the
// loop over the inner run is a blend the compiler vectorizes.
constexpr int64_t kArgTile = 256;

template <bool kMax>
class ArgReduceKernel final : public Kernel {
 public:
  explicit ArgReduceKernel(const ir::OpDesc& op)
      : op_(op), axis_(sdk::IntAttr(op, "axis", 0)), last_(sdk::IntAttr(op, "select_last_index", 0) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op_, axis_, xs.rank()));
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    const int64_t n = xs.dim(axis);
    const int64_t outer = sdk::DimProduct(xs.span(), 0, static_cast<size_t>(axis));
    const int64_t inner = sdk::DimProduct(xs.span(), static_cast<size_t>(axis) + 1, static_cast<size_t>(xs.rank()));
    if (y->NumElements() != outer * inner) return NodeError(op_, "output ", y->shape().ToString(), " does not match");
    if (y->NumElements() == 0) return absl::OkStatus();
    if (n == 0) return NodeError(op_, "cannot take the arg of an empty axis ", axis, " of ", xs.ToString());
    const auto run = [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      if (last_) {
        Rows<T, true>(x.data<T>(), y->data<int64_t>(), outer, n, inner, ctx);
      } else {
        Rows<T, false>(x.data<T>(), y->data<int64_t>(), outer, n, inner, ctx);
      }
      return absl::OkStatus();
    };
    switch (x.dtype()) {
      case DataType::kFloat: return run(sdk::TypeTag<float>{});
      case DataType::kDouble: return run(sdk::TypeTag<double>{});
      case DataType::kFloat16: return run(sdk::TypeTag<Float16>{});
      case DataType::kInt32: return run(sdk::TypeTag<int32_t>{});
      case DataType::kInt64: return run(sdk::TypeTag<int64_t>{});
      case DataType::kInt8: return run(sdk::TypeTag<int8_t>{});
      case DataType::kUint8: return run(sdk::TypeTag<uint8_t>{});
      default: return NodeError(op_, "dtype ", DataTypeName(x.dtype()), " is not supported");
    }
  }

 private:
  template <typename T, bool kLast>
  static void Rows(const T* in, int64_t* out, int64_t outer, int64_t n, int64_t inner, ExecuteContext& ctx) {
    using W = decltype(sdk::Widen(T{}));
    const int64_t tiles_per_outer = (inner + kArgTile - 1) / kArgTile;
    Split(ctx, outer * tiles_per_outer, n * std::min(inner, kArgTile), [&](int64_t begin, int64_t end) {
      W best[kArgTile];
      int64_t arg[kArgTile];
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / tiles_per_outer, j0 = (t % tiles_per_outer) * kArgTile;
        const int64_t len = std::min(kArgTile, inner - j0);
        const T* base = in + o * n * inner + j0;
        for (int64_t j = 0; j < len; ++j) {
          best[j] = sdk::Widen(base[j]);
          arg[j] = 0;
        }
        for (int64_t i = 1; i < n; ++i) {
          const T* row = base + i * inner;
          for (int64_t j = 0; j < len; ++j) {
            const W v = sdk::Widen(row[j]);
            bool better;
            if constexpr (kMax) {
              better = kLast ? v >= best[j] : v > best[j];
            } else {
              better = kLast ? v <= best[j] : v < best[j];
            }
            best[j] = better ? v : best[j];
            arg[j] = better ? i : arg[j];
          }
        }
        std::copy(arg, arg + len, out + o * inner + j0);
      }
    });
  }

  ir::OpDesc op_;
  int64_t axis_;
  bool last_;
};

// CumSum (exclusive, reverse): along the axis in order, the running sum in
// host_cpu's compute type (float for f16, wrapping integers), so every
// element equals the reference's. Tiles as ArgMax's: a running sum per
// inner position, the inner run contiguous and vectorized.
class CumSumKernel final : public Kernel {
 public:
  explicit CumSumKernel(const ir::OpDesc& op)
      : op_(op), exclusive_(sdk::IntAttr(op, "exclusive", 0) != 0), reverse_(sdk::IntAttr(op, "reverse", 0) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (ctx.input(1).NumElements() != 1) return NodeError(op_, "axis must be a scalar");
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op_, ctx.input(1).GetAsInt64(0), x.shape().rank()));
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    if (y->shape() != x.shape()) return NodeError(op_, "output does not match the input");
    if (x.NumElements() == 0) return absl::OkStatus();
    const auto dims = x.shape().span();
    const int64_t n = dims[axis];
    const int64_t outer = sdk::DimProduct(dims, 0, static_cast<size_t>(axis));
    const int64_t inner = sdk::DimProduct(dims, static_cast<size_t>(axis) + 1, dims.size());
    const auto run = [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      Scan<T>(x.data<T>(), y->data<T>(), outer, n, inner, ctx);
      return absl::OkStatus();
    };
    switch (x.dtype()) {
      case DataType::kFloat: return run(sdk::TypeTag<float>{});
      case DataType::kDouble: return run(sdk::TypeTag<double>{});
      case DataType::kFloat16: return run(sdk::TypeTag<Float16>{});
      case DataType::kInt32: return run(sdk::TypeTag<int32_t>{});
      case DataType::kInt64: return run(sdk::TypeTag<int64_t>{});
      case DataType::kInt8: return run(sdk::TypeTag<int8_t>{});
      case DataType::kUint8: return run(sdk::TypeTag<uint8_t>{});
      default: return NodeError(op_, "dtype ", DataTypeName(x.dtype()), " is not supported");
    }
  }

 private:
  template <typename T>
  void Scan(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, ExecuteContext& ctx) const {
    using W = decltype(sdk::Widen(T{}));
    const int64_t tiles_per_outer = (inner + kArgTile - 1) / kArgTile;
    Split(ctx, outer * tiles_per_outer, n * std::min(inner, kArgTile), [&](int64_t begin, int64_t end) {
      W sum[kArgTile];
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / tiles_per_outer, j0 = (t % tiles_per_outer) * kArgTile;
        const int64_t len = std::min(kArgTile, inner - j0);
        std::fill(sum, sum + len, W{});
        for (int64_t s = 0; s < n; ++s) {
          const int64_t a = reverse_ ? n - 1 - s : s;
          const T* src = in + (o * n + a) * inner + j0;
          T* dst = out + (o * n + a) * inner + j0;
          for (int64_t j = 0; j < len; ++j) {
            const W v = sdk::Widen(src[j]);
            if (exclusive_) {
              dst[j] = sdk::Narrow<T>(sum[j]);
              sum[j] = sdk::WrapAdd(sum[j], v);
            } else {
              sum[j] = sdk::WrapAdd(sum[j], v);
              dst[j] = sdk::Narrow<T>(sum[j]);
            }
          }
        }
      }
    });
  }

  ir::OpDesc op_;
  bool exclusive_, reverse_;
};

template <typename K>
CreateFn Creator() {
  return [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new K(op));
  };
}

}  // namespace

void RegisterSelectionKernels(VectorKernelTable& table) {
  table.Add({"TopK",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kNumericSet));
               return CheckInputDtype(op, 1, {DataType::kInt64});
             },
             Creator<TopKKernel>()});
  const CheckFn numeric = [](const ir::OpDesc& op) { return CheckInputDtype(op, 0, kNumericSet); };
  table.Add({"ArgMax", numeric, Creator<ArgReduceKernel<true>>()});
  table.Add({"ArgMin", numeric, Creator<ArgReduceKernel<false>>()});
  table.Add({"CumSum",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kNumericSet));
               return CheckInputDtype(op, 1, {DataType::kInt32, DataType::kInt64});
             },
             Creator<CumSumKernel>()});
}

}  // namespace ge::engine::cpu_vector
