// config.pbtxt parsing, checking and completion (model_config.h).
#include "server/serving/model_config.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "base/status.h"
#include "base/strings.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace ge::server::serving {
namespace {

// Fields Triton's ModelConfig messages define that ged's do not, by
// message; `true` marks those that change what the model means (the model
// then fails rather than serve something else).
const std::map<std::string, std::map<std::string, bool>>& TritonOnlyFields() {
  static const auto* fields = new std::map<std::string, std::map<std::string, bool>>{
      {"inference.ModelConfig",
       {{"batch_input", true},
        {"batch_output", true},
        {"optimization", false},
        {"sequence_batching", true},
        {"ensemble_scheduling", true},
        {"cc_model_filenames", false},
        {"metric_tags", false},
        {"parameters", false},
        {"model_warmup", false},
        {"model_operations", true},
        {"model_transaction_policy", true},
        {"model_repository_agents", true},
        {"response_cache", false},
        {"runtime", false}}},
      {"inference.ModelInput",
       {{"format", false}, {"is_shape_tensor", true}, {"allow_ragged_batch", true}, {"optional", true}}},
      {"inference.ModelOutput", {{"label_filename", false}, {"is_shape_tensor", true}}},
      {"inference.ModelInstanceGroup",
       {{"gpus", true},
        {"rate_limiter", false},
        {"secondary_devices", true},
        {"profile", false},
        {"passive", true},
        {"host_policy", false}}},
      {"inference.ModelDynamicBatching",
       {{"preserve_ordering", false},
        {"priority_levels", false},
        {"default_priority_level", false},
        {"priority_queue_policy", false}}},
      {"inference.ModelQueuePolicy",
       {{"timeout_action", false}, {"default_timeout_microseconds", false}, {"allow_timeout_override", false}}},
  };
  return *fields;
}

// Collects the parser's errors and its unknown-field warnings.
class Collector final : public google::protobuf::io::ErrorCollector {
 public:
  struct Entry {
    int line;
    int column;
    std::string message;
  };
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    errors.push_back({line + 1, column + 1, message});
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    warnings.push_back({line + 1, column + 1, message});
  }
  std::vector<Entry> errors;
  std::vector<Entry> warnings;
};

// "Message type "inference.ModelConfig" has no field named "foo"." ->
// {"inference.ModelConfig", "foo"}; false for other warnings.
bool UnknownField(const std::string& message, std::string* type, std::string* field) {
  constexpr std::string_view kType = "Message type \"";
  constexpr std::string_view kField = "\" has no field named \"";
  const size_t t = message.find(kType);
  const size_t f = message.find(kField);
  if (t == std::string::npos || f == std::string::npos || f < t) return false;
  *type = message.substr(t + kType.size(), f - t - kType.size());
  const size_t start = f + kField.size();
  const size_t end = message.find('"', start);
  if (end == std::string::npos) return false;
  *field = message.substr(start, end - start);
  return true;
}

std::string ShortType(const std::string& full) {
  const size_t dot = full.rfind('.');
  return dot == std::string::npos ? full : full.substr(dot + 1);
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) StrAppend(&out, i ? "," : "", dims[i]);
  return out + "]";
}

template <typename Repeated>
std::vector<int64_t> ToVector(const Repeated& r) {
  return std::vector<int64_t>(r.begin(), r.end());
}

// The dims the config shows for a model tensor (without dim 0 when batching).
absl::StatusOr<std::vector<int64_t>> ConfigDims(const inference::ModelConfig& config, const ModelTensor& t,
                                                std::string_view what) {
  if (config.max_batch_size() <= 0) return t.shape;
  if (t.unknown_rank) {
    return FailedPrecondition(what, " '", t.name, "' has an unknown rank: max_batch_size > 0 needs a dynamic dim 0");
  }
  if (t.shape.empty() || t.shape[0] != -1) {
    return FailedPrecondition("max_batch_size ", config.max_batch_size(), " needs a dynamic dim 0, but the model's ",
                              what, " '", t.name, "' has shape ", DimsString(t.shape),
                              " (set max_batch_size: 0, or export the model with a dynamic batch dim)");
  }
  return std::vector<int64_t>(t.shape.begin() + 1, t.shape.end());
}

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n = d < 0 ? -1 : (n < 0 ? -1 : n * d);
  return n;
}

bool Compatible(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != -1 && b[i] != -1 && a[i] != b[i]) return false;
  }
  return true;
}

