// The engine SDK's kernel helpers, shared by every engine's kernels (they
// grew up in host_cpu): error messages naming the node,
// compile-time type lists with one dtype dispatch per kernel call, 16-bit
// float widening, wrap-around integer arithmetic without undefined
// behaviour, attribute readers and element copies.
//
// Kernels dispatch on the dtype once per Compute and run a loop templated on
// the element type, so hot loops contain no virtual calls and vectorize.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/dtype.h"
#include "base/ir/op_desc.h"
#include "base/status.h"
#include "base/tensor.h"
#include "runtime/engines/sdk/dtype_set.h"

namespace ge::engine::sdk {

// ---- Errors ----

// InvalidArgument "node '<name>' (<Type>): ...", the form shape inference uses.
template <typename... Args>
absl::Status NodeError(const ir::OpDesc& op, const Args&... args) {
  return absl::InvalidArgumentError(StrCat("node '", op.name(), "' (", op.type(), "): ", args...));
}
template <typename... Args>
absl::Status NodeUnimplemented(const ir::OpDesc& op, const Args&... args) {
  return absl::UnimplementedError(StrCat("node '", op.name(), "' (", op.type(), "): ", args...));
}

// ---- Type lists and dispatch ----

template <typename... Ts>
struct TypeList {};
template <typename T>
struct TypeTag {
  using type = T;
};

template <typename... Lists>
struct ConcatTypeLists;
template <typename... A>
struct ConcatTypeLists<TypeList<A...>> {
  using type = TypeList<A...>;
};
template <typename... A, typename... B, typename... Rest>
struct ConcatTypeLists<TypeList<A...>, TypeList<B...>, Rest...> {
  using type = typename ConcatTypeLists<TypeList<A..., B...>, Rest...>::type;
};
template <typename... Lists>
using Concat = typename ConcatTypeLists<Lists...>::type;

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = Concat<SignedIntTypes, UnsignedIntTypes>;
using NumericTypes = Concat<FloatTypes, IntTypes>;
using NumericAndBoolTypes = Concat<NumericTypes, TypeList<bool>>;
using AllTypes = Concat<NumericAndBoolTypes, TypeList<std::string>>;
using BoolTypes = TypeList<bool>;
using IndexTypes = TypeList<int32_t, int64_t>;

// The DataTypeSet of a type list (what CheckSupported admits).
template <typename... Ts>
constexpr DataTypeSet SetOf(TypeList<Ts...>) {
  return DataTypeSet{DataTypeOf<Ts>::value...};
}

namespace internal {
template <typename... Ts, typename Fn>
bool VisitType(TypeList<Ts...>, DataType dtype, Fn& fn, absl::Status* status) {
  return ((DataTypeOf<Ts>::value == dtype && (*status = fn(TypeTag<Ts>{}), true)) || ...);
}
}  // namespace internal

// Calls `fn(TypeTag<T>{})` (returning absl::Status) for the T of List whose
// DataType is `dtype`; an error naming the node when List has none.
template <typename List, typename Fn>
absl::Status DispatchType(DataType dtype, const ir::OpDesc& op, Fn&& fn) {
  absl::Status status;
  if (!internal::VisitType(List{}, dtype, fn, &status)) {
    return NodeError(op, "dtype ", DataTypeName(dtype), " is not supported");
  }
  return status;
}

// Calls `fn(TypeTag<T>{})` with an unsigned integer T of the dtype's size
// (or std::string for strings): for kernels that only move elements.
template <typename Fn>
absl::Status DispatchCopyType(DataType dtype, const ir::OpDesc& op, Fn&& fn) {
  if (dtype == DataType::kString) return fn(TypeTag<std::string>{});
  if (dtype != DataType::kUndefined && dtype != DataType::kComplex64 && dtype != DataType::kComplex128) {
    switch (DataTypeSize(dtype)) {
      case 1: return fn(TypeTag<uint8_t>{});
      case 2: return fn(TypeTag<uint16_t>{});
      case 4: return fn(TypeTag<uint32_t>{});
      case 8: return fn(TypeTag<uint64_t>{});
      default: break;
    }
  }
  return NodeError(op, "dtype ", DataTypeName(dtype), " is not supported");
}

// ---- 16-bit floats compute in float ----

template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Float16> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsHalf<T>;

inline bool IsHalfDtype(DataType d) { return d == DataType::kFloat16 || d == DataType::kBFloat16; }

template <typename T>
inline ComputeType<T> Widen(T v) {
  if constexpr (kIsHalf<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}
template <typename T>
inline T Narrow(ComputeType<T> v) {
  if constexpr (kIsHalf<T>) {
    return T(v);
  } else {
    return v;
  }
}

// ---- Integer arithmetic that wraps instead of overflowing ----

// The unsigned type integer arithmetic on T runs in (at least 32 bits so
// that small types do not promote to signed int).
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
inline T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  } else {
    return a + b;
  }
}
template <typename T>
inline T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  } else {
    return a - b;
  }
}
template <typename T>
inline T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  } else {
    return a * b;
  }
}

