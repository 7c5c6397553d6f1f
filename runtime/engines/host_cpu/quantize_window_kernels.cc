// QuantizeLinear / DequantizeLinear (per-tensor or per-axis; rounding half
// to even, saturating) and the window generators HannWindow,
// HammingWindow, BlackmanWindow.
#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

// Maps an element index of `x` to the index of its scale: 0 for a
// per-tensor scale, the coordinate along `axis` for a 1-D one.
struct ScaleIndex {
  int64_t inner = 1, dim = 1;
  int64_t operator()(int64_t e) const { return dim == 1 ? 0 : (e / inner) % dim; }
};

absl::StatusOr<ScaleIndex> MakeScaleIndex(const ir::OpDesc& op, const Shape& x, const Tensor& scale, int64_t axis_attr) {
  if (scale.NumElements() == 1) return ScaleIndex{};
  if (scale.shape().rank() != 1) return NodeError(op, "scale must be a scalar or 1-D, got ", scale.shape().ToString());
  GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op, axis_attr, x.rank()));
  if (x.dim(axis) != scale.NumElements()) {
    return NodeError(op, "scale has ", scale.NumElements(), " values for axis ", axis, " of ", x.ToString());
  }
  return ScaleIndex{DimProduct(x.span(), axis + 1, x.rank()), x.dim(axis)};
}

class QuantizeKernel final : public Kernel {
 public:
  explicit QuantizeKernel(const ir::OpDesc& op) : op_(op), axis_(IntAttr(op, "axis", 1)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    GE_ASSIGN_OR_RETURN(ScaleIndex at, MakeScaleIndex(op_, x.shape(), scale, axis_));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, x.shape()));
    const bool has_zp = ctx.has_input(2);
    const double lo = y.dtype() == DataType::kInt8 ? -128 : 0, hi = y.dtype() == DataType::kInt8 ? 127 : 255;
    for (int64_t e = 0; e < x.NumElements(); ++e) {
      const int64_t k = at(e);
      const double zp = has_zp ? ctx.input(2).GetAsDouble(k) : 0;
      // The quotient in f32, as ONNX's reference (numpy on f32 arrays) and
      // ONNX Runtime divide: a double quotient rounds differently at ties.
      const float ratio = static_cast<float>(x.GetAsDouble(e)) / static_cast<float>(scale.GetAsDouble(k));
      const double q = std::clamp(static_cast<double>(std::nearbyint(ratio)) + zp, lo, hi);
      if (y.dtype() == DataType::kInt8) {
        y.data<int8_t>()[e] = static_cast<int8_t>(q);
      } else {
        y.data<uint8_t>()[e] = static_cast<uint8_t>(q);
      }
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

class DequantizeKernel final : public Kernel {
 public:
  explicit DequantizeKernel(const ir::OpDesc& op) : op_(op), axis_(IntAttr(op, "axis", 1)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    GE_ASSIGN_OR_RETURN(ScaleIndex at, MakeScaleIndex(op_, x.shape(), scale, axis_));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, x.shape()));
    const bool has_zp = ctx.has_input(2);
    for (int64_t e = 0; e < x.NumElements(); ++e) {
      const int64_t k = at(e);
      const int64_t zp = has_zp ? ctx.input(2).GetAsInt64(k) : 0;
      y.data<float>()[e] = static_cast<float>(x.GetAsInt64(e) - zp) * scale.data<float>()[k];
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

enum class Window { kHann, kHamming, kBlackman };

class WindowKernel final : public Kernel {
 public:
  WindowKernel(const ir::OpDesc& op, Window window)
      : op_(op), window_(window), periodic_(IntAttr(op, "periodic", 1) != 0) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const int64_t size = ctx.input(0).GetAsInt64(0);
    if (size < 0) return NodeError(op_, "size ", size, " is negative");
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{size}));
    const double n = periodic_ ? static_cast<double>(size) : static_cast<double>(size - 1);
    const double pi = std::numbers::pi;
    std::vector<double> w(size);
    for (int64_t i = 0; i < size; ++i) {
      const double a = 2 * pi * static_cast<double>(i) / n;
      switch (window_) {
        case Window::kHann: w[i] = 0.5 - 0.5 * std::cos(a); break;
        case Window::kHamming: w[i] = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(a); break;
        case Window::kBlackman: w[i] = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a); break;
      }
    }
    return DispatchType<NumericTypes>(y.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t i = 0; i < size; ++i) y.data<T>()[i] = Narrow<T>(static_cast<ComputeType<T>>(w[i]));
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  Window window_;
  bool periodic_;
};

KernelCreateFn WindowFactory(Window window) {
  return [window](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new WindowKernel(op, window));
  };
}

}  // namespace

void RegisterQuantizeWindowKernels(KernelTable& table) {
  const DataTypeSet quantized{DataType::kInt8, DataType::kUint8};
  const DataTypeSet f32{DataType::kFloat};
  table.Add({"QuantizeLinear",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new QuantizeKernel(op));
             },
             {DataTypeSet{DataType::kFloat, DataType::kInt32}, f32, quantized}, {quantized}});
  table.Add({"DequantizeLinear",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new DequantizeKernel(op));
             },
             {DataTypeSet{DataType::kInt8, DataType::kUint8, DataType::kInt32}, f32,
              DataTypeSet{DataType::kInt8, DataType::kUint8, DataType::kInt32}},
             {f32}});
  const DataTypeSet index = SetOf(IndexTypes{});
  const DataTypeSet numeric = SetOf(NumericTypes{});
  table.Add({"HannWindow", WindowFactory(Window::kHann), {index}, {numeric}});
  table.Add({"HammingWindow", WindowFactory(Window::kHamming), {index}, {numeric}});
  table.Add({"BlackmanWindow", WindowFactory(Window::kBlackman), {index}, {numeric}});
}

}  // namespace ge::engine::host_cpu
