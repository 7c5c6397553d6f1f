// Model tools: the offline operations gectl runs on models besides
// compiling and running them (a partition report, an ONNX summary, writing
// a compiled model as a .gem), on the runtime root's engines.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "session/runtime.h"

namespace ge::session {

// Whether `path` names a compiled model (.gem) by its extension.
bool IsCompiledModelPath(std::string_view path);

struct PartitionOutput {
  std::string report;  // JSON (one line and a newline) or text
  std::string dot;     // the partitioned tree as DOT, when asked
};

// Compiles `graph` with `options` on `rt`'s engines up to partitioning and
// reports the partitioned tree (with each node's placement rejections).
// With `leak_for_exit` the compiled graph is left for the process exit
// instead of being freed (a million-node graph takes seconds to free).
absl::StatusOr<PartitionOutput> PartitionModel(const Runtime& rt, std::unique_ptr<ir::Graph> graph,
                                               const OptionMap& options, bool json, bool dot,
                                               bool leak_for_exit = false);

// A summary of the ONNX model at `path` (opsets, inputs, outputs, ops), as
// JSON (a line) or text.
absl::StatusOr<std::string> InspectOnnxModel(const std::string& path, bool json);

struct GemWriteFlags {
  bool external_weights = false;  // Const values in `<path>.weights`
  int external_weight = 0;        // ge.externalWeight: Consts to FileConstant files (1, 2)
};

// Writes `model` to `path` (a .gem) for `rt`'s engines.
absl::Status WriteCompiledModel(runtime::CompiledModel& model, const std::string& path, const Runtime& rt,
                                const GemWriteFlags& flags);

// One pass of the compile pipeline (compiler/build/compile_pipeline.h).
struct CompilePassInfo {
  std::string name;
  bool required = false;  // ge.disable_passes refuses it
  std::string description;
  std::string parent;  // a sub-pass: the pass that runs it
};

// The compile pipeline's passes for `options` on `rt`'s engines, in order.
absl::StatusOr<std::vector<CompilePassInfo>> ListCompilePasses(const Runtime& rt, const OptionMap& options);

// Runs only `passes` of the compile pipeline on `graph` (in pipeline order,
// with `options`; a sub-pass runs its parent with only the named sub-passes)
// and returns the graph in the text form (base/ir/text_format.h). An
// unknown name is InvalidArgument naming it. gectl opt.
absl::StatusOr<std::string> RunCompilePasses(const Runtime& rt, std::unique_ptr<ir::Graph> graph,
                                             const OptionMap& options, const std::vector<std::string>& passes);

// An older ONNX op version the importer rewrites into a registered form.
struct OpsetAdapterInfo {
  std::string op_type;
  int first_version = 0;  // inclusive range of ONNX op versions
  int last_version = 0;
  std::string canonical;  // what comes out ("Squeeze-13 (axes input)")
};
std::vector<OpsetAdapterInfo> ListOpsetAdapters();

// Op type -> the engines loaded in `rt` with a kernel for it, in the
// registry's engine order.
std::map<std::string, std::vector<std::string>> KernelEnginesByOpType(const Runtime& rt);

}  // namespace ge::session
