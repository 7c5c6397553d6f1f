// The `_FusedAddLayerNorm` kernel: each row is summed with its residual,
// normalized, scaled and shifted, and given its post-addend in one pass
// over memory (fused_loops.cc). Rows split across OpenMP threads (sdk/parallel.h).
#include <algorithm>

#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_fused/fused_kernels.h"
#include "runtime/engines/cpu_fused/fused_ops.h"
#include "runtime/engines/sdk/parallel.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_fused {
namespace {

// Rows below this many elements in all stay on the calling thread.
constexpr int64_t kParallelElements = int64_t{1} << 15;

bool Present(const PrepareContext& ctx, int i) {
  return static_cast<int>(ctx.input_types.size()) > i && ctx.input_types[i].dtype() != DataType::kUndefined;
}

class AddLayerNormKernel final : public Kernel {
 public:
  explicit AddLayerNormKernel(const ir::OpDesc& op)
      : op_(op),
        axis_(op.GetAttrOr<int64_t>("axis", -1)),
        epsilon_(op.GetAttrOr<float>("epsilon", 1e-5f)) {}

  absl::Status Prepare(PrepareContext& ctx) override {
    GE_RETURN_IF_ERROR(CheckAddLayerNorm(op_));
    const Shape& x = ctx.input_types[kNormX].shape();
    if (!x.IsFullyKnown()) return sdk::NodeError(op_, "prepared without concrete shapes");
    auto axis = ops::NormalizeAxis(axis_, x.rank());
    if (!axis.ok()) return sdk::NodeError(op_, axis.status().message());
    rows_ = 1;
    for (int64_t i = 0; i < *axis; ++i) rows_ *= x.dim(i);
    n_ = 1;
    for (int64_t i = *axis; i < x.rank(); ++i) n_ *= x.dim(i);
    for (int i : {kNormScale, kNormBias}) {
      if (!Present(ctx, i)) continue;
      if (ctx.input_types[i].shape().NumElementsUnchecked() != n_) {
        return sdk::NodeError(op_, "input ", i, " ", ctx.input_types[i].shape().ToString(), " must hold ", n_,
                              " elements (the normalized dims of ", x.ToString(), ")");
      }
    }
    for (int i : {kNormResidual, kNormPostAddend}) {
      if (Present(ctx, i) && ctx.input_types[i].shape() != x) {
        return sdk::NodeError(op_, "input ", i, " ", ctx.input_types[i].shape().ToString(), " must have X's shape ",
                              x.ToString());
      }
    }
    has_bias_ = Present(ctx, kNormBias);
    has_residual_ = Present(ctx, kNormResidual);
    has_post_ = Present(ctx, kNormPostAddend);
    return absl::OkStatus();
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    Tensor holder;
    Tensor* y = ctx.planned_output(0);
    if (y == nullptr) {
      GE_ASSIGN_OR_RETURN(holder, ctx.Output(0));
      y = &holder;
    }
    AddLayerNormArgs args{ctx.input(kNormX).data<float>(),
                          has_residual_ ? ctx.input(kNormResidual).data<float>() : nullptr,
                          ctx.input(kNormScale).data<float>(),
                          has_bias_ ? ctx.input(kNormBias).data<float>() : nullptr,
                          has_post_ ? ctx.input(kNormPostAddend).data<float>() : nullptr,
                          y->data<float>(),
                          n_,
                          epsilon_};
    const FusedLoops& loops = Loops();
    if (rows_ * n_ < kParallelElements || rows_ < 2) {
      loops.add_layer_norm(args, 0, rows_);
      return absl::OkStatus();
    }
    const int64_t block = std::max<int64_t>(1, kParallelElements / (2 * n_));
    sdk::OmpParallelRange(ctx.num_threads(), rows_, block,
                          [&](int64_t begin, int64_t end) { loops.add_layer_norm(args, begin, end); });
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
  float epsilon_;
  int64_t rows_ = 0;
  int64_t n_ = 0;
  bool has_bias_ = false, has_residual_ = false, has_post_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> CreateAddLayerNormKernel(const ir::OpDesc& op) {
  GE_RETURN_IF_ERROR(CheckAddLayerNorm(op));
  return std::make_unique<AddLayerNormKernel>(op);
}

}  // namespace ge::engine::cpu_fused
