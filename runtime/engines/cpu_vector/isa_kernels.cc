// cpu_vector's inner loops, compiled once per ISA (isa_kernels.h).
//
// GE_VEC_NS names the namespace of this build (avx2 or avx512). Everything
// but Kernels() has internal linkage, and the file includes no header with
// inline functions other than the intrinsics and C math declarations: an
// inline function emitted here with AVX-512 code must never be what the
// linker picks for the rest of the program.
//
// The loops are plain C++ for the auto-vectorizer (-O3 -fno-math-errno):
// same-stride element loops, SLP-friendly lane accumulators for horizontal
// reductions (which must not be reassociated otherwise), and a vectorizable
// exp for f32 (Cephes' polynomial, about 1 ulp) under Exp, Sigmoid, Tanh,
// Elu, Softplus and Erf (f32: two fitted polynomials, ErfF). Functions libm
// has no vector form for here (Sin, Cos, Log, Pow, fmod, f64 exp and erf)
// call libm per element, except Pow by a scalar 2 or 3 (products).
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include <type_traits>

#include "runtime/engines/cpu_vector/isa_kernels.h"

#ifndef GE_VEC_NS
#error "GE_VEC_NS must name the ISA namespace"
#endif

namespace ge::engine::cpu_vector::GE_VEC_NS {
namespace {

template <typename A, typename B>
struct Same {
  static constexpr bool value = false;
};
template <typename A>
struct Same<A, A> {
  static constexpr bool value = true;
};
template <typename T>
constexpr bool kFloat = Same<T, float>::value || Same<T, double>::value;
template <typename T>
constexpr bool kSigned = T(-1) < T(0);

// The unsigned type integer arithmetic wraps in (at least 32 bits).
template <typename T>
struct WrapOf {
  using type = uint32_t;
};
template <>
struct WrapOf<int64_t> {
  using type = uint64_t;
};
template <>
struct WrapOf<uint64_t> {
  using type = uint64_t;
};
template <typename T>
inline T WAdd(T a, T b) {
  if constexpr (kFloat<T>) {
    return a + b;
  } else {
    using W = typename WrapOf<T>::type;
    return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
  }
}
template <typename T>
inline T WSub(T a, T b) {
  if constexpr (kFloat<T>) {
    return a - b;
  } else {
    using W = typename WrapOf<T>::type;
    return static_cast<T>(static_cast<W>(a) - static_cast<W>(b));
  }
}
template <typename T>
inline T WMul(T a, T b) {
  if constexpr (kFloat<T>) {
    return a * b;
  } else {
    using W = typename WrapOf<T>::type;
    return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
  }
}

// host_cpu's FloatToInt: NaN is 0, truncation toward zero, wrap inside
// [-2^63, 2^64), saturation outside.
template <typename D>
inline D FloatToInt(double v) {
  if (v != v) return D(0);
  if (v >= 18446744073709551616.0) return D(~D(0)) < D(0) ? D(~(D(1) << (sizeof(D) * 8 - 1))) : D(~D(0));
  if (v < -9223372036854775808.0) return D(~D(0)) < D(0) ? D(D(1) << (sizeof(D) * 8 - 1)) : D(0);
  if (v >= 9223372036854775808.0) return static_cast<D>(static_cast<uint64_t>(v));
  return static_cast<D>(static_cast<int64_t>(v));
}

// ---- float16 blocks ----

constexpr int64_t kBlock = 256;

inline void HalfToFloat(const uint16_t* h, float* f, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  }
  for (; i < n; ++i) f[i] = _cvtsh_ss(h[i]);
}
inline void FloatToHalf(const float* f, uint16_t* h, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) h[i] = _cvtss_sh(f[i], _MM_FROUND_TO_NEAREST_INT);
}

// ---- exp ----

