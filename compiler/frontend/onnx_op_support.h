// What ged says when an ONNX model uses an op it does not support.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/ops/op_registry.h"
#include "compiler/frontend/onnx_model_check.h"
#include "compiler/frontend/onnx_opset_adapter.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

// InvalidArgument naming the op type, its domain and opset, the node
// (`node_label`), the opsets ged supports and either the registered op types
// close to the requested one or, when none is close, all registered op types
// of the domain, sorted.
absl::Status UnsupportedOpError(const onnx::NodeProto& node, std::string_view node_label,
                                std::string_view domain, int64_t opset,
                                const ops::OpRegistry& registry);

// Checks that every node of `graph` and its subgraphs uses an op ged can
// import: a default-domain op that exists in ONNX at the model's opset and
// that the registry knows (or that an opset adapter rewrites; the rewritten
// form is checked during conversion), or an op the registry knows in its own
// domain. Runs before libonnx's checker so that an unsupported op gets
// UnsupportedOpError's message rather than the checker's.
absl::Status CheckOpsSupported(const onnx::GraphProto& graph, const OpsetMap& opsets,
                               const ops::OpRegistry& registry, const OpsetAdapterTable& adapters);

// Whether ged's own shape inference (ops::InferShapes) types every value of
// `graph` by itself, so that libonnx's shape inference has nothing to add:
// every node is a Constant (its type is exact) or an op of the default
// domain that the registry knows, with an inference function, at its
// canonical version (no opset adapter reads ONNX's inferred types to rewrite
// it), and no node owns a subgraph. Assumes CheckOpsSupported passed.
bool GedInferenceCoversGraph(const onnx::GraphProto& graph, const OpsetMap& opsets,
                             const ops::OpRegistry& registry, const OpsetAdapterTable& adapters);

// The candidates within a small edit distance of `name` (ignoring case), or
// sharing a prefix of at least 3 characters with it, closest first.
std::vector<std::string> CloseMatches(std::string_view name,
                                      const std::vector<std::string>& candidates);

}  // namespace ge::frontend
