// A summary of an ONNX model for `gectl inspect`: what it takes, what it
// gives, which ops it uses. Reads the file only (no checker, no import), so
// it also describes models ged cannot import.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

struct OnnxValueSummary {
  std::string name;
  // "f32[batch,3,224,224]": dim_params by name, unknown dims as "?",
  // "seq<...>" / "opt<...>" for sequences and optionals.
  std::string type;
  bool has_default = false;  // an input with an initializer (IR >= 4)
};

struct OnnxModelSummary {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  // (domain, version), "ai.onnx" for the default domain, in model order.
  std::vector<std::pair<std::string, int64_t>> opset_imports;
  std::vector<OnnxValueSummary> inputs;  // graph inputs that are not plain initializers
  std::vector<OnnxValueSummary> outputs;
  // (op type, count) over the graph and its subgraphs, most used first;
  // ops of other domains as "domain::Type".
  std::vector<std::pair<std::string, int64_t>> op_histogram;
  int64_t num_nodes = 0;  // including subgraphs
  int64_t num_subgraphs = 0;
  int64_t num_initializers = 0;
  int64_t num_external_initializers = 0;
  int64_t initializer_bytes = 0;  // embedded bytes (raw and typed data)

  // A multi-line, human-readable rendering.
  std::string ToString() const;
};

absl::StatusOr<OnnxModelSummary> InspectOnnx(const std::string& path);
OnnxModelSummary InspectOnnxModel(const onnx::ModelProto& model);

}  // namespace ge::frontend
