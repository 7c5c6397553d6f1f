// Pooling: MaxPool-12 (with the optional Indices output, dilations and
// storage_order), AveragePool-11 (count_include_pad, ceil_mode) and
// GlobalAveragePool / GlobalMaxPool, LpPool-11 and GlobalLpPool-2 (the
// p-norm of each window: (sum |x|^p)^(1/p), padding contributing nothing),
// for 1-D to 3-D windows, and MaxUnpool-11 (a scatter of X to the flat
// output positions in I).
//
// Window geometry comes from ops::PoolOutputShape, the function shape
// inference uses. For each output position the taps that land inside the
// input are found once per dim (TapRange), so the inner loops never test
// bounds. The work is split over the N*C planes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"
#include "runtime/engines/host_cpu/window.h"

namespace ge::engine::host_cpu {
namespace {

using MaxPoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>;
using AvgPoolTypes = FloatTypes;

// MaxPool over one plane; `indices` (may be null) receives the flat index
// of each maximum in the whole input, row-major or, with storage_order 1,
// column-major within the plane.
template <typename T>
void MaxPoolPlane(const Window3& w, const T* x, T* y, int64_t* indices, int64_t plane_offset,
                  bool column_major) {
  using C = ComputeType<T>;
  for (int64_t od = 0; od < w.out[0]; ++od) {
    const TapRange rd = Taps(od, w.stride[0], w.pad_begin[0], w.kernel[0], w.dilation[0], w.in[0]);
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      const TapRange rh = Taps(oh, w.stride[1], w.pad_begin[1], w.kernel[1], w.dilation[1], w.in[1]);
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const TapRange rw =
            Taps(ow, w.stride[2], w.pad_begin[2], w.kernel[2], w.dilation[2], w.in[2]);
        C best = std::numeric_limits<C>::lowest();
        int64_t best_d = -1, best_h = -1, best_w = -1;
        for (int64_t kd = rd.lo; kd < rd.hi; ++kd) {
          const int64_t id = rd.start + kd * w.dilation[0];
          for (int64_t kh = rh.lo; kh < rh.hi; ++kh) {
            const int64_t ih = rh.start + kh * w.dilation[1];
            const T* line = x + (id * w.in[1] + ih) * w.in[2];
            for (int64_t kw = rw.lo; kw < rw.hi; ++kw) {
              const int64_t iw = rw.start + kw * w.dilation[2];
              const C v = Widen(line[iw]);
              // The first maximum wins; NaN is taken and then kept.
              if (best_d < 0 || v > best || (v != v && best == best)) {
                best = v;
                best_d = id, best_h = ih, best_w = iw;
              }
            }
          }
        }
        const int64_t o = (od * w.out[1] + oh) * w.out[2] + ow;
        y[o] = Narrow<T>(best);
        if (indices != nullptr) {
          const int64_t local = best_d < 0 ? 0
                                : column_major ? best_d + w.in[0] * (best_h + w.in[1] * best_w)
                                               : (best_d * w.in[1] + best_h) * w.in[2] + best_w;
          indices[o] = plane_offset + local;
        }
      }
    }
  }
}

// The number of taps of a window along one dim that fall inside the input
// padded by both pads (what count_include_pad divides by).
int64_t PaddedTaps(const TapRange& r, const Window3& w, int d) {
  const int64_t limit = w.in[d] + w.pad_end[d];
  return std::min(w.kernel[d], CeilDivSigned(limit - r.start, w.dilation[d]));
}

