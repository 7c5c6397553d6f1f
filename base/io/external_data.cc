// External-data path resolution and loading. A model file is untrusted: its
// locations could point at /etc/passwd, climb out with `..`, or go through a
// symlink planted in the model directory, so every path is canonicalised
// (weakly_canonical resolves the symlinks of the part that exists) and must
// stay under the canonical model directory. Offsets and lengths are checked
// against the file's real size before anything is read.
#include "base/io/external_data.h"

#include <fstream>
#include <system_error>

#include "base/status.h"

namespace ge::io {
namespace fs = std::filesystem;
namespace {

// True when `path` equals `dir` or lies below it, comparing whole components
// (so /models/a is not inside /models/ab).
bool IsWithin(const fs::path& path, const fs::path& dir) {
  auto p = path.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
    if (d->empty() && std::next(d) == dir.end()) break;  // trailing separator
    if (p == path.end() || *p != *d) return false;
  }
  return true;
}

std::string Label(std::string_view tensor_name) {
  return StrCat("external data of initializer '", tensor_name, "'");
}

}  // namespace

absl::StatusOr<fs::path> ResolveExternalDataPath(std::string_view model_dir,
                                                 std::string_view location,
                                                 std::string_view tensor_name) {
  const std::string label = Label(tensor_name);
  if (location.empty()) return InvalidArgument(label, ": empty location");
  if (location.find('\0') != std::string_view::npos) {
    return InvalidArgument(label, ": location contains a NUL byte");
  }
  if (model_dir.empty()) {
    return InvalidArgument(label, ": location '", location,
                           "' needs the model's directory, and none was given");
  }
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) {
    return InvalidArgument(label, ": location '", location,
                           "' is absolute; it must be relative to the model's directory");
  }
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(fs::path(model_dir), ec), ec);
  if (ec) return InvalidArgument(label, ": bad model directory '", model_dir, "': ", ec.message());
  const fs::path full = fs::weakly_canonical(dir / rel, ec);
  if (ec) {
    return InvalidArgument(label, ": cannot resolve location '", location, "': ", ec.message());
  }
  if (!IsWithin(full, dir)) {
    return InvalidArgument(label, ": location '", location, "' resolves to '", full.string(),
                           "', outside the model's directory '", dir.string(), "'");
  }
  return full;
}

absl::Status CheckExternalData(const ExternalDataRef& ref) {
  const std::string label = Label(ref.tensor_name);
  GE_ASSIGN_OR_RETURN(fs::path path,
                      ResolveExternalDataPath(ref.model_dir, ref.location, ref.tensor_name));
  if (ref.dtype == DataType::kString) {
    return InvalidArgument(label, ": string tensors cannot be stored as external data");
  }
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    return InvalidArgument(label, ": file '", ref.location, "' (", path.string(),
                           ") does not exist");
  }
  if (!fs::is_regular_file(status)) {
    return InvalidArgument(label, ": '", path.string(), "' is not a regular file");
  }
  const uintmax_t file_size = fs::file_size(path, ec);
  if (ec) return InvalidArgument(label, ": cannot stat '", path.string(), "': ", ec.message());
  GE_ASSIGN_OR_RETURN(int64_t count, ref.shape.NumElements());
  auto bytes = ByteSizeOf(ref.dtype, count);
  if (!bytes.ok()) return Annotate(bytes.status(), label);
  if (ref.offset < 0 || ref.length < 0) {
    return InvalidArgument(label, ": negative offset ", ref.offset, " or length ", ref.length);
  }
  if (static_cast<uint64_t>(ref.length) != *bytes) {
    return InvalidArgument(label, ": length ", ref.length, " does not match ",
                           DataTypeName(ref.dtype), ref.shape.ToString(), " (", *bytes, " bytes)");
  }
  if (static_cast<uintmax_t>(ref.offset) > file_size ||
      static_cast<uintmax_t>(ref.length) > file_size - static_cast<uintmax_t>(ref.offset)) {
    return InvalidArgument(label, ": offset ", ref.offset, " + length ", ref.length,
                           " is beyond the end of '", ref.location, "' (", file_size, " bytes)");
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> LoadExternalTensor(const ExternalDataRef& ref) {
  GE_RETURN_IF_ERROR(CheckExternalData(ref));
  GE_ASSIGN_OR_RETURN(fs::path path,
                      ResolveExternalDataPath(ref.model_dir, ref.location, ref.tensor_name));
  GE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(ref.dtype, ref.shape));
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(Label(ref.tensor_name), ": cannot open '", path.string(), "'");
  in.seekg(ref.offset);
  in.read(static_cast<char*>(tensor.raw_data()), ref.length);
  if (in.gcount() != ref.length) {
    return InvalidArgument(Label(ref.tensor_name), ": read ", in.gcount(), " of ", ref.length,
                           " bytes from '", path.string(), "' at offset ", ref.offset);
  }
  return tensor;
}

absl::StatusOr<ExternalDataRef> ExternalDataRefFromOpDesc(const ir::OpDesc& op) {
  ExternalDataRef ref;
  ref.tensor_name = op.name();
  GE_ASSIGN_OR_RETURN(ref.location, op.RequireAttr<std::string>(kAttrLocation));
  GE_ASSIGN_OR_RETURN(ref.model_dir, op.RequireAttr<std::string>(kAttrModelDir));
  GE_ASSIGN_OR_RETURN(ref.offset, op.RequireAttr<int64_t>(kAttrOffset));
  GE_ASSIGN_OR_RETURN(ref.length, op.RequireAttr<int64_t>(kAttrLength));
  GE_ASSIGN_OR_RETURN(ref.shape, op.RequireAttr<Shape>(kAttrShape));
  GE_ASSIGN_OR_RETURN(int64_t dtype, op.RequireAttr<int64_t>(kAttrDtype));
  if (!IsValidDataType(static_cast<int32_t>(dtype)) || dtype == 0) {
    return InvalidArgument("node '", op.name(), "' (", op.type(), "): bad dtype ", dtype);
  }
  ref.dtype = static_cast<DataType>(dtype);
  return ref;
}

void SetExternalDataAttrs(const ExternalDataRef& ref, ir::OpDesc& op) {
  op.SetAttr(kAttrLocation, ref.location);
  op.SetAttr(kAttrModelDir, ref.model_dir);
  op.SetAttr(kAttrOffset, ref.offset);
  op.SetAttr(kAttrLength, ref.length);
  op.SetAttr(kAttrShape, ref.shape);
  op.SetAttr(kAttrDtype, static_cast<int64_t>(ref.dtype));
}

}  // namespace ge::io
