// FileConstant resolution (file_path, file_id + ge.exec.value_bins,
// location) and the process-wide cache of loaded weights.
#include "runtime/variables/file_constant.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/io/external_data.h"
#include "base/status.h"
#include "base/strings.h"
#include "yaml-cpp/yaml.h"

namespace ge::variables {
namespace fs = std::filesystem;
namespace {

// Tensor type and byte range from the node's attributes.
absl::Status ReadRange(const ir::OpDesc& op, FileConstantSource& source) {
  GE_ASSIGN_OR_RETURN(source.shape, op.RequireAttr<Shape>(io::kAttrShape));
  GE_ASSIGN_OR_RETURN(int64_t dtype, op.RequireAttr<int64_t>(io::kAttrDtype));
  if (dtype <= 0 || !IsValidDataType(static_cast<int32_t>(dtype)) || dtype == static_cast<int64_t>(DataType::kString)) {
    return InvalidArgument("FileConstant '", op.name(), "': dtype ", dtype, " cannot be read from a file");
  }
  source.dtype = static_cast<DataType>(dtype);
  if (!source.shape.IsFullyKnown()) {
    return InvalidArgument("FileConstant '", op.name(), "': shape ", source.shape.ToString(), " is not fully known");
  }
  GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(source.dtype, source.shape.NumElementsUnchecked()));
  source.offset = op.GetAttrOr<int64_t>(io::kAttrOffset, 0);
  source.length = op.GetAttrOr<int64_t>(io::kAttrLength, -1);
  if (source.length < 0) source.length = static_cast<int64_t>(bytes);
  if (source.offset < 0 || source.length != static_cast<int64_t>(bytes)) {
    return InvalidArgument("FileConstant '", op.name(), "': offset ", source.offset, " and length ", source.length,
                           " do not describe the ", bytes, " bytes of ", DataTypeName(source.dtype),
                           source.shape.ToString());
  }
  return absl::OkStatus();
}

absl::Status CheckFile(const ir::OpDesc& op, FileConstantSource& source) {
  std::error_code ec;
  fs::path canonical = fs::canonical(source.path, ec);
  if (ec) return NotFound("FileConstant '", op.name(), "': cannot open '", source.path, "': ", ec.message());
  if (!fs::is_regular_file(canonical, ec)) {
    return InvalidArgument("FileConstant '", op.name(), "': '", source.path, "' is not a regular file");
  }
  const auto size = static_cast<int64_t>(fs::file_size(canonical, ec));
  if (ec || source.offset + source.length > size) {
    return InvalidArgument("FileConstant '", op.name(), "': bytes [", source.offset, ", ",
                           source.offset + source.length, ") lie beyond the end of '", source.path, "' (", size,
                           " bytes)");
  }
  source.path = canonical.string();
  return absl::OkStatus();
}

absl::StatusOr<std::string> PathOf(const ir::OpDesc& op, const ValueBins& bins) {
  const std::string model_dir = op.GetAttrOr<std::string>(io::kAttrModelDir, "");
  if (auto path = op.GetAttrOr<std::string>(kAttrFilePath, ""); !path.empty()) {
    fs::path p(path);
    if (p.is_relative() && !model_dir.empty()) p = fs::path(model_dir) / p;
    return p.string();
  }
  if (auto id = op.GetAttrOr<std::string>(kAttrFileId, ""); !id.empty()) {
    auto it = bins.find(id);
    if (it == bins.end()) {
      return NotFound("FileConstant '", op.name(), "': file_id '", id, "' is not in option ge.exec.value_bins");
    }
    return it->second;
  }
  if (auto location = op.GetAttrOr<std::string>(io::kAttrLocation, ""); !location.empty()) {
    if (model_dir.empty()) {
      return InvalidArgument("FileConstant '", op.name(), "': location '", location, "' without a model directory");
    }
    GE_ASSIGN_OR_RETURN(fs::path p, io::ResolveExternalDataPath(model_dir, location, op.name()));
    return p.string();
  }
  return InvalidArgument("FileConstant '", op.name(), "' names no file: set file_path, file_id or location");
}

}  // namespace

absl::StatusOr<ValueBins> ParseValueBins(std::string_view json) {
  ValueBins bins;
  if (json.empty()) return bins;
  try {
    YAML::Node root = YAML::Load(std::string(json));
    const YAML::Node list = root["value_bins"];
    if (!list || !list.IsSequence()) return InvalidArgument("ge.exec.value_bins: expected {\"value_bins\": [...]}");
    for (const YAML::Node& item : list) {
      if (!item["value_bin_id"] || !item["value_bin_file"]) {
        return InvalidArgument("ge.exec.value_bins: every entry needs value_bin_id and value_bin_file");
      }
      bins[item["value_bin_id"].as<std::string>()] = item["value_bin_file"].as<std::string>();
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument("ge.exec.value_bins is not valid JSON: ", e.what());
  }
  return bins;
}

absl::StatusOr<FileConstantSource> ResolveFileConstant(const ir::OpDesc& op, const ValueBins& bins) {
  FileConstantSource source;
  GE_RETURN_IF_ERROR(ReadRange(op, source));
  GE_ASSIGN_OR_RETURN(source.path, PathOf(op, bins));
  GE_RETURN_IF_ERROR(CheckFile(op, source));
  return source;
}

FileConstantCache& FileConstantCache::Global() {
  static FileConstantCache* cache = new FileConstantCache();
  return *cache;
}

absl::StatusOr<Tensor> FileConstantCache::Get(const FileConstantSource& source, std::string_view node_name) {
  const Key key{source.path, source.offset, source.length, source.dtype};
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    if (std::shared_ptr<Buffer> buffer = it->second.lock()) return Tensor(source.dtype, source.shape, buffer);
  }
  GE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(source.dtype, source.shape));
  std::ifstream in(source.path, std::ios::binary);
  in.seekg(source.offset);
  in.read(static_cast<char*>(tensor.raw_data()), source.length);
  if (!in || in.gcount() != source.length) {
    return absl::DataLossError(StrCat("FileConstant '", node_name, "': read ", in.gcount(), " of ", source.length, " bytes from '",
                    source.path, "' at offset ", source.offset));
  }
  ++loads_;
  entries_[key] = tensor.buffer();
  return tensor;
}

int64_t FileConstantCache::loads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loads_;
}

size_t FileConstantCache::live() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [key, buffer] : entries_) n += buffer.expired() ? 0 : 1;
  return n;
}

}  // namespace ge::variables
