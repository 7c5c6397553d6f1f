// Along one axis: TopK over ordered keys; ArgMax, ArgMin and CumSum (below).
//
// Each element of a row becomes an ordered integer key (float bits with the
// sign folded so that signed order is numeric order, -0 taken as +0, every
// NaN one key above +inf; integers as they are; inverted for `largest` = 0),
// and each candidate one unsigned *composite key*: the key in the high part
// and the complement of the index in the low 32 bits, so equal values put
// the lower index first and no two composites are equal.
// Selecting the K largest keys of distinct integers then needs no tie or
// NaN logic: ties go to the lower index as ONNX asks (ORT agrees), and NaN
// counts as larger than every number (torch.topk's and numpy's order: first
// for `largest`, last otherwise; ORT's order with NaN is unspecified).
// Values are read back from the input by index, so NaN payloads survive.
//
// Composites are 64-bit for 1-, 2- and 4-byte types (f16 widened to f32) and
// 128-bit for f64 and i64. A row much longer than K takes a bound first
// over the plain keys (vectorized passes): its blocks of up to 16 keys (at
// least K blocks) each have a largest key, the K-th largest of those is no
// larger than the row's K-th largest (the blocks' maxima are K distinct
// elements at least that large), so only the keys at or above it (usually
// little more than K) become composites and are sorted. Rows (contiguous or
// strided, any axis) go to threads in blocks; each block keeps its buffers.
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

// Ordered 32-bit keys, as signed integers: signed order is numeric order,
// -0 is +0, every NaN is one key above +inf. Branch-free, so the loop that
// fills a row's keys vectorizes (a sign-dependent branch mispredicted on
// every other element of random data).
inline int32_t FloatKey(float v) {
  int32_t s;
  std::memcpy(&s, &v, sizeof(s));
  s = v != v ? 0x7FC00000 : s;          // one NaN, above +inf (0x7F800000)
  s = s == INT32_MIN ? 0 : s;           // -0 == +0
  return s ^ ((s >> 31) & 0x7FFFFFFF);  // negatives: larger magnitude, smaller key
}
inline int64_t DoubleKey(double v) {
  int64_t s;
  std::memcpy(&s, &v, sizeof(s));
  s = v != v ? 0x7FF8000000000000ll : s;
  s = s == INT64_MIN ? 0 : s;
  return s ^ ((s >> 63) & 0x7FFFFFFFFFFFFFFFll);
}

// The signed ordered key of one element, the composite (key, then the
// complement of the index) and how many low bits hold the index.
template <typename T>
struct Keys {
  using Key = int32_t;
  using Composite = uint64_t;
  static constexpr int kIndexBits = 32;
  static int32_t Of(T v) {
    if constexpr (std::is_same_v<T, float>) {
      return FloatKey(v);
    } else if constexpr (std::is_same_v<T, Float16>) {
      return FloatKey(static_cast<float>(v));
    } else {
      return static_cast<int32_t>(v);
    }
  }
};
template <>
struct Keys<double> {
  using Key = int64_t;
  using Composite = unsigned __int128;
  static constexpr int kIndexBits = 64;
  static int64_t Of(double v) { return DoubleKey(v); }
};
template <>
struct Keys<int64_t> {
  using Key = int64_t;
  using Composite = unsigned __int128;
  static constexpr int kIndexBits = 64;
  static int64_t Of(int64_t v) { return v; }
};

