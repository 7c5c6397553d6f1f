// Kernels that change only the shape or read it: Reshape-14, Flatten-13,
// Squeeze-13 and Unsqueeze-13 (axes as inputs), Identity-16, Shape-15
// (start/end), Size-13 and ConstantOfShape-9.
//
// The view ops forward their input's storage under the new shape
// (ExecuteContext::SetOutputValue) instead of copying: the op schemas
// declare them as views, so the memory planner never expects a copy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

// Sets output 0 to `x` viewed with `shape`, checking the element count.
absl::Status ForwardAs(ExecuteContext& ctx, const ir::OpDesc& op, const Tensor& x,
                       const Shape& shape) {
  auto count = shape.NumElements();
  if (!count.ok() || *count != x.NumElements()) {
    return NodeError(op, "cannot view ", x.shape().ToString(), " (", x.NumElements(),
                     " elements) as ", shape.ToString());
  }
  return ctx.SetOutputValue(0, Value(x.Reshaped(shape)));
}

class ReshapeKernel final : public Kernel {
 public:
  explicit ReshapeKernel(const ir::OpDesc& op)
      : op_(op), allow_zero_(IntAttr(op, "allowzero", 0) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> target = ReadInts(ctx.input(1));
    auto shape = ops::ResolveReshape(x.shape(), target, allow_zero_);
    if (!shape.ok()) return NodeError(op_, shape.status().message());
    return ForwardAs(ctx, op_, x, *shape);
  }

 private:
  ir::OpDesc op_;
  bool allow_zero_;
};

class FlattenKernel final : public Kernel {
 public:
  explicit FlattenKernel(const ir::OpDesc& op) : op_(op), axis_(IntAttr(op, "axis", 1)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.shape().rank();
    int64_t axis = axis_;
    if (axis < -rank || axis > rank) {  // Flatten's axis ranges over [-r, r]
      return NodeError(op_, "axis ", axis_, " is out of range for rank ", rank);
    }
    if (axis < 0) axis += rank;
    const auto dims = x.shape().span();
    return ForwardAs(ctx, op_, x,
                     Shape{DimProduct(dims, 0, axis), DimProduct(dims, axis, dims.size())});
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

class SqueezeKernel final : public Kernel {
 public:
  explicit SqueezeKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.shape().rank();
    std::vector<bool> drop(rank, false);
    if (ctx.has_input(1)) {
      auto axes = ops::NormalizeAxes(ReadInts(ctx.input(1)), rank);
      if (!axes.ok()) return NodeError(op_, axes.status().message());
      for (int64_t a : *axes) {
        if (x.shape().dim(a) != 1) {
          return NodeError(op_, "cannot squeeze axis ", a, " of ", x.shape().ToString(),
                           ": its dim is not 1");
        }
        drop[a] = true;
      }
    } else {
      for (int64_t d = 0; d < rank; ++d) drop[d] = x.shape().dim(d) == 1;
    }
    Shape out;
    for (int64_t d = 0; d < rank; ++d) {
      if (!drop[d]) out.push_back(x.shape().dim(d));
    }
    return ForwardAs(ctx, op_, x, out);
  }

 private:
  ir::OpDesc op_;
};

class UnsqueezeKernel final : public Kernel {
 public:
  explicit UnsqueezeKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> raw = ReadInts(ctx.input(1));
    const int64_t out_rank = x.shape().rank() + static_cast<int64_t>(raw.size());
    auto axes = ops::NormalizeAxes(raw, out_rank);
    if (!axes.ok()) return NodeError(op_, axes.status().message());
    std::vector<bool> inserted(out_rank, false);
    for (int64_t a : *axes) inserted[a] = true;
    Shape out;
    size_t next = 0;
    for (int64_t d = 0; d < out_rank; ++d) {
      out.push_back(inserted[d] ? 1 : x.shape().dim(next++));
    }
    return ForwardAs(ctx, op_, x, out);
  }

 private:
  ir::OpDesc op_;
};

class IdentityKernel final : public Kernel {
 public:
  explicit IdentityKernel(const ir::OpDesc&) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    return ctx.SetOutputValue(0, ctx.input_value(0));
  }
};

