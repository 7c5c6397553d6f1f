// `_GroupNorm` on cpu_dense (group_norm.h): f32 tensors of rank 3 to 5 in
// plain, channels-last (NHWC / NDHWC) or channel-blocked (nChw8c /
// nChw16c) layout, read and written in that layout.
//
// Every layout is walked as [N, C / B, S, B] (B = 1 plain, 8 or 16 blocked,
// C channels-last: channel_block.h). Two passes over X:
//   1. per-channel sums of x - k[c] and of its square, where k[c] is the
//      channel's first value in the sample (shifting keeps float partial
//      sums exact enough: a channel whose mean is far from zero does not
//      cancel); float partials over at most kFlush positions, flushed into
//      doubles. The samples' positions are split into parts so that a team
//      has work at batch 1; each (sample, part) item sums into its own
//      slice, and the parts are added in order, so the result does not
//      depend on the thread count.
//   2. per channel, from its group's mean and variance (in double),
//      a = Scale[c] / sqrt(var + epsilon), and y = (x - mean) * a + Bias[c],
//      then SiLU over each written piece while it is in L1 (the engine's
//      own exp loop, eltwise_tail.h).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/eltwise_tail.h"
#include "runtime/engines/cpu_dense/group_norm.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr int64_t kFlush = 256;   // positions per float partial sum
constexpr int64_t kPiece = 4096;  // elements written (and SiLU'd) at a time
constexpr int64_t kLanes = 16;    // accumulators of a plain plane's sums

// The geometry of one tensor: N samples of C channels at S positions, in
// blocks of B channels (the walk [N, C / B, S, B]).
struct Geometry {
  int64_t n = 0, c = 0, s = 0, b = 1;
  int64_t Offset(int64_t sample, int64_t block) const { return sample * c * s + block * s * b; }
};

// Adds, for positions [s0, s1) of one block of `lanes` channels (lane l of
// position p at x[p * lanes + l]), the sums of x - k[l] and of its square
// to sum[l] and sq[l].
void BlockSums(const float* x, int64_t s0, int64_t s1, int64_t lanes, const float* k, float* a1, float* a2, double* sum,
               double* sq) {
  for (int64_t p0 = s0; p0 < s1; p0 += kFlush) {
    const int64_t p1 = std::min(s1, p0 + kFlush);
    std::fill(a1, a1 + lanes, 0.0f);
    std::fill(a2, a2 + lanes, 0.0f);
    for (int64_t p = p0; p < p1; ++p) {
      const float* __restrict row = x + p * lanes;
      float* __restrict r1 = a1;
      float* __restrict r2 = a2;
      for (int64_t l = 0; l < lanes; ++l) {
        const float d = row[l] - k[l];
        r1[l] += d;
        r2[l] += d * d;
      }
    }
    for (int64_t l = 0; l < lanes; ++l) {
      sum[l] += a1[l];
      sq[l] += a2[l];
    }
  }
}

// The same for a plain plane's positions [s0, s1) (one channel, shift k).
void PlaneSums(const float* x, int64_t s0, int64_t s1, float k, double* sum, double* sq) {
  float a1[kLanes], a2[kLanes];
  int64_t p = s0;
  while (p + kLanes <= s1) {
    std::fill(a1, a1 + kLanes, 0.0f);
    std::fill(a2, a2 + kLanes, 0.0f);
    const int64_t end = p + std::min((s1 - p) / kLanes, kFlush) * kLanes;
    for (; p < end; p += kLanes) {
      for (int64_t l = 0; l < kLanes; ++l) {
        const float d = x[p + l] - k;
        a1[l] += d;
        a2[l] += d * d;
      }
    }
    for (int64_t l = 0; l < kLanes; ++l) {
      *sum += a1[l];
      *sq += a2[l];
    }
  }
  for (; p < s1; ++p) {
    const double d = x[p] - k;
    *sum += d;
    *sq += d * d;
  }
}

// y = (x - m[l]) * a[l] + b[l] over `rows` rows of `lanes` lanes.
void WriteRows(const float* x, float* y, int64_t rows, int64_t lanes, const float* m, const float* a, const float* b) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * lanes;
    float* __restrict yr = y + r * lanes;
    for (int64_t l = 0; l < lanes; ++l) yr[l] = (xr[l] - m[l]) * a[l] + b[l];
  }
}

