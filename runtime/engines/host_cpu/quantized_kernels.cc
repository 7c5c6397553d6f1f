// Reference (exact) integer kernels: DynamicQuantizeLinear-11,
// MatMulInteger-10, QLinearMatMul-10, ConvInteger-10 and QLinearConv-10,
// for u8 and s8 operands, and ged's `_QLinearAdd` (sdk/qlinear_add.h).
//
// Operands are widened to int32 with their zero points subtracted, so the
// products accumulate in int32 as ONNX defines them (padding of a
// convolution contributes nothing: it stands for the zero point). Zero
// points and scales are run-time tensors: per tensor (one element), per
// row of A / per column of B (MatMul: [M] for a 2-D A, or A's shape with K
// set to 1; [N] for a 2-D B, or B's shape with K set to 1), per output
// channel of a convolution ([M]). Requantization follows ONNX Runtime:
// multiplier = a_scale * b_scale / y_scale in float, acc * multiplier in
// float, rounded half to even, plus y_zero_point, saturated.
//
// DynamicQuantizeLinear computes as ONNX's definition in float: the range
// of x extended to 0, scale = (max - min) / 255, zero point round(-min /
// scale), y = saturate(round(x / scale) + zero point); an all-zero x gives
// scale 0, zero point 0 and y 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"
#include "runtime/engines/sdk/qlinear_add.h"
#include "runtime/engines/host_cpu/window.h"

namespace ge::engine::host_cpu {
namespace {

using QuantTypes = TypeList<int8_t, uint8_t>;

// For each element of `to`, the flat index of the element of `from` that
// numpy broadcasting maps to it; InvalidArgument when `from` does not
// broadcast to `to`.
absl::StatusOr<std::vector<int64_t>> BroadcastMap(const ir::OpDesc& op, const Shape& from, const Shape& to,
                                                  std::string_view what) {
  if (from.rank() > to.rank()) return NodeError(op, what, " ", from.ToString(), " does not fit ", to.ToString());
  const int64_t lead = to.rank() - from.rank();
  const auto from_strides = ContiguousStrides(from.span());
  std::vector<int64_t> strides(static_cast<size_t>(to.rank()), 0);
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.dim(d) == to.dim(d + lead)) {
      strides[d + lead] = from.dim(d) == 1 ? 0 : from_strides[d];
    } else if (from.dim(d) != 1) {
      return NodeError(op, what, " ", from.ToString(), " does not broadcast to ", to.ToString());
    }
  }
  const int64_t n = to.NumElementsUnchecked();
  std::vector<int64_t> map(static_cast<size_t>(n));
  std::vector<int64_t> coord(static_cast<size_t>(to.rank()), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    map[i] = offset;
    for (int64_t d = to.rank() - 1; d >= 0; --d) {
      offset += strides[d];
      if (++coord[d] < to.dim(d)) break;
      offset -= strides[d] * coord[d];
      coord[d] = 0;
    }
  }
  return map;
}

// A per-tensor parameter (scalar or one element); InvalidArgument otherwise.
template <typename T>
absl::StatusOr<T> PerTensor(const ir::OpDesc& op, const ExecuteContext& ctx, int i, std::string_view name, T absent) {
  if (!ctx.has_input(i)) return absent;
  const Tensor& t = ctx.input(i);
  if (t.NumElements() != 1) return NodeError(op, name, " must have one element, got ", t.shape().ToString());
  return static_cast<T>(t.GetAsDouble(0));
}

// Per output channel: one value, or one per channel (1-D [m]).
template <typename T>
absl::StatusOr<std::vector<T>> PerChannel(const ir::OpDesc& op, const ExecuteContext& ctx, int i, std::string_view name,
                                          int64_t m, T absent) {
  if (!ctx.has_input(i)) return std::vector<T>(static_cast<size_t>(m), absent);
  const Tensor& t = ctx.input(i);
  if (t.NumElements() == 1) return std::vector<T>(static_cast<size_t>(m), static_cast<T>(t.GetAsDouble(0)));
  if (t.shape().rank() != 1 || t.shape().dim(0) != m) {
    return NodeError(op, name, " must have one element or [", m, "], got ", t.shape().ToString());
  }
  std::vector<T> out(static_cast<size_t>(m));
  for (int64_t c = 0; c < m; ++c) out[c] = static_cast<T>(t.GetAsDouble(c));
  return out;
}