// The K best of a row of n keys (already inverted for smallest, so the
// largest keys are best), best first, ties to the lower index: the indices
// into out[0..k). `maxima` has room for n keys, `cand` for n indices and
// `comp` for n composites.
// A row much longer than K takes a bound first: blocks of `bs` keys each
// have a largest; the K-th largest of those maxima (K distinct elements) is
// no larger than the row's K-th best, so only keys at or above it can be
// among the best (usually little more than K of them).
template <typename Key, typename C, int kIndexBits>
void SelectBest(const Key* keys, int64_t n, int64_t k, Key* maxima, int64_t* cand, C* comp, int64_t* out) {
  using U = std::make_unsigned_t<Key>;
  const C low = (C{1} << kIndexBits) - 1;
  const auto composite = [&](int64_t j) {
    const U biased = static_cast<U>(keys[j]) ^ (U{1} << (sizeof(Key) * 8 - 1));  // signed order -> unsigned
    return (static_cast<C>(biased) << kIndexBits) | (low - static_cast<C>(j));
  };
  int64_t count = 0;
  if (n >= 64 && k * 8 <= n) {
    const int64_t bs = std::min<int64_t>(16, n / (2 * k));
    const int64_t blocks = n / bs;  // the last block takes the tail
    Key* order = maxima + blocks;   // a copy nth_element may reorder
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t j0 = b * bs, j1 = b + 1 == blocks ? n : j0 + bs;
      Key m = keys[j0];
      for (int64_t j = j0 + 1; j < j1; ++j) m = keys[j] > m ? keys[j] : m;
      maxima[b] = order[b] = m;
    }
    std::nth_element(order, order + (k - 1), order + blocks, [](Key a, Key b) { return a > b; });
    const Key bound = order[k - 1];
    // Only blocks whose largest reaches the bound hold candidates (about K
    // of them); their keys are compacted branch-free.
    for (int64_t b = 0; b < blocks; ++b) {
      if (maxima[b] < bound) continue;
      const int64_t j1 = b + 1 == blocks ? n : (b + 1) * bs;
      for (int64_t j = b * bs; j < j1; ++j) {
        cand[count] = j;
        count += keys[j] >= bound ? 1 : 0;
      }
    }
    for (int64_t c = 0; c < count; ++c) comp[c] = composite(cand[c]);
  } else {
    for (int64_t j = 0; j < n; ++j) comp[j] = composite(j);
    count = n;
  }
  const auto desc = [](C a, C b) { return a > b; };
  if (count > k) std::nth_element(comp, comp + (k - 1), comp + count, desc);
  std::sort(comp, comp + k, desc);
  for (int64_t j = 0; j < k; ++j) out[j] = static_cast<int64_t>(low - (comp[j] & low));
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
      using Key = typename K::Key;
      using C = typename K::Composite;
      const T* in = x.data<T>();
      T* pv = values->data<T>();
      int64_t* pi = indices->data<int64_t>();
      const Key flip = largest_ ? Key{0} : Key{-1};  // ~key: the smallest become the largest
      Split(ctx, outer * inner, n + k * 4, [&](int64_t begin, int64_t end) {
        std::vector<Key> keys(static_cast<size_t>(n)), maxima(static_cast<size_t>(n));
        std::vector<int64_t> cand(static_cast<size_t>(n)), best(static_cast<size_t>(k));
        std::unique_ptr<C[]> comp(new C[static_cast<size_t>(n)]);
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r / inner, i = r % inner;
          const T* row = in + o * n * inner + i;
          if (inner == 1) {
            for (int64_t j = 0; j < n; ++j) keys[j] = K::Of(row[j]) ^ flip;
          } else {
            for (int64_t j = 0; j < n; ++j) keys[j] = K::Of(row[j * inner]) ^ flip;
          }
          SelectBest<Key, C, K::kIndexBits>(keys.data(), n, k, maxima.data(), cand.data(), comp.get(), best.data());
          for (int64_t j = 0; j < k; ++j) {
            pv[(o * k + j) * inner + i] = row[best[j] * inner];
            pi[(o * k + j) * inner + i] = best[j];
          }
        }
      });
      return absl::OkStatus();
    };
    return sdk::DispatchType<SelectionTypes>(x.dtype(), op_, run);
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
    return sdk::DispatchType<SelectionTypes>(x.dtype(), op_, run);
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
    return sdk::DispatchType<SelectionTypes>(x.dtype(), op_, run);
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
