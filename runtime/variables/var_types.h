// Variable descriptions: what a variable is (VarDesc, VarInfo), its key
// and its logical address space (seeds/03). Shared by the VarManager, the
// compiler's address assignment and the .gem serialization.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/types.h"
#include "base/tensor.h"

namespace ge::variables {

// Logical addresses start here (GE's kVarMemoryLogicBase, 128 GiB), so a
// logical address is never mistaken for an offset in an arena.
inline constexpr uint64_t kVarMemoryLogicBase = uint64_t{128} << 30;
inline constexpr uint64_t kVarAlignment = 64;

enum class MemType : uint8_t { kDevice = 0, kHost = 1 };
enum class VarKind : uint8_t { kVariable = 0, kConstant = 1, kFileConstant = 2 };

std::string_view VarKindName(VarKind kind);

// A variable's tensor description.
struct VarDesc {
  DataType dtype = DataType::kUndefined;
  Shape shape;
  ir::Format format = ir::Format::kND;
  // Bytes of the elements; InvalidArgument for unknown shapes and strings.
  absl::StatusOr<uint64_t> ByteSize() const;
  bool operator==(const VarDesc& other) const {
    return dtype == other.dtype && shape == other.shape && format == other.format;
  }
  std::string ToString() const;
};

// One step of a conversion path folded into a variable's stored form
// (Cast / Reshape / Transpose), recorded for reports and serialization.
struct TransNode {
  std::string op_type;
  VarDesc input;
  VarDesc output;
};

// Where a FileConstant's bytes are.
struct FileRef {
  std::string path;  // as resolved when the model was built or loaded
  int64_t offset = 0;
  int64_t length = 0;
};

// What a compiled model records per variable and AssignVarMem takes.
struct VarInfo {
  std::string name;
  VarKind kind = VarKind::kVariable;
  VarDesc desc;
  MemType mem_type = MemType::kDevice;
  Tensor init_value;  // optional: copied in on first allocation
  FileRef file;       // kFileConstant only
  uint64_t logic_addr = 0;  // set by AssignVarMem
  uint64_t size = 0;        // bytes reserved (aligned); set by AssignVarMem
  std::vector<TransNode> trans_road;
};

// `name_format_dtype`, e.g. "w_ND_float32".
std::string VarKey(std::string_view name, const VarDesc& desc);

}  // namespace ge::variables
