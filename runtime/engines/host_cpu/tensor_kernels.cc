// Data-movement kernels: Transpose, Concat, Split-13 (split as an input),
// Slice-13 (negative steps), Gather-13 (negative indices, range-checked),
// Expand-13 (over the SDK's BroadcastCopy).
//
// Elements are moved as unsigned integers of the dtype's size (strings as
// std::string), so every dtype shares one instantiation per size. Strided
// walks go through a BroadcastPlan, which merges dims that stay linear.
#include <algorithm>
#include <memory>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/sdk/broadcast.h"
#include "runtime/engines/sdk/elementwise.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

absl::Status StridedCopyAny(const ir::OpDesc& op, const Tensor& in, int64_t base, const BroadcastPlan& plan,
                            const Tensor& out, int threads) {
  if (out.NumElements() == 0) return absl::OkStatus();
  return DispatchCopyType(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    StridedCopy<T>(in.data<T>(), base, plan, out.data<T>(), threads);
    return absl::OkStatus();
  });
}

std::vector<int64_t> Strides(const Shape& shape) {
  const auto s = ContiguousStrides(shape.span());
  return std::vector<int64_t>(s.begin(), s.end());
}

// ---- Transpose ----

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const ir::OpDesc& op) : op_(op), perm_(IntsAttr(op, "perm")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.shape().rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty()) {
      for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    }
    std::vector<bool> seen(rank, false);
    if (static_cast<int64_t>(perm.size()) != rank) {
      return NodeError(op_, "perm has ", perm.size(), " entries for input rank ", rank);
    }
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[p]) return NodeError(op_, "perm is not a permutation of 0..", rank - 1);
      seen[p] = true;
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const std::vector<int64_t> in_strides = Strides(x.shape());
    std::vector<int64_t> strides(rank), out_dims(rank);
    for (int64_t i = 0; i < rank; ++i) {
      strides[i] = in_strides[perm[i]];
      out_dims[i] = x.shape().dim(perm[i]);
    }
    if (Shape(out_dims) != y.shape()) {
      return NodeError(op_, "output ", y.shape().ToString(), " differs from the permuted ",
                       Shape(out_dims).ToString());
    }
    return StridedCopyAny(op_, x, 0, MakeStridedPlan(out_dims, {strides}), y, ctx.num_threads());
  }

 private:
  ir::OpDesc op_;
  std::vector<int64_t> perm_;
};

// ---- Concat and Split ----

class ConcatKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    GE_ASSIGN_OR_RETURN(int64_t axis, op.RequireAttr<int64_t>("axis"));
    return std::unique_ptr<Kernel>(new ConcatKernel(op, axis));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& first_tensor = ctx.input(0);
    const Shape& first = first_tensor.shape();
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, first.rank()));
    Shape expected = first;
    int64_t total = 0;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      GE_RETURN_IF_ERROR(CheckCompatible(ctx.input(i), first_tensor, axis, i));
      total += ctx.input(i).shape().dim(axis);
    }
    expected.set_dim(axis, total);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (y.shape() != expected) {
      return NodeError(op_, "output ", y.shape().ToString(), " differs from the concatenation ",
                       expected.ToString());
    }
    const int64_t outer = DimProduct(first.span(), 0, axis);
    const int64_t inner = DimProduct(first.span(), axis + 1, first.dims().size());
    const int64_t out_chunk = total * inner;
    int64_t offset = 0;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& in = ctx.input(i);
      const int64_t chunk = in.shape().dim(axis) * inner;
      for (int64_t o = 0; o < outer; ++o) {
        CopyElements(in.dtype(), in.raw_data(), o * chunk, y.raw_data(), o * out_chunk + offset,
                     chunk);
      }
      offset += chunk;
    }
    return absl::OkStatus();
  }

 private:
  ConcatKernel(const ir::OpDesc& op, int64_t axis) : op_(op), axis_(axis) {}

  absl::Status CheckCompatible(const Tensor& in, const Tensor& first_tensor, int64_t axis,
                               int i) const {
    const Shape& first = first_tensor.shape();
    bool ok = in.dtype() == first_tensor.dtype() && in.shape().rank() == first.rank();
    for (int64_t d = 0; ok && d < first.rank(); ++d) {
      ok = d == axis || in.shape().dim(d) == first.dim(d);
    }
    if (!ok) {
      return NodeError(op_, "input ", i, " ", DataTypeName(in.dtype()), in.shape().ToString(),
                       " does not match input 0 ", DataTypeName(first_tensor.dtype()),
                       first.ToString(), " outside axis ", axis);
    }
    return absl::OkStatus();
  }

  ir::OpDesc op_;
  int64_t axis_;
};

