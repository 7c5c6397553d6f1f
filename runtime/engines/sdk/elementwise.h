// Element-wise loops for unary, binary and ternary kernels with numpy
// broadcasting. Functors see compute-type values (16-bit floats widened to
// float) and their result is stored back in the output's element type.
#pragma once

#include <cstdint>

#include "base/tensor.h"
#include "runtime/engines/sdk/broadcast.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::sdk {

template <typename O, typename V>
inline O StoreAs(V v) {
  if constexpr (kIsHalf<O>) {
    return O(static_cast<float>(v));
  } else {
    return static_cast<O>(v);
  }
}

// y[i] = fn(x[i]) over n contiguous elements.
template <typename In, typename Out, typename Fn>
void UnaryLoop(const In* x, Out* y, int64_t n, const Fn& fn, int threads, int64_t cost = 1) {
  ParallelFor(threads, n, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = StoreAs<Out>(fn(Widen(x[i])));
  });
}

// out = fn(a, b) with a and b broadcast to out's shape.
template <typename A, typename B, typename Out, typename Fn>
void BinaryBroadcast(const Tensor& a, const Tensor& b, const Tensor& out, const Fn& fn, int threads, int64_t cost = 1) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* po = out.data<Out>();
  if (out.NumElements() == 0) return;
  const BroadcastPlan plan = MakeBroadcastPlan(out.shape().span(), {a.shape().span(), b.shape().span()});
  const int64_t sa = plan.inner_stride(0);
  const int64_t sb = plan.inner_stride(1);
  ParallelRows<2>(threads, plan, cost, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t n) {
    const A* x = pa + off[0];
    const B* y = pb + off[1];
    Out* z = po + o;
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = StoreAs<Out>(fn(Widen(x[i]), Widen(y[i])));
    } else if (sa == 0 && sb == 1) {
      const auto xv = Widen(x[0]);
      for (int64_t i = 0; i < n; ++i) z[i] = StoreAs<Out>(fn(xv, Widen(y[i])));
    } else if (sa == 1 && sb == 0) {
      const auto yv = Widen(y[0]);
      for (int64_t i = 0; i < n; ++i) z[i] = StoreAs<Out>(fn(Widen(x[i]), yv));
    } else {
      for (int64_t i = 0; i < n; ++i) z[i] = StoreAs<Out>(fn(Widen(x[i * sa]), Widen(y[i * sb])));
    }
  });
}

// out = fn(a, b, c) with all three broadcast to out's shape. Values are
// passed as stored (no widening): used by Where, which only selects.
template <typename A, typename B, typename C, typename Out, typename Fn>
void TernaryBroadcast(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out, const Fn& fn, int threads) {
  if (out.NumElements() == 0) return;
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  const C* pc = c.data<C>();
  Out* po = out.data<Out>();
  const BroadcastPlan plan =
      MakeBroadcastPlan(out.shape().span(), {a.shape().span(), b.shape().span(), c.shape().span()});
  const int64_t sa = plan.inner_stride(0);
  const int64_t sb = plan.inner_stride(1);
  const int64_t sc = plan.inner_stride(2);
  ParallelRows<3>(threads, plan, 1, [&](int64_t o, const std::array<int64_t, 3>& off, int64_t n) {
    const A* x = pa + off[0];
    const B* y = pb + off[1];
    const C* w = pc + off[2];
    Out* z = po + o;
    if (sa == 1 && sb == 1 && sc == 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = fn(x[i], y[i], w[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) z[i] = fn(x[i * sa], y[i * sb], w[i * sc]);
    }
  });
}

// Copies `in` broadcast to `out`'s shape (same dtype; strings included);
// errors name `op`.
absl::Status BroadcastCopy(const ir::OpDesc& op, const Tensor& in, const Tensor& out, int threads);

}  // namespace ge::engine::sdk
