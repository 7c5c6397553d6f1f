// VarDesc sizes and spellings, and the variable key.
#include "runtime/variables/var_types.h"

#include "base/status.h"
#include "base/strings.h"

namespace ge::variables {

std::string_view VarKindName(VarKind kind) {
  switch (kind) {
    case VarKind::kVariable: return "Variable";
    case VarKind::kConstant: return "Constant";
    case VarKind::kFileConstant: return "FileConstant";
  }
  return "?";
}

absl::StatusOr<uint64_t> VarDesc::ByteSize() const {
  if (!shape.IsFullyKnown()) return InvalidArgument("shape ", shape.ToString(), " is not fully known");
  if (dtype == DataType::kString || dtype == DataType::kUndefined) {
    return InvalidArgument("dtype ", DataTypeName(dtype), " cannot live in variable memory");
  }
  GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(dtype, shape.NumElementsUnchecked()));
  return static_cast<uint64_t>(bytes);
}

std::string VarDesc::ToString() const {
  return StrCat(DataTypeName(dtype), shape.ToString(), "@", ir::FormatName(format));
}

std::string VarKey(std::string_view name, const VarDesc& desc) {
  return StrCat(name, "_", ir::FormatName(desc.format), "_", DataTypeName(desc.dtype));
}

}  // namespace ge::variables
