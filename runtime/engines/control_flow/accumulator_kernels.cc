// The loop accumulators: the scan outputs of a lowered ONNX Loop or Scan
// gather one tensor per iteration into a sequence (a loop-carried value of
// the While) and are stacked into one tensor after the loop; a loop-carried
// value the body grew by Concat is kept as its pieces and joined once after
// the loop (onnx_control_flow.h).
#include <cstring>
#include <optional>
#include <string>

#include "base/status.h"
#include "runtime/engines/control_flow/control_flow_kernels.h"

namespace ge::engine::control_flow {
namespace {

class InitKernel final : public Kernel {
 public:
  explicit InitKernel(DataType dtype) : dtype_(dtype) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    return ctx.SetOutputValue(0, Value::Sequence({}, dtype_));
  }

 private:
  DataType dtype_;
};

// Copies `count` elements of `dtype` from src[src_offset] to dst[dst_offset].
void CopyElements(DataType dtype, const Tensor& src, int64_t src_offset, const Tensor& dst, int64_t dst_offset,
                  int64_t count) {
  if (dtype == DataType::kString) {
    const std::string* from = src.data<std::string>() + src_offset;
    std::string* to = dst.data<std::string>() + dst_offset;
    for (int64_t i = 0; i < count; ++i) to[i] = from[i];
    return;
  }
  const size_t size = DataTypeSize(dtype);
  std::memcpy(static_cast<char*>(dst.raw_data()) + dst_offset * size,
              static_cast<const char*>(src.raw_data()) + src_offset * size, count * size);
}

// Pieces below this size are merged as they come when the sequence holds a
// value grown by Concat (`merge_axis`): every append copies the sequence's
// handles, so thousands of tiny pieces cost more than copying their bytes.
constexpr size_t kMergeBytes = size_t{64} << 10;

size_t Bytes(const Tensor& t) { return static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype()); }

// `first` then `second` joined along `axis` when both are small and differ
// on that axis only; nullopt otherwise (the join after the loop reports
// pieces that do not fit).
std::optional<Tensor> Merge(const Tensor& first, const Tensor& second, int64_t axis_attr, DataType dtype) {
  if (dtype == DataType::kString || Bytes(first) >= kMergeBytes || Bytes(second) >= kMergeBytes) return std::nullopt;
  const int64_t rank = first.shape().rank();
  if (rank == 0 || second.shape().rank() != rank || axis_attr < -rank || axis_attr >= rank) return std::nullopt;
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  Shape shape = first.shape();
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && second.shape().dim(d) != shape.dim(d)) return std::nullopt;
  }
  shape.set_dim(axis, first.shape().dim(axis) + second.shape().dim(axis));
  auto out = Tensor::Allocate(dtype, shape);
  if (!out.ok()) return std::nullopt;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= shape.dim(d);
    if (d > axis) inner *= shape.dim(d);
  }
  const int64_t a = first.shape().dim(axis) * inner, b = second.shape().dim(axis) * inner;
  for (int64_t o = 0; o < outer; ++o) {
    if (a > 0) CopyElements(dtype, first, o * a, *out, o * (a + b), a);
    if (b > 0) CopyElements(dtype, second, o * b, *out, o * (a + b) + a, b);
  }
  return *std::move(out);
}