class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const ir::OpDesc& op) : op_(op), axis_(IntAttr(op, "axis", 0)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, x.shape().rank()));
    const int64_t dim = x.shape().dim(axis);
    const int outputs = ctx.num_outputs();
    GE_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, SplitSizes(ctx, dim, axis, outputs));
    const int64_t outer = DimProduct(x.shape().span(), 0, axis);
    const int64_t inner = DimProduct(x.shape().span(), axis + 1, x.shape().dims().size());
    int64_t offset = 0;
    for (int i = 0; i < outputs; ++i) {
      Shape shape = x.shape();
      shape.set_dim(axis, sizes[i]);
      GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(i, shape));
      const int64_t chunk = sizes[i] * inner;
      for (int64_t o = 0; o < outer; ++o) {
        CopyElements(x.dtype(), x.raw_data(), o * dim * inner + offset, y.raw_data(), o * chunk,
                     chunk);
      }
      offset += chunk;
    }
    return absl::OkStatus();
  }

 private:
  // The split sizes: the `split` input, else equal parts.
  absl::StatusOr<std::vector<int64_t>> SplitSizes(ExecuteContext& ctx, int64_t dim, int64_t axis,
                                                  int outputs) const {
    std::vector<int64_t> sizes;
    if (ctx.has_input(1)) {
      sizes = ReadInts(ctx.input(1));
    } else {
      if (outputs < 1 || dim % outputs != 0) {
        return NodeError(op_, "dim ", dim, " of axis ", axis, " does not split evenly into ",
                         outputs, " outputs");
      }
      sizes.assign(outputs, dim / outputs);
    }
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) return NodeError(op_, "split sizes must not be negative");
      total += s;
    }
    if (static_cast<int>(sizes.size()) != outputs || total != dim) {
      return NodeError(op_, "split sizes sum to ", total, " over ", sizes.size(),
                       " parts; axis ", axis, " has ", dim, " and the node has ", outputs,
                       " outputs");
    }
    return sizes;
  }

  ir::OpDesc op_;
  int64_t axis_;
};

// ---- Slice ----

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> starts = ReadInts(ctx.input(1));
    const std::vector<int64_t> ends = ReadInts(ctx.input(2));
    const std::vector<int64_t> axes = ctx.has_input(3) ? ReadInts(ctx.input(3)) : std::vector<int64_t>{};
    const std::vector<int64_t> steps = ctx.has_input(4) ? ReadInts(ctx.input(4)) : std::vector<int64_t>{};
    auto bounds = ops::ResolveSlice(x.shape(), starts, ends, axes, steps);
    if (!bounds.ok()) return NodeError(op_, bounds.status().message());
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, bounds->output));
    const std::vector<int64_t> in_strides = Strides(x.shape());
    const size_t rank = in_strides.size();
    std::vector<int64_t> strides(rank);
    int64_t base = 0;
    for (size_t d = 0; d < rank; ++d) {
      strides[d] = in_strides[d] * bounds->steps[d];
      if (bounds->output.dim(d) > 0) base += bounds->starts[d] * in_strides[d];
    }
    return StridedCopyAny(op_, x, base, MakeStridedPlan(bounds->output.span(), {strides}), y, ctx.num_threads());
  }

 private:
  ir::OpDesc op_;
};

// ---- Gather ----

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const ir::OpDesc& op) : op_(op), axis_(IntAttr(op, "axis", 0)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, data.shape().rank()));
    const int64_t dim = data.shape().dim(axis);
    std::vector<int64_t> idx = ReadInts(indices);
    for (size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < -dim || idx[j] >= dim) {
        return NodeError(op_, "index ", idx[j], " at position ", j, " of indices ",
                         indices.shape().ToString(), " is out of range [", -dim, ", ", dim,
                         ") for axis ", axis, " of data ", data.shape().ToString());
      }
      if (idx[j] < 0) idx[j] += dim;
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const int64_t outer = DimProduct(data.shape().span(), 0, axis);
    const int64_t inner = DimProduct(data.shape().span(), axis + 1, data.shape().dims().size());
    const int64_t count = static_cast<int64_t>(idx.size());
    if (y.NumElements() != outer * count * inner) {
      return NodeError(op_, "output ", y.shape().ToString(), " does not match data ",
                       data.shape().ToString(), " gathered by indices ",
                       indices.shape().ToString());
    }
    ParallelFor(ctx.num_threads(), outer * count, inner, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / count, j = t % count;
        CopyElements(data.dtype(), data.raw_data(), (o * dim + idx[j]) * inner, y.raw_data(),
                     t * inner, inner);
      }
    });
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

// ---- Expand ----

class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> target = ReadInts(ctx.input(1));
    auto shape = ops::BroadcastShapes(x.shape(), Shape(absl::MakeConstSpan(target)));
    if (!shape.ok()) {
      return NodeError(op_, "input ", x.shape().ToString(), " does not expand to ",
                       Shape(absl::MakeConstSpan(target)).ToString(), ": ", shape.status().message());
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, *shape));
    return BroadcastCopy(op_, x, y, ctx.num_threads());
  }

 private:
  ir::OpDesc op_;
};

template <typename K>
KernelCreateFn Simple() {
  return [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new K(op));
  };
}

}  // namespace

void RegisterTensorKernels(KernelTable& table) {
  const DataTypeSet all = SetOf(AllTypes{});
  const DataTypeSet index = SetOf(IndexTypes{});
  const DataTypeSet i64{DataType::kInt64};
  table.Add({"Transpose", Simple<TransposeKernel>(), {all}, {all}});
  table.Add({"Concat", [](const ir::OpDesc& op) { return ConcatKernel::Create(op); }, {all}, {all}});
  table.Add({"Split", Simple<SplitKernel>(), {all, i64}, {all}});
  table.Add({"Slice", Simple<SliceKernel>(), {all, index}, {all}});
  table.Add({"Gather", Simple<GatherKernel>(), {all, index}, {all}});
  table.Add({"Expand", Simple<ExpandKernel>(), {all, i64}, {all}});
}

}  // namespace ge::engine::host_cpu
