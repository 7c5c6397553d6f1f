// ONNX external data: initializers whose bytes live in files next to the
// model (TensorProto.data_location = EXTERNAL, external_data keys
// "location", "offset", "length").
//
// The importer turns such an initializer into a FileConstant node with the
// attributes below; the bytes are read only when the graph runs (by
// LoadExternalTensor). Paths are untrusted input: a location must be
// relative, and the file it names — after resolving `..` and symlinks — must
// lie inside the model's directory. libonnx 1.12 does not check this.
//
// The ONNX importer and the runtime's FileConstant loader
// (runtime/variables) share it; compiler/frontend/onnx_external_data.h
// forwards to it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/tensor.h"

namespace ge::io {

// FileConstant attributes.
inline constexpr std::string_view kAttrLocation = "location";    // string, as written in the model
inline constexpr std::string_view kAttrOffset = "offset";        // int, bytes into the file
inline constexpr std::string_view kAttrLength = "length";        // int, bytes to read
inline constexpr std::string_view kAttrShape = "shape";          // Shape
inline constexpr std::string_view kAttrDtype = "dtype";          // int, a DataType value
inline constexpr std::string_view kAttrModelDir = "_model_dir";  // string, absolute

// Where one external tensor's bytes are.
struct ExternalDataRef {
  std::string tensor_name;  // for messages
  std::string model_dir;    // absolute directory the location is relative to
  std::string location;
  int64_t offset = 0;
  int64_t length = 0;
  DataType dtype = DataType::kUndefined;
  Shape shape;
};

// The file `location` names inside `model_dir`. InvalidArgument naming the
// tensor and path when the location is empty, absolute, contains NUL, or
// resolves (through `..` or symlinks) outside `model_dir`. The file need
// not exist; a symlink that resolves outside is rejected either way.
absl::StatusOr<std::filesystem::path> ResolveExternalDataPath(std::string_view model_dir,
                                                              std::string_view location,
                                                              std::string_view tensor_name);

// Checks `ref` against the file system: the path is safe, the file exists
// and is a regular file, the length equals the byte size of dtype x shape,
// and offset + length lies within the file. Errors name the tensor and path.
absl::Status CheckExternalData(const ExternalDataRef& ref);

// Reads the tensor after CheckExternalData's checks (the file may have
// changed since import). Strings cannot be stored externally.
absl::StatusOr<Tensor> LoadExternalTensor(const ExternalDataRef& ref);

// The reference a FileConstant node's attributes describe; InvalidArgument
// naming the node when an attribute is missing or of the wrong kind.
absl::StatusOr<ExternalDataRef> ExternalDataRefFromOpDesc(const ir::OpDesc& op);

// Writes `ref` as FileConstant attributes on `op`.
void SetExternalDataAttrs(const ExternalDataRef& ref, ir::OpDesc& op);

}  // namespace ge::io