inline float ExpF(float x) {
  // e^x = p(r) * 2^n with n = rint(x / ln 2), r = x - n ln 2 (two-part
  // ln 2); 2^n is applied as two factors so that denormal results and
  // results near FLT_MAX come out right.
  const float c = x < -104.0f ? -104.0f : (x > 88.8f ? 88.8f : x);
  const float n = __builtin_nearbyintf(c * 1.44269504088896341f);
  const float r = c - n * 0.693359375f + n * 2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.0f;
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni >> 1;
  const int32_t n2 = ni - n1;
  float out = y * __builtin_bit_cast(float, (n1 + 127) << 23) * __builtin_bit_cast(float, (n2 + 127) << 23);
  out = x > 88.72283935546875f ? __builtin_inff() : out;
  return x != x ? x : out;
}
inline double ExpD(double x) { return ::exp(x); }
template <typename C>
inline C Exp(C x) {
  if constexpr (Same<C, float>::value) {
    return ExpF(x);
  } else {
    return ExpD(x);
  }
}

// ---- Unary functors (C: float, double or an integer) ----

template <typename C>
inline C Ceil(C x) {
  if constexpr (Same<C, float>::value) {
    return __builtin_ceilf(x);
  } else {
    return __builtin_ceil(x);
  }
}
template <typename C>
inline C Floor(C x) {
  if constexpr (Same<C, float>::value) {
    return __builtin_floorf(x);
  } else {
    return __builtin_floor(x);
  }
}
template <typename C>
inline C Rint(C x) {  // half to even, like nearbyint
  if constexpr (Same<C, float>::value) {
    return __builtin_nearbyintf(x);
  } else {
    return __builtin_nearbyint(x);
  }
}

#define GE_VEC_UNARY(Name, expr)                     \
  struct Name {                                      \
    template <typename C>                            \
    static C F(C x, const UnaryParams& p) {          \
      (void)p;                                       \
      return expr;                                   \
    }                                                \
  }
GE_VEC_UNARY(ReluF, x > C(0) ? x : C(0));
GE_VEC_UNARY(NegF, WSub(C(0), x));
GE_VEC_UNARY(AbsF, x < C(0) ? WSub(C(0), x) : x);
GE_VEC_UNARY(SignF, x != x ? x : (x > C(0) ? C(1) : (x < C(0) ? static_cast<C>(-1) : C(0))));
GE_VEC_UNARY(SigmoidF, C(1) / (C(1) + Exp(-x)));
GE_VEC_UNARY(ExpOpF, Exp(x));
GE_VEC_UNARY(CeilF, Ceil(x));
GE_VEC_UNARY(FloorF, Floor(x));
GE_VEC_UNARY(RoundF, Rint(x));
GE_VEC_UNARY(ReciprocalF, C(1) / x);
GE_VEC_UNARY(SoftsignF, x / (C(1) + (x < C(0) ? -x : x)));
GE_VEC_UNARY(LeakyReluF, x >= C(0) ? x : static_cast<C>(p.alpha) * x);
GE_VEC_UNARY(EluF, x >= C(0) ? x : static_cast<C>(p.alpha) * (Exp(x) - C(1)));
GE_VEC_UNARY(NotF, !x);
#undef GE_VEC_UNARY

struct TanhF {
  template <typename C>
  static C F(C x, const UnaryParams&) {
    if constexpr (Same<C, float>::value) {
      // 1 - 2 / (e^{2|x|} + 1), with the sign of x; exact 1 past 9.
      const float a = x < 0.0f ? -x : x;
      float t = 1.0f - 2.0f / (ExpF(2.0f * a) + 1.0f);
      t = a > 9.0f ? 1.0f : t;
      t = x < 0.0f ? -t : t;
      return x != x ? x : t;
    } else {
      return ::tanh(x);
    }
  }
};
struct SqrtF {
  template <typename C>
  static C F(C x, const UnaryParams&) {
    if constexpr (Same<C, float>::value) {
      return __builtin_sqrtf(x);
    } else {
      return __builtin_sqrt(x);
    }
  }
};
#define GE_VEC_LIBM(Name, ffn, dfn)                                      \
  struct Name {                                                          \
    template <typename C>                                                \
    static C F(C x, const UnaryParams&) {                                \
      if constexpr (Same<C, float>::value) {                             \
        return ::ffn(x);                                                 \
      } else {                                                           \
        return ::dfn(x);                                                 \
      }                                                                  \
    }                                                                    \
  }