template <typename T>
T Saturate(float v, int32_t zero_point) {
  const float r = std::nearbyint(v) + static_cast<float>(zero_point);
  const float lo = static_cast<float>(std::numeric_limits<T>::min());
  const float hi = static_cast<float>(std::numeric_limits<T>::max());
  return static_cast<T>(std::min(std::max(r, lo), hi));
}

absl::Status Requantize(const ir::OpDesc& op, const std::vector<int32_t>& acc, const std::vector<float>& multiplier,
                        int64_t period, int64_t repeat, int32_t zero_point, Tensor& y) {
  // multiplier[(i / repeat) % period] applies to acc[i].
  return DispatchType<QuantTypes>(y.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* py = y.data<T>();
    for (size_t i = 0; i < acc.size(); ++i) {
      const float m = multiplier[(static_cast<int64_t>(i) / repeat) % period];
      py[i] = Saturate<T>(static_cast<float>(acc[i]) * m, zero_point);
    }
    return absl::OkStatus();
  });
}

// ---- Matrix products ----

// A [.., M, K] x B [.., K, N] with numpy batch broadcasting (1-D operands
// promoted as MatMul does), zero points (and, for QLinearMatMul, scales)
// per tensor, per row of A and per column of B.
struct IntMatMul {
  int64_t m = 0, k = 0, n = 0, batches = 0;
  Shape a2, b2, out;
  std::vector<int64_t> a_batch, b_batch;  // per output batch

  static absl::StatusOr<IntMatMul> Plan(const ir::OpDesc& op, const Shape& a, const Shape& b) {
    if (a.rank() < 1 || b.rank() < 1) return NodeError(op, "A and B must have rank >= 1");
    IntMatMul p;
    p.a2 = a.rank() == 1 ? Shape{1, a.dim(0)} : a;
    p.b2 = b.rank() == 1 ? Shape{b.dim(0), 1} : b;
    p.m = p.a2.dim(p.a2.rank() - 2);
    p.k = p.a2.dim(p.a2.rank() - 1);
    p.n = p.b2.dim(p.b2.rank() - 1);
    if (p.b2.dim(p.b2.rank() - 2) != p.k)
      return NodeError(op, "A ", a.ToString(), " and B ", b.ToString(), " disagree on K");
    auto out = ops::MatMulShape(a, b);
    if (!out.ok()) return NodeError(op, out.status().message());
    p.out = *out;
    const Shape a_batch(p.a2.span().subspan(0, p.a2.dims().size() - 2));
    const Shape b_batch(p.b2.span().subspan(0, p.b2.dims().size() - 2));
    auto batch = ops::BroadcastShapes(a_batch, b_batch);
    if (!batch.ok()) return NodeError(op, batch.status().message());
    GE_ASSIGN_OR_RETURN(p.a_batch, BroadcastMap(op, a_batch, *batch, "A's batch dims"));
    GE_ASSIGN_OR_RETURN(p.b_batch, BroadcastMap(op, b_batch, *batch, "B's batch dims"));
    p.batches = batch->NumElementsUnchecked();
    return p;
  }

  // A's rows (A's shape with K set to 1) and B's columns (K set to 1).
  Shape RowShape() const {
    Shape s = a2;
    s.set_dim(s.rank() - 1, 1);
    return s;
  }
  Shape ColShape() const {
    Shape s = b2;
    s.set_dim(s.rank() - 2, 1);
    return s;
  }

  // A parameter per row of A: one element, [M] (for a 2-D A), or
  // broadcastable to RowShape(); one value per row of a2.
  template <typename T>
  absl::StatusOr<std::vector<T>> PerRow(const ir::OpDesc& op, const Tensor& t, std::string_view name) const {
    Shape view = t.shape();
    if (t.NumElements() == 1)
      view = Shape{};
    else if (view.rank() == 1)
      view = Shape{view.dim(0), 1};
    return Spread<T>(op, t, view, RowShape(), name);
  }
  template <typename T>
  absl::StatusOr<std::vector<T>> PerCol(const ir::OpDesc& op, const Tensor& t, std::string_view name) const {
    Shape view = t.shape();
    if (t.NumElements() == 1) view = Shape{};
    return Spread<T>(op, t, view, ColShape(), name);
  }

