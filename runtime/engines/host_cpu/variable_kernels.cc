// Assign, AssignAdd, AssignSub: write input 1 into the variable and return
// the variable's new value. The variable is the one `_var_name` names in
// the session's VariableStore (set by VariablePrepareOpPass), else input 0's
// storage, which a Variable kernel hands out over the variable's memory.
#include <cstring>

#include "runtime/engines/api/variable_store.h"
#include "runtime/engines/host_cpu/kernel_registry.h"

namespace ge::engine::host_cpu {
namespace {

enum class AssignMode { kAssign, kAdd, kSub };

class AssignKernel final : public Kernel {
 public:
  AssignKernel(const ir::OpDesc& op, AssignMode mode)
      : op_(op), mode_(mode), var_name_(op.GetAttrOr<std::string>(kAttrVarName, "")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(Tensor target, Target(ctx));
    const Tensor& value = ctx.input(1);
    if (target.dtype() != value.dtype() || target.NumElements() != value.NumElements()) {
      return NodeError(op_, "cannot write ", DataTypeName(value.dtype()), value.shape().ToString(),
                       " into variable '", var_name_.empty() ? op_.name() : var_name_, "' of ",
                       DataTypeName(target.dtype()), target.shape().ToString());
    }
    if (mode_ == AssignMode::kAssign) {
      if (target.raw_data() != value.raw_data()) std::memmove(target.raw_data(), value.raw_data(), value.SizeInBytes());
    } else {
      GE_RETURN_IF_ERROR(DispatchType<NumericTypes>(target.dtype(), op_, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Update<T>(target.data<T>(), value.data<T>(), target.NumElements());
        return absl::OkStatus();
      }));
    }
    if (!var_name_.empty() && ctx.variables() != nullptr) ctx.variables()->MarkInitialized(var_name_);
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    if (out.raw_data() != target.raw_data()) std::memcpy(out.raw_data(), target.raw_data(), target.SizeInBytes());
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<Tensor> Target(ExecuteContext& ctx) const {
    if (!var_name_.empty() && ctx.variables() != nullptr) {
      absl::StatusOr<Tensor> var = ctx.variables()->GetVariableByName(var_name_);
      if (var.ok()) return var;
      if (var.status().code() != absl::StatusCode::kNotFound) return var.status();
    }
    return ctx.input(0);
  }

  template <typename T>
  void Update(T* ref, const T* value, int64_t n) const {
    using C = ComputeType<T>;
    const bool add = mode_ == AssignMode::kAdd;
    for (int64_t i = 0; i < n; ++i) {
      const C r = static_cast<C>(ref[i]);
      const C v = static_cast<C>(value[i]);
      ref[i] = static_cast<T>(add ? r + v : r - v);
    }
  }

  ir::OpDesc op_;
  AssignMode mode_;
  std::string var_name_;
};

KernelCreateFn AssignFactory(AssignMode mode) {
  return [mode](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new AssignKernel(op, mode));
  };
}

}  // namespace

void RegisterVariableKernels(KernelTable& table) {
  const DataTypeSet numeric = SetOf(NumericTypes{});
  const DataTypeSet with_bool = SetOf(NumericAndBoolTypes{});
  table.Add({"Assign", AssignFactory(AssignMode::kAssign), {with_bool}, {with_bool}});
  table.Add({"AssignAdd", AssignFactory(AssignMode::kAdd), {numeric}, {numeric}});
  table.Add({"AssignSub", AssignFactory(AssignMode::kSub), {numeric}, {numeric}});
}

}  // namespace ge::engine::host_cpu