GE_VEC_LIBM(LogF, logf, log);
GE_VEC_LIBM(SinF, sinf, sin);
GE_VEC_LIBM(CosF, cosf, cos);
#undef GE_VEC_LIBM

struct ErfF {
  template <typename C>
  static C F(C x, const UnaryParams&) {
    if constexpr (Same<C, float>::value) {
      // Below 1: x P(x^2); from 1 to 4: 1 - e^{-x^2} Q(1 / |x|); past 4: 1.
      // P and Q are least-squares fits on Chebyshev nodes (degrees 5 and 7),
      // within 3 ulps of erf over the floats: a GELU's Erf off a norm or an
      // Add (wav2vec2's feature extractor) vectorizes instead of calling
      // erff per element.
      const float a = x < 0.0f ? -x : x;
      const float z = a * a;
      float p = -5.696712760e-04f;
      p = p * z + 4.934518598e-03f;
      p = p * z - 2.672698908e-02f;
      p = p * z + 1.128078923e-01f;
      p = p * z - 3.761241436e-01f;
      p = p * z + 1.128379107e+00f;
      const float t = 1.0f / (a > 1.0f ? a : 1.0f);
      float q = -1.813566871e-02f;
      q = q * t + 1.220097765e-01f;
      q = q * t - 3.567149937e-01f;
      q = q * t + 5.782349110e-01f;
      q = q * t - 5.072547793e-01f;
      q = q * t + 5.141485855e-02f;
      q = q * t + 5.576755404e-01f;
      q = q * t + 3.539744648e-04f;
      const float far = 1.0f - ExpF(-z) * q;
      float r = a < 1.0f ? p * a : (a < 4.0f ? far : 1.0f);
      r = x < 0.0f ? -r : r;
      return x != x ? x : r;
    } else {
      return ::erf(x);
    }
  }
};
struct SoftplusF {
  template <typename C>
  static C F(C x, const UnaryParams&) {
    if constexpr (Same<C, float>::value) {
      return x > 0.0f ? x + ::log1pf(ExpF(-x)) : ::log1pf(ExpF(x));
    } else {
      return x > 0.0 ? x + ::log1p(::exp(-x)) : ::log1p(::exp(x));
    }
  }
};
struct HardSwishF {
  template <typename C>
  static C F(C x, const UnaryParams&) {
    C v = x / C(6) + C(0.5);
    v = v < C(0) ? C(0) : (C(1) < v ? C(1) : v);
    return x * v;
  }
};
struct HardSigmoidF {
  template <typename C>
  static C F(C x, const UnaryParams& p) {
    const C v = static_cast<C>(p.alpha) * x + static_cast<C>(p.beta);
    return v < C(0) ? C(0) : (C(1) < v ? C(1) : v);
  }
};
struct ClipF {
  template <typename C>
  static C F(C x, const UnaryParams& p) {
    C lo, hi;
    if constexpr (kFloat<C>) {
      lo = static_cast<C>(p.lo);
      hi = static_cast<C>(p.hi);
    } else {
      lo = static_cast<C>(p.ilo);
      hi = static_cast<C>(p.ihi);
    }
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
  }
};

template <typename Op, typename T>
void Unary(const void* xv, void* yv, int64_t n, const UnaryParams& p) {
  const T* __restrict x = static_cast<const T*>(xv);
  T* __restrict y = static_cast<T*>(yv);
  const UnaryParams params = p;
  for (int64_t i = 0; i < n; ++i) y[i] = Op::F(x[i], params);
}