class ShapeKernel final : public Kernel {
 public:
  explicit ShapeKernel(const ir::OpDesc& op)
      : op_(op), start_(IntAttr(op, "start", 0)), end_(op.GetAttr<int64_t>("end")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const auto dims = ctx.input(0).shape().span();
    const int64_t rank = static_cast<int64_t>(dims.size());
    // Negative bounds count from the end; both clamp to [0, rank].
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(start_);
    const int64_t end = std::max(start, end_ ? clamp(*end_) : rank);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{end - start}));
    std::copy(dims.begin() + start, dims.begin() + end, y.data<int64_t>());
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t start_;
  std::optional<int64_t> end_;
};

class SizeKernel final : public Kernel {
 public:
  explicit SizeKernel(const ir::OpDesc&) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{}));
    y.data<int64_t>()[0] = ctx.input(0).NumElements();
    return absl::OkStatus();
  }
};

class ConstantOfShapeKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    Tensor value = Tensor::Scalar<float>(0.0f);
    if (auto v = op.GetAttr<Tensor>("value")) {
      if (v->NumElements() != 1) {
        return NodeError(op, "attribute value must hold one element, got ",
                         v->shape().ToString());
      }
      value = *v;
    }
    return std::unique_ptr<Kernel>(new ConstantOfShapeKernel(op, std::move(value)));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const std::vector<int64_t> dims = ReadInts(ctx.input(0));
    for (int64_t d : dims) {
      if (d < 0) return NodeError(op_, "shape ", Shape(absl::MakeConstSpan(dims)).ToString(),
                                  " has a negative dim");
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape(absl::MakeConstSpan(dims))));
    if (y.dtype() != value_.dtype()) {
      return NodeError(op_, "output dtype ", DataTypeName(y.dtype()), " differs from value's ",
                       DataTypeName(value_.dtype()));
    }
    const int64_t n = y.NumElements();
    if (n == 0) return absl::OkStatus();
    // The value's bytes repeated, by element size (detection models build
    // tens of megabytes of zeros per run here); strings element by element.
    const size_t size = y.dtype() == DataType::kString ? 0 : DataTypeSize(y.dtype());
    const auto* v = static_cast<const unsigned char*>(value_.raw_data());
    const auto fill = [&](auto tag) {
      using T = decltype(tag);
      T bits;
      std::memcpy(&bits, v, sizeof(T));
      std::fill_n(static_cast<T*>(y.raw_data()), n, bits);
    };
    if (size > 0 && std::all_of(v, v + size, [](unsigned char c) { return c == 0; })) {
      std::memset(y.raw_data(), 0, static_cast<size_t>(n) * size);
    } else if (size == 1) {
      fill(uint8_t{});
    } else if (size == 2) {
      fill(uint16_t{});
    } else if (size == 4) {
      fill(uint32_t{});
    } else if (size == 8) {
      fill(uint64_t{});
    } else {
      for (int64_t i = 0; i < n; ++i) CopyElements(y.dtype(), value_.raw_data(), 0, y.raw_data(), i, 1);
    }
    return absl::OkStatus();
  }

 private:
  ConstantOfShapeKernel(const ir::OpDesc& op, Tensor value) : op_(op), value_(std::move(value)) {}
  ir::OpDesc op_;
  Tensor value_;
};

template <typename K>
KernelCreateFn Simple() {
  return [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new K(op));
  };
}

}  // namespace

void RegisterShapeKernels(KernelTable& table) {
  const DataTypeSet all = SetOf(AllTypes{});
  const DataTypeSet i64{DataType::kInt64};
  table.Add({"Reshape", Simple<ReshapeKernel>(), {all, i64}, {all}});
  table.Add({"Flatten", Simple<FlattenKernel>(), {all}, {all}});
  table.Add({"Squeeze", Simple<SqueezeKernel>(), {all, i64}, {all}});
  table.Add({"Unsqueeze", Simple<UnsqueezeKernel>(), {all, i64}, {all}});
  // Identity forwards tensors, sequences and optionals of any element type.
  table.Add({"Identity", Simple<IdentityKernel>(), {}, {}});
  table.Add({"Shape", Simple<ShapeKernel>(), {all}, {i64}});
  table.Add({"Size", Simple<SizeKernel>(), {all}, {i64}});
  table.Add({"ConstantOfShape", [](const ir::OpDesc& op) { return ConstantOfShapeKernel::Create(op); },
             {i64}, {SetOf(NumericAndBoolTypes{})}});
}

}  // namespace ge::engine::host_cpu