template <typename T>
void AvgPoolPlane(const Window3& w, const T* x, T* y, bool count_include_pad) {
  using C = ComputeType<T>;
  for (int64_t od = 0; od < w.out[0]; ++od) {
    const TapRange rd = Taps(od, w.stride[0], w.pad_begin[0], w.kernel[0], w.dilation[0], w.in[0]);
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      const TapRange rh = Taps(oh, w.stride[1], w.pad_begin[1], w.kernel[1], w.dilation[1], w.in[1]);
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const TapRange rw =
            Taps(ow, w.stride[2], w.pad_begin[2], w.kernel[2], w.dilation[2], w.in[2]);
        C sum = C(0);
        for (int64_t kd = rd.lo; kd < rd.hi; ++kd) {
          const int64_t id = rd.start + kd * w.dilation[0];
          for (int64_t kh = rh.lo; kh < rh.hi; ++kh) {
            const T* line = x + (id * w.in[1] + rh.start + kh * w.dilation[1]) * w.in[2];
            for (int64_t kw = rw.lo; kw < rw.hi; ++kw) sum += Widen(line[rw.start + kw * w.dilation[2]]);
          }
        }
        const int64_t count =
            count_include_pad
                ? PaddedTaps(rd, w, 0) * PaddedTaps(rh, w, 1) * PaddedTaps(rw, w, 2)
                : (rd.hi - rd.lo) * (rh.hi - rh.lo) * (rw.hi - rw.lo);
        y[(od * w.out[1] + oh) * w.out[2] + ow] =
            Narrow<T>(count > 0 ? sum / static_cast<C>(count) : C(0));
      }
    }
  }
}

// sum |x|^p, and its p-th root, with the common p = 1 and 2 exact.
template <typename C>
C PowAbs(C v, int64_t p) {
  v = v < C(0) ? -v : v;
  if (p == 1) return v;
  if (p == 2) return v * v;
  return std::pow(v, static_cast<C>(p));
}
template <typename C>
C RootP(C sum, int64_t p) {
  if (p == 1) return sum;
  if (p == 2) return std::sqrt(sum);
  return std::pow(sum, C(1) / static_cast<C>(p));
}

template <typename T>
void LpPoolPlane(const Window3& w, const T* x, T* y, int64_t p) {
  using C = ComputeType<T>;
  for (int64_t od = 0; od < w.out[0]; ++od) {
    const TapRange rd = Taps(od, w.stride[0], w.pad_begin[0], w.kernel[0], w.dilation[0], w.in[0]);
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      const TapRange rh = Taps(oh, w.stride[1], w.pad_begin[1], w.kernel[1], w.dilation[1], w.in[1]);
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const TapRange rw = Taps(ow, w.stride[2], w.pad_begin[2], w.kernel[2], w.dilation[2], w.in[2]);
        C sum = C(0);
        for (int64_t kd = rd.lo; kd < rd.hi; ++kd) {
          const int64_t id = rd.start + kd * w.dilation[0];
          for (int64_t kh = rh.lo; kh < rh.hi; ++kh) {
            const T* line = x + (id * w.in[1] + rh.start + kh * w.dilation[1]) * w.in[2];
            for (int64_t kw = rw.lo; kw < rw.hi; ++kw) sum += PowAbs(Widen(line[rw.start + kw * w.dilation[2]]), p);
          }
        }
        y[(od * w.out[1] + oh) * w.out[2] + ow] = Narrow<T>(RootP(sum, p));
      }
    }
  }
}

