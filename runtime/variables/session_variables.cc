// SessionVariables: Variable and FileConstant ops resolved against a
// session's VarManager and the shared FileConstant cache.
#include "runtime/variables/session_variables.h"

#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::variables {

absl::StatusOr<VarInfo> VarInfoFromOp(const ir::OpDesc& op) {
  if (op.num_outputs() < 1 || !op.output(0).type.is_tensor()) {
    return InvalidArgument("variable '", op.name(), "' has no tensor output");
  }
  VarInfo info;
  info.name = op.GetAttrOr<std::string>(engine::kAttrRefVarSrcVarName, op.name());
  info.kind = VarKind::kVariable;
  const ir::ValueType& type = op.output(0).type;
  info.desc = VarDesc{type.dtype(), type.shape(), type.tensor().format};
  if (auto init = op.GetAttr<Tensor>(engine::kAttrInitValue)) {
    info.init_value = *init;
  } else if (auto value = op.GetAttr<Tensor>(ir::kAttrValue)) {
    info.init_value = *value;
  }
  if (info.init_value.defined() &&
      (info.init_value.dtype() != info.desc.dtype || info.init_value.NumElements() != info.desc.shape.NumElementsUnchecked())) {
    return InvalidArgument("variable '", info.name, "' is ", info.desc.ToString(), " but its init value is ",
                           DataTypeName(info.init_value.dtype()), info.init_value.shape().ToString());
  }
  return info;
}

SessionVariables::SessionVariables(std::shared_ptr<VarManager> manager, FileConstantCache* cache, ValueBins bins)
    : manager_(std::move(manager)), cache_(cache), bins_(std::move(bins)) {}

absl::StatusOr<Tensor> SessionVariables::GetVariable(const ir::OpDesc& op) {
  GE_ASSIGN_OR_RETURN(VarInfo info, VarInfoFromOp(op));
  info.name = manager_->ResolveName(info.name);
  if (!manager_->IsVarExist(info.name, info.desc)) GE_RETURN_IF_ERROR(manager_->AssignVarMem(info).status());
  GE_ASSIGN_OR_RETURN(const uint64_t addr, manager_->GetVarAddr(info.name, info.desc));
  GE_ASSIGN_OR_RETURN(void* ptr, manager_->GetVarMemoryAddr(addr));
  GE_ASSIGN_OR_RETURN(const uint64_t bytes, info.desc.ByteSize());
  return Tensor(info.desc.dtype, info.desc.shape, Buffer::Wrap(ptr, bytes, [] {}));
}

absl::StatusOr<Tensor> SessionVariables::GetVariableByName(std::string_view name) {
  return manager_->GetVarTensor(manager_->ResolveName(name));
}

absl::StatusOr<Tensor> SessionVariables::GetFileConstant(const ir::OpDesc& op) {
  GE_ASSIGN_OR_RETURN(FileConstantSource source, ResolveFileConstant(op, bins_));
  GE_ASSIGN_OR_RETURN(Tensor weight, cache_->Get(source, op.name()));
  std::lock_guard<std::mutex> lock(mu_);
  for (const Tensor& t : held_) {
    if (t.buffer() == weight.buffer()) return weight;
  }
  held_.push_back(weight);
  return weight;
}

void SessionVariables::MarkInitialized(std::string_view name) { manager_->MarkInitialized(manager_->ResolveName(name)); }

bool SessionVariables::IsInitialized(std::string_view name) { return manager_->IsInitialized(manager_->ResolveName(name)); }

}  // namespace ge::variables
