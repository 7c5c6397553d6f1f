// The sequence and optional ops on host_cpu (semantics in
// base/ops/sequence_ops.cc). Sequences hold tensor handles: inserting,
// erasing and reading an element share the element's storage instead of
// copying it; only SplitToSequence and ConcatFromSequence move data. An
// optional holding a value is that value, an empty one is a kNone Value.
#include <algorithm>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

absl::StatusOr<const Value*> SequenceInput(const ir::OpDesc& op, ExecuteContext& ctx, int i) {
  const Value& v = ctx.input_value(i);
  if (!v.is_sequence()) return NodeError(op, "input ", i, " is not a sequence");
  return &v;
}

// The position input `i` as an index into a sequence of `size` elements:
// in [-size, size - 1], or [-size, size] when `allow_end` (insertion).
absl::StatusOr<size_t> Position(const ir::OpDesc& op, const Tensor& t, size_t size, bool allow_end) {
  const std::vector<int64_t> values = ReadInts(t);
  if (values.size() != 1) return NodeError(op, "the position must be a scalar, got ", t.shape().ToString());
  const int64_t n = static_cast<int64_t>(size);
  int64_t p = values[0];
  const int64_t last = allow_end ? n : n - 1;
  if (p < -n || p > last) {
    return NodeError(op, "position ", p, " is outside [", -n, ", ", last, "] for a sequence of ", n, " elements");
  }
  if (p < 0) p += n;
  return static_cast<size_t>(p);
}

class SequenceEmptyKernel final : public Kernel {
 public:
  explicit SequenceEmptyKernel(DataType dtype) : dtype_(dtype) {}
  absl::Status Compute(ExecuteContext& ctx) override { return ctx.SetOutputValue(0, Value::Sequence({}, dtype_)); }

 private:
  DataType dtype_;
};

class SequenceConstructKernel final : public Kernel {
 public:
  explicit SequenceConstructKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    std::vector<Tensor> items;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      if (!ctx.input_value(i).is_tensor()) return NodeError(op_, "input ", i, " is not a tensor");
      if (t.dtype() != ctx.input(0).dtype()) {
        return NodeError(op_, "input ", i, " is ", DataTypeName(t.dtype()), ", input 0 is ",
                         DataTypeName(ctx.input(0).dtype()));
      }
      items.push_back(t);
    }
    const DataType dtype = items.empty() ? DataType::kUndefined : items[0].dtype();
    return ctx.SetOutputValue(0, Value::Sequence(std::move(items), dtype));
  }

 private:
  ir::OpDesc op_;
};

class SequenceInsertKernel final : public Kernel {
 public:
  explicit SequenceInsertKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(op_, ctx, 0));
    if (!ctx.input_value(1).is_tensor()) return NodeError(op_, "input 1 is not a tensor");
    const Tensor& tensor = ctx.input(1);
    if (tensor.dtype() != seq->element_dtype()) {
      return NodeError(op_, "inserts a ", DataTypeName(tensor.dtype()), " tensor into a sequence of ",
                       DataTypeName(seq->element_dtype()));
    }
    size_t at = seq->sequence().size();
    if (ctx.has_input(2)) {
      GE_ASSIGN_OR_RETURN(at, Position(op_, ctx.input(2), seq->sequence().size(), true));
    }
    // Taken from the executor when this node is the sequence's last reader:
    // an insert at the end is then amortized O(1) (base/value.h).
    Value* owned = ctx.owned_input(0);
    Value out = owned != nullptr ? std::move(*owned) : *seq;
    out.InsertIntoSequence(at, tensor);
    return ctx.SetOutputValue(0, std::move(out));
  }

 private:
  ir::OpDesc op_;
};

class SequenceAtKernel final : public Kernel {
 public:
  explicit SequenceAtKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(op_, ctx, 0));
    GE_ASSIGN_OR_RETURN(size_t at, Position(op_, ctx.input(1), seq->sequence().size(), false));
    return ctx.SetOutputValue(0, Value(seq->sequence()[at]));
  }

 private:
  ir::OpDesc op_;
};