// Completes one config tensor list (inputs or outputs) from the model's.
template <typename ConfigTensor, typename Repeated>
absl::Status Complete(inference::ModelConfig& config, Repeated* entries, const std::vector<ModelTensor>& model,
                      std::string_view what) {
  std::set<std::string> listed;
  for (ConfigTensor& e : *entries) {
    auto it = std::find_if(model.begin(), model.end(), [&](const ModelTensor& t) { return t.name == e.name(); });
    if (it == model.end()) {
      std::string names;
      for (const ModelTensor& t : model) StrAppend(&names, names.empty() ? "" : ", ", t.name);
      return InvalidArgument(what, " '", e.name(), "' of config.pbtxt is not an ", what,
                             " of the model (it has: ", names, ")");
    }
    if (!listed.insert(e.name()).second) return InvalidArgument(what, " '", e.name(), "' is listed twice");
    const inference::DataType model_type = ToConfigType(it->dtype);
    if (e.data_type() == inference::TYPE_INVALID) {
      e.set_data_type(model_type);
    } else if (e.data_type() != model_type) {
      return InvalidArgument(what, " '", e.name(), "': config.pbtxt says ", inference::DataType_Name(e.data_type()),
                             ", the model has ", inference::DataType_Name(model_type));
    }
    GE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConfigDims(config, *it, what));
    if (e.dims().empty()) {
      for (int64_t d : dims) e.add_dims(d);
    }
    const std::vector<int64_t> given = ToVector(e.dims());
    if (e.has_reshape()) {
      const std::vector<int64_t> reshape = ToVector(e.reshape().shape());
      if (!Compatible(reshape, dims)) {
        return InvalidArgument(what, " '", e.name(), "': reshape ", DimsString(reshape), " does not fit the model's ",
                               DimsString(dims));
      }
      if (Elements(given) >= 0 && Elements(reshape) >= 0 && Elements(given) != Elements(reshape)) {
        return InvalidArgument(what, " '", e.name(), "': dims ", DimsString(given), " and reshape ",
                               DimsString(reshape), " differ in element count");
      }
    } else if (!Compatible(given, dims)) {
      return InvalidArgument(what, " '", e.name(), "': config.pbtxt says dims ", DimsString(given), ", the model has ",
                             DimsString(dims), config.max_batch_size() > 0 ? " (without the batch dim)" : "");
    }
  }
  // What the config leaves out comes from the model, in the model's order.
  for (const ModelTensor& t : model) {
    if (listed.count(t.name) != 0) continue;
    ConfigTensor* e = entries->Add();
    e->set_name(t.name);
    e->set_data_type(ToConfigType(t.dtype));
    GE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConfigDims(config, t, what));
    for (int64_t d : dims) e->add_dims(d);
  }
  return absl::OkStatus();
}

