// Cast, over the SDK's ConvertInto (runtime/engines/sdk/convert.cc, which
// has the conversion rules of ONNX Cast).
#include <memory>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

class CastKernel final : public Kernel {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    GE_ASSIGN_OR_RETURN(int64_t to, op.RequireAttr<int64_t>("to"));
    if (!IsValidDataType(static_cast<int32_t>(to)) ||
        !SetOf(AllTypes{}).Contains(static_cast<DataType>(to))) {
      return NodeError(op, "attribute to=", to, " is not a dtype Cast supports");
    }
    return std::unique_ptr<Kernel>(new CastKernel(op, static_cast<DataType>(to)));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (y.dtype() != to_) {
      return NodeError(op_, "output dtype ", DataTypeName(y.dtype()), " differs from to=",
                       DataTypeName(to_));
    }
    absl::Status status = ConvertInto(x, y);
    if (!status.ok()) return NodeError(op_, status.message());
    return absl::OkStatus();
  }

 private:
  CastKernel(const ir::OpDesc& op, DataType to) : op_(op), to_(to) {}
  ir::OpDesc op_;
  DataType to_;
};

}  // namespace

void RegisterCastKernels(KernelTable& table) {
  const DataTypeSet all = SetOf(AllTypes{});
  table.Add({"Cast", [](const ir::OpDesc& op) { return CastKernel::Create(op); }, {all}, {all}});
}

}  // namespace ge::engine::host_cpu