// Floating value to integer T without undefined behaviour: NaN becomes 0,
// values are truncated toward zero, values inside [-2^63, 2^64) wrap
// modulo 2^bits (as numpy and x86 do for small negatives into unsigned) and
// values outside saturate.
template <typename T, typename F>
inline T FloatToInt(F v) {
  static_assert(std::is_integral_v<T>);
  if constexpr (std::is_same_v<T, bool>) {
    return v != F(0);
  } else {
    if (std::isnan(v)) return T(0);
    if (v >= F(18446744073709551616.0)) return std::numeric_limits<T>::max();
    if (v < F(-9223372036854775808.0)) return std::numeric_limits<T>::min();
    if (v >= F(9223372036854775808.0)) return static_cast<T>(static_cast<uint64_t>(v));
    return static_cast<T>(static_cast<int64_t>(v));
  }
}

// ---- Attributes ----

// Attribute `name` of `op`: the node's value, else the default of the op's
// schema in the op registry (so defaults live in one place), else `def`.
// Read when kernels are created, never per element.
int64_t IntAttr(const ir::OpDesc& op, std::string_view name, int64_t def);
// A float attribute (an int attribute is converted).
float FloatAttr(const ir::OpDesc& op, std::string_view name, float def);
std::vector<int64_t> IntsAttr(const ir::OpDesc& op, std::string_view name);
std::string StringAttr(const ir::OpDesc& op, std::string_view name, std::string def);

// Normalizes `axis` into [0, rank); an error naming the node when outside
// [-rank, rank).
absl::StatusOr<int64_t> NormalizeAxisFor(const ir::OpDesc& op, int64_t axis, int64_t rank);

// ---- Checks of what the executor hands a kernel ----

// OK when `out` has `in`'s element count (same-shape kernels).
absl::Status CheckSameSize(const ir::OpDesc& op, const Tensor& in, const Tensor& out);
// OK when `in` (input `index`) broadcasts to `out` by numpy rules:
// element-wise kernels walk inputs by the output's shape and must not
// read past an input that does not fit.
absl::Status CheckBroadcastsTo(const ir::OpDesc& op, const Shape& in, int index, const Shape& out);

// ---- Element copies (any dtype, strings included) ----

// Copies `count` elements of `dtype` from src[src_offset] to
// dst[dst_offset] (element offsets).
void CopyElements(DataType dtype, const void* src, int64_t src_offset, void* dst, int64_t dst_offset, int64_t count);

// A copy of `t` in new storage of the same shape.
absl::StatusOr<Tensor> CopyTensor(const Tensor& t);

// Converts `src` to `dtype` with the Cast kernel's conversions; returns `src`
// itself (shared storage) when it already has that dtype.
absl::StatusOr<Tensor> ConvertTensor(const Tensor& src, DataType dtype);
// Converts `src` into the existing tensor `dst` (same element count).
absl::Status ConvertInto(const Tensor& src, const Tensor& dst);

// Row-major product of dims[begin, end).
int64_t DimProduct(absl::Span<const int64_t> dims, size_t begin, size_t end);

// Runs fn(begin, end) over [0, n), on up to `threads` OpenMP threads
// (OmpParallelFor, parallel.h: the device's budget sizes the team) when the
// work (n * cost_per_item, in rough element operations) is worth splitting.
void ParallelFor(int threads, int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn);

// Reads a 1-D (or scalar) integer tensor as int64 values.
std::vector<int64_t> ReadInts(const Tensor& t);

}  // namespace ge::engine::sdk
