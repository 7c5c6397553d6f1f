// DFT-17, STFT-17 and MelWeightMatrix-17.
//
// The transforms run FftPlan (fft.h) in double: radix-2 for power-of-two
// lengths, Bluestein's chirp-z for the others, O(n log n) per signal (the
// inverse divides by N). The kernels refuse work above 2^34 butterfly
// multiply-adds (ResourceExhausted) rather than run for minutes on a hostile
// dft_length; sizes pass CheckGeneratedSize before allocating.
//
// MelWeightMatrix follows ONNX's reference: num_mel_bins + 2 points evenly
// spaced on the mel scale (2595 log10(1 + hz / 700)) between the edges, in
// float as the reference computes them, mapped to the FFT bins
// floor((dft_length + 1) * hz / sample_rate), and a triangle per mel bin.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "base/ops/size_limits.h"
#include "runtime/engines/host_cpu/fft.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

constexpr int64_t kMaxDftWork = int64_t{1} << 34;

absl::Status CheckDftWork(const ir::OpDesc& op, int64_t transforms, int64_t len) {
  const double work = static_cast<double>(transforms) * FftPlan::Work(len);
  if (work > static_cast<double>(kMaxDftWork)) {
    return absl::ResourceExhaustedError(StrCat("node '", op.name(), "' (", op.type(), "): ", transforms,
                                               " transforms of length ", len, " need about ", work,
                                               " multiply-adds, above host_cpu's bound of 2^34"));
  }
  return absl::OkStatus();
}

// One signal through `plan` (length len): in_len (<= len) complex values
// (re, im; im null for a real signal) read with a stride, zero-padded to len;
// the first out_len results, times `scale`, written as (re, im) pairs with a
// stride. buffer: 2 * len doubles; scratch: plan.scratch_doubles().
void Dft(const FftPlan& plan, const double* re, const double* im, int64_t in_stride, int64_t in_len, int64_t out_len,
         double scale, double* out, int64_t out_stride, double* buffer, double* scratch) {
  const int64_t len = plan.size();
  for (int64_t n = 0; n < in_len; ++n) {
    buffer[2 * n] = re[n * in_stride];
    buffer[2 * n + 1] = im != nullptr ? im[n * in_stride] : 0.0;
  }
  std::fill(buffer + 2 * in_len, buffer + 2 * len, 0.0);
  plan.Transform(buffer, scratch);
  for (int64_t k = 0; k < out_len; ++k) {
    out[k * out_stride] = buffer[2 * k] * scale;
    out[k * out_stride + 1] = buffer[2 * k + 1] * scale;
  }
}

class DftKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    auto k = std::unique_ptr<DftKernel>(new DftKernel(op));
    k->axis_ = IntAttr(op, "axis", 1);
    k->inverse_ = IntAttr(op, "inverse", 0) != 0;
    k->onesided_ = IntAttr(op, "onesided", 0) != 0;
    if (k->inverse_ && k->onesided_) return NodeError(op, "onesided and inverse together are not supported");
    return std::unique_ptr<Kernel>(std::move(k));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    const int64_t rank = xs.rank();
    if (rank < 3 || (xs.dim(rank - 1) != 1 && xs.dim(rank - 1) != 2)) {
      return NodeError(op_, "input ", xs.ToString(), " must be [batch, signal dims..., 1 or 2]");
    }
    GE_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxisFor(op_, axis_, rank));
    if (axis == 0 || axis == rank - 1) return NodeError(op_, "axis ", axis_, " must name a signal dim");
    const bool complex = xs.dim(rank - 1) == 2;
    if (onesided_ && complex) return NodeError(op_, "onesided needs a real input");
    int64_t len = xs.dim(axis);
    if (ctx.has_input(1) && ctx.input(1).NumElements() > 0) {
      if (ctx.input(1).NumElements() != 1) return NodeError(op_, "dft_length must be a scalar");
      len = ctx.input(1).GetAsInt64(0);
      if (len < 1) return NodeError(op_, "dft_length must be positive, got ", len);
    }
    const int64_t out_len = onesided_ ? len / 2 + 1 : len;
    Shape out = xs;
    out.set_dim(axis, out_len);
    out.set_dim(rank - 1, 2);
    GE_RETURN_IF_ERROR(ops::CheckGeneratedSize(StrCat("node '", op_.name(), "' (DFT): output"), out.span()));
    const int64_t outer = DimProduct(xs.span(), 0, static_cast<size_t>(axis));
    const int64_t inner = DimProduct(xs.span(), static_cast<size_t>(axis) + 1, static_cast<size_t>(rank) - 1);
    const int64_t in_len = std::min(len, xs.dim(axis));
    GE_RETURN_IF_ERROR(CheckDftWork(op_, outer * inner, len));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(x, DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor yd, Tensor::Allocate(DataType::kDouble, out));
    const double* px = xd.data<double>();
    double* py = yd.data<double>();
    const int64_t channels = complex ? 2 : 1;
    const int64_t dim = xs.dim(axis);
    const FftPlan plan(len, inverse_);
    const double scale = inverse_ ? 1.0 / static_cast<double>(len) : 1.0;
    const auto cost = static_cast<int64_t>(std::min(FftPlan::Work(len), 1e12));
    ParallelFor(ctx.num_threads(), outer * inner, cost, [&](int64_t begin, int64_t end) {
      std::vector<double> buffer(static_cast<size_t>(2 * len)), scratch(static_cast<size_t>(plan.scratch_doubles()));
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / inner, i = t % inner;
        const double* src = px + (o * dim * inner + i) * channels;
        double* dst = py + (o * out_len * inner + i) * 2;
        Dft(plan, src, complex ? src + 1 : nullptr, inner * channels, in_len, out_len, scale, dst, inner * 2,
            buffer.data(), scratch.data());
      }
    });
    return ConvertInto(yd, y);
  }

 private:
  explicit DftKernel(const ir::OpDesc& op) : op_(op) {}

  ir::OpDesc op_;
  int64_t axis_ = 1;
  bool inverse_ = false, onesided_ = false;
};

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(const ir::OpDesc& op) : op_(op), onesided_(IntAttr(op, "onesided", 1) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    if (xs.rank() != 3 || (xs.dim(2) != 1 && xs.dim(2) != 2)) {
      return NodeError(op_, "signal ", xs.ToString(), " must be [batch, length, 1 or 2]");
    }
    if (ctx.input(1).NumElements() != 1) return NodeError(op_, "frame_step must be a scalar");
    const int64_t step = ctx.input(1).GetAsInt64(0);
    if (step < 1) return NodeError(op_, "frame_step must be positive, got ", step);
    const Tensor* window = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    int64_t frame = window != nullptr ? window->NumElements() : -1;
    if (ctx.has_input(3)) {
      if (ctx.input(3).NumElements() != 1) return NodeError(op_, "frame_length must be a scalar");
      const int64_t length = ctx.input(3).GetAsInt64(0);
      if (frame >= 0 && length != frame)
        return NodeError(op_, "frame_length ", length, " differs from the window's ", frame);
      frame = length;
    }
    if (frame < 1) return NodeError(op_, "frame_length must be positive (give a window or frame_length)");
    const int64_t batch = xs.dim(0), length = xs.dim(1);
    if (length < frame) return NodeError(op_, "the signal (", length, ") is shorter than a frame (", frame, ")");
    const bool complex = xs.dim(2) == 2;
    if (onesided_ && complex) return NodeError(op_, "onesided needs a real signal");
    const int64_t frames = (length - frame) / step + 1;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    const Shape out{batch, frames, bins, 2};
    GE_RETURN_IF_ERROR(ops::CheckGeneratedSize(StrCat("node '", op_.name(), "' (STFT): output"), out.span()));
    GE_RETURN_IF_ERROR(CheckDftWork(op_, batch * frames, frame));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(x, DataType::kDouble));
    std::vector<double> w(static_cast<size_t>(frame), 1.0);
    if (window != nullptr) {
      for (int64_t i = 0; i < frame; ++i) w[i] = window->GetAsDouble(i);
    }
    GE_ASSIGN_OR_RETURN(Tensor yd, Tensor::Allocate(DataType::kDouble, out));
    const double* px = xd.data<double>();
    double* py = yd.data<double>();
    const int64_t channels = complex ? 2 : 1;
    const FftPlan plan(frame, false);
    const auto cost = static_cast<int64_t>(std::min(FftPlan::Work(frame), 1e12));
    ParallelFor(ctx.num_threads(), batch * frames, cost, [&](int64_t begin, int64_t end) {
      std::vector<double> re(static_cast<size_t>(frame)), im(static_cast<size_t>(frame));
      std::vector<double> buffer(static_cast<size_t>(2 * frame)), scratch(static_cast<size_t>(plan.scratch_doubles()));
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / frames, f = t % frames;
        const double* src = px + (b * length + f * step) * channels;
        for (int64_t n = 0; n < frame; ++n) {
          re[n] = src[n * channels] * w[n];
          im[n] = complex ? src[n * channels + 1] * w[n] : 0.0;
        }
        Dft(plan, re.data(), complex ? im.data() : nullptr, 1, frame, bins, 1.0, py + t * bins * 2, 2, buffer.data(),
            scratch.data());
      }
    });
    return ConvertInto(yd, y);
  }

 private:
  ir::OpDesc op_;
  bool onesided_;
};

