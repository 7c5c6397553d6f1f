// VariableStore: how kernels reach state that outlives a run (the session's
// variables and the process's FileConstant weights) without knowing the
// session (GE V2's RtVarManager seen from a kernel).
//
// The executors hand their VariableStore to every kernel through
// ExecuteContext::variables(); a session implements it over its VarManager
// (runtime/variables/session_variables.h). Kernels identify a variable by
// its node's OpDesc: the node name (or `_ref_var_src_var_name` for a VarRef),
// the output type and format, and the `value` / `_init_value` attribute.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/tensor.h"

namespace ge::engine {

// A VarRef names the variable it stands for here.
inline constexpr std::string_view kAttrRefVarSrcVarName = "_ref_var_src_var_name";
// Set on Assign / AssignAdd / AssignSub and VarIsInitializedOp by the
// variable passes: the variable the node writes or asks about.
inline constexpr std::string_view kAttrVarName = "_var_name";
// A variable's initial value (GE's `_init_value`); Variable's `value`
// attribute is read as well.
inline constexpr std::string_view kAttrInitValue = "_init_value";

class VariableStore {
 public:
  virtual ~VariableStore() = default;
  // Variable `op` as a tensor over its memory, registered and allocated on
  // first access (init value copied in). Writes through the tensor persist.
  virtual absl::StatusOr<Tensor> GetVariable(const ir::OpDesc& op) = 0;
  // The registered variable `name` (writers address it through `_var_name`
  // so that a write reaches the variable whatever carried input 0);
  // NotFound naming it when the session has no such variable.
  virtual absl::StatusOr<Tensor> GetVariableByName(std::string_view name) = 0;
  // The weight of FileConstant `op`, read from its file on first use and
  // shared by every op and session that names the same file and offset.
  virtual absl::StatusOr<Tensor> GetFileConstant(const ir::OpDesc& op) = 0;
  // Records that variable `name` now holds a value (an Assign ran).
  virtual void MarkInitialized(std::string_view name) = 0;
  virtual bool IsInitialized(std::string_view name) = 0;
};

}  // namespace ge::engine