void Silu(const std::vector<GemmStep>& steps, float* y, int64_t count) {
  if (!steps.empty()) {
    RunEltwiseTail(steps, y, count, 1);
    return;
  }
  for (int64_t i = 0; i < count; ++i) y[i] = y[i] / (1.0f + std::exp(-y[i]));
}

class GroupNormKernel final : public DenseKernel {
 public:
  GroupNormKernel(const ir::OpDesc& op, const DenseContext& ctx)
      : DenseKernel(op, ctx),
        format_(op.num_inputs() > 0 ? op.input(0).type.tensor().format : ir::Format::kND),
        groups_(op.GetAttrOr<int64_t>("num_groups", 0)),
        epsilon_(sdk::FloatAttr(op, "epsilon", 1e-5f)),
        silu_(op.GetAttrOr<std::string>("activation", "") == "silu") {
    if (silu_)
      silu_steps_ = SplitEltwiseTail(PostOpChain{{PostOp{PostOpKind::kSwish, 1.0f, 0.0f}}}, DataType::kFloat).steps;
  }

 private:
  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    // Refusals are errors: the op exists only on cpu_dense.
    if (x.rank() < 3 || x.rank() > 5) return NodeError(op(), "input rank ", x.rank(), " (3 to 5)");
    if (groups_ < 1 || x.dim(1) % groups_ != 0) {
      return NodeError(op(), "channels ", x.dim(1), " are not a multiple of num_groups ", groups_);
    }
    for (int i = 1; i < 3; ++i) {
      if (!r.has_input(i) || r.dtype(i) != DataType::kFloat || r.shape(i).NumElementsUnchecked() != x.dim(1)) {
        return NodeError(op(), "input ", i, " must be f32 with the ", x.dim(1), " channels' values");
      }
    }
    const int64_t block = LayoutChannelBlock(format_, x.dim(1));
    const bool known =
        format_ == ir::Format::kND || format_ == ir::Format::kNCHW || format_ == ir::Format::kNCDHW || block > 1;
    if (!known || x.dim(1) % block != 0) {
      return NodeError(op(), "input ", x.ToString(), " in layout ", ir::FormatName(format_));
    }
    return std::make_unique<Plan>();
  }

  absl::Status Run(Plan& /*plan*/, ExecuteContext& ctx, Scratch& /*scratch*/) override {
    const Tensor& xt = ctx.input(0);
    const Shape& xs = xt.shape();
    GE_ASSIGN_OR_RETURN(Tensor yt, ctx.Output(0, xs));
    Geometry g;
    g.n = xs.dim(0);
    g.c = xs.dim(1);
    g.s = 1;
    for (int64_t d = 2; d < xs.rank(); ++d) g.s *= xs.dim(d);
    g.b = LayoutChannelBlock(format_, g.c);
    if (g.n * g.c * g.s == 0) return absl::OkStatus();
    const float* x = xt.data<float>();
    float* y = yt.data<float>();
    const float* scale = ctx.input(1).data<float>();
    const float* bias = ctx.input(2).data<float>();

    // Items: (sample, part of the positions).
    const int threads = g.n * g.c * g.s >= 16384 ? std::max(1, omp_get_max_threads()) : 1;
    const int64_t parts = std::clamp<int64_t>((threads + g.n - 1) / g.n, 1, std::max<int64_t>(1, g.s / 64));
    const int64_t items = g.n * parts;
    const size_t per_item = static_cast<size_t>(2 * g.c);
    partial_.assign(static_cast<size_t>(items) * per_item, 0.0);
    shift_.resize(static_cast<size_t>(g.n * g.c));
    // The per-channel shift: the channel's value at position 0.
    for (int64_t n = 0; n < g.n; ++n) {
      for (int64_t c = 0; c < g.c; ++c) shift_[n * g.c + c] = x[g.Offset(n, c / g.b) + c % g.b];
    }
    const auto range = [&](int64_t part) { return std::make_pair(g.s * part / parts, g.s * (part + 1) / parts); };
#pragma omp parallel num_threads(threads) if (threads > 1 && items > 1)
    {
      std::vector<float> a1(static_cast<size_t>(g.b)), a2(static_cast<size_t>(g.b));
#pragma omp for schedule(static)
      for (int64_t item = 0; item < items; ++item) {
        const int64_t n = item / parts;
        const auto [s0, s1] = range(item % parts);
        double* sum = partial_.data() + item * per_item;
        double* sq = sum + g.c;
        const float* k = shift_.data() + n * g.c;
        for (int64_t cb = 0; cb < g.c / g.b; ++cb) {
          const float* xb = x + g.Offset(n, cb);
          const int64_t c0 = cb * g.b;
          if (g.b == 1) {
            PlaneSums(xb, s0, s1, k[c0], sum + c0, sq + c0);
          } else {
            BlockSums(xb, s0, s1, g.b, k + c0, a1.data(), a2.data(), sum + c0, sq + c0);
          }
        }
      }
    }
    // Per sample and channel: m (the group's mean), a, b.
    coef_.resize(static_cast<size_t>(3 * g.n * g.c));
    const int64_t per_group = g.c / groups_;
    const double count = static_cast<double>(per_group * g.s);
    for (int64_t n = 0; n < g.n; ++n) {
      float* m = coef_.data() + 3 * n * g.c;
      float* a = m + g.c;
      float* b = a + g.c;
      for (int64_t grp = 0; grp < groups_; ++grp) {
        double total = 0, total_sq = 0;
        for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c) {
          double s1 = 0, s2 = 0;
          for (int64_t part = 0; part < parts; ++part) {
            const double* sum = partial_.data() + (n * parts + part) * per_item;
            s1 += sum[c];
            s2 += sum[g.c + c];
          }
          // Sums of x and x^2 from the shifted ones.
          const double k = shift_[n * g.c + c];
          total += s1 + k * static_cast<double>(g.s);
          total_sq += s2 + 2.0 * k * s1 + k * k * static_cast<double>(g.s);
        }
        const double mean = total / count;
        const double var = std::max(0.0, total_sq / count - mean * mean);
        const double inv = 1.0 / std::sqrt(var + static_cast<double>(epsilon_));
        for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c) {
          m[c] = static_cast<float>(mean);
          a[c] = static_cast<float>(scale[c] * inv);
          b[c] = bias[c];
        }
      }
    }
    const bool silu = silu_;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && items > 1)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t n = item / parts;
      const auto [s0, s1] = range(item % parts);
      const float* m = coef_.data() + 3 * n * g.c;
      const float* a = m + g.c;
      const float* b = a + g.c;
      for (int64_t cb = 0; cb < g.c / g.b; ++cb) {
        const int64_t off = g.Offset(n, cb), c0 = cb * g.b;
        const int64_t step = std::max<int64_t>(1, kPiece / g.b);
        for (int64_t p = s0; p < s1; p += step) {
          const int64_t rows = std::min(step, s1 - p);
          if (g.b == 1) {
            // One channel: a row of `rows` positions with one m, a, b.
            const float* xr = x + off + p;
            float* yr = y + off + p;
            const float mc = m[c0], ac = a[c0], bc = b[c0];
            for (int64_t i = 0; i < rows; ++i) yr[i] = (xr[i] - mc) * ac + bc;
          } else {
            WriteRows(x + off + p * g.b, y + off + p * g.b, rows, g.b, m + c0, a + c0, b + c0);
          }
          if (silu) Silu(silu_steps_, y + off + p * g.b, rows * g.b);
        }
      }
    }
    return absl::OkStatus();
  }

  ir::Format format_;
  int64_t groups_;
  float epsilon_;
  bool silu_;
  std::vector<GemmStep> silu_steps_;  // empty: the scalar SiLU
  // Per run (a kernel's runs are serialized): partial sums, shifts, coefficients.
  std::vector<double> partial_;
  std::vector<float> shift_, coef_;
};

absl::Status CheckGroupNorm(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (op.num_inputs() != 3 || op.num_outputs() != 1) return Unsupported(op, "not three inputs and one output");
  for (int i = 1; i < 3; ++i) {
    const DataType d = InputDtype(op, i);
    if (d != DataType::kUndefined && d != DataType::kFloat) {
      return Unsupported(op, "input ", i, " of dtype ", DataTypeName(d), " (f32 only)");
    }
  }
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && (x.rank() < 3 || x.rank() > 5)) return Unsupported(op, "rank ", x.rank(), " (3 to 5)");
  const std::string act = op.GetAttrOr<std::string>("activation", "");
  if (!act.empty() && act != "silu") return Unsupported(op, "activation ", act);
  return absl::OkStatus();
}

}  // namespace

void RegisterGroupNormKernels(DenseKernelTable& table) {
  table.Add({std::string(kGroupNormOp),
             {DataType::kFloat},
             CheckGroupNorm,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new GroupNormKernel(op, ctx));
             }});
}

}  // namespace ge::engine::cpu_dense
