// AssignVariableMemory: gives every Variable and FileConstant of a compiled
// graph a model-local logical address (GE's VarMemAssignUtil).
//
// The compiler owns a VarManager without a device: it applies the same
// reuse strategies a session's manager does (a variable used by several
// nodes, VarRefs, and FileConstants naming one file and offset share one
// address) and records each node's address in `_var_logic_addr`. The
// returned VarManagerInfo travels with the compiled graph (and the .gem);
// at load the session's VarManager resolves each entry by key, so the
// compiled model never depends on the session it was compiled in.
#pragma once

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/variables/var_manager.h"

namespace ge::compiler {

inline constexpr std::string_view kAttrVarLogicAddr = "_var_logic_addr";

absl::StatusOr<variables::VarManagerInfo> AssignVariableMemory(ir::Graph& root);

}  // namespace ge::compiler