class PoolKernel final : public Kernel {
 public:
  enum class Kind { kMax, kAverage, kLp };

  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op, Kind kind) {
    auto attrs = ops::WindowAttrsFromOp(op);
    if (!attrs.ok()) return NodeError(op, attrs.status().message());
    if (attrs->kernel_shape.empty()) return NodeError(op, "attribute kernel_shape is required");
    const int64_t storage_order = IntAttr(op, "storage_order", 0);
    if (storage_order != 0 && storage_order != 1) {
      return NodeError(op, "storage_order must be 0 or 1, got ", storage_order);
    }
    auto kernel = std::unique_ptr<PoolKernel>(new PoolKernel(op, kind, *std::move(attrs)));
    kernel->count_include_pad_ = IntAttr(op, "count_include_pad", 0) != 0;
    kernel->p_ = IntAttr(op, "p", 2);
    if (kind == Kind::kLp && kernel->p_ < 1) return NodeError(op, "p must be a positive integer, got ", kernel->p_);
    kernel->column_major_ = storage_order == 1;
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto geometry = ops::PoolOutputShape(x.shape(), attrs_);
    if (!geometry.ok()) return NodeError(op_, geometry.status().message());
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (y.shape() != geometry->output) {
      return NodeError(op_, "output shape ", y.shape().ToString(), " differs from the computed ",
                       geometry->output.ToString());
    }
    Tensor indices;
    if (kind_ == Kind::kMax && ctx.num_outputs() > 1) {
      GE_ASSIGN_OR_RETURN(indices, ctx.Output(1, y.shape()));
    }
    GE_ASSIGN_OR_RETURN(Window3 w, MakeWindow3(op_, x.shape(), *geometry));
    const int64_t planes = w.batch * w.channels;
    if (y.NumElements() == 0) return absl::OkStatus();
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      int64_t* pi = indices.defined() ? indices.data<int64_t>() : nullptr;
      ParallelFor(ctx.num_threads(), planes, w.out_size() * w.kernel_size(), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const T* src = px + p * w.in_size();
          T* dst = py + p * w.out_size();
          if (kind_ == Kind::kAverage) {
            AvgPoolPlane(w, src, dst, count_include_pad_);
          } else if (kind_ == Kind::kLp) {
            LpPoolPlane(w, src, dst, p_);
          } else {
            MaxPoolPlane(w, src, dst, pi ? pi + p * w.out_size() : nullptr, p * w.in_size(), column_major_);
          }
        }
      });
      return absl::OkStatus();
    };
    if (kind_ != Kind::kMax) return DispatchType<AvgPoolTypes>(x.dtype(), op_, run);
    return DispatchType<MaxPoolTypes>(x.dtype(), op_, run);
  }

 private:
  PoolKernel(const ir::OpDesc& op, Kind kind, ops::WindowAttrs attrs)
      : op_(op), kind_(kind), attrs_(std::move(attrs)) {}

  ir::OpDesc op_;
  Kind kind_;
  ops::WindowAttrs attrs_;
  bool count_include_pad_ = false;
  bool column_major_ = false;
  int64_t p_ = 2;
};

// GlobalAveragePool / GlobalMaxPool / GlobalLpPool: one value per N*C plane.
enum class GlobalKind { kAverage, kMax, kLp };

