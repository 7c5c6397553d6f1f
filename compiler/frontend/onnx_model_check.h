// Checks ged makes on an ONNX model before (and independently of) libonnx's
// checker, so that the common mistakes get messages naming the node and the
// tensor: the model's basic fields, the opsets it imports, and the graph's
// structure (every tensor read has a producer, no tensor has two, no cycle).
//
// Also the analysis of subgraph captures: ONNX lets the nodes of an If / Loop
// / Scan body read any value of the enclosing graphs by name. ged makes those
// reads explicit (see onnx_importer.h), and this file computes them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "base/strings.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

// ged accepts opsets 1..17 of the default ONNX domain. Ops are handled in
// their versions from opset kMinCanonicalOnnxOpset (7) on, older versions
// only through an opset adapter; a model below opset 7 is imported only
// when each of its ops is the same version it is at opset 7 (the op did not
// change in between), so nothing before opset 7 is read with later meaning.
inline constexpr int64_t kMinOnnxOpset = 1;
inline constexpr int64_t kMinCanonicalOnnxOpset = 7;
inline constexpr int64_t kMaxOnnxOpset = 17;

// The model's opset per domain, with "ai.onnx" spelled "" (the default
// domain).
using OpsetMap = StringMap<int64_t>;

// "" for both spellings of the default domain, else `domain`.
std::string_view NormalizeDomain(std::string_view domain);
// "ai.onnx" for the default domain, for messages.
std::string_view DomainForMessages(std::string_view domain);

// The model has an ir_version, a graph and opset imports. Messages do not
// carry a prefix; the importer adds "not a valid ONNX model: <file>: ".
absl::Status CheckModelBasics(const onnx::ModelProto& model);

// The model's opset imports; InvalidArgument when a domain is imported
// twice or the default domain's version is outside kMinOnnxOpset..kMaxOnnxOpset.
absl::StatusOr<OpsetMap> CheckOpsets(const onnx::ModelProto& model);

// "node 'conv1' (Conv)" or, for unnamed nodes, "node #3 (Conv)".
std::string NodeLabel(const onnx::NodeProto& node, int index);

// Free variables of graphs and the captures of nodes, memoised by address:
// the protos must outlive the analysis and must not change meanwhile.
class CaptureAnalysis {
 public:
  // Names that `graph`'s nodes (and, recursively, their subgraphs) read but
  // that neither the graph's inputs, its initializers nor its nodes define,
  // in order of first use.
  const std::vector<std::string>& FreeVariables(const onnx::GraphProto& graph);
  // The outer-scope values `node`'s GRAPH / GRAPHS attributes read: the
  // union of their free variables, in attribute order then first use. Empty
  // for nodes without subgraphs.
  const std::vector<std::string>& NodeCaptures(const onnx::NodeProto& node);

 private:
  // A node map: returned references stay valid as the memo grows.
  absl::node_hash_map<const void*, std::vector<std::string>> memo_;
};

// Checks `graph` and its subgraphs: duplicate producers (two nodes, or a node
// and an input/initializer, defining one tensor), reads of tensors nothing
// produces, graph outputs nothing produces, and cycles (through data inputs
// and captures). `outer` holds the names the enclosing graphs define (empty
// for the main graph).
absl::Status CheckGraphStructure(const onnx::GraphProto& graph, const StringSet& outer,
                                 CaptureAnalysis& captures);

// Rejects calls to model-local functions (ModelProto.functions, IR 8):
// ged does not inline them yet, and the registry would only say their
// domain is unknown.
absl::Status CheckNoLocalFunctionCalls(const onnx::ModelProto& model);

// Checks every initializer of `graph` and its subgraphs stored as external
// data (CheckExternalData: a safe path inside `model_dir`, an existing file,
// offset and length within it). Runs before libonnx's checker, which would
// follow the path anywhere.
absl::Status CheckExternalInitializers(const onnx::GraphProto& graph, const std::string& model_dir);

}  // namespace ge::frontend
