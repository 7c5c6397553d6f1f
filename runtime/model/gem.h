// The .gem compiled model file (proto/ge/v1/model.proto): writing and
// loading (GE's OM file and ModelManager::LoadModelOffline).
//
// A CompiledModel is a placed, flattened graph plus, when it runs
// statically, its StaticProgram, with the options it was compiled with and
// what it was built for: the ged version, every engine a node is placed on
// with its version, and the CPU features of the compiling host. Weights
// live in the graph's Const nodes; with external weights they are written
// to `<file>.weights` beside the .gem (offsets aligned) and read back at
// load, and so is the engines' prepared state of each task (TaskDef::
// prepared: cpu_dense's packed weights), which a .gem with inline weights
// does not carry. Loading verifies the format version, that every engine is loaded
// here at the same version, and that this CPU has every recorded feature;
// a mismatch is FailedPrecondition naming the file and what differs.
// Nothing a file contains can crash the loader: the graph goes through
// the validating proto reader, and task references are checked.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/model/static_program.h"
#include "runtime/variables/var_manager.h"

namespace ge::runtime {

// 2: variables (VarManagerInfo), KIND_VARIABLE value references and a
// mixed graph's partitioned form. 3: subgraph_shared_weights. 4: every
// Const storage stored once (weight_aliases; gem_weights.h). 5: constant
// GEMM weights may be stored in panel order (cpu_dense's _gemm_panels,
// weight_panels.h), which a ged reading format 4 would take for plain.
inline constexpr uint32_t kGemFormatVersion = 5;
// The oldest format this ged reads (2: no subgraph_shared_weights).
inline constexpr uint32_t kGemOldestReadableVersion = 2;

struct CompiledModel {
  std::unique_ptr<ir::Graph> graph;       // flattened and placed
  std::unique_ptr<ir::Graph> partitioned;  // a mixed graph's partitioned form; may be null
  std::optional<StaticProgram> program;   // set when the graph runs statically
  OptionMap options;
  std::vector<std::pair<std::string, std::string>> engines;  // name, version (filled by SaveGem when empty)
  std::string ged_version;
  std::vector<std::string> cpu_features;
  // The variables the graph uses, at model-local logical addresses; a
  // session's VarManager resolves them by key at load.
  variables::VarManagerInfo variables;
};

struct GemWriteOptions {
  bool external_weights = false;  // Const values to `<path>.weights`
};

// The CPU features of this host that kernels may depend on ("avx2", ...).
std::vector<std::string> HostCpuFeatures();

// Writes `model` to `path` (and `<path>.weights`); records the engines'
// versions from `engines`, this ged's version and this host's CPU features.
absl::Status SaveGem(const CompiledModel& model, const std::string& path, const engine::EngineRegistry& engines,
                     const GemWriteOptions& options = {});

// A .gem in memory: the CompiledModelDef bytes and, with external weights,
// the bytes of its one weights file (named `weights_file` inside `gem`).
struct GemBytes {
  std::string gem;
  std::string weights;
};

// Serializes a compiled graph (and its program, partitioned form and
// variables, each may be null) as SaveGem writes it; with `external_weights` the Const
// values go to `weights`, recorded under the file name `weights_file`. Each
// Const storage is stored once: Consts holding one tensor (the partitioned
// form's and `graph`'s, a weight copied into several partitions, gear
// branches) name the first, and are given that tensor back at load.
absl::StatusOr<GemBytes> SerializeGem(const ir::Graph& graph, const StaticProgram* program, const OptionMap& options,
                                      const engine::EngineRegistry& engines, bool external_weights,
                                      const std::string& weights_file, const ir::Graph* partitioned = nullptr,
                                      const variables::VarManagerInfo* variables = nullptr);

// Reads and verifies a .gem whose external weights (if any) are all in
// `weights` rather than in files (the compiled-model cache reads both
// files itself, then checks their checksums). `label` names it in errors.
absl::StatusOr<CompiledModel> LoadGemFromBuffers(std::string_view gem, std::string_view weights,
                                                 const std::string& label, const engine::EngineRegistry& engines);

// As LoadGemFromBuffers, without copying the weights: every Const tensor
// that can (64-byte aligned, not bool) and every task's prepared state
// point into `weights` (the weights file, typically mapped), which they keep
// alive.
absl::StatusOr<CompiledModel> LoadGemWithWeights(std::string_view gem, std::shared_ptr<Buffer> weights,
                                                 const std::string& label, const engine::EngineRegistry& engines);

// Reads and verifies `path` against `engines` and this host (see above).
absl::StatusOr<CompiledModel> LoadGem(const std::string& path, const engine::EngineRegistry& engines);

// Reads and verifies a .gem held in memory (LoadModel's bytes), as LoadGem
// does a file; its weights must be inline. `label` names it in errors.
absl::StatusOr<CompiledModel> LoadGemFromBytes(std::string_view bytes, const std::string& label,
                                               const engine::EngineRegistry& engines);

// Whether `path` names a .gem file (by extension).
bool IsGemPath(std::string_view path);

}  // namespace ge::runtime
