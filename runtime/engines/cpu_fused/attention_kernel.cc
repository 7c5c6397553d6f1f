// The `_FusedAttention` kernel: per (batch, head) item, blocks of query
// rows go through Q Kt, the scaled and masked softmax and P V while their
// scores stay in L1 (fused_loops.cc). Items split across OpenMP threads
// (sdk/parallel.h).
#include <algorithm>
#include <optional>
#include <vector>

#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_fused/fused_kernels.h"
#include "runtime/engines/cpu_fused/fused_ops.h"
#include "runtime/engines/sdk/parallel.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_fused {
namespace {

// Below this many multiply-adds the kernel stays on the calling thread.
constexpr int64_t kParallelWork = int64_t{1} << 17;

struct AttentionPlan {
  int64_t items = 0;  // product of the batch dims
  int64_t sq = 0, sk = 0, d = 0, dv = 0;
  bool has_mask = false;
  std::vector<int64_t> mask_offsets;  // per item: the mask's [Sq, Sk] block
  int64_t mask_row_stride = 0, mask_col_stride = 0;
  int64_t chunks = 1;                 // pieces of work, one workspace slice each
  int64_t scratch_floats = 0;         // per chunk
};

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(const ir::OpDesc& op)
      : op_(op),
        k_transposed_(op.GetAttrOr<int64_t>(kAttrKTransposed, 1) != 0),
        divides_(op.GetAttrOr<int64_t>(kAttrScaleDivides, 0) != 0) {}

  absl::Status Prepare(PrepareContext& ctx) override;
  absl::Status Compute(ExecuteContext& ctx) override;

 private:
  absl::Status PlanMask(const Shape& mask, const std::vector<int64_t>& scores);
  absl::StatusOr<float> Scale(ExecuteContext& ctx) const;

  ir::OpDesc op_;
  bool k_transposed_;
  bool divides_;
  AttentionPlan plan_;
  std::optional<float> const_scale_;
};

absl::Status AttentionKernel::PlanMask(const Shape& mask, const std::vector<int64_t>& scores) {
  GE_RETURN_IF_ERROR(ops::CheckUnidirectionalBroadcast(mask, Shape(scores)));
  const auto rank = static_cast<int64_t>(scores.size());
  // The mask's element strides along the score dims (0 where it broadcasts).
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (int64_t i = mask.rank() - 1, j = rank - 1; i >= 0; --i, --j) {
    stride[j] = mask.dim(i) == 1 ? 0 : s;
    s *= mask.dim(i);
  }
  plan_.mask_row_stride = stride[rank - 2];
  plan_.mask_col_stride = stride[rank - 1];
  plan_.mask_offsets.assign(plan_.items, 0);
  for (int64_t item = 0; item < plan_.items; ++item) {
    int64_t rest = item, offset = 0;
    for (int64_t j = rank - 3; j >= 0; --j) {
      offset += (rest % scores[j]) * stride[j];
      rest /= scores[j];
    }
    plan_.mask_offsets[item] = offset;
  }
  return absl::OkStatus();
}