// Protobuf's text parser skips an unknown field written `name [ {...} ]`
// only in the form with a colon (`name: [ {...} ]`), which Triton configs
// rarely use. Puts a colon after every field name followed by '[' (valid
// for known fields too); strings and comments are left alone, and lines
// keep their numbers.
std::string ColonBeforeLists(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  const auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      const size_t start = i++;
      while (i < text.size() && text[i] != c && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, text.size());
      out.append(text.substr(start, i - start));
    } else if (c == '#') {
      const size_t end = std::min(text.find('\n', i), text.size());
      out.append(text.substr(i, end - i));
      i = end;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = i;
      while (i < text.size() && ident(text[i])) ++i;
      out.append(text.substr(start, i - start));
      size_t j = i;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n')) ++j;
      if (j < text.size() && text[j] == '[') out.push_back(':');
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ParsedModelConfig> ParseModelConfig(std::string_view text, std::string_view file) {
  ParsedModelConfig parsed;
  Collector collector;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.AllowUnknownField(true);  // reported as warnings, sorted below
  const bool ok = parser.ParseFromString(ColonBeforeLists(text), &parsed.config);
  if (!ok || !collector.errors.empty()) {
    if (collector.errors.empty()) return InvalidArgument(file, ": not a valid ModelConfig");
    const auto& e = collector.errors.front();
    return InvalidArgument(file, ":", e.line, ":", e.column, ": ", e.message);
  }
  for (const auto& w : collector.warnings) {
    std::string type, field;
    if (!UnknownField(w.message, &type, &field)) {
      parsed.warnings.push_back(StrCat(file, ":", w.line, ": ", w.message));
      continue;
    }
    const auto& table = TritonOnlyFields();
    auto message = table.find(type);
    auto known = message == table.end() ? decltype(message->second.end())() : message->second.find(field);
    if (message == table.end() || known == message->second.end()) {
      return InvalidArgument(file, ":", w.line, ":", w.column, ": '", field, "' is not a field of ", ShortType(type),
                             " (neither ged's nor Triton's)");
    }
    if (known->second) {
      return FailedPrecondition(file, ":", w.line, ": ", ShortType(type), ".", field,
                                " is not supported by ged and changes what the model means: the model is not loaded");
    }
    parsed.warnings.push_back(
        StrCat(file, ":", w.line, ": ", ShortType(type), ".", field, " is not supported by ged; ignored"));
  }
  return parsed;
}

absl::Status CheckModelConfig(inference::ModelConfig& config, std::string_view directory_name, std::string_view file) {
  if (config.name().empty()) {
    config.set_name(std::string(directory_name));
  } else if (config.name() != directory_name) {
    return InvalidArgument(file, ": name '", config.name(), "' differs from the model's directory '", directory_name,
                           "'");
  }
  if (!config.platform().empty() && config.platform() != "onnxruntime_onnx") {
    return FailedPrecondition(file, ": platform '", config.platform(),
                              "' is not served by ged (only onnxruntime_onnx: ONNX models)");
  }
  if (!config.backend().empty() && config.backend() != "onnxruntime") {
    return FailedPrecondition(file, ": backend '", config.backend(),
                              "' is not served by ged (only onnxruntime: ONNX models)");
  }
  if (config.platform().empty() && config.backend().empty()) config.set_backend("onnxruntime");
  if (config.platform().empty()) config.set_platform("onnxruntime_onnx");
  if (config.max_batch_size() < 0 || config.max_batch_size() > 4096) {
    return InvalidArgument(file, ": max_batch_size must be in [0, 4096], not ", config.max_batch_size());
  }
  if (config.has_dynamic_batching()) {
    const auto& db = config.dynamic_batching();
    if (config.max_batch_size() == 0) {
      return InvalidArgument(file, ": dynamic_batching needs max_batch_size > 0");
    }
    for (int32_t p : db.preferred_batch_size()) {
      if (p < 1 || p > config.max_batch_size()) {
        return InvalidArgument(file, ": preferred_batch_size ", p, " is not in [1, max_batch_size ",
                               config.max_batch_size(), "]");
      }
    }
    if (db.max_queue_delay_microseconds() > 10'000'000) {
      return InvalidArgument(file, ": max_queue_delay_microseconds must be at most 10000000 (10 s)");
    }
  }
  int total = 0;
  for (const auto& group : config.instance_group()) {
    if (group.kind() == inference::ModelInstanceGroup::KIND_GPU) {
      return FailedPrecondition(file, ": instance_group kind KIND_GPU: ged runs models on CPUs only (use KIND_CPU)");
    }
    if (group.count() < 0 || group.count() > 64) {
      return InvalidArgument(file, ": instance_group count must be in [1, 64], not ", group.count());
    }
    total += group.count() == 0 ? 1 : group.count();
  }
  if (total > 64) return InvalidArgument(file, ": at most 64 instances in all, not ", total);
  if (config.version_policy().has_specific() && config.version_policy().specific().versions().empty()) {
    return InvalidArgument(file, ": version_policy specific lists no versions");
  }
  if (config.default_model_filename().find('/') != std::string::npos || config.default_model_filename() == ".." ||
      config.default_model_filename() == ".") {
    return InvalidArgument(file, ": default_model_filename must be a file name, not a path");
  }
  return absl::OkStatus();
}

absl::Status CompleteInputs(inference::ModelConfig& config, const std::vector<ModelTensor>& model_inputs) {
  return Complete<inference::ModelInput>(config, config.mutable_input(), model_inputs, "input");
}

absl::Status CompleteOutputs(inference::ModelConfig& config, const std::vector<ModelTensor>& model_outputs) {
  return Complete<inference::ModelOutput>(config, config.mutable_output(), model_outputs, "output");
}

std::vector<int64_t> BatchGears(const inference::ModelConfig& config) {
  if (config.max_batch_size() <= 0) return {};
  std::set<int64_t> gears = {1, config.max_batch_size()};
  for (int32_t p : config.dynamic_batching().preferred_batch_size()) gears.insert(p);
  return std::vector<int64_t>(gears.begin(), gears.end());
}

namespace {

struct TypeRow {
  DataType dtype;
  inference::DataType config;
  std::string_view kserve;
};

constexpr TypeRow kTypes[] = {
    {DataType::kBool, inference::TYPE_BOOL, "BOOL"},       {DataType::kUint8, inference::TYPE_UINT8, "UINT8"},
    {DataType::kUint16, inference::TYPE_UINT16, "UINT16"}, {DataType::kUint32, inference::TYPE_UINT32, "UINT32"},
    {DataType::kUint64, inference::TYPE_UINT64, "UINT64"}, {DataType::kInt8, inference::TYPE_INT8, "INT8"},
    {DataType::kInt16, inference::TYPE_INT16, "INT16"},    {DataType::kInt32, inference::TYPE_INT32, "INT32"},
    {DataType::kInt64, inference::TYPE_INT64, "INT64"},    {DataType::kFloat16, inference::TYPE_FP16, "FP16"},
    {DataType::kFloat, inference::TYPE_FP32, "FP32"},      {DataType::kDouble, inference::TYPE_FP64, "FP64"},
    {DataType::kString, inference::TYPE_STRING, "BYTES"},  {DataType::kBFloat16, inference::TYPE_BF16, "BF16"},
};

}  // namespace

std::optional<DataType> FromConfigType(inference::DataType type) {
  for (const TypeRow& row : kTypes) {
    if (row.config == type) return row.dtype;
  }
  return std::nullopt;
}

inference::DataType ToConfigType(DataType dtype) {
  for (const TypeRow& row : kTypes) {
    if (row.dtype == dtype) return row.config;
  }
  return inference::TYPE_INVALID;
}

std::string_view KServeDatatype(DataType dtype) {
  for (const TypeRow& row : kTypes) {
    if (row.dtype == dtype) return row.kserve;
  }
  return "INVALID";
}

std::optional<DataType> ParseKServeDatatype(std::string_view name) {
  for (const TypeRow& row : kTypes) {
    if (row.kserve == name) return row.dtype;
  }
  return std::nullopt;
}

}  // namespace ge::server::serving
