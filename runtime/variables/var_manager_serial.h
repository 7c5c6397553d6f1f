// VarManagerInfo <-> ge.v1.VarManagerInfo (proto/ge/v1/model.proto), the
// form a .gem carries (GE's VarManagerToSerial / VarManagerToDeserial).
#pragma once

#include "absl/status/statusor.h"
#include "ge/v1/model.pb.h"
#include "runtime/variables/var_manager.h"

namespace ge::variables {

absl::Status VarManagerInfoToProto(const VarManagerInfo& info, v1::VarManagerInfo* proto);
// InvalidArgument naming the variable for a bad type, format, kind or
// logical address (the bytes come from a file).
absl::StatusOr<VarManagerInfo> VarManagerInfoFromProto(const v1::VarManagerInfo& proto);

}  // namespace ge::variables