absl::Status AttentionKernel::Prepare(PrepareContext& ctx) {
  GE_RETURN_IF_ERROR(CheckAttention(op_));
  const Shape& q = ctx.input_types[kAttentionQ].shape();
  const Shape& k = ctx.input_types[kAttentionK].shape();
  const Shape& v = ctx.input_types[kAttentionV].shape();
  if (!q.IsFullyKnown() || !k.IsFullyKnown() || !v.IsFullyKnown()) {
    return sdk::NodeError(op_, "prepared without concrete shapes");
  }
  const int64_t rank = q.rank();
  if (rank < 2 || k.rank() != rank || v.rank() != rank) return sdk::NodeError(op_, "Q, K and V ranks differ");
  plan_ = AttentionPlan{};
  plan_.items = 1;
  for (int64_t i = 0; i + 2 < rank; ++i) {
    if (k.dim(i) != q.dim(i) || v.dim(i) != q.dim(i)) return sdk::NodeError(op_, "batch dims differ");
    plan_.items *= q.dim(i);
  }
  plan_.sq = q.dim(rank - 2);
  plan_.d = q.dim(rank - 1);
  plan_.sk = v.dim(rank - 2);
  plan_.dv = v.dim(rank - 1);
  const int64_t k_depth = k.dim(rank - (k_transposed_ ? 2 : 1));
  const int64_t k_len = k.dim(rank - (k_transposed_ ? 1 : 2));
  if (k_depth != plan_.d || k_len != plan_.sk) {
    return sdk::NodeError(op_, "K ", k.ToString(), " does not fit Q ", q.ToString(), " and V ", v.ToString());
  }
  const bool has_scale = ctx.input_types.size() > kAttentionScale &&
                         ctx.input_types[kAttentionScale].dtype() != DataType::kUndefined;
  const_scale_.reset();
  if (!has_scale) const_scale_ = 1.0f;
  const Tensor* scale = ctx.const_inputs.size() > kAttentionScale ? ctx.const_inputs[kAttentionScale] : nullptr;
  if (scale != nullptr && scale->defined() && scale->NumElements() == 1) {
    const float s = scale->data<float>()[0];
    const_scale_ = divides_ ? 1.0f / s : s;
  }
  plan_.has_mask = ctx.input_types.size() > kAttentionMask &&
                   ctx.input_types[kAttentionMask].dtype() != DataType::kUndefined;
  if (plan_.has_mask) {
    std::vector<int64_t> scores(q.dims().begin(), q.dims().end());
    scores.back() = plan_.sk;
    const absl::Status s = PlanMask(ctx.input_types[kAttentionMask].shape(), scores);
    if (!s.ok()) return sdk::NodeError(op_, "the mask: ", s.message());
  }
  const int64_t work = plan_.items * plan_.sq * plan_.sk * (plan_.d + plan_.dv);
  plan_.chunks = work < kParallelWork ? 1 : std::max<int64_t>(1, std::min<int64_t>(plan_.items, ctx.num_threads));
  plan_.scratch_floats = kAttentionRowBlock * plan_.sk + (k_transposed_ ? 0 : plan_.d * plan_.sk);
  ctx.workspace_bytes = static_cast<size_t>(plan_.chunks * plan_.scratch_floats) * sizeof(float);
  return absl::OkStatus();
}

absl::StatusOr<float> AttentionKernel::Scale(ExecuteContext& ctx) const {
  if (const_scale_) return *const_scale_;
  const Tensor& s = ctx.input(kAttentionScale);
  if (s.NumElements() != 1) return sdk::NodeError(op_, "the scale must hold one element");
  const float value = s.data<float>()[0];
  return divides_ ? 1.0f / value : value;
}

absl::Status AttentionKernel::Compute(ExecuteContext& ctx) {
  GE_ASSIGN_OR_RETURN(const float scale, Scale(ctx));
  Tensor holder;
  Tensor* y = ctx.planned_output(0);
  if (y == nullptr) {
    GE_ASSIGN_OR_RETURN(holder, ctx.Output(0));
    y = &holder;
  }
  const float* q = ctx.input(kAttentionQ).data<float>();
  const float* k = ctx.input(kAttentionK).data<float>();
  const float* v = ctx.input(kAttentionV).data<float>();
  const float* mask = plan_.has_mask ? ctx.input(kAttentionMask).data<float>() : nullptr;
  float* out = y->data<float>();
  auto* workspace = static_cast<float*>(ctx.workspace());
  const FusedLoops& loops = Loops();
  const AttentionPlan& p = plan_;
  auto run = [&](int64_t chunk_begin, int64_t chunk_end) {
    for (int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      float* scratch = workspace + chunk * p.scratch_floats;
      float* kt_buffer = scratch + kAttentionRowBlock * p.sk;
      const int64_t first = p.items * chunk / p.chunks;
      const int64_t last = p.items * (chunk + 1) / p.chunks;
      for (int64_t item = first; item < last; ++item) {
        const float* kt = k + item * p.sk * p.d;
        if (!k_transposed_) {
          loops.transpose(kt, p.sk, p.d, kt_buffer);
          kt = kt_buffer;
        }
        AttentionHeadArgs args{q + item * p.sq * p.d,
                               p.d,
                               kt,
                               v + item * p.sk * p.dv,
                               mask == nullptr ? nullptr : mask + p.mask_offsets[item],
                               p.mask_row_stride,
                               p.mask_col_stride,
                               out + item * p.sq * p.dv,
                               p.sq, p.sk, p.d, p.dv,
                               scale,
                               scratch};
        loops.attention_head(args);
      }
    }
  };
  sdk::OmpParallelRange(ctx.num_threads(), p.chunks, 1, run);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> CreateAttentionKernel(const ir::OpDesc& op) {
  GE_RETURN_IF_ERROR(CheckAttention(op));
  return std::make_unique<AttentionKernel>(op);
}

}  // namespace ge::engine::cpu_fused
