// InstanceNormalization on cpu_dense: f32 tensors of rank 3 to 5, in plain
// layouts and in the channel-blocked layouts of the layout pass (nChw8c /
// nChw16c), with a ReLU fused after the engine partition (`_fused_relu`,
// norm_relu_fusion.h).
//
//   y[n, c, s] = scale[c] * (x[n, c, s] - mean[n, c]) / sqrt(var[n, c] + epsilon) + B[c]
//
// oneDNN 2.6 has no instance normalization, and its layer normalization
// scales per normalized element, not per channel. Each (n, c) plane is
// normalized on its own: its mean, then the mean of squared deviations
// (two passes; float partial sums in 16 lanes flushed into doubles), then
// one pass writing (x - mean) * a + b. In a blocked layout the B channels of a block are B
// interleaved planes: one walk over the block computes B lanes at once.
// Planes (blocks) split across the OpenMP team.
//
// A style-transfer network normalizes after every convolution: on host_cpu
// each InstanceNormalization also cost two layout conversions.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/norm_relu_fusion.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

int64_t BlockOf(ir::Format f) { return f == ir::Format::kNChw16c ? 16 : f == ir::Format::kNChw8c ? 8 : 1; }

constexpr int kVector = 16;  // accumulators per sum: a multiple of every lane count (1, 8, 16)

// Adds the sums of x[0, count) (count a multiple of `lanes`) to `totals`
// by lane (index % lanes): of the values when `square` is false, else of
// the squared deviations from center[v] (center[v] = the mean of lane
// v % lanes). kVector float accumulators, flushed into the double totals
// every 1024 steps, so the loops vectorize without losing precision.
void LaneSums(const float* x, int64_t count, int lanes, const float* center, bool square, double* totals) {
  constexpr int64_t kFlush = 1024 * kVector;
  const int64_t whole = count - count % kVector;
  for (int64_t i = 0; i < whole;) {
    float acc[kVector] = {};
    const int64_t end = std::min(whole, i + kFlush);
    if (square) {
      for (; i < end; i += kVector) {
        for (int v = 0; v < kVector; ++v) {
          const float d = x[i + v] - center[v];
          acc[v] += d * d;
        }
      }
    } else {
      for (; i < end; i += kVector) {
        for (int v = 0; v < kVector; ++v) acc[v] += x[i + v];
      }
    }
    for (int v = 0; v < kVector; ++v) totals[v % lanes] += acc[v];
  }
  for (int64_t i = whole; i < count; ++i) {
    const float d = square ? x[i] - center[i % kVector] : x[i];
    totals[i % lanes] += square ? static_cast<double>(d) * d : d;
  }
}

// Normalizes kLanes interleaved planes of `size` elements (lane l of
// position s at x[s * kLanes + l]) with per-lane scale and shift.
template <int kLanes>
void NormalizePlanes(const float* x, float* y, int64_t size, const float* scale, const float* shift, float epsilon,
                     bool relu) {
  const int64_t count = size * kLanes;
  double sum[kLanes] = {}, dev[kLanes] = {};
  float center[kVector] = {};
  LaneSums(x, count, kLanes, center, false, sum);
  double mean[kLanes];
  for (int l = 0; l < kLanes; ++l) mean[l] = sum[l] / static_cast<double>(size);
  for (int v = 0; v < kVector; ++v) center[v] = static_cast<float>(mean[v % kLanes]);
  LaneSums(x, count, kLanes, center, true, dev);
  // (x - mean) * a + shift: subtracting first keeps a tiny variance's large
  // a from cancelling two large products.
  float m[kLanes], a[kLanes], b[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    const double inv = 1.0 / std::sqrt(dev[l] / static_cast<double>(size) + static_cast<double>(epsilon));
    m[l] = center[l];
    a[l] = static_cast<float>(scale[l] * inv);
    b[l] = shift[l];
  }
  // The write pass in kVector-wide steps with per-step constants and the
  // ReLU decided outside the loop, so that it vectorizes (per element a
  // loop over the lanes stayed scalar: 17 % of RAFT's run).
  float mv[kVector], av[kVector], bv[kVector];
  for (int v = 0; v < kVector; ++v) {
    mv[v] = m[v % kLanes];
    av[v] = a[v % kLanes];
    bv[v] = b[v % kLanes];
  }
  const int64_t whole = count - count % kVector;
  const auto write = [&](auto relu_tag) {
    constexpr bool kRelu = decltype(relu_tag)::value;
    for (int64_t i = 0; i < whole; i += kVector) {
      for (int v = 0; v < kVector; ++v) {
        const float r = (x[i + v] - mv[v]) * av[v] + bv[v];
        y[i + v] = kRelu ? std::max(r, 0.0f) : r;
      }
    }
    for (int64_t i = whole; i < count; ++i) {
      const float r = (x[i] - mv[i % kVector]) * av[i % kVector] + bv[i % kVector];
      y[i] = kRelu ? std::max(r, 0.0f) : r;
    }
  };
  if (relu) {
    write(std::true_type{});
  } else {
    write(std::false_type{});
  }
}

