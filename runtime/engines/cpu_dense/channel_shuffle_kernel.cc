// `_ChannelShuffle` on cpu_dense (channel_shuffle.h): f32 and bf16, plain
// and channels-last ports.
//
// Plain [N, C, S]: each output channel plane is a copy of its source
// channel's plane. Channels-last [N, S, C]: each position's output row of
// `count` channels gathers its source channels from the input row of C
// (the shuffle of two groups interleaves the halves of the row). Rows (or
// planes) split across the OpenMP team above a size.
#include <emmintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/channel_shuffle.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

bool IsPlainFormat(ir::Format f) { return f == ir::Format::kND || f == ir::Format::kNCHW || f == ir::Format::kNCDHW; }

class ChannelShuffleKernel final : public DenseKernel {
 public:
  ChannelShuffleKernel(const ir::OpDesc& op, const DenseContext& ctx)
      : DenseKernel(op, ctx),
        group_(sdk::IntAttr(op, "group", 0)),
        begin_(sdk::IntAttr(op, "begin", 0)),
        count_(sdk::IntAttr(op, "count", -1)),
        channels_last_(IsChannelsLast(op.input(0).type.tensor().format)) {}

 private:
  struct ShufflePlan final : Plan {
    std::vector<int64_t> sources;
    int64_t channels = 0, outer = 0, inner = 0;  // C, N, spatial positions
    int64_t group = 0, begin = 0;
  };

  // Output channels [begin, begin + n) of a two-group shuffle of the row
  // `from` of c channels: shuffled channel 2k is from[k], 2k + 1 is
  // from[c / 2 + k], so the row interleaves two runs (SSE2 unpacks; the
  // scalar table walk took 0.35 ns an element, 8 % of a shufflenet run).
  static void Interleave2(const float* from, float* to, int64_t c, int64_t begin, int64_t n) {
    const float* a = from + (begin + 1) / 2;
    const float* b = from + c / 2 + begin / 2;
    int64_t j = 0;
    if (begin % 2 == 1 && n > 0) to[j++] = *b++;  // an odd start begins with the second run
    const int64_t pairs = (n - j) / 2;
    int64_t k = 0;
    for (; k + 4 <= pairs; k += 4) {
      const __m128 va = _mm_loadu_ps(a + k), vb = _mm_loadu_ps(b + k);
      _mm_storeu_ps(to + j + 2 * k, _mm_unpacklo_ps(va, vb));
      _mm_storeu_ps(to + j + 2 * k + 4, _mm_unpackhi_ps(va, vb));
    }
    for (; k < pairs; ++k) {
      to[j + 2 * k] = a[k];
      to[j + 2 * k + 1] = b[k];
    }
    if (j + 2 * pairs < n) to[n - 1] = a[pairs];
  }

  // Below this many bytes the copy stays on the calling thread.
  static constexpr size_t kParallelBytes = size_t{64} << 10;

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    if (x.rank() < 2) return NodeError(op(), "input ", x.ToString(), " has no channel axis");
    const int64_t c = x.dim(1);
    const int64_t count = count_ < 0 ? c - begin_ : count_;
    if (group_ < 1 || c % group_ != 0 || begin_ < 0 || count < 0 || begin_ + count > c) {
      return NodeError(op(), "channels [", begin_, ", ", begin_ + count, ") of ", c, " in ", group_, " groups");
    }
    auto plan = std::make_unique<ShufflePlan>();
    plan->sources = ShuffleSources(c, group_, begin_, count);
    plan->channels = c;
    plan->group = group_;
    plan->begin = begin_;
    plan->outer = x.dim(0);
    plan->inner = 1;
    for (int64_t d = 2; d < x.rank(); ++d) plan->inner *= x.dim(d);
    return plan;
  }

  template <typename T>
  static void Gather(const ShufflePlan& plan, bool channels_last, const T* src, T* dst) {
    const int64_t c = plan.channels, n = static_cast<int64_t>(plan.sources.size());
    const int64_t* sources = plan.sources.data();
    const int64_t units = channels_last ? plan.outer * plan.inner : plan.outer * n;
    const size_t bytes = static_cast<size_t>(plan.outer * plan.inner * n) * sizeof(T);
    const int team = omp_in_parallel() != 0 || bytes < kParallelBytes ? 1 : omp_get_max_threads();
    if (channels_last && sizeof(T) == 4 && plan.group == 2) {
      const int64_t begin = plan.begin;
#pragma omp parallel for num_threads(team) schedule(static)
      for (int64_t p = 0; p < units; ++p) {
        Interleave2(reinterpret_cast<const float*>(src + p * c), reinterpret_cast<float*>(dst + p * n), c, begin, n);
      }
      return;
    }
    if (channels_last) {
      // One output row of n channels per position.
#pragma omp parallel for num_threads(team) schedule(static)
      for (int64_t p = 0; p < units; ++p) {
        const T* from = src + p * c;
        T* to = dst + p * n;
        for (int64_t j = 0; j < n; ++j) to[j] = from[sources[j]];
      }
      return;
    }
    // One output plane per (image, channel).
    const int64_t inner = plan.inner;
#pragma omp parallel for num_threads(team) schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t image = u / n, j = u % n;
      std::memcpy(dst + u * inner, src + (image * c + sources[j]) * inner, static_cast<size_t>(inner) * sizeof(T));
    }
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& /*scratch*/) override {
    auto& plan = static_cast<ShufflePlan&>(base_plan);
    const Tensor& x = ctx.input(0);
    Shape out = x.shape();
    out.set_dim(1, static_cast<int64_t>(plan.sources.size()));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    if (out.NumElementsUnchecked() == 0) return absl::OkStatus();
    if (DataTypeSize(x.dtype()) == 4) {
      Gather(plan, channels_last_, static_cast<const uint32_t*>(x.raw_data()), static_cast<uint32_t*>(y.raw_data()));
    } else {
      Gather(plan, channels_last_, static_cast<const uint16_t*>(x.raw_data()), static_cast<uint16_t*>(y.raw_data()));
    }
    return absl::OkStatus();
  }

  int64_t group_, begin_, count_;
  bool channels_last_;
};

absl::Status CheckChannelShuffle(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (op.num_inputs() != 1 || op.num_outputs() != 1) return Unsupported(op, "not one input and one output");
  if (sdk::IntAttr(op, "group", 0) < 1) return Unsupported(op, "no positive group");
  const ir::Format in = op.input(0).type.tensor().format, out = op.output(0).type.tensor().format;
  // Both ports plain, or both channels-last.
  if (!(IsPlainFormat(in) && IsPlainFormat(out)) && !(IsChannelsLast(in) && in == out)) {
    return Unsupported(op, "layouts ", ir::FormatName(in), " -> ", ir::FormatName(out));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterChannelShuffleKernels(DenseKernelTable& table) {
  table.Add({std::string(kChannelShuffleOp),
             {DataType::kFloat, DataType::kBFloat16},
             CheckChannelShuffle,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ChannelShuffleKernel(op, ctx));
             }});
}

}  // namespace ge::engine::cpu_dense
