// The host_cpu kernel table: lookup, dtype checks for CheckSupported, and
// the one function that registers every kernel family.
#include "runtime/engines/host_cpu/kernel_registry.h"

#include <algorithm>

#include "base/status.h"

namespace ge::engine::host_cpu {

std::string DataTypeSet::ToString() const {
  std::string out;
  for (int v = 1; v <= kMaxDataTypeValue; ++v) {
    if (!Contains(static_cast<DataType>(v))) continue;
    if (!out.empty()) out += ", ";
    out += DataTypeName(static_cast<DataType>(v));
  }
  return out;
}

void KernelTable::Add(KernelDef def) {
  GE_CHECK_MSG(!def.op_type.empty() && def.create, "incomplete KernelDef");
  std::string type = def.op_type;
  const bool inserted = defs_.emplace(std::move(type), std::move(def)).second;
  GE_CHECK_MSG(inserted, "kernel registered twice");
}

const KernelDef* KernelTable::Find(std::string_view op_type) const {
  auto it = defs_.find(op_type);
  return it == defs_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelTable::OpTypes() const {
  std::vector<std::string> out;
  out.reserve(defs_.size());
  for (const auto& [type, def] : defs_) out.push_back(type);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

absl::Status CheckPorts(const std::vector<ir::IoDesc>& ports,
                        const std::vector<DataTypeSet>& allowed, std::string_view what,
                        const ir::OpDesc& op, std::string_view engine_name) {
  if (allowed.empty()) return absl::OkStatus();
  for (size_t i = 0; i < ports.size(); ++i) {
    const DataType dtype = ports[i].type.dtype();
    if (dtype == DataType::kUndefined) continue;  // absent optional or not yet typed
    const DataTypeSet& set = allowed[std::min(i, allowed.size() - 1)];
    if (!set.Contains(dtype)) {
      return InvalidArgument(op.type(), " on ", engine_name, " does not support dtype ",
                             DataTypeName(dtype), " (", what, " ", i, " of node '", op.name(),
                             "'; supported: ", set.ToString(), ")");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status KernelTable::CheckDtypes(const KernelDef& def, const ir::OpDesc& op,
                                      std::string_view engine_name) const {
  GE_RETURN_IF_ERROR(CheckPorts(op.inputs(), def.input_dtypes, "input", op, engine_name));
  return CheckPorts(op.outputs(), def.output_dtypes, "output", op, engine_name);
}

void RegisterHostCpuKernels(KernelTable& table) {
  RegisterUnaryKernels(table);
  RegisterBinaryKernels(table);
  RegisterCastKernels(table);
  RegisterTensorKernels(table);
  RegisterShapeKernels(table);
  RegisterReduceKernels(table);
  RegisterIndexingKernels(table);
  RegisterLossKernels(table);
  RegisterQuantizeWindowKernels(table);
  RegisterNnKernels(table);
  RegisterRnnKernels(table);
  RegisterMatMulKernels(table);
  RegisterConvKernels(table);
  RegisterConvTransposeKernels(table);
  RegisterResizeKernels(table);
  RegisterPadKernels(table);
  RegisterDetectionKernels(table);
  RegisterGridSampleKernels(table);
  RegisterSelectionKernels(table);
  RegisterLinalgKernels(table);
  RegisterPoolKernels(table);
  RegisterVariableKernels(table);
  RegisterSequenceKernels(table);
  RegisterTextKernels(table);
  RegisterNormPoolKernels(table);
  RegisterRandomKernels(table);
  RegisterQuantizedKernels(table);
  RegisterSignalKernels(table);
}

}  // namespace ge::engine::host_cpu