class SequenceEraseKernel final : public Kernel {
 public:
  explicit SequenceEraseKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(op_, ctx, 0));
    const size_t size = seq->sequence().size();
    if (size == 0) return NodeError(op_, "erases from an empty sequence");
    size_t at = size - 1;
    if (ctx.has_input(1)) {
      GE_ASSIGN_OR_RETURN(at, Position(op_, ctx.input(1), size, false));
    }
    Value* owned = ctx.owned_input(0);
    Value out = owned != nullptr ? std::move(*owned) : *seq;
    out.EraseFromSequence(at);
    return ctx.SetOutputValue(0, std::move(out));
  }

 private:
  ir::OpDesc op_;
};

class SequenceLengthKernel final : public Kernel {
 public:
  explicit SequenceLengthKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(op_, ctx, 0));
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, Shape{}));
    *out.data<int64_t>() = static_cast<int64_t>(seq->sequence().size());
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

class SplitToSequenceKernel final : public Kernel {
 public:
  explicit SplitToSequenceKernel(const ir::OpDesc& op)
      : op_(op), axis_(IntAttr(op, "axis", 0)), keepdims_(IntAttr(op, "keepdims", 1) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, shape.rank()));
    const int64_t dim = shape.dim(axis);
    GE_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, Lengths(ctx, dim));
    const bool drop_axis = !ctx.has_input(1) && !keepdims_;
    const int64_t outer = DimProduct(shape.dims(), 0, static_cast<size_t>(axis));
    const int64_t inner = DimProduct(shape.dims(), static_cast<size_t>(axis) + 1, shape.dims().size());
    std::vector<Tensor> items;
    int64_t start = 0;
    for (int64_t length : lengths) {
      Shape piece;
      for (int64_t d = 0; d < shape.rank(); ++d) {
        if (d != axis) piece.push_back(shape.dim(d));
        else if (!drop_axis) piece.push_back(length);
      }
      GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(x.dtype(), piece));
      for (int64_t o = 0; o < outer; ++o) {
        CopyElements(x.dtype(), x.raw_data(), (o * dim + start) * inner, t.raw_data(), o * length * inner,
                     length * inner);
      }
      items.push_back(std::move(t));
      start += length;
    }
    return ctx.SetOutputValue(0, Value::Sequence(std::move(items), x.dtype()));
  }

 private:
  absl::StatusOr<std::vector<int64_t>> Lengths(ExecuteContext& ctx, int64_t dim) const {
    if (!ctx.has_input(1)) return std::vector<int64_t>(static_cast<size_t>(dim), 1);
    const Tensor& split = ctx.input(1);
    const std::vector<int64_t> values = ReadInts(split);
    if (split.shape().rank() == 0) {
      const int64_t chunk = values[0];
      if (chunk <= 0) return NodeError(op_, "'split' is ", chunk, "; a piece length must be positive");
      std::vector<int64_t> lengths;
      for (int64_t at = 0; at < dim; at += chunk) lengths.push_back(std::min(chunk, dim - at));
      return lengths;
    }
    int64_t total = 0;
    for (int64_t v : values) {
      if (v < 0) return NodeError(op_, "'split' has the negative length ", v);
      total += v;
    }
    if (total != dim) return NodeError(op_, "'split' sums to ", total, ", the axis has length ", dim);
    return values;
  }

  ir::OpDesc op_;
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequenceKernel final : public Kernel {
 public:
  explicit ConcatFromSequenceKernel(const ir::OpDesc& op)
      : op_(op), axis_(IntAttr(op, "axis", 0)), new_axis_(IntAttr(op, "new_axis", 0) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(const Value* seq, SequenceInput(op_, ctx, 0));
    const std::vector<Tensor>& items = seq->sequence();
    if (items.empty()) return NodeError(op_, "concatenates an empty sequence");
    const Shape& first = items[0].shape();
    const int64_t rank = first.rank();
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, new_axis_ ? rank + 1 : rank));
    // Stacking is concatenation of the elements reshaped with a 1 at `axis`.
    Shape base = first;
    if (new_axis_) {
      base = Shape();
      for (int64_t d = 0; d <= rank; ++d) {
        if (d == axis) base.push_back(1);
        if (d < rank) base.push_back(first.dim(d));
      }
    }
    int64_t total = 0;
    std::vector<int64_t> lengths;
    for (size_t k = 0; k < items.size(); ++k) {
      const Shape& s = items[k].shape();
      bool fits = s.rank() == rank;
      for (int64_t d = 0; fits && d < rank; ++d) {
        fits = s.dim(d) == first.dim(d) || (!new_axis_ && d == axis);
      }
      if (!fits) {
        return NodeError(op_, "element ", k, " has shape ", s.ToString(), ", element 0 has ", first.ToString());
      }
      lengths.push_back(new_axis_ ? 1 : s.dim(axis));
      total += lengths.back();
    }
    Shape out_shape = base;
    out_shape.set_dim(static_cast<size_t>(axis), total);
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, out_shape));
    const int64_t outer = DimProduct(base.dims(), 0, static_cast<size_t>(axis));
    const int64_t inner = DimProduct(base.dims(), static_cast<size_t>(axis) + 1, base.dims().size());
    int64_t start = 0;
    for (size_t k = 0; k < items.size(); ++k) {
      const int64_t length = lengths[k];
      for (int64_t o = 0; o < outer; ++o) {
        CopyElements(seq->element_dtype(), items[k].raw_data(), o * length * inner, out.raw_data(),
                     (o * total + start) * inner, length * inner);
      }
      start += length;
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
  bool new_axis_;
};