class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    for (int i = 0; i < 5; ++i) {
      if (ctx.input(i).NumElements() != 1) return NodeError(op_, "input ", i, " must be a scalar");
    }
    const int64_t mel_bins = ctx.input(0).GetAsInt64(0), dft_length = ctx.input(1).GetAsInt64(0);
    const int64_t sample_rate = ctx.input(2).GetAsInt64(0);
    const float lower = static_cast<float>(ctx.input(3).GetAsDouble(0));
    const float upper = static_cast<float>(ctx.input(4).GetAsDouble(0));
    if (mel_bins < 1 || dft_length < 1 || sample_rate < 1) {
      return NodeError(op_, "num_mel_bins, dft_length and sample_rate must be positive");
    }
    if (!(lower >= 0) || !(upper > lower) || !std::isfinite(upper)) {
      return NodeError(op_, "the edges must satisfy 0 <= lower_edge_hertz < upper_edge_hertz, got ", lower, " and ",
                       upper);
    }
    const int64_t spectrogram_bins = dft_length / 2 + 1;
    const Shape out{spectrogram_bins, mel_bins};
    GE_RETURN_IF_ERROR(
        ops::CheckGeneratedSize(StrCat("node '", op_.name(), "' (MelWeightMatrix): output"), out.span()));
    // The mel points as ONNX's reference computes them: the edges and the
    // step in float, the points in double.
    const float low_mel = 2595.0f * std::log10(1.0f + lower / 700.0f);
    const float high_mel = 2595.0f * std::log10(1.0f + upper / 700.0f);
    const float step = (high_mel - low_mel) / static_cast<float>(mel_bins + 2);
    std::vector<int64_t> points(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double mel = static_cast<double>(i) * static_cast<double>(step) + static_cast<double>(low_mel);
      const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
      points[i] =
          static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
      if (points[i] < 0 || points[i] >= spectrogram_bins) {
        return NodeError(op_, "mel point ", i, " falls on FFT bin ", points[i], ", outside the ", spectrogram_bins,
                         " bins (is upper_edge_hertz above sample_rate / 2?)");
      }
    }
    std::vector<double> w(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t left = points[i], center = points[i + 1], right = points[i + 2];
      if (center == left) {
        w[center * mel_bins + i] = 1;
      } else {
        for (int64_t j = left; j <= center; ++j) {
          w[j * mel_bins + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
        }
      }
      for (int64_t j = center; j < right; ++j) {
        w[j * mel_bins + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
      }
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    return ConvertInto(Tensor::FromVector<double>(w, out), y);
  }

 private:
  ir::OpDesc op_;
};

}  // namespace

void RegisterSignalKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(FloatTypes{});
  const DataTypeSet index = SetOf(IndexTypes{});
  table.Add({"DFT", &DftKernel::Create, {floats, index}, {floats}});
  table.Add({"STFT",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new StftKernel(op));
             },
             {floats, index, floats, index},
             {floats}});
  table.Add({"MelWeightMatrix",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new MelWeightMatrixKernel(op));
             },
             {index, index, index, floats, floats},
             {SetOf(NumericTypes{})}});
}

}  // namespace ge::engine::host_cpu
