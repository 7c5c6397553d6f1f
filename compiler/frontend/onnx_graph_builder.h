// Conversion of a checked ONNX model into an ir::Graph (the importer's step
// 4; see onnx_importer.h for the conventions it implements). Internal to the
// frontend: callers use onnx_importer.h.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ops/op_registry.h"
#include "compiler/frontend/onnx_model_check.h"
#include "compiler/frontend/onnx_opset_adapter.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

struct OnnxBuildContext {
  const onnx::ModelProto* model = nullptr;  // after CheckModelBasics / CheckGraphStructure
  OpsetMap opsets;                          // from CheckOpsets
  std::string model_dir;                    // absolute, or empty
  const ops::OpRegistry* registry = nullptr;
  const OpsetAdapterTable* adapters = nullptr;
  // The same model, writable, when the builder may free what it has
  // converted (the importer's own copy, which nothing else reads while the
  // graph is built): the main graph's large initializers then take their
  // values after every node is converted, one at a time, each one's bytes
  // freed in the model as soon as its Const holds them, so that an import
  // holds about one copy of the weights instead of two.
  onnx::ModelProto* release_initializers = nullptr;
};

// Builds the graph. Does not run ops::ValidateOp; fails on ops the registry
// does not know (naming op type, domain, opset, node) and on anything the
// conversion cannot represent.
absl::StatusOr<std::unique_ptr<ir::Graph>> BuildGraphFromOnnx(const OnnxBuildContext& context);

}  // namespace ge::frontend
