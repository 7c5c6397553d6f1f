// FileConstant weights: where a FileConstant's bytes are, and the process's
// cache of loaded weights (GE's FileConstantUtils + file_constant_var_map_).
//
// A FileConstant names its file in one of three ways, tried in this order:
//   1. `file_path`: a path as given (relative paths are taken from the
//      node's `_model_dir` when set, else from the working directory);
//   2. `file_id`, looked up in the `ge.exec.value_bins` option, a JSON
//      object {"value_bins": [{"value_bin_id": ID, "value_bin_file": PATH}]};
//   3. `location` under `_model_dir` (ONNX external data and
//      `--external-weight` models), confined to that directory by
//      base/io/external_data.h's rules.
// `offset` and `length` (default: the tensor's byte size) select the bytes.
//
// FileConstantCache loads a (file, offset, length, dtype) once and hands
// every user the same read-only tensor for as long as any user holds it;
// sessions keep the tensors their graphs use.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/tensor.h"

namespace ge::variables {

inline constexpr std::string_view kAttrFilePath = "file_path";
inline constexpr std::string_view kAttrFileId = "file_id";

// `ge.exec.value_bins` parsed: file id -> path.
using ValueBins = std::map<std::string, std::string, std::less<>>;
absl::StatusOr<ValueBins> ParseValueBins(std::string_view json);

// The resolved source of one FileConstant.
struct FileConstantSource {
  std::string path;  // canonical
  int64_t offset = 0;
  int64_t length = 0;
  DataType dtype = DataType::kUndefined;
  Shape shape;
};

// Resolves `op`'s file by the rules above and checks that the bytes exist.
// Errors name the node and the path.
absl::StatusOr<FileConstantSource> ResolveFileConstant(const ir::OpDesc& op, const ValueBins& bins);

class FileConstantCache {
 public:
  static FileConstantCache& Global();

  // The weight `source` describes, read from disk unless a live user holds it.
  absl::StatusOr<Tensor> Get(const FileConstantSource& source, std::string_view node_name);
  // Reads from disk since creation (tests check sharing with it).
  int64_t loads() const;
  // Weights some user still holds.
  size_t live() const;

 private:
  using Key = std::tuple<std::string, int64_t, int64_t, DataType>;
  mutable std::mutex mu_;
  std::map<Key, std::weak_ptr<Buffer>> entries_;
  int64_t loads_ = 0;
};

}  // namespace ge::variables
