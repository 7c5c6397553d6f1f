// The shared parts of the SDK's kernel table: DataTypeSet's message form and
// the per-port dtype check.
#include "runtime/engines/sdk/kernel_table.h"

namespace ge::engine::sdk {

std::string DataTypeSet::ToString() const {
  std::string out;
  for (int v = 1; v <= kMaxDataTypeValue; ++v) {
    if (!Contains(static_cast<DataType>(v))) continue;
    if (!out.empty()) out += ", ";
    out += DataTypeName(static_cast<DataType>(v));
  }
  return out;
}

namespace {

absl::Status CheckPorts(const std::vector<ir::IoDesc>& ports, const std::vector<DataTypeSet>& allowed,
                        std::string_view what, const ir::OpDesc& op, std::string_view engine_name) {
  if (allowed.empty()) return absl::OkStatus();
  for (size_t i = 0; i < ports.size(); ++i) {
    const DataType dtype = ports[i].type.dtype();
    if (dtype == DataType::kUndefined) continue;  // absent optional or not yet typed
    const DataTypeSet& set = allowed[std::min(i, allowed.size() - 1)];
    if (!set.Contains(dtype)) {
      return InvalidArgument(op.type(), " on ", engine_name, " does not support dtype ", DataTypeName(dtype), " (",
                             what, " ", i, " of node '", op.name(), "'; supported: ", set.ToString(), ")");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPortDtypes(const ir::OpDesc& op, const std::vector<DataTypeSet>& inputs,
                             const std::vector<DataTypeSet>& outputs, std::string_view engine_name) {
  GE_RETURN_IF_ERROR(CheckPorts(op.inputs(), inputs, "input", op, engine_name));
  return CheckPorts(op.outputs(), outputs, "output", op, engine_name);
}

}  // namespace ge::engine::sdk
