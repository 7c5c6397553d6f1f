// A repository model's configuration (docs/serving.md): config.pbtxt read
// as protobuf text of ged's ModelConfig (proto/ge/kserve/model_config.proto,
// Triton's field names and numbers), checked against the model directory,
// and completed from the ONNX model's inputs and outputs.
//
// Parsing sorts the names the message does not define: a Triton field ged
// does not support is a warning (ignored), one that changes what the model
// means (sequence_batching, ensemble_scheduling, decoupled transactions,
// GPU placement) fails the model naming the field, and a name Triton does
// not define either is an error with the file and line. Datatype names of
// the KServe protocol ("FP32", "BYTES", ...) and the config's TYPE_* map
// onto ged's DataType here too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/dtype.h"
#include "ge/kserve/model_config.pb.h"

namespace ge::server::serving {

struct ParsedModelConfig {
  inference::ModelConfig config;
  std::vector<std::string> warnings;  // "FILE:LINE: field 'x' is not supported by ged; ignored"
};

// Parses config.pbtxt's text; `file` names it in messages. InvalidArgument
// "FILE:LINE:COL: ..." for syntax errors and unknown names; FailedPrecondition
// naming the field for meaning-changing Triton fields.
absl::StatusOr<ParsedModelConfig> ParseModelConfig(std::string_view text, std::string_view file);

// The checks that need no model: `name` matches the directory (or is
// empty: set here), platform/backend name ONNX, batch sizes and instance
// counts are in range, no GPU instance group. `file` prefixes messages.
absl::Status CheckModelConfig(inference::ModelConfig& config, std::string_view directory_name, std::string_view file);

// An input or output as the model declares it (-1: a dynamic dim).
struct ModelTensor {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  bool unknown_rank = false;
};

// Completes and checks the config's inputs (or outputs) against the model's:
// missing entries, data types and dims come from the model; entries the
// model does not have, or that contradict it, are errors naming the
// tensor. With max_batch_size > 0 every model tensor needs a dynamic (or
// absent-rank) dim 0 and the config's dims leave it out.
absl::Status CompleteInputs(inference::ModelConfig& config, const std::vector<ModelTensor>& model_inputs);
absl::Status CompleteOutputs(inference::ModelConfig& config, const std::vector<ModelTensor>& model_outputs);

// The batch sizes a batching model is compiled for: the preferred sizes
// and max_batch_size, plus 1 (a lone request), sorted; empty when the
// model does not batch.
std::vector<int64_t> BatchGears(const inference::ModelConfig& config);

std::optional<DataType> FromConfigType(inference::DataType type);
inference::DataType ToConfigType(DataType dtype);
// The KServe v2 datatype names: BOOL, UINT8..UINT64, INT8..INT64, FP16,
// FP32, FP64, BYTES, BF16.
std::string_view KServeDatatype(DataType dtype);
std::optional<DataType> ParseKServeDatatype(std::string_view name);

}  // namespace ge::server::serving
