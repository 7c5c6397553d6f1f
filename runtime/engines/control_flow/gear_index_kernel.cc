// GearIndex: selects a multi-batch graph's Case branch from the shapes of
// the inputs (base/ops/gear_index.h).
#include "base/ops/gear_index.h"
#include "base/status.h"
#include "runtime/engines/control_flow/control_flow_kernels.h"

namespace ge::engine::control_flow {
namespace {

class GearIndexKernel final : public Kernel {
 public:
  explicit GearIndexKernel(ops::GearTable table) : table_(std::move(table)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    std::vector<Shape> shapes;
    shapes.reserve(ctx.num_inputs());
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Value& v = ctx.input_value(i);
      if (!v.is_tensor()) return InvalidArgument("input ", i, " is not a tensor");
      shapes.push_back(v.tensor().shape());
    }
    GE_ASSIGN_OR_RETURN(int64_t index, table_.Select(shapes));
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, Shape()));
    out.data<int32_t>()[0] = static_cast<int32_t>(index);
    return absl::OkStatus();
  }

 private:
  ops::GearTable table_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> CreateGearIndexKernel(const ir::OpDesc& op, const KernelOptions&) {
  GE_ASSIGN_OR_RETURN(ops::GearTable table, ops::GearTable::FromOpDesc(op));
  return std::unique_ptr<Kernel>(new GearIndexKernel(std::move(table)));
}

}  // namespace ge::engine::control_flow
