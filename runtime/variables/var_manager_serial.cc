// VarManagerInfo serialization. Everything read back is checked: a .gem is
// untrusted input.
#include "runtime/variables/var_manager_serial.h"

#include "base/ir/proto_convert.h"
#include "base/status.h"

namespace ge::variables {
namespace {

void DescToProto(const VarDesc& desc, v1::VarDescDef* proto) {
  proto->set_dtype(static_cast<v1::DataType>(desc.dtype));
  ir::ShapeToProto(desc.shape, proto->mutable_shape());
  proto->set_format(std::string(ir::FormatName(desc.format)));
}

absl::StatusOr<VarDesc> DescFromProto(const v1::VarDescDef& proto, std::string_view name) {
  VarDesc desc;
  if (proto.dtype() <= 0 || !IsValidDataType(proto.dtype())) {
    return InvalidArgument("variable '", name, "': bad dtype ", static_cast<int>(proto.dtype()));
  }
  desc.dtype = static_cast<DataType>(proto.dtype());
  GE_ASSIGN_OR_RETURN(desc.shape, ir::ShapeFromProto(proto.shape()));
  auto format = ir::ParseFormat(proto.format());
  if (!format) return InvalidArgument("variable '", name, "': bad format '", proto.format(), "'");
  desc.format = *format;
  return desc;
}

absl::Status VarToProto(const VarInfo& var, v1::VarInfoDef* proto) {
  proto->set_name(var.name);
  proto->set_kind(static_cast<v1::VarInfoDef::Kind>(var.kind));
  DescToProto(var.desc, proto->mutable_desc());
  proto->set_mem_type(static_cast<uint32_t>(var.mem_type));
  if (var.init_value.defined()) GE_RETURN_IF_ERROR(ir::TensorToProto(var.init_value, proto->mutable_init_value()));
  proto->set_file_path(var.file.path);
  proto->set_file_offset(var.file.offset);
  proto->set_file_length(var.file.length);
  proto->set_logic_addr(var.logic_addr);
  proto->set_size(var.size);
  for (const TransNode& t : var.trans_road) {
    v1::TransNodeDef* node = proto->add_trans_road();
    node->set_op_type(t.op_type);
    DescToProto(t.input, node->mutable_input());
    DescToProto(t.output, node->mutable_output());
  }
  return absl::OkStatus();
}

absl::StatusOr<VarInfo> VarFromProto(const v1::VarInfoDef& proto) {
  VarInfo var;
  var.name = proto.name();
  if (var.name.empty()) return InvalidArgument("a variable has no name");
  if (proto.kind() < 0 || proto.kind() > v1::VarInfoDef::KIND_FILE_CONSTANT) {
    return InvalidArgument("variable '", var.name, "': bad kind ", static_cast<int>(proto.kind()));
  }
  var.kind = static_cast<VarKind>(proto.kind());
  GE_ASSIGN_OR_RETURN(var.desc, DescFromProto(proto.desc(), var.name));
  GE_ASSIGN_OR_RETURN(const uint64_t bytes, var.desc.ByteSize());
  if (proto.mem_type() > 1) return InvalidArgument("variable '", var.name, "': bad memory type ", proto.mem_type());
  var.mem_type = static_cast<MemType>(proto.mem_type());
  if (proto.has_init_value()) {
    GE_ASSIGN_OR_RETURN(var.init_value, ir::TensorFromProto(proto.init_value()));
    if (var.init_value.SizeInBytes() != bytes) {
      return InvalidArgument("variable '", var.name, "': init value has ", var.init_value.SizeInBytes(),
                             " bytes, the variable ", bytes);
    }
  }
  var.file = FileRef{proto.file_path(), proto.file_offset(), proto.file_length()};
  var.logic_addr = proto.logic_addr();
  var.size = proto.size();
  if (var.logic_addr < kVarMemoryLogicBase || var.size < bytes) {
    return InvalidArgument("variable '", var.name, "': logical address ", var.logic_addr, " with ", var.size,
                           " bytes cannot hold ", var.desc.ToString());
  }
  for (const v1::TransNodeDef& t : proto.trans_road()) {
    TransNode node;
    node.op_type = t.op_type();
    GE_ASSIGN_OR_RETURN(node.input, DescFromProto(t.input(), var.name));
    GE_ASSIGN_OR_RETURN(node.output, DescFromProto(t.output(), var.name));
    var.trans_road.push_back(std::move(node));
  }
  return var;
}

}  // namespace

absl::Status VarManagerInfoToProto(const VarManagerInfo& info, v1::VarManagerInfo* proto) {
  proto->set_version(info.version);
  proto->set_session_id(info.session_id);
  for (const VarInfo& var : info.vars) GE_RETURN_IF_ERROR(VarToProto(var, proto->add_vars()));
  for (const auto& [type, used] : info.mem_used) (*proto->mutable_mem_used())[static_cast<uint32_t>(type)] = used;
  for (const auto& [batch, name] : info.batch_names) (*proto->mutable_batch_names())[batch] = name;
  return absl::OkStatus();
}

absl::StatusOr<VarManagerInfo> VarManagerInfoFromProto(const v1::VarManagerInfo& proto) {
  VarManagerInfo info;
  info.version = proto.version();
  if (info.version > 1) return FailedPrecondition("VarManagerInfo version ", info.version, " is newer than this ged's (1)");
  info.session_id = proto.session_id();
  for (const v1::VarInfoDef& var : proto.vars()) {
    GE_ASSIGN_OR_RETURN(VarInfo v, VarFromProto(var));
    info.vars.push_back(std::move(v));
  }
  for (const auto& [type, used] : proto.mem_used()) {
    if (type > 1) return InvalidArgument("VarManagerInfo: bad memory type ", type);
    info.mem_used[static_cast<MemType>(type)] = used;
  }
  for (const auto& [batch, name] : proto.batch_names()) info.batch_names[batch] = name;
  return info;
}

}  // namespace ge::variables
