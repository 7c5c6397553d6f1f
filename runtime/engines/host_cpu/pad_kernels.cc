// Pad (ONNX Pad-13, with Pad-19's wrap mode): constant, edge, reflect and
// wrap padding of every dim; negative pads crop.
//
// Each dim gets a table mapping an output index to its source index (or -1
// for the constant), so the element loop is a row-major walk that adds up
// per-dim offsets: O(output elements * rank), any pad size. Reflection and
// wrap-around repeat as often as the pads need (numpy's np.pad behaviour).
#include <memory>
#include <string>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

class PadKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    std::string mode = StringAttr(op, "mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
      return NodeError(op, "mode '", mode, "' is not constant, reflect, edge or wrap");
    }
    return std::unique_ptr<Kernel>(new PadKernel(op, std::move(mode)));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    const int64_t rank = xs.rank();
    const std::vector<int64_t> pads = ReadInts(ctx.input(1));
    if (static_cast<int64_t>(pads.size()) != 2 * rank) {
      return NodeError(op_, "pads has ", pads.size(), " values, expected ", 2 * rank, " for input ", xs.ToString());
    }
    const Tensor* value = ctx.has_input(2) && ctx.input(2).NumElements() > 0 ? &ctx.input(2) : nullptr;
    if (value != nullptr && (value->NumElements() != 1 || value->dtype() != x.dtype())) {
      return NodeError(op_, "constant_value must be one element of the input's dtype");
    }
    Shape out = xs;
    std::vector<std::vector<int64_t>> source(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t n = xs.dim(d);
      const int64_t begin = pads[d];
      const int64_t size = n + begin + pads[rank + d];
      if (size < 0) return NodeError(op_, "pads crop dim ", d, " of ", xs.ToString(), " below 0");
      out.set_dim(d, size);
      source[d].resize(static_cast<size_t>(size));
      for (int64_t o = 0; o < size; ++o) {
        GE_ASSIGN_OR_RETURN(source[d][o], SourceIndex(o - begin, n, d));
      }
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    const int64_t total = y.NumElements();
    if (total == 0) return absl::OkStatus();
    const auto strides = ContiguousStrides(xs.span());
    return DispatchType<AllTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      const T fill = value != nullptr ? value->data<T>()[0] : T();
      std::vector<int64_t> index(static_cast<size_t>(rank), 0);
      for (int64_t e = 0; e < total; ++e) {
        int64_t offset = 0;
        bool inside = true;
        for (int64_t d = 0; d < rank && inside; ++d) {
          const int64_t s = source[d][index[d]];
          inside = s >= 0;
          offset += s * strides[d];
        }
        py[e] = inside ? px[offset] : fill;
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++index[d] < out.dim(d)) break;
          index[d] = 0;
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  PadKernel(const ir::OpDesc& op, std::string mode) : op_(op), mode_(std::move(mode)) {}

  // The input index along a dim of size n that position i (relative to the
  // input's start) reads, or -1 for the constant.
  absl::StatusOr<int64_t> SourceIndex(int64_t i, int64_t n, int64_t d) const {
    if (i >= 0 && i < n) return i;
    if (mode_ == "constant") return -1;
    if (n == 0) return NodeError(op_, mode_, " padding of dim ", d, " needs a non-empty input dim");
    if (mode_ == "edge") return i < 0 ? 0 : n - 1;
    if (mode_ == "wrap") return ((i % n) + n) % n;
    if (n == 1) return 0;  // reflect
    const int64_t period = 2 * (n - 1);
    int64_t r = ((i % period) + period) % period;
    return r < n ? r : period - r;
  }

  ir::OpDesc op_;
  std::string mode_;
};

}  // namespace

void RegisterPadKernels(KernelTable& table) {
  const DataTypeSet all = SetOf(AllTypes{});
  table.Add({"Pad", [](const ir::OpDesc& op) { return PadKernel::Create(op); },
             {all, DataTypeSet{DataType::kInt64}, all}, {all}});
}

}  // namespace ge::engine::host_cpu