  // acc[batch, i, j] = sum_k (A - za[row]) (B - zb[col]).
  std::vector<int32_t> Multiply(const Tensor& a, const std::vector<int32_t>& za, const Tensor& b,
                                const std::vector<int32_t>& zb) const {
    const int64_t a_rows = a2.NumElementsUnchecked() / k, b_mats = b2.NumElementsUnchecked() / (k * n);
    std::vector<int32_t> ai(static_cast<size_t>(a_rows * k)), bi(static_cast<size_t>(b_mats * k * n));
    for (int64_t r = 0; r < a_rows; ++r) {
      for (int64_t kk = 0; kk < k; ++kk) ai[r * k + kk] = static_cast<int32_t>(a.GetAsInt64(r * k + kk)) - za[r];
    }
    for (int64_t mat = 0; mat < b_mats; ++mat) {
      for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t e = (mat * k + kk) * n + j;
          bi[e] = static_cast<int32_t>(b.GetAsInt64(e)) - zb[mat * n + j];
        }
      }
    }
    std::vector<int32_t> acc(static_cast<size_t>(batches * m * n), 0);
    for (int64_t bt = 0; bt < batches; ++bt) {
      const int32_t* pa = ai.data() + a_batch[bt] * m * k;
      const int32_t* pb = bi.data() + b_batch[bt] * k * n;
      int32_t* py = acc.data() + bt * m * n;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t kk = 0; kk < k; ++kk) {
          const int32_t av = pa[i * k + kk];
          for (int64_t j = 0; j < n; ++j) py[i * n + j] += av * pb[kk * n + j];
        }
      }
    }
    return acc;
  }

 private:
  template <typename T>
  static absl::StatusOr<std::vector<T>> Spread(const ir::OpDesc& op, const Tensor& t, const Shape& view,
                                               const Shape& target, std::string_view name) {
    GE_ASSIGN_OR_RETURN(std::vector<int64_t> map, BroadcastMap(op, view, target, name));
    std::vector<T> out(map.size());
    for (size_t i = 0; i < map.size(); ++i) out[i] = static_cast<T>(t.GetAsDouble(map[i]));
    return out;
  }
};

class MatMulIntegerKernel final : public Kernel {
 public:
  explicit MatMulIntegerKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    GE_ASSIGN_OR_RETURN(IntMatMul plan, IntMatMul::Plan(op_, a.shape(), b.shape()));
    const Tensor zero = Tensor::Scalar<int32_t>(0);
    GE_ASSIGN_OR_RETURN(auto za, plan.PerRow<int32_t>(op_, ctx.has_input(2) ? ctx.input(2) : zero, "a_zero_point"));
    GE_ASSIGN_OR_RETURN(auto zb, plan.PerCol<int32_t>(op_, ctx.has_input(3) ? ctx.input(3) : zero, "b_zero_point"));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, plan.out));
    const std::vector<int32_t> acc = plan.Multiply(a, za, b, zb);
    std::copy(acc.begin(), acc.end(), y.data<int32_t>());
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

