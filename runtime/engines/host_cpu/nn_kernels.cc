// Normalization and activation-over-an-axis kernels: BatchNormalization-15
// (inference), Softmax / LogSoftmax / Hardmax-13 (one axis),
// LayerNormalization-17 (with the optional Mean and InvStdDev outputs) and
// Dropout-13 (inference: the output forwards the input, the mask is all
// true). Statistics are accumulated in double; element math runs in the
// compute type (float for 16-bit floats).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

// ---- BatchNormalization ----

class BatchNormKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    if (IntAttr(op, "training_mode", 0) != 0) {
      return NodeUnimplemented(op, "training_mode=1 is not supported on host_cpu (inference only)");
    }
    return std::unique_ptr<Kernel>(new BatchNormKernel(op, FloatAttr(op, "epsilon", 1e-5f)));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.shape().rank() < 2) return NodeError(op_, "X ", x.shape().ToString(), " needs rank >= 2");
    const int64_t channels = x.shape().dim(1);
    for (int i = 1; i <= 4; ++i) {
      if (ctx.input(i).NumElements() != channels) {
        return NodeError(op_, "input ", i, " ", ctx.input(i).shape().ToString(), " must have ",
                         channels, " elements (the channels of X ", x.shape().ToString(), ")");
      }
    }
    // y = x * a[c] + b[c] with a = scale / sqrt(var + eps), b = B - mean * a.
    std::vector<double> a(channels), b(channels);
    for (int64_t c = 0; c < channels; ++c) {
      a[c] = ctx.input(1).GetAsDouble(c) / std::sqrt(ctx.input(4).GetAsDouble(c) + epsilon_);
      b[c] = ctx.input(2).GetAsDouble(c) - ctx.input(3).GetAsDouble(c) * a[c];
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckSameSize(op_, x, y));
    for (int i = 1; i <= 2 && i < ctx.num_outputs(); ++i) {  // running stats: the inputs
      GE_ASSIGN_OR_RETURN(Tensor stat, ctx.Output(i));
      GE_RETURN_IF_ERROR(ConvertInto(ctx.input(i + 2), stat));
    }
    const int64_t inner = DimProduct(x.shape().span(), 2, x.shape().dims().size());
    const int64_t planes = x.shape().dim(0) * channels;
    return DispatchType<FloatTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ParallelFor(ctx.num_threads(), planes, inner, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const C ac = static_cast<C>(a[p % channels]);
          const C bc = static_cast<C>(b[p % channels]);
          const T* src = px + p * inner;
          T* dst = py + p * inner;
          for (int64_t i = 0; i < inner; ++i) dst[i] = Narrow<T>(Widen(src[i]) * ac + bc);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  BatchNormKernel(const ir::OpDesc& op, float epsilon) : op_(op), epsilon_(epsilon) {}
  ir::OpDesc op_;
  double epsilon_;
};

// ---- Softmax, LogSoftmax, Hardmax ----

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// One [n x inner] block along the axis, processed for all `inner` lanes at
// once so that the inner loops are contiguous.
template <typename T, SoftmaxKind kKind>
void SoftmaxBlock(const T* x, T* y, int64_t n, int64_t inner, std::vector<double>& max,
                  std::vector<double>& sum, std::vector<int64_t>& arg) {
  using C = ComputeType<T>;
  std::fill(max.begin(), max.end(), -std::numeric_limits<double>::infinity());
  std::fill(sum.begin(), sum.end(), 0.0);
  std::fill(arg.begin(), arg.end(), 0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < inner; ++j) {
      const double v = static_cast<double>(Widen(x[i * inner + j]));
      if (i == 0 || v > max[j]) {  // the first maximum wins (Hardmax)
        max[j] = v;
        arg[j] = i;
      }
    }
  }
  if constexpr (kKind == SoftmaxKind::kHardmax) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < inner; ++j) y[i * inner + j] = Narrow<T>(C(arg[j] == i ? 1 : 0));
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < inner; ++j) {
      sum[j] += std::exp(static_cast<double>(Widen(x[i * inner + j])) - max[j]);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < inner; ++j) {
      const double shifted = static_cast<double>(Widen(x[i * inner + j])) - max[j];
      const double out = kKind == SoftmaxKind::kSoftmax ? std::exp(shifted) / sum[j]
                                                        : shifted - std::log(sum[j]);
      y[i * inner + j] = Narrow<T>(static_cast<C>(out));
    }
  }
}

