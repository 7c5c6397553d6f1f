// VariableFormatPass: stores a variable in the form its readers want
// (GE's VariableOpPass, "variable acceleration").
//
// When every consumer of a Variable is the same conversion — Cast to one
// dtype, Reshape to one shape (from one constant), or Transpose with one
// perm — and nothing writes the variable, the conversion is folded into the
// variable: its output type becomes the converted type, its init value is
// converted once here, the conversion nodes go, and their consumers read
// the variable. A chain (Cast then Reshape, ...) folds step by step in the
// same change. Each variable changes at most once (`_var_format_changes`,
// GE's kMaxVarChangeTimes_ = 1), so recompiling never makes a variable's
// form oscillate; the steps are recorded in `_var_trans_road` (op types)
// for the VarManager's conversion paths. The stored form is what the
// session holds: GetVariable returns it.
//
// Cast folds to f32, f64, i32, i64 and bool only (the init value is
// converted through double).
#pragma once

#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

inline constexpr std::string_view kAttrVarFormatChanges = "_var_format_changes";
inline constexpr std::string_view kAttrVarTransRoad = "_var_trans_road";
// The variable's type before the change (the conversion path's input).
inline constexpr std::string_view kAttrVarOriginalType = "_var_original_shape";
inline constexpr std::string_view kAttrVarOriginalDtype = "_var_original_dtype";

class VariableFormatPass final : public GraphPass {
 public:
  std::string_view name() const override { return "VariableFormatPass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;
};

}  // namespace ge::compiler