class InstanceNormKernel final : public DenseKernel {
 public:
  InstanceNormKernel(const ir::OpDesc& op, const DenseContext& ctx)
      : DenseKernel(op, ctx),
        format_(op.num_inputs() > 0 ? op.input(0).type.tensor().format : ir::Format::kND),
        epsilon_(sdk::FloatAttr(op, "epsilon", 1e-5f)),
        relu_(op.GetAttrOr<int64_t>(kAttrFusedRelu, 0) != 0) {}

 private:
  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    // A node with a fused ReLU must not fall back to the reference kernel
    // (which would drop the ReLU): its refusals are errors.
    if (x.rank() < 3 || x.rank() > 5) {
      if (relu_) return NodeError(op(), "with a fused ReLU: input rank ", x.rank());
      return NodeUnimplemented(op(), "input rank ", x.rank());
    }
    for (int i = 1; i < 3; ++i) {
      if (!r.has_input(i) || r.dtype(i) != DataType::kFloat || r.shape(i).rank() != 1 ||
          r.shape(i).dim(0) != x.dim(1)) {
        return NodeError(op(), "input ", i, " must be an f32 vector of the ", x.dim(1), " channels");
      }
    }
    if (format_ != ir::Format::kND && format_ != ir::Format::kNCHW && format_ != ir::Format::kNCDHW &&
        BlockOf(format_) == 1) {
      return NodeError(op(), "layout ", ir::FormatName(format_), " (plain or channel-blocked only)");
    }
    if (BlockOf(format_) > 1 && x.dim(1) % BlockOf(format_) != 0) {
      return NodeError(op(), "input ", x.ToString(), " does not fill ", ir::FormatName(format_), " blocks");
    }
    return std::make_unique<Plan>();
  }

  absl::Status Run(Plan& /*plan*/, ExecuteContext& ctx, Scratch& /*scratch*/) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, xs));
    const int64_t n = xs.dim(0), c = xs.dim(1);
    int64_t size = 1;
    for (int64_t d = 2; d < xs.rank(); ++d) size *= xs.dim(d);
    if (n * c * size == 0) return absl::OkStatus();
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const float* scale = ctx.input(1).data<float>();
    const float* shift = ctx.input(2).data<float>();
    const int64_t block = BlockOf(format_);
    const int64_t groups = n * (c / block);  // planes, or blocks of `block` planes
    const float epsilon = epsilon_;
    const bool relu = relu_;
#pragma omp parallel for schedule(static) if (groups > 1 && n * c * size >= 16384)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t channel = (g % (c / block)) * block;
      const float* xp = src + g * size * block;
      float* yp = dst + g * size * block;
      if (block == 8) {
        NormalizePlanes<8>(xp, yp, size, scale + channel, shift + channel, epsilon, relu);
      } else if (block == 16) {
        NormalizePlanes<16>(xp, yp, size, scale + channel, shift + channel, epsilon, relu);
      } else {
        NormalizePlanes<1>(xp, yp, size, scale + channel, shift + channel, epsilon, relu);
      }
    }
    return absl::OkStatus();
  }

  ir::Format format_;
  float epsilon_;
  bool relu_;
};

absl::Status CheckInstanceNorm(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (op.num_inputs() != 3) return Unsupported(op, op.num_inputs(), " inputs (three only)");
  for (int i = 1; i < 3; ++i) {
    const DataType d = InputDtype(op, i);
    if (d != DataType::kUndefined && d != DataType::kFloat) {
      return Unsupported(op, "input ", i, " of dtype ", DataTypeName(d), " (f32 only)");
    }
  }
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && (x.rank() < 3 || x.rank() > 5)) return Unsupported(op, "rank ", x.rank(), " (3 to 5)");
  return absl::OkStatus();
}

}  // namespace

void RegisterInstanceNormKernels(DenseKernelTable& table) {
  table.Add({"InstanceNormalization",
             {DataType::kFloat},
             CheckInstanceNorm,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new InstanceNormKernel(op, ctx));
             }});
}

}  // namespace ge::engine::cpu_dense
