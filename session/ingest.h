// Ingestion checks: what a model may carry depending on who sent it
// (docs/security.md, "File-system reach").
//
// Provenance: the operator (gectl, models named in the daemon's
// configuration) is trusted with the file system beneath its weights root;
// a client (every RPC) is not trusted with the file system at all.
//
// Client input is checked as received, before the importer adds its own
// attributes (`_model_dir`, `_onnx_opset`, ...):
//   - no FileConstant node, and no attribute file_path, location, file_id or
//     _model_dir on any node;
//   - no ONNX tensor stored as external data (data_location EXTERNAL);
//   - no other `_`-prefixed attribute than the documented user attributes
//     (docs/options.md), and for a compiled model (.gem) the compiler's
//     attributes, each of its declared kind;
//   - no compiled model whose variables name files;
//   - no operator-only option (OptionSpec::operator_only: paths, dumps).
// Each refusal is InvalidArgument naming the node and the attribute (or
// the option).
//
// Operator input keeps its files, but every file a FileConstant or an ONNX
// external tensor names must resolve, after following every symlink,
// beneath the weights root; the node is rewritten to the resolved absolute
// path, so what runs is what was checked.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "onnx/onnx_pb.h"
#include "runtime/model/gem.h"

namespace ge::session {

enum class Provenance { kClient, kOperator };

// Which `_`-prefixed attributes client input may carry.
enum class AttrPolicy {
  kUser,      // a source graph (GraphDef, ExecuteOp): the documented user attributes
  kCompiled,  // a compiled model: also the compiler's, each of its kind
};

// InvalidArgument naming the first operator-only option of `options`.
absl::Status CheckClientOptions(const OptionMap& options, std::string_view where);

// The checks above on a graph tree as received (a GraphDef converted as
// is, an ExecuteOp's op graph, a compiled model's graphs).
absl::Status CheckClientGraph(const ir::Graph& graph, AttrPolicy policy);

// The checks above on one op as received (ExecuteOp's op type and the
// names of its attributes), before it becomes a graph.
absl::Status CheckClientOp(std::string_view op_type, const std::vector<std::string>& attributes);

// The checks above on an ONNX model as parsed from the client's bytes.
absl::Status CheckClientOnnx(const onnx::ModelProto& model);

// A compiled model a client sent (LoadModel's bytes): its graphs, its
// variables (none may name a file) and its options.
absl::Status CheckClientCompiledModel(const runtime::CompiledModel& model);

// Operator models: every ONNX external tensor of `model` (whose files are
// looked up in `model_dir`) lies beneath `weights_root`.
absl::Status CheckOperatorOnnx(const onnx::ModelProto& model, const std::string& model_dir,
                               const std::string& weights_root);

// Operator models: resolves the file of every FileConstant in the tree of
// `graph` (file_path, relative to the node's _model_dir or else to
// `weights_root`; location under _model_dir; file_id through
// ge.exec.value_bins of `options`), refuses one outside `weights_root`
// (InvalidArgument naming node, attribute and path) and sets file_path to
// the resolved path. `files` (may be null) gets every resolved path.
absl::Status ResolveOperatorFiles(ir::Graph& graph, const std::string& weights_root, const OptionMap& options,
                                  std::vector<std::string>* files = nullptr);

// `path` with every symlink resolved (the missing tail taken as written),
// when it lies beneath `root` (itself resolved); InvalidArgument otherwise.
absl::StatusOr<std::string> ResolveBeneath(const std::string& root, const std::string& path);

}  // namespace ge::session