// Appending takes the sequence from the executor when this node is its
// last reader (ExecuteContext::owned_input: a loop body's accumulator) and
// grows it in place: amortized O(1) per iteration. Otherwise it copies the
// sequence's tensor handles (not their data) once. With `merge_axis` (a
// value grown by Concat, joined by LoopAccumulatorConcat after the loop) a
// small piece is merged into the small piece before it, so tiny pieces do
// not pile up as handles.
class AppendKernel final : public Kernel {
 public:
  AppendKernel(std::optional<int64_t> merge_axis, bool merge_reverse)
      : merge_axis_(merge_axis), merge_reverse_(merge_reverse) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Value& value = ctx.input_value(1);
    if (!ctx.input_value(0).is_sequence() || !value.is_tensor()) {
      return InvalidArgument("expects a sequence and a tensor");
    }
    if (value.tensor().dtype() != ctx.input_value(0).element_dtype()) {
      return InvalidArgument("appends a ", DataTypeName(value.tensor().dtype()), " tensor to a sequence of ",
                             DataTypeName(ctx.input_value(0).element_dtype()));
    }
    Value* owned = ctx.owned_input(0);
    Value seq = owned != nullptr ? std::move(*owned) : ctx.input_value(0);
    const std::vector<Tensor>& items = seq.sequence();
    if (merge_axis_ && !items.empty()) {
      // Reversed: the pieces are joined last first, so the new one goes before.
      const Tensor& last = items.back();
      std::optional<Tensor> merged = merge_reverse_ ? Merge(value.tensor(), last, *merge_axis_, seq.element_dtype())
                                                    : Merge(last, value.tensor(), *merge_axis_, seq.element_dtype());
      if (merged) {
        seq.SetSequenceItem(items.size() - 1, *std::move(merged));
        return ctx.SetOutputValue(0, std::move(seq));
      }
    }
    seq.AppendToSequence(value.tensor());
    return ctx.SetOutputValue(0, std::move(seq));
  }

 private:
  std::optional<int64_t> merge_axis_;
  bool merge_reverse_;
};

class StackKernel final : public Kernel {
 public:
  StackKernel(int64_t axis, bool reverse, std::optional<Shape> element_shape)
      : axis_(axis), reverse_(reverse), element_shape_(std::move(element_shape)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Value& seq = ctx.input_value(0);
    if (!seq.is_sequence()) return InvalidArgument("expects a sequence");
    const std::vector<Tensor>& items = seq.sequence();
    if (items.empty()) return StackNothing(ctx, seq.element_dtype());
    const Shape& shape = items[0].shape();
    for (size_t k = 1; k < items.size(); ++k) {
      if (items[k].shape() != shape) {
        return InvalidArgument("element ", k, " has shape ", items[k].shape().ToString(), ", element 0 has ",
                               shape.ToString(), "; stacked elements must have one shape");
      }
    }
    GE_ASSIGN_OR_RETURN(int64_t axis, Axis(shape.rank()));
    const int64_t n = static_cast<int64_t>(items.size());
    GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(seq.element_dtype(), Stacked(shape, axis, n)));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < shape.rank(); ++d) (d < axis ? outer : inner) *= shape.dim(d);
    for (int64_t k = 0; k < n; ++k) {
      const Tensor& item = items[reverse_ ? n - 1 - k : k];
      for (int64_t o = 0; o < outer; ++o) {
        CopyElements(seq.element_dtype(), item, o * inner, out, (o * n + k) * inner, inner);
      }
    }
    return ctx.SetOutputValue(0, Value(std::move(out)));
  }

 private:
  absl::StatusOr<int64_t> Axis(int64_t rank) const {
    if (axis_ < -(rank + 1) || axis_ > rank) {
      return InvalidArgument("axis ", axis_, " is outside [", -(rank + 1), ", ", rank, "] for elements of rank ", rank);
    }
    return axis_ < 0 ? axis_ + rank + 1 : axis_;
  }
  static Shape Stacked(const Shape& element, int64_t axis, int64_t n) {
    Shape out;
    for (int64_t d = 0; d <= element.rank(); ++d) {
      if (d == axis) out.push_back(n);
      if (d < element.rank()) out.push_back(element.dim(d));
    }
    return out;
  }
  // A loop that ran no iteration: length 0 on the stacked axis, the other
  // dims from the element shape the compiler knew (shape [0] without one).
  absl::Status StackNothing(ExecuteContext& ctx, DataType dtype) const {
    Shape shape{0};
    if (element_shape_ && element_shape_->IsFullyKnown()) {
      GE_ASSIGN_OR_RETURN(int64_t axis, Axis(element_shape_->rank()));
      shape = Stacked(*element_shape_, axis, 0);
    }
    GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, shape));
    return ctx.SetOutputValue(0, Value(std::move(out)));
  }

  int64_t axis_;
  bool reverse_;
  std::optional<Shape> element_shape_;
};