template <typename Op>
void UnaryHalf(const void* xv, void* yv, int64_t n, const UnaryParams& p) {
  const uint16_t* x = static_cast<const uint16_t*>(xv);
  uint16_t* y = static_cast<uint16_t*>(yv);
  float buf[kBlock];
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = n - i < kBlock ? n - i : kBlock;
    HalfToFloat(x + i, buf, m);
    Unary<Op, float>(buf, buf, m, p);
    FloatToHalf(buf, y + i, m);
  }
}

template <typename T>
void IsNaN(const void* xv, void* yv, int64_t n, const UnaryParams&) {
  const T* x = static_cast<const T*>(xv);
  bool* y = static_cast<bool*>(yv);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] != x[i];
}
void IsNaNHalf(const void* xv, void* yv, int64_t n, const UnaryParams&) {
  const uint16_t* x = static_cast<const uint16_t*>(xv);
  bool* y = static_cast<bool*>(yv);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] & 0x7c00) == 0x7c00 && (x[i] & 0x3ff) != 0;
}

// ---- Binary functors ----

#define GE_VEC_BINARY(Name, expr)   \
  struct Name {                     \
    template <typename C>           \
    static auto F(C a, C b) {       \
      return expr;                  \
    }                               \
  }
GE_VEC_BINARY(AddF, WAdd(a, b));
GE_VEC_BINARY(SubF, WSub(a, b));
GE_VEC_BINARY(MulF, WMul(a, b));
GE_VEC_BINARY(MaxF, a != a ? a : (a > b ? a : b));
GE_VEC_BINARY(MinF, a != a ? a : (a < b ? a : b));
GE_VEC_BINARY(PReluF, a < C(0) ? WMul(a, b) : a);
GE_VEC_BINARY(EqualF, a == b);
GE_VEC_BINARY(LessF, a < b);
GE_VEC_BINARY(GreaterF, a > b);
GE_VEC_BINARY(LessOrEqualF, a <= b);
GE_VEC_BINARY(GreaterOrEqualF, a >= b);
GE_VEC_BINARY(AndF, a && b);
GE_VEC_BINARY(OrF, a || b);
GE_VEC_BINARY(XorF, a != b);
#undef GE_VEC_BINARY

struct DivF {  // integer divisors were checked non-zero by the kernel
  template <typename C>
  static C F(C a, C b) {
    if constexpr (!kFloat<C> && kSigned<C>) {
      if (b == C(-1)) return WSub(C(0), a);
    }
    return a / b;
  }
};
struct FmodF {  // the sign of the dividend
  template <typename C>
  static C F(C a, C b) {
    if constexpr (Same<C, float>::value) {
      return ::fmodf(a, b);
    } else if constexpr (Same<C, double>::value) {
      return ::fmod(a, b);
    } else {
      if constexpr (kSigned<C>) {
        if (b == C(-1)) return C(0);
      }
      return static_cast<C>(a % b);
    }
  }
};
struct ModF {  // integers: the sign of the divisor
  template <typename C>
  static C F(C a, C b) {
    C r = FmodF::F(a, b);
    if constexpr (kSigned<C>) {
      if (r != 0 && ((r < 0) != (b < 0))) r = WAdd(r, b);
    }
    return r;
  }
};
struct PowF {
  template <typename C>
  static C F(C a, C b) {
    if constexpr (Same<C, float>::value) {
      return ::powf(a, b);
    } else {
      return ::pow(a, b);
    }
  }
};

