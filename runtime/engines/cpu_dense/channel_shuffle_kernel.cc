// `_ChannelShuffle` on cpu_dense (channel_shuffle.h): f32 and bf16, plain
// and channels-last ports, one input or the parts of a channel Concat.
//
// Plain [N, C, S]: each output channel plane is a copy of its source
// channel's plane. Channels-last [N, S, C]: each position's output row of
// `count` channels gathers its source channels from the input rows (the
// shuffle of two groups interleaves two runs, each within one input: in
// ShuffleNet's join of two halves, one run per half; a channel slice copies
// one run of each row). Rows (or planes) split
// across the OpenMP team above a size.
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
    // Per output channel: the input and its channel there.
    std::vector<int> source_input;
    std::vector<int64_t> source_channel;
    std::vector<int64_t> input_channels;
    int64_t outer = 0, inner = 0;  // N, spatial positions
    // Two groups, f32, channels-last, each run within one input: output
    // channels interleave run `a` (input a_input from channel a_at) and run
    // `b`, starting with b when `odd_start`.
    bool interleave = false, odd_start = false;
    int a_input = 0, b_input = 0;
    int64_t a_at = 0, b_at = 0;
    // Every output channel from one input, in order from channel `run_at`
    // (one group: a channel slice): a row is one copy.
    bool run = false;
    int64_t run_at = 0;
  };

  // Below this many bytes the copy stays on the calling thread.
  static constexpr size_t kParallelBytes = size_t{64} << 10;

  // n output channels alternating between the runs a and b (b first when
  // `odd_start`), with SSE2 unpacks: the scalar table walk took 0.35 ns an
  // element, 8 % of a shufflenet_v2_x0_5 run.
  static void Interleave2(const float* a, const float* b, float* to, bool odd_start, int64_t n) {
    int64_t j = 0;
    if (odd_start && n > 0) to[j++] = *b++;
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

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const int inputs = static_cast<int>(r.input_types.size());
    if (inputs < 1) return NodeError(op(), "no inputs");
    const Shape& x = r.shape(0);
    if (x.rank() < 2) return NodeError(op(), "input ", x.ToString(), " has no channel axis");
    auto plan = std::make_unique<ShufflePlan>();
    std::vector<int64_t> offsets;  // of each input's channels in the join
    int64_t c = 0;
    for (int i = 0; i < inputs; ++i) {
      const Shape& s = r.shape(i);
      if (!r.has_input(i) || r.dtype(i) != r.dtype(0) || s.rank() != x.rank()) {
        return NodeError(op(), "input ", i, " differs from input 0");
      }
      for (int64_t d = 0; d < s.rank(); ++d) {
        if (d != 1 && s.dim(d) != x.dim(d)) return NodeError(op(), "input ", i, " ", s.ToString(), " off the channels");
      }
      offsets.push_back(c);
      plan->input_channels.push_back(s.dim(1));
      c += s.dim(1);
    }
    const int64_t count = count_ < 0 ? c - begin_ : count_;
    if (group_ < 1 || c % group_ != 0 || begin_ < 0 || count < 0 || begin_ + count > c) {
      return NodeError(op(), "channels [", begin_, ", ", begin_ + count, ") of ", c, " in ", group_, " groups");
    }
    // The input holding joined channel s.
    auto input_of = [&](int64_t s) {
      int k = 0;
      while (k + 1 < inputs && s >= offsets[k + 1]) ++k;
      return k;
    };
    for (int64_t s : ShuffleSources(c, group_, begin_, count)) {
      const int k = input_of(s);
      plan->source_input.push_back(k);
      plan->source_channel.push_back(s - offsets[k]);
    }
    plan->run = !plan->source_channel.empty();
    for (size_t j = 0; j < plan->source_channel.size() && plan->run; ++j) {
      plan->run = plan->source_input[j] == plan->source_input[0] &&
                  plan->source_channel[j] == plan->source_channel[0] + static_cast<int64_t>(j);
    }
    plan->run_at = plan->run ? plan->source_channel[0] : 0;
    plan->outer = x.dim(0);
    plan->inner = 1;
    for (int64_t d = 2; d < x.rank(); ++d) plan->inner *= x.dim(d);
    if (group_ == 2 && channels_last_ && r.dtype(0) == DataType::kFloat && count > 0) {
      // Run a: the even shuffled channels from begin, joined channels
      // (begin + 1) / 2 on; run b: the odd ones, c / 2 + begin / 2 on.
      const int64_t na = (count + 1 - begin_ % 2) / 2, nb = count - na;
      const int64_t a0 = (begin_ + 1) / 2, b0 = c / 2 + begin_ / 2;
      auto within = [&](int64_t s, int64_t len) { return len <= 0 || input_of(s) == input_of(s + len - 1); };
      if (within(a0, na) && within(b0, nb)) {
        plan->interleave = true;
        plan->odd_start = begin_ % 2 == 1;
        plan->a_input = input_of(a0);
        plan->b_input = input_of(b0);
        plan->a_at = a0 - offsets[plan->a_input];
        plan->b_at = b0 - offsets[plan->b_input];
      }
    }
    return plan;
  }

  template <typename T>
  static void Gather(const ShufflePlan& plan, bool channels_last, const std::vector<const T*>& src, T* dst) {
    const int64_t n = static_cast<int64_t>(plan.source_channel.size());
    const int* inputs = plan.source_input.data();
    const int64_t* channels = plan.source_channel.data();
    const int64_t* widths = plan.input_channels.data();
    const T* const* from = src.data();
    const int64_t units = channels_last ? plan.outer * plan.inner : plan.outer * n;
    const size_t bytes = static_cast<size_t>(plan.outer * plan.inner * n) * sizeof(T);
    const int team = omp_in_parallel() != 0 || bytes < kParallelBytes ? 1 : omp_get_max_threads();
    if (channels_last && plan.interleave) {
      const int64_t wa = widths[plan.a_input], wb = widths[plan.b_input];
      const float* a = reinterpret_cast<const float*>(from[plan.a_input]) + plan.a_at;
      const float* b = reinterpret_cast<const float*>(from[plan.b_input]) + plan.b_at;
      const bool odd = plan.odd_start;
#pragma omp parallel for num_threads(team) schedule(static)
      for (int64_t p = 0; p < units; ++p) {
        Interleave2(a + p * wa, b + p * wb, reinterpret_cast<float*>(dst + p * n), odd, n);
      }
      return;
    }
    if (channels_last && plan.run) {
      // One copy of n channels per position.
      const int k = inputs[0];
      const T* src_k = from[k] + plan.run_at;
      const int64_t width = widths[k];
#pragma omp parallel for num_threads(team) schedule(static)
      for (int64_t p = 0; p < units; ++p) {
        std::memcpy(dst + p * n, src_k + p * width, static_cast<size_t>(n) * sizeof(T));
      }
      return;
    }
    if (channels_last) {
      // One output row of n channels per position.
#pragma omp parallel for num_threads(team) schedule(static)
      for (int64_t p = 0; p < units; ++p) {
        T* to = dst + p * n;
        for (int64_t j = 0; j < n; ++j) to[j] = from[inputs[j]][p * widths[inputs[j]] + channels[j]];
      }
      return;
    }
    // One output plane per (image, channel).
    const int64_t inner = plan.inner;
#pragma omp parallel for num_threads(team) schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t image = u / n, j = u % n, k = inputs[j];
      std::memcpy(dst + u * inner, from[k] + (image * widths[k] + channels[j]) * inner,
                  static_cast<size_t>(inner) * sizeof(T));
    }
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& /*scratch*/) override {
    auto& plan = static_cast<ShufflePlan&>(base_plan);
    Shape out = ctx.input(0).shape();
    out.set_dim(1, static_cast<int64_t>(plan.source_channel.size()));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    if (out.NumElementsUnchecked() == 0) return absl::OkStatus();
    const size_t inputs = plan.input_channels.size();
    if (DataTypeSize(ctx.input(0).dtype()) == 4) {
      std::vector<const uint32_t*> src;
      for (size_t i = 0; i < inputs; ++i) src.push_back(static_cast<const uint32_t*>(ctx.input(i).raw_data()));
      Gather(plan, channels_last_, src, static_cast<uint32_t*>(y.raw_data()));
    } else {
      std::vector<const uint16_t*> src;
      for (size_t i = 0; i < inputs; ++i) src.push_back(static_cast<const uint16_t*>(ctx.input(i).raw_data()));
      Gather(plan, channels_last_, src, static_cast<uint16_t*>(y.raw_data()));
    }
    return absl::OkStatus();
  }

  int64_t group_, begin_, count_;
  bool channels_last_;
};

absl::Status CheckChannelShuffle(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (op.num_inputs() < 1 || op.num_outputs() != 1) return Unsupported(op, "no input or not one output");
  if (sdk::IntAttr(op, "group", 0) < 1) return Unsupported(op, "no positive group");
  const ir::Format in = op.input(0).type.tensor().format, out = op.output(0).type.tensor().format;
  // Every port plain, or every port in one channels-last layout.
  const bool plain = IsPlainFormat(in) && IsPlainFormat(out);
  if (!plain && !(IsChannelsLast(in) && in == out)) {
    return Unsupported(op, "layouts ", ir::FormatName(in), " -> ", ir::FormatName(out));
  }
  for (int i = 1; i < op.num_inputs(); ++i) {
    const ir::Format f = op.input(i).type.tensor().format;
    if (plain ? !IsPlainFormat(f) : f != in) return Unsupported(op, "inputs in different layouts");
    if (InputDtype(op, i) != DataType::kUndefined && InputDtype(op, i) != InputDtype(op, 0)) {
      return Unsupported(op, "inputs of different dtypes");
    }
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