class QLinearMatMulKernel final : public Kernel {
 public:
  explicit QLinearMatMulKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    GE_ASSIGN_OR_RETURN(IntMatMul plan, IntMatMul::Plan(op_, a.shape(), b.shape()));
    GE_ASSIGN_OR_RETURN(auto sa, plan.PerRow<float>(op_, ctx.input(1), "a_scale"));
    GE_ASSIGN_OR_RETURN(auto za, plan.PerRow<int32_t>(op_, ctx.input(2), "a_zero_point"));
    GE_ASSIGN_OR_RETURN(auto sb, plan.PerCol<float>(op_, ctx.input(4), "b_scale"));
    GE_ASSIGN_OR_RETURN(auto zb, plan.PerCol<int32_t>(op_, ctx.input(5), "b_zero_point"));
    GE_ASSIGN_OR_RETURN(const float sy, PerTensor<float>(op_, ctx, 6, "y_scale", 1.0f));
    GE_ASSIGN_OR_RETURN(const int32_t zy, PerTensor<int32_t>(op_, ctx, 7, "y_zero_point", 0));
    if (!(sy > 0)) return NodeError(op_, "y_scale must be positive, got ", sy);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, plan.out));
    const std::vector<int32_t> acc = plan.Multiply(a, za, b, zb);
    const int64_t m = plan.m, n = plan.n;
    return DispatchType<QuantTypes>(y.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      for (int64_t bt = 0; bt < plan.batches; ++bt) {
        for (int64_t i = 0; i < m; ++i) {
          const float row_scale = sa[plan.a_batch[bt] * m + i];
          for (int64_t j = 0; j < n; ++j) {
            const float multiplier = row_scale * sb[plan.b_batch[bt] * n + j] / sy;
            const int64_t e = (bt * m + i) * n + j;
            py[e] = Saturate<T>(static_cast<float>(acc[e]) * multiplier, zy);
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
};

// ---- Convolutions ----

// y[n, oc, out] = sum over the group's channels and the taps inside the
// input of x[n, c, in] * w[oc, c, k], all zero points already subtracted.
void ConvInt32(const Window3& win, int64_t m, int64_t group, const int32_t* x, const int32_t* w, int32_t* y,
               int threads) {
  const int64_t cg = win.channels / group, mg = m / group;
  ParallelFor(threads, win.batch * m, win.out_size() * cg * win.kernel_size(), [&](int64_t begin, int64_t end) {
    for (int64_t job = begin; job < end; ++job) {
      const int64_t nb = job / m, oc = job % m, g = oc / mg;
      int32_t* dst = y + job * win.out_size();
      for (int64_t od = 0; od < win.out[0]; ++od) {
        const TapRange rd = Taps(od, win.stride[0], win.pad_begin[0], win.kernel[0], win.dilation[0], win.in[0]);
        for (int64_t oh = 0; oh < win.out[1]; ++oh) {
          const TapRange rh = Taps(oh, win.stride[1], win.pad_begin[1], win.kernel[1], win.dilation[1], win.in[1]);
          for (int64_t ow = 0; ow < win.out[2]; ++ow) {
            const TapRange rw = Taps(ow, win.stride[2], win.pad_begin[2], win.kernel[2], win.dilation[2], win.in[2]);
            int32_t acc = 0;
            for (int64_t c = 0; c < cg; ++c) {
              const int32_t* plane = x + (nb * win.channels + g * cg + c) * win.in_size();
              const int32_t* kern = w + (oc * cg + c) * win.kernel_size();
              for (int64_t kd = rd.lo; kd < rd.hi; ++kd) {
                const int64_t id = rd.start + kd * win.dilation[0];
                for (int64_t kh = rh.lo; kh < rh.hi; ++kh) {
                  const int64_t ih = rh.start + kh * win.dilation[1];
                  const int32_t* line = plane + (id * win.in[1] + ih) * win.in[2];
                  const int32_t* taps = kern + (kd * win.kernel[1] + kh) * win.kernel[2];
                  for (int64_t kw = rw.lo; kw < rw.hi; ++kw) acc += line[rw.start + kw * win.dilation[2]] * taps[kw];
                }
              }
            }
            dst[(od * win.out[1] + oh) * win.out[2] + ow] = acc;
          }
        }
      }
    }
  });
}

// ConvInteger (kQLinear false) and QLinearConv: inputs x, w and their zero
// points are at x_index / w_index and the zero points after each.
template <bool kQLinear>
class IntConvKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    auto attrs = ops::WindowAttrsFromOp(op);
    if (!attrs.ok()) return NodeError(op, attrs.status().message());
    if (attrs->group < 1) return NodeError(op, "group ", attrs->group, " must be at least 1");
    return std::unique_ptr<Kernel>(new IntConvKernel(op, *std::move(attrs)));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    constexpr int kX = 0, kXZero = 2, kW = kQLinear ? 3 : 1, kWZero = kQLinear ? 5 : 3;
    const Tensor& x = ctx.input(kX);
    const Tensor& w = ctx.input(kW);
    auto geometry = ops::ConvOutputShape(x.shape(), w.shape(), attrs_);
    if (!geometry.ok()) return NodeError(op_, geometry.status().message());
    GE_ASSIGN_OR_RETURN(Window3 win, MakeWindow3(op_, x.shape(), *geometry));
    const int64_t m = w.shape().dim(0);
    GE_ASSIGN_OR_RETURN(const int32_t zx, PerTensor<int32_t>(op_, ctx, kXZero, "x_zero_point", 0));
    GE_ASSIGN_OR_RETURN(const std::vector<int32_t> zw, PerChannel<int32_t>(op_, ctx, kWZero, "w_zero_point", m, 0));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, geometry->output));
    std::vector<int32_t> xi(static_cast<size_t>(x.NumElements())), wi(static_cast<size_t>(w.NumElements()));
    for (int64_t i = 0; i < x.NumElements(); ++i) xi[i] = static_cast<int32_t>(x.GetAsInt64(i)) - zx;
    const int64_t per_channel = m > 0 ? w.NumElements() / m : 0;
    for (int64_t i = 0; i < w.NumElements(); ++i) wi[i] = static_cast<int32_t>(w.GetAsInt64(i)) - zw[i / per_channel];
    std::vector<int32_t> acc(static_cast<size_t>(y.NumElements()));
    if (!acc.empty()) ConvInt32(win, m, attrs_.group, xi.data(), wi.data(), acc.data(), ctx.num_threads());
    if constexpr (!kQLinear) {
      std::copy(acc.begin(), acc.end(), y.data<int32_t>());
      return absl::OkStatus();
    } else {
      GE_ASSIGN_OR_RETURN(const float sx, PerTensor<float>(op_, ctx, 1, "x_scale", 1.0f));
      GE_ASSIGN_OR_RETURN(const std::vector<float> sw, PerChannel<float>(op_, ctx, 4, "w_scale", m, 1.0f));
      GE_ASSIGN_OR_RETURN(const float sy, PerTensor<float>(op_, ctx, 6, "y_scale", 1.0f));
      GE_ASSIGN_OR_RETURN(const int32_t zy, PerTensor<int32_t>(op_, ctx, 7, "y_zero_point", 0));
      if (!(sy > 0)) return NodeError(op_, "y_scale must be positive, got ", sy);
      const int64_t spatial = win.out_size();
      if (ctx.has_input(8)) {
        const Tensor& bias = ctx.input(8);
        if (bias.NumElements() != m) return NodeError(op_, "B must be [", m, "], got ", bias.shape().ToString());
        for (size_t i = 0; i < acc.size(); ++i) {
          acc[i] += static_cast<int32_t>(bias.GetAsInt64((static_cast<int64_t>(i) / spatial) % m));
        }
      }
      std::vector<float> multiplier(static_cast<size_t>(m));
      for (int64_t c = 0; c < m; ++c) multiplier[c] = sx * sw[c] / sy;
      return Requantize(op_, acc, multiplier, m, spatial, zy, y);
    }
  }

 private:
  IntConvKernel(const ir::OpDesc& op, ops::WindowAttrs attrs) : op_(op), attrs_(std::move(attrs)) {}

  ir::OpDesc op_;
  ops::WindowAttrs attrs_;
};

