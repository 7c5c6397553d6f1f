// BroadcastCopy: a tensor copied broadcast into a larger shape, the copy
// Expand, Gemm's bias and the norms' parameters share (elementwise.h).
#include "runtime/engines/sdk/broadcast.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::sdk {

absl::Status BroadcastCopy(const ir::OpDesc& op, const Tensor& in, const Tensor& out, int threads) {
  if (in.dtype() != out.dtype()) {
    return NodeError(op, "cannot copy ", DataTypeName(in.dtype()), " into ", DataTypeName(out.dtype()));
  }
  GE_RETURN_IF_ERROR(CheckBroadcastsTo(op, in.shape(), 0, out.shape()));
  if (out.NumElements() == 0) return absl::OkStatus();
  const BroadcastPlan plan = MakeBroadcastPlan(out.shape().span(), {in.shape().span()});
  return DispatchCopyType(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    StridedCopy<T>(in.data<T>(), 0, plan, out.data<T>(), threads);
    return absl::OkStatus();
  });
}

}  // namespace ge::engine::sdk