template <SoftmaxKind kKind>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const ir::OpDesc& op) : op_(op), axis_(IntAttr(op, "axis", -1)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const auto dims = x.shape().span();
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, x.shape().rank()));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckSameSize(op_, x, y));
    const int64_t outer = DimProduct(dims, 0, axis);
    const int64_t n = dims[axis];
    const int64_t inner = DimProduct(dims, axis + 1, dims.size());
    return DispatchType<FloatTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ParallelFor(ctx.num_threads(), outer, n * inner * 8, [&](int64_t begin, int64_t end) {
        std::vector<double> max(inner), sum(inner);
        std::vector<int64_t> arg(inner);
        for (int64_t o = begin; o < end; ++o) {
          SoftmaxBlock<T, kKind>(px + o * n * inner, py + o * n * inner, n, inner, max, sum, arg);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

// ---- LayerNormalization ----

class LayerNormKernel final : public Kernel {
 public:
  explicit LayerNormKernel(const ir::OpDesc& op)
      : op_(op), axis_(IntAttr(op, "axis", -1)), epsilon_(FloatAttr(op, "epsilon", 1e-5f)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const auto dims = x.shape().span();
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, x.shape().rank()));
    const int64_t rows = DimProduct(dims, 0, axis);
    const int64_t cols = DimProduct(dims, axis, dims.size());
    // Scale and B broadcast to the normalized shape, as doubles.
    const Shape norm_shape(dims.subspan(axis));
    GE_ASSIGN_OR_RETURN(std::vector<double> scale, Expanded(ctx, 1, norm_shape, 1.0));
    GE_ASSIGN_OR_RETURN(std::vector<double> bias, Expanded(ctx, 2, norm_shape, 0.0));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckSameSize(op_, x, y));
    Tensor mean_out, inv_out;
    if (ctx.num_outputs() > 1) {
      GE_ASSIGN_OR_RETURN(mean_out, ctx.Output(1));
    }
    if (ctx.num_outputs() > 2) {
      GE_ASSIGN_OR_RETURN(inv_out, ctx.Output(2));
    }
    std::vector<double> means(rows), invs(rows);
    absl::Status status = DispatchType<FloatTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ParallelFor(ctx.num_threads(), rows, cols * 4, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* src = px + r * cols;
          double mean = 0, var = 0;
          for (int64_t i = 0; i < cols; ++i) mean += static_cast<double>(Widen(src[i]));
          mean = cols > 0 ? mean / static_cast<double>(cols) : 0.0;
          for (int64_t i = 0; i < cols; ++i) {
            const double d = static_cast<double>(Widen(src[i])) - mean;
            var += d * d;
          }
          var = cols > 0 ? var / static_cast<double>(cols) : 0.0;
          const double inv = 1.0 / std::sqrt(var + epsilon_);
          for (int64_t i = 0; i < cols; ++i) {
            const double v = (static_cast<double>(Widen(src[i])) - mean) * inv;
            py[r * cols + i] = StoreAs<T>(v * scale[i] + bias[i]);
          }
          means[r] = mean;
          invs[r] = inv;
        }
      });
      return absl::OkStatus();
    });
    GE_RETURN_IF_ERROR(status);
    if (mean_out.defined()) GE_RETURN_IF_ERROR(StoreStats(means, mean_out));
    if (inv_out.defined()) GE_RETURN_IF_ERROR(StoreStats(invs, inv_out));
    return absl::OkStatus();
  }

 private:
  // Input `i` broadcast to `shape` as doubles; `fill` when absent.
  absl::StatusOr<std::vector<double>> Expanded(ExecuteContext& ctx, int i, const Shape& shape,
                                               double fill) const {
    const int64_t n = shape.NumElementsUnchecked();
    if (!ctx.has_input(i)) return std::vector<double>(n, fill);
    const Tensor& t = ctx.input(i);
    GE_ASSIGN_OR_RETURN(Tensor as_double, ConvertTensor(t, DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor full, Tensor::Allocate(DataType::kDouble, shape));
    if (!ops::CheckUnidirectionalBroadcast(t.shape(), shape).ok()) {
      return NodeError(op_, "input ", i, " ", t.shape().ToString(),
                       " does not broadcast to the normalized shape ", shape.ToString());
    }
    GE_RETURN_IF_ERROR(BroadcastCopy(op_, as_double, full, 1));
    return std::vector<double>(full.data<double>(), full.data<double>() + n);
  }

  absl::Status StoreStats(const std::vector<double>& values, const Tensor& out) const {
    if (out.NumElements() != static_cast<int64_t>(values.size())) {
      return NodeError(op_, "statistics output ", out.shape().ToString(), " must have ",
                       values.size(), " elements");
    }
    GE_ASSIGN_OR_RETURN(Tensor src,
                        Tensor::Allocate(DataType::kDouble, Shape{static_cast<int64_t>(values.size())}));
    std::copy(values.begin(), values.end(), src.data<double>());
    return ConvertInto(src, out);
  }

  ir::OpDesc op_;
  int64_t axis_;
  double epsilon_;
};

// ---- Dropout (inference) ----

