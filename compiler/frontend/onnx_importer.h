// ONNX -> ir::Graph.
//
// Accepts models using opsets 7..17 of the default ONNX domain (and other
// domains only for op types ged registers in them). The steps, each failing
// with InvalidArgument naming the file, node and tensor involved:
//   1. parse (up to protobuf's 2 GiB limit; truncated or non-ONNX bytes give
//      "not a valid ONNX model: <file>: ...");
//   2. ged's own checks (onnx_model_check.h, onnx_op_support.h): opsets,
//      dangling edges, duplicate producers, cycles, unsupported ops;
//   3. libonnx's checker and shape inference (optional, see options);
//   4. conversion, rewriting older op versions into ged's canonical forms
//      (onnx_opset_adapter.h);
//   5. ops::ValidateOp on every node; an op ged does not support names its
//      type, domain, opset and node, and what ged supports.
//
// The imported graph:
// - Graph inputs become Data nodes (attribute "index", 0-based in input
//   order) with the declared type: a dim_param or missing dim is -1, a
//   missing shape is unknown rank. Graph outputs feed one NetOutput node
//   whose inputs, in output order, carry the output names.
// - Every IoDesc keeps its ONNX tensor name. A node keeps its ONNX name; an
//   unnamed node, or one whose name is taken, is named "<OpType>_<n>".
//   Every node converted from an ONNX node has attribute "_onnx_opset"
//   (ir::kAttrOpset): the model's opset for the node's domain; nodes of a
//   non-default domain also have "_onnx_domain".
// - ONNX Constant nodes (every value form) and initializers become Const
//   nodes (attribute "value"). Initializers stored as external data become
//   FileConstant nodes (onnx_external_data.h); their files are checked at
//   import and read when the graph runs.
// - Graph input defaults: with IR version >= 4, an initializer that is also
//   a graph input is that input's default value: the input stays a Data node
//   and carries the initializer as attribute "_default_value" (a Tensor).
//   With IR version < 4 every initializer had to be listed as an input, and
//   such inputs are taken as constants (Const nodes, no Data node), as
//   ONNX Runtime does.
// - Control flow (If, Loop, Scan) is built as the ONNX ops (then Loop and
//   Scan are lowered to While, see below). Each GRAPH attribute
//   becomes a subgraph owned by the root graph, named "<node>_<attr>" (made
//   unique in the tree), referenced by an AttrValue GraphRef under the
//   attribute's name and listed in OpDesc::subgraph_names() (If: then_branch,
//   else_branch; Loop / Scan: body).
// - Captures: ONNX subgraphs may read values of enclosing graphs by name.
//   ged makes these reads explicit. A node's captures are the outer values
//   any of its subgraphs (or their nested subgraphs) read, in first-use
//   order. They become extra inputs of the node, after its P ONNX inputs,
//   and every subgraph of the node gets one Data node per capture (marked
//   with attribute "_onnx_capture" = true), after its F formal inputs:
//       capture j  <->  node input P + j  <->  subgraph Data index F + j.
//   So If's inputs are [cond, captures...] and its branches' Data index i
//   is the If's input i + 1; a Loop body's Data nodes are
//   [iteration_num, cond, loop-carried..., captures...] matching the Loop's
//   inputs [M, cond, v_initial..., captures...]; Scan likewise. The node
//   records the count in attribute "_onnx_num_captures".
// - Sequence and optional values have ir::ValueType::Sequence / Optional
//   types; ONNX maps and sparse tensors are rejected.
// - Last, Loop and Scan become ged's While on the control_flow engine
//   (onnx_control_flow.h; docs/design/control_flow.md), before step 5.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/ir/op_types.h"
#include "base/options.h"
#include "base/ops/op_registry.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

// Attribute names the importer writes (see above).
inline constexpr std::string_view kAttrDefaultValue = "_default_value";
inline constexpr std::string_view kAttrOnnxDomain = ir::kAttrOpDomain;
inline constexpr std::string_view kAttrOnnxCapture = "_onnx_capture";
inline constexpr std::string_view kAttrOnnxNumCaptures = "_onnx_num_captures";
// On the root graph.
inline constexpr std::string_view kAttrOnnxIrVersion = "_onnx_ir_version";
inline constexpr std::string_view kAttrOnnxProducer = "_onnx_producer";

struct OnnxImportOptions {
  // libonnx's checker (onnx::checker::check_model).
  bool run_checker = true;
  // Typing the intermediate values. Without it only declared types
  // (inputs, outputs, value_info) are set. With it, libonnx's shape
  // inference fills them, unless ged's own inference covers every node of
  // the model (GedInferenceCoversGraph: no subgraphs, only default-domain
  // ops ged registers with inference, none rewritten by an opset adapter):
  // then ged's ops::InferShapes types the imported graph instead, which is
  // about three times faster on large models and gives the same types (the
  // cross-check test compares the two). Without the checker, every node is
  // still verified against its ONNX schema first (libonnx's inference
  // assumes that much).
  bool run_onnx_shape_inference = true;
  // Runs libonnx's shape inference even when ged's inference covers the
  // model (option ge.onnx_shape_inference=always).
  bool force_onnx_shape_inference = false;
  // The registry that decides which ops are supported; null means
  // ops::OpRegistry::Global(). (Tests pass their own.)
  const ops::OpRegistry* registry = nullptr;
  // Lower Loop and Scan to While (onnx_control_flow.h). Unset: lowered when
  // importing against the global registry; with a registry of the caller's
  // own (tests of the import conventions) they keep the ONNX form.
  std::optional<bool> lower_control_flow;
  // Runs on the model as parsed, before any other step (the daemon's checks
  // of a client's model, session/ingest.h); its error fails the import.
  std::function<absl::Status(const onnx::ModelProto&)> check_model;
  // Called by ImportOnnxBytes as the parser moves through the bytes: the
  // importer reads the bytes before `end` no more. The last call, with `end`
  // the size, comes once the bytes are parsed (none when they do not parse).
  // A caller whose bytes are a file mapping drops those pages, so that the
  // parsed model and the graph's tensors are not resident on top of them.
  std::function<void(size_t end)> parsed_through;
};

// The import options the option map sets (ge.onnx_shape_inference; other
// keys are ignored). Assumes ValidateOptions passed.
OnnxImportOptions OnnxImportOptionsFromMap(const OptionMap& options);

// Reads and imports the model at `path`; external data is looked up next to
// it.
absl::StatusOr<std::unique_ptr<ir::Graph>> ImportOnnxFile(const std::string& path,
                                                          const OnnxImportOptions& options = {});

// Imports a serialized model; `model_dir` is where its external data lives
// (may be empty when it has none).
absl::StatusOr<std::unique_ptr<ir::Graph>> ImportOnnxBytes(std::string_view bytes,
                                                           const std::string& model_dir,
                                                           const OnnxImportOptions& options = {});

// Imports an already parsed model (copied: shape inference writes to it).
absl::StatusOr<std::unique_ptr<ir::Graph>> ImportOnnxModel(const onnx::ModelProto& model,
                                                           const std::string& model_dir,
                                                           const OnnxImportOptions& options = {});

// Parses a serialized ModelProto with protobuf's 2 GiB limit. `source` (a
// file name) prefixes errors: "not a valid ONNX model: <source>: ...".
absl::StatusOr<onnx::ModelProto> ParseOnnxModel(std::string_view bytes, std::string_view source);

// Reads a file into memory, refusing files over protobuf's 2 GiB limit.
absl::StatusOr<std::string> ReadOnnxFile(const std::string& path);

}  // namespace ge::frontend