// Joins the pieces along an existing axis: per outer index (the dims
// before the axis) each piece's contiguous run goes after the previous
// piece's, one copy per piece and outer index.
class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(int64_t axis, bool reverse) : axis_(axis), reverse_(reverse) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Value& seq = ctx.input_value(0);
    if (!seq.is_sequence()) return InvalidArgument("expects a sequence");
    const std::vector<Tensor>& items = seq.sequence();
    if (items.empty()) return InvalidArgument("has no piece to join (the loop's initial value is one)");
    const int64_t n = static_cast<int64_t>(items.size());
    const Tensor& first = items[reverse_ ? n - 1 : 0];
    const int64_t rank = first.shape().rank();
    if (rank == 0) return InvalidArgument("cannot join scalars");
    if (axis_ < -rank || axis_ >= rank) {
      return InvalidArgument("axis ", axis_, " is outside [", -rank, ", ", rank - 1, "] for pieces of rank ", rank);
    }
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    Shape shape = first.shape();
    int64_t length = 0;
    for (int64_t k = 0; k < n; ++k) {
      const Shape& s = items[k].shape();
      bool fits = s.rank() == rank;
      for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || s.dim(d) == shape.dim(d);
      if (!fits) {
        return InvalidArgument("piece ", k, " has shape ", s.ToString(), ", piece ", reverse_ ? n - 1 : 0, " has ",
                               shape.ToString(), "; pieces may differ on axis ", axis, " only");
      }
      length += s.dim(axis);
    }
    shape.set_dim(axis, length);
    const DataType dtype = seq.element_dtype();
    GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, shape));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= shape.dim(d);
      if (d > axis) inner *= shape.dim(d);
    }
    const int64_t row = length * inner;  // elements of out per outer index
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      const Tensor& item = items[reverse_ ? n - 1 - k : k];
      const int64_t run = item.shape().dim(axis) * inner;
      for (int64_t o = 0; o < outer && run > 0; ++o) CopyElements(dtype, item, o * run, out, o * row + at, run);
      at += run;
    }
    return ctx.SetOutputValue(0, Value(std::move(out)));
  }

 private:
  int64_t axis_;
  bool reverse_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> CreateAccumulatorInitKernel(const ir::OpDesc& op, const KernelOptions&) {
  GE_ASSIGN_OR_RETURN(int64_t dtype, op.RequireAttr<int64_t>("dtype"));
  if (dtype < 1 || dtype > kMaxDataTypeValue) {
    return InvalidArgument("node '", op.name(), "' (", op.type(), "): attribute 'dtype' is ", dtype,
                           ", not a data type");
  }
  return std::unique_ptr<Kernel>(new InitKernel(static_cast<DataType>(dtype)));
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateAccumulatorAppendKernel(const ir::OpDesc& op, const KernelOptions&) {
  const int64_t reverse = op.GetAttrOr<int64_t>("merge_reverse", 0);
  if (reverse != 0 && reverse != 1) {
    return InvalidArgument("node '", op.name(), "' (", op.type(), "): attribute 'merge_reverse' is ", reverse,
                           "; expected 0 or 1");
  }
  return std::unique_ptr<Kernel>(new AppendKernel(op.GetAttr<int64_t>("merge_axis"), reverse == 1));
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateAccumulatorStackKernel(const ir::OpDesc& op, const KernelOptions&) {
  const int64_t reverse = op.GetAttrOr<int64_t>("reverse", 0);
  if (reverse != 0 && reverse != 1) {
    return InvalidArgument("node '", op.name(), "' (", op.type(), "): attribute 'reverse' is ", reverse,
                           "; expected 0 or 1");
  }
  return std::unique_ptr<Kernel>(
      new StackKernel(op.GetAttrOr<int64_t>("axis", 0), reverse == 1, op.GetAttr<Shape>("element_shape")));
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateAccumulatorConcatKernel(const ir::OpDesc& op, const KernelOptions&) {
  const int64_t reverse = op.GetAttrOr<int64_t>("reverse", 0);
  if (reverse != 0 && reverse != 1) {
    return InvalidArgument("node '", op.name(), "' (", op.type(), "): attribute 'reverse' is ", reverse,
                           "; expected 0 or 1");
  }
  return std::unique_ptr<Kernel>(new ConcatKernel(op.GetAttrOr<int64_t>("axis", 0), reverse == 1));
}

}  // namespace ge::engine::control_flow