// y[n,c,...] = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], the
// moments taken over each (n, c) plane.
class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(const ir::OpDesc& op) : op_(op), epsilon_(FloatAttr(op, "epsilon", 1e-5f)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    if (xs.rank() < 2) return NodeError(op_, "input must have rank >= 2 (N, C, ...), got ", xs.ToString());
    const int64_t n = xs.dim(0), c = xs.dim(1);
    const int64_t plane = DimProduct(xs.span(), 2, xs.rank());
    const Tensor& scale = ctx.input(1);
    const Tensor& bias = ctx.input(2);
    if (scale.NumElements() != c || bias.NumElements() != c) {
      return NodeError(op_, "scale ", scale.shape().ToString(), " and B ", bias.shape().ToString(), " need ", c,
                       " values (the channels of ", xs.ToString(), ")");
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, xs));
    return DispatchType<FloatTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ParallelFor(ctx.num_threads(), n * c, plane * 4, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const T* src = px + p * plane;
          double mean = 0, var = 0;
          for (int64_t i = 0; i < plane; ++i) mean += static_cast<double>(Widen(src[i]));
          mean = plane > 0 ? mean / static_cast<double>(plane) : 0.0;
          for (int64_t i = 0; i < plane; ++i) {
            const double d = static_cast<double>(Widen(src[i])) - mean;
            var += d * d;
          }
          var = plane > 0 ? var / static_cast<double>(plane) : 0.0;
          const double inv = 1.0 / std::sqrt(var + epsilon_);
          const double s = scale.GetAsDouble(p % c), b = bias.GetAsDouble(p % c);
          for (int64_t i = 0; i < plane; ++i) {
            py[p * plane + i] = StoreAs<T>((static_cast<double>(Widen(src[i])) - mean) * inv * s + b);
          }
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  float epsilon_;
};

// y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta;
// the window of channel c is [c - floor((size-1)/2), c + ceil((size-1)/2)].
class LrnKernel final : public Kernel {
 public:
  explicit LrnKernel(const ir::OpDesc& op)
      : op_(op),
        alpha_(FloatAttr(op, "alpha", 1e-4f)),
        beta_(FloatAttr(op, "beta", 0.75f)),
        bias_(FloatAttr(op, "bias", 1.0f)),
        size_(IntAttr(op, "size", 0)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    if (xs.rank() < 2) return NodeError(op_, "input must have rank >= 2 (N, C, ...), got ", xs.ToString());
    if (size_ < 1) return NodeError(op_, "size must be positive, got ", size_);
    const int64_t n = xs.dim(0), c = xs.dim(1);
    const int64_t plane = DimProduct(xs.span(), 2, xs.rank());
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, xs));
    return DispatchType<FloatTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t lo = std::max<int64_t>(0, ch - before), hi = std::min<int64_t>(c - 1, ch + after);
          for (int64_t i = 0; i < plane; ++i) {
            double square_sum = 0;
            for (int64_t k = lo; k <= hi; ++k) {
              const double v = static_cast<double>(Widen(px[(b * c + k) * plane + i]));
              square_sum += v * v;
            }
            const int64_t at = (b * c + ch) * plane + i;
            const double denom = std::pow(bias_ + alpha_ / static_cast<double>(size_) * square_sum, beta_);
            py[at] = StoreAs<T>(static_cast<double>(Widen(px[at])) / denom);
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  float alpha_, beta_, bias_;
  int64_t size_;
};

class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const bool training = ctx.has_input(2) && ctx.input(2).NumElements() > 0 &&
                          ctx.input(2).GetAsInt64(0) != 0;
    const double ratio = ctx.has_input(1) && ctx.input(1).NumElements() > 0
                             ? ctx.input(1).GetAsDouble(0)
                             : 0.5;
    if (training && ratio != 0.0) {
      return NodeUnimplemented(op_, "training_mode=true with ratio ", ratio,
                               " is not supported on host_cpu (inference only)");
    }
    GE_RETURN_IF_ERROR(ctx.SetOutputValue(0, Value(x)));
    if (ctx.num_outputs() > 1) {
      GE_ASSIGN_OR_RETURN(Tensor mask, ctx.Output(1, x.shape()));
      std::fill(mask.data<bool>(), mask.data<bool>() + mask.NumElements(), true);
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

template <typename K>
KernelCreateFn Simple() {
  return [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new K(op));
  };
}

}  // namespace

void RegisterNnKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(FloatTypes{});
  table.Add({"BatchNormalization", [](const ir::OpDesc& op) { return BatchNormKernel::Create(op); },
             {floats}, {floats}});
  table.Add({"Softmax", Simple<SoftmaxKernel<SoftmaxKind::kSoftmax>>(), {floats}, {floats}});
  table.Add({"LogSoftmax", Simple<SoftmaxKernel<SoftmaxKind::kLogSoftmax>>(), {floats}, {floats}});
  table.Add({"Hardmax", Simple<SoftmaxKernel<SoftmaxKind::kHardmax>>(), {floats}, {floats}});
  table.Add({"LayerNormalization", Simple<LayerNormKernel>(), {floats},
             {floats, DataTypeSet{DataType::kFloat, DataType::kBFloat16}}});
  table.Add({"InstanceNormalization", Simple<InstanceNormKernel>(), {floats, floats, floats}, {floats}});
  table.Add({"LRN", Simple<LrnKernel>(), {floats}, {floats}});
  table.Add({"Dropout", Simple<DropoutKernel>(), {floats, floats, DataTypeSet{DataType::kBool}},
             {floats, DataTypeSet{DataType::kBool}}});
}

}  // namespace ge::engine::host_cpu