template <typename Op, typename T, typename O>
void Binary(const void* av, int64_t sa, const void* bv, int64_t sb, void* ov, int64_t n) {
  const T* __restrict a = static_cast<const T*>(av);
  const T* __restrict b = static_cast<const T*>(bv);
  O* __restrict o = static_cast<O*>(ov);
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<O>(Op::F(a[i], b[i]));
  } else if (sa == 0 && sb == 1) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<O>(Op::F(x, b[i]));
  } else if (sa == 1 && sb == 0) {
    const T y = b[0];
    if constexpr (Same<Op, PowF>::value && kFloat<T>) {
      // A constant square or cube (RMSNorm's and a variance's x^2, GELU's
      // tanh form x^3): products the vectorizer takes, not libm per element.
      if (y == T(2)) {
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<O>(a[i] * a[i]);
        return;
      }
      if (y == T(3)) {
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<O>(a[i] * a[i] * a[i]);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<O>(Op::F(a[i], y));
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<O>(Op::F(a[i * sa], b[i * sb]));
  }
}

// float16: operands widened a block at a time; bool results stored directly.
template <typename Op, bool kCompare>
void BinaryHalf(const void* av, int64_t sa, const void* bv, int64_t sb, void* ov, int64_t n) {
  const uint16_t* a = static_cast<const uint16_t*>(av);
  const uint16_t* b = static_cast<const uint16_t*>(bv);
  float fa[kBlock], fb[kBlock], fo[kBlock];
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = n - i < kBlock ? n - i : kBlock;
    for (int64_t j = 0; j < m; ++j) fa[j] = _cvtsh_ss(a[(i + j) * sa]);
    for (int64_t j = 0; j < m; ++j) fb[j] = _cvtsh_ss(b[(i + j) * sb]);
    if constexpr (kCompare) {
      Binary<Op, float, bool>(fa, 1, fb, 1, static_cast<bool*>(ov) + i, m);
    } else {
      Binary<Op, float, float>(fa, 1, fb, 1, fo, m);
      FloatToHalf(fo, static_cast<uint16_t*>(ov) + i, m);
    }
  }
}

// One row of Where with each stride 0 (a broadcast value) or 1 known at
// compile time. T is the elements' bits (an unsigned integer of their
// size): the select is a mask from the condition byte, AND / OR, which
// vectorizes; the branchy strided form ran element by element (3 ns an
// element for masked_fill's [B, 1, N, N] mask beside a scalar, half of a
// graph-attention run).
template <typename T, int kSC, int kSX, int kSY>
void WhereRow(const bool* __restrict c, const T* __restrict x, const T* __restrict y, T* __restrict o, int64_t n) {
  static_assert(static_cast<T>(-1) > T(0), "T is the elements' bits, unsigned");
  const uint8_t* __restrict cb = reinterpret_cast<const uint8_t*>(c);
  for (int64_t i = 0; i < n; ++i) {
    const T mask = static_cast<T>(T(0) - static_cast<T>(cb[i * kSC] != 0));
    o[i] = static_cast<T>((x[i * kSX] & mask) | (y[i * kSY] & static_cast<T>(~mask)));
  }
}

template <typename T, int kSC>
void WhereRowX(const bool* c, const T* x, int64_t sx, const T* y, int64_t sy, T* o, int64_t n) {
  if (sx == 1 && sy == 1) return WhereRow<T, kSC, 1, 1>(c, x, y, o, n);
  if (sx == 0 && sy == 1) return WhereRow<T, kSC, 0, 1>(c, x, y, o, n);
  if (sx == 1 && sy == 0) return WhereRow<T, kSC, 1, 0>(c, x, y, o, n);
  return WhereRow<T, kSC, 0, 0>(c, x, y, o, n);
}

template <typename T>
void Where(const bool* c, int64_t sc, const void* xv, int64_t sx, const void* yv, int64_t sy, void* ov, int64_t n) {
  const T* x = static_cast<const T*>(xv);
  const T* y = static_cast<const T*>(yv);
  T* o = static_cast<T*>(ov);
  const auto unit = [](int64_t s) { return s == 0 || s == 1; };
  if (unit(sc) && unit(sx) && unit(sy)) {
    if (sc == 1) return WhereRowX<T, 1>(c, x, sx, y, sy, o, n);
    return WhereRowX<T, 0>(c, x, sx, y, sy, o, n);
  }
  for (int64_t i = 0; i < n; ++i) o[i] = c[i * sc] ? x[i * sx] : y[i * sy];
}

// ---- Cast ----