template <GlobalKind kKind>
class GlobalPoolKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const int64_t p = IntAttr(op, "p", 2);
    if (kKind == GlobalKind::kLp && p < 1) return NodeError(op, "p must be a positive integer, got ", p);
    return std::unique_ptr<Kernel>(new GlobalPoolKernel(op, p));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.shape().rank() < 2) {
      return NodeError(op_, "input ", x.shape().ToString(), " must have rank >= 2");
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
    const int64_t size = DimProduct(x.shape().span(), 2, x.shape().dims().size());
    if (y.NumElements() != planes) {
      return NodeError(op_, "output ", y.shape().ToString(), " must have N*C = ", planes,
                       " elements");
    }
    return DispatchType<FloatTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ParallelFor(ctx.num_threads(), planes, size, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const T* src = px + p * size;
          C acc = kKind == GlobalKind::kMax ? -std::numeric_limits<C>::infinity() : C(0);
          for (int64_t i = 0; i < size; ++i) {
            const C v = Widen(src[i]);
            if constexpr (kKind == GlobalKind::kMax) {
              acc = (v > acc || v != v) ? v : acc;
            } else if constexpr (kKind == GlobalKind::kLp) {
              acc += PowAbs(v, p_);
            } else {
              acc += v;
            }
          }
          if constexpr (kKind == GlobalKind::kAverage) acc = size > 0 ? acc / static_cast<C>(size) : C(0);
          if constexpr (kKind == GlobalKind::kLp) acc = RootP(acc, p_);
          py[p] = Narrow<T>(acc);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  GlobalPoolKernel(const ir::OpDesc& op, int64_t p) : op_(op), p_(p) {}

  ir::OpDesc op_;
  int64_t p_;
};

class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(const ir::OpDesc& op)
      : op_(op),
        kernel_(IntsAttr(op, "kernel_shape")),
        strides_(IntsAttr(op, "strides")),
        pads_(IntsAttr(op, "pads")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Shape& xs = x.shape();
    const size_t n = kernel_.size();
    if (n == 0 || xs.rank() != static_cast<int64_t>(n) + 2 || indices.shape() != xs) {
      return NodeError(op_, "X ", xs.ToString(), " and I ", indices.shape().ToString(),
                       " must share a shape of rank ", n + 2);
    }
    // I indexes the flattened default output ((in - 1) * stride + kernel -
    // pads per spatial dim); an output_shape keeps each value at the same
    // multi-index (zeros after it), as ONNX's reference does.
    Shape natural = xs;
    for (size_t i = 0; i < n; ++i) {
      const int64_t stride = strides_.empty() ? 1 : strides_[i];
      const int64_t pad = pads_.empty() ? 0 : pads_[i] + pads_[i + n];
      natural.set_dim(i + 2, (xs.dim(i + 2) - 1) * stride + kernel_[i] - pad);
      if (natural.dim(i + 2) < 0) return NodeError(op_, "spatial dim ", i, " of the output would be negative");
    }
    Shape out = natural;
    if (ctx.has_input(2) && ctx.input(2).NumElements() > 0) {
      const std::vector<int64_t> dims = ReadInts(ctx.input(2));
      if (dims.size() != n + 2) return NodeError(op_, "output_shape needs ", n + 2, " values");
      out = Shape(absl::Span<const int64_t>(dims));
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    const int64_t total = y.NumElements();
    const int64_t natural_total = DimProduct(natural.span(), 0, natural.dims().size());
    const int64_t* pi = indices.data<int64_t>();
    const auto out_strides = ContiguousStrides(out.span());
    return DispatchType<FloatTypes>(x.dtype(), op_, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      std::fill(py, py + total, T(0.0f));
      for (int64_t e = 0; e < x.NumElements(); ++e) {
        if (pi[e] < 0 || pi[e] >= natural_total) {
          return NodeError(op_, "index ", pi[e], " is outside the unpooled shape ", natural.ToString());
        }
        int64_t rest = pi[e], offset = 0;
        for (int64_t d = natural.rank() - 1; d >= 0; --d) {
          const int64_t coord = rest % natural.dim(d);
          rest /= natural.dim(d);
          if (coord >= out.dim(d)) {
            return NodeError(op_, "output_shape ", out.ToString(), " is smaller than ", natural.ToString());
          }
          offset += coord * out_strides[d];
        }
        py[offset] = px[e];
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  std::vector<int64_t> kernel_, strides_, pads_;
};

}  // namespace

void RegisterPoolKernels(KernelTable& table) {
  table.Add({"MaxUnpool",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new MaxUnpoolKernel(op));
             },
             {SetOf(FloatTypes{}), DataTypeSet{DataType::kInt64}, DataTypeSet{DataType::kInt64}},
             {SetOf(FloatTypes{})}});
  const DataTypeSet floats = SetOf(FloatTypes{});
  table.Add({"MaxPool",
             [](const ir::OpDesc& op) { return PoolKernel::Create(op, PoolKernel::Kind::kMax); },
             {SetOf(MaxPoolTypes{})},
             {SetOf(MaxPoolTypes{}), DataTypeSet{DataType::kInt64}}});
  table.Add({"AveragePool",
             [](const ir::OpDesc& op) { return PoolKernel::Create(op, PoolKernel::Kind::kAverage); },
             {floats},
             {floats}});
  table.Add({"LpPool",
             [](const ir::OpDesc& op) { return PoolKernel::Create(op, PoolKernel::Kind::kLp); },
             {floats},
             {floats}});
  table.Add({"GlobalAveragePool", &GlobalPoolKernel<GlobalKind::kAverage>::Create, {floats}, {floats}});
  table.Add({"GlobalMaxPool", &GlobalPoolKernel<GlobalKind::kMax>::Create, {floats}, {floats}});
  table.Add({"GlobalLpPool", &GlobalPoolKernel<GlobalKind::kLp>::Create, {floats}, {floats}});
}

}  // namespace ge::engine::host_cpu