// ---- DynamicQuantizeLinear ----

// ged's `_QLinearAdd`: int8 A and a B of A's shape or broadcasting to it,
// per-tensor parameters, the SDK's element formula (the one cpu_dense's
// loop computes).
class QLinearAddKernel final : public Kernel {
 public:
  explicit QLinearAddKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    std::vector<int64_t> b_index;  // empty: B has A's shape
    if (a.shape() != b.shape()) {
      GE_ASSIGN_OR_RETURN(b_index, BroadcastMap(op_, b.shape(), a.shape(), "B"));
    }
    if (a.dtype() != b.dtype()) return NodeError(op_, "A and B must have one dtype");
    GE_ASSIGN_OR_RETURN(const float sa, PerTensor<float>(op_, ctx, 1, "A_scale", 1.0f));
    GE_ASSIGN_OR_RETURN(const int32_t za, PerTensor<int32_t>(op_, ctx, 2, "A_zero_point", 0));
    GE_ASSIGN_OR_RETURN(const float sb, PerTensor<float>(op_, ctx, 4, "B_scale", 1.0f));
    GE_ASSIGN_OR_RETURN(const int32_t zb, PerTensor<int32_t>(op_, ctx, 5, "B_zero_point", 0));
    GE_ASSIGN_OR_RETURN(const float sc, PerTensor<float>(op_, ctx, 6, "C_scale", 1.0f));
    GE_ASSIGN_OR_RETURN(const int32_t zc, PerTensor<int32_t>(op_, ctx, 7, "C_zero_point", 0));
    if (!(sc > 0) || !std::isfinite(sc)) return NodeError(op_, "C_scale must be positive, got ", sc);
    GE_ASSIGN_OR_RETURN(Tensor c, ctx.Output(0, a.shape()));
    if (c.dtype() != a.dtype()) return NodeError(op_, "C must have A's dtype");
    return DispatchType<QuantTypes>(c.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const sdk::QLinearAddParams p = sdk::MakeQLinearAddParams<T>(sa, za, sb, zb, sc, zc);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* pc = c.data<T>();
      for (int64_t i = 0; i < a.NumElements(); ++i) {
        pc[i] = sdk::QLinearAddOne(pa[i], pb[b_index.empty() ? i : b_index[i]], p);
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
};

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  explicit DynamicQuantizeLinearKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const float* px = x.data<float>();
    const int64_t n = x.NumElements();
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(px[i])) return NodeError(op_, "x has a NaN at element ", i);
      lo = std::min(lo, px[i]);
      hi = std::max(hi, px[i]);
    }
    if (std::isinf(lo) || std::isinf(hi)) return NodeError(op_, "x has an infinite value");
    const float scale = (hi - lo) / 255.0f;
    const float zero_point = scale > 0 ? std::min(std::max(std::nearbyint((0.0f - lo) / scale), 0.0f), 255.0f) : 0.0f;
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    uint8_t* py = y.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) {
      const float q = scale > 0 ? std::nearbyint(px[i] / scale) + zero_point : 0.0f;
      py[i] = static_cast<uint8_t>(std::min(std::max(q, 0.0f), 255.0f));
    }
    if (ctx.num_outputs() > 1) {
      GE_ASSIGN_OR_RETURN(Tensor s, ctx.Output(1));
      s.data<float>()[0] = scale;
    }
    if (ctx.num_outputs() > 2) {
      GE_ASSIGN_OR_RETURN(Tensor z, ctx.Output(2));
      z.data<uint8_t>()[0] = static_cast<uint8_t>(zero_point);
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

}  // namespace

void RegisterQuantizedKernels(KernelTable& table) {
  const DataTypeSet q = SetOf(QuantTypes{});
  const DataTypeSet f32{DataType::kFloat};
  const DataTypeSet i32{DataType::kInt32};
  table.Add({"DynamicQuantizeLinear",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new DynamicQuantizeLinearKernel(op));
             },
             {f32},
             {DataTypeSet{DataType::kUint8}, f32, DataTypeSet{DataType::kUint8}}});
  table.Add({"MatMulInteger",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new MatMulIntegerKernel(op));
             },
             {q},
             {i32}});
  table.Add({"QLinearMatMul",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new QLinearMatMulKernel(op));
             },
             {q, f32, q, q, f32, q, f32, q},
             {q}});
  table.Add({"ConvInteger", &IntConvKernel<false>::Create, {q}, {i32}});
  table.Add({"QLinearConv", &IntConvKernel<true>::Create, {q, f32, q, q, f32, q, f32, q, i32}, {q}});
  table.Add({"_QLinearAdd",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new QLinearAddKernel(op));
             },
             {q, f32, q, q, f32, q, f32, q},
             {q}});
}

}  // namespace ge::engine::host_cpu
