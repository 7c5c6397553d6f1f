// The host_cpu kernel shared by Conv and ConvTranspose: both take X, W and an
// optional B, resolve their window geometry the way shape inference does,
// check the operands against it and run a loop nest in the operand type
// (16-bit floats in float). What differs is in `Op`:
//
//   static absl::StatusOr<ops::WindowGeometry> Geometry(const Shape& x, const Shape& w,
//                                                       const ops::WindowAttrs& attrs);
//   static int64_t OutputChannels(const Shape& w, const ops::WindowGeometry& g);
//   template <typename T>
//   static void Compute(const Window3& win, int64_t m, int64_t group, const T* x, const T* w,
//                       const T* bias, T* y, int threads);
#pragma once

#include <memory>
#include <utility>

#include "base/ops/shape_utils.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/host_cpu/window.h"

namespace ge::engine::host_cpu {

using ConvTypes = TypeList<float, double, Float16, BFloat16>;

template <typename Op>
class ConvLikeKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    auto attrs = ops::WindowAttrsFromOp(op);
    if (!attrs.ok()) return NodeError(op, attrs.status().message());
    if (attrs->group < 1) return NodeError(op, "group ", attrs->group, " must be at least 1");
    return std::unique_ptr<Kernel>(new ConvLikeKernel(op, *std::move(attrs)));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    auto geometry = Op::Geometry(x.shape(), w.shape(), attrs_);
    if (!geometry.ok()) return NodeError(op_, geometry.status().message());
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (y.shape() != geometry->output) {
      return NodeError(op_, "output shape ", y.shape().ToString(), " differs from the computed ",
                       geometry->output.ToString());
    }
    const int64_t m = Op::OutputChannels(w.shape(), *geometry);
    if (bias != nullptr && (bias->shape().rank() != 1 || bias->shape().dim(0) != m)) {
      return NodeError(op_, "bias ", bias->shape().ToString(), " must be [", m, "]");
    }
    if (w.dtype() != x.dtype() || (bias != nullptr && bias->dtype() != x.dtype())) {
      return NodeError(op_, "X, W and B must share a dtype");
    }
    GE_ASSIGN_OR_RETURN(Window3 win, MakeWindow3(op_, x.shape(), *geometry));
    if (y.NumElements() == 0) return absl::OkStatus();
    return DispatchType<ConvTypes>(x.dtype(), op_, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      if constexpr (kIsHalf<T>) {
        return ComputeInFloat(x, w, bias, y, [&](const float* xf, const float* wf, const float* bf, float* yf) {
          Op::template Compute<float>(win, m, attrs_.group, xf, wf, bf, yf, ctx.num_threads());
        });
      } else {
        Op::template Compute<T>(win, m, attrs_.group, x.data<T>(), w.data<T>(), bias ? bias->data<T>() : nullptr,
                                y.data<T>(), ctx.num_threads());
        return absl::OkStatus();
      }
    });
  }

 private:
  ConvLikeKernel(const ir::OpDesc& op, ops::WindowAttrs attrs) : op_(op), attrs_(std::move(attrs)) {}

  ir::OpDesc op_;
  ops::WindowAttrs attrs_;
};

}  // namespace ge::engine::host_cpu