template <typename S, typename D>
inline D Convert(S v) {
  if constexpr (Same<D, bool>::value) {
    return v != S(0);
  } else if constexpr (Same<S, bool>::value) {
    return D(v ? 1 : 0);
  } else if constexpr (kFloat<S> && !kFloat<D>) {
    return FloatToInt<D>(static_cast<double>(v));
  } else {
    return static_cast<D>(v);
  }
}

template <typename S, typename D>
void Cast(const void* xv, void* yv, int64_t n) {
  const S* __restrict x = static_cast<const S*>(xv);
  D* __restrict y = static_cast<D*>(yv);
  for (int64_t i = 0; i < n; ++i) y[i] = Convert<S, D>(x[i]);
}
template <typename D>
void CastFromHalf(const void* xv, void* yv, int64_t n) {
  float buf[kBlock];
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = n - i < kBlock ? n - i : kBlock;
    HalfToFloat(static_cast<const uint16_t*>(xv) + i, buf, m);
    Cast<float, D>(buf, static_cast<D*>(yv) + i, m);
  }
}
template <typename S>
void CastToHalf(const void* xv, void* yv, int64_t n) {
  float buf[kBlock];
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = n - i < kBlock ? n - i : kBlock;
    Cast<S, float>(static_cast<const S*>(xv) + i, buf, m);
    FloatToHalf(buf, static_cast<uint16_t*>(yv) + i, m);
  }
}
void CopyHalf(const void* xv, void* yv, int64_t n) { Cast<uint16_t, uint16_t>(xv, yv, n); }

// Element types by VDt (float16 as its bits).
template <VDt D>
struct TypeOf;
template <> struct TypeOf<VDt::kF32> { using type = float; };
template <> struct TypeOf<VDt::kF64> { using type = double; };
template <> struct TypeOf<VDt::kF16> { using type = uint16_t; };
template <> struct TypeOf<VDt::kI32> { using type = int32_t; };
template <> struct TypeOf<VDt::kI64> { using type = int64_t; };
template <> struct TypeOf<VDt::kI8> { using type = int8_t; };
template <> struct TypeOf<VDt::kU8> { using type = uint8_t; };
template <> struct TypeOf<VDt::kBool> { using type = bool; };

template <VDt S, VDt D>
CastFn CastEntry() {
  using ST = typename TypeOf<S>::type;
  using DT = typename TypeOf<D>::type;
  if constexpr (S == VDt::kF16 && D == VDt::kF16) {
    return &CopyHalf;
  } else if constexpr (S == VDt::kF16) {
    return &CastFromHalf<DT>;
  } else if constexpr (D == VDt::kF16) {
    if constexpr (Same<ST, double>::value) {
      return &CastToHalf<double>;
    } else {
      return &CastToHalf<ST>;
    }
  } else {
    return &Cast<ST, DT>;
  }
}

template <VDt S, VDt... Ds>
void FillCastRow(IsaKernels& k) {
  ((k.cast[static_cast<int>(S)][static_cast<int>(Ds)] = CastEntry<S, Ds>()), ...);
}
template <VDt... Ss>
void FillCasts(IsaKernels& k) {
  (FillCastRow<Ss, VDt::kF32, VDt::kF64, VDt::kF16, VDt::kI32, VDt::kI64, VDt::kI8, VDt::kU8, VDt::kBool>(k), ...);
}

// An 8 x 8 block of 4-byte elements transposed in registers: the rows
// interleaved in pairs (unpack), then in fours (shuffle), then the 128-bit
// halves swapped across the pairs of registers (permute2f128).
void Transpose32x8(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * src_stride));
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i) _mm256_storeu_ps(reinterpret_cast<float*>(dst + i * dst_stride), t[i]);
}

}  // namespace

// Reductions and the table live in isa_reduce.inc (shared namespace).
#include "runtime/engines/cpu_vector/isa_reduce.inc"

}  // namespace ge::engine::cpu_vector::GE_VEC_NS