class OptionalKernel final : public Kernel {
 public:
  absl::Status Compute(ExecuteContext& ctx) override {
    return ctx.SetOutputValue(0, ctx.has_input(0) ? ctx.input_value(0) : Value());
  }
};

class OptionalHasElementKernel final : public Kernel {
 public:
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, Shape{}));
    *out.data<bool>() = ctx.has_input(0);
    return absl::OkStatus();
  }
};

class OptionalGetElementKernel final : public Kernel {
 public:
  explicit OptionalGetElementKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    if (!ctx.has_input(0)) return NodeError(op_, "the optional is empty");
    return ctx.SetOutputValue(0, ctx.input_value(0));
  }

 private:
  ir::OpDesc op_;
};

template <typename K>
KernelCreateFn Make() {
  return [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new K(op));
  };
}

template <typename K>
KernelCreateFn MakeStateless() {
  return [](const ir::OpDesc&) -> absl::StatusOr<std::unique_ptr<Kernel>> { return std::unique_ptr<Kernel>(new K()); };
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateSequenceEmpty(const ir::OpDesc& op) {
  const int64_t dtype = IntAttr(op, "dtype", static_cast<int64_t>(DataType::kFloat));
  if (dtype < 1 || dtype > kMaxDataTypeValue) {
    return NodeError(op, "attribute 'dtype' is ", dtype, ", not a data type");
  }
  return std::unique_ptr<Kernel>(new SequenceEmptyKernel(static_cast<DataType>(dtype)));
}

}  // namespace

void RegisterSequenceKernels(KernelTable& table) {
  const DataTypeSet all = SetOf(AllTypes{});
  const DataTypeSet index = SetOf(IndexTypes{});
  const DataTypeSet i64{DataType::kInt64};
  const DataTypeSet boolean{DataType::kBool};
  table.Add({"SequenceEmpty", CreateSequenceEmpty, {}, {all}});
  table.Add({"SequenceConstruct", Make<SequenceConstructKernel>(), {all}, {all}});
  table.Add({"SequenceInsert", Make<SequenceInsertKernel>(), {all, all, index}, {all}});
  table.Add({"SequenceAt", Make<SequenceAtKernel>(), {all, index}, {all}});
  table.Add({"SequenceErase", Make<SequenceEraseKernel>(), {all, index}, {all}});
  table.Add({"SequenceLength", Make<SequenceLengthKernel>(), {all}, {i64}});
  table.Add({"SplitToSequence", Make<SplitToSequenceKernel>(), {all, index}, {all}});
  table.Add({"ConcatFromSequence", Make<ConcatFromSequenceKernel>(), {all}, {all}});
  table.Add({"Optional", MakeStateless<OptionalKernel>(), {all}, {all}});
  table.Add({"OptionalHasElement", MakeStateless<OptionalHasElementKernel>(), {all}, {boolean}});
  table.Add({"OptionalGetElement", Make<OptionalGetElementKernel>(), {all}, {all}});
}

}  // namespace ge::engine::host_cpu
