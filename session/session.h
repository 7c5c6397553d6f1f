// Session: the graphs of one client and their compile-or-run lifecycle
// (GE's Session + GraphManager). Used in process by gectl and by the daemon.
//
// Options come in three scopes: global (the process), session, and graph;
// a graph's options override its session's. A graph is compiled once
// (explicitly or on its first run) and then run any number of times; runs of
// one graph are serialized by its executor, runs of different graphs are not.
//
// Execution path: a compiled graph the partition pipeline left as one static
// unit (compiler::IsStaticGraph) runs on the StaticExecutor, its arena taken
// from the session's device; every other graph, and a static graph the
// static path cannot take (strings, subgraph owners; logged), runs on the
// DynamicExecutor. A graph split into static and dynamic units (a mixed
// root) runs its partitioned form on the DynamicExecutor, with each static
// PartitionedCall's subgraph on a StaticExecutor; when that form cannot
// run, the flattened graph runs dynamically.
//
// Gears (ge.dynamicBatchSize / ge.dynamicImageSize / ge.dynamicDims): the
// compiled root selects a Case branch per run from the input shapes
// (GearIndex); each gear's branch runs its static units on StaticExecutors.
// RunGraph selects first, so an input that fits no gear fails before any
// node runs with the list of gears, unless ge.compileHybridMode=1 compiled
// the dynamic graph as a last branch; each run's path is counted
// (GetGearRunCounts, the run-path observer) and logged (gear: debug,
// dynamic: info). Callers see the inputs' shapes as they gave them (-1 for
// the dynamic dims), not the root's max shapes.
//
// Per-shape plans (JIT, ge.jitCompile, on by default; session/jit_graph.h):
// a graph whose inputs have unknown dims is not compiled as a whole at
// CompileGraph; each run compiles and runs the slices whose shapes are
// known for its inputs (usually the whole graph as one static plan),
// infers further from their real values, and continues; slices are cached
// behind guards on their inputs, at most ge.jitMaxPlans of them (and
// ge.jitPlanMemoryBytes of their values) per graph, a more frequent shape
// replacing the least recently used (GetJitStats). A shape that fits no
// plan at the bound, or inputs that cannot be planned, take the graph's
// dynamic form instead:
// the single compiled form, compiled on first ask (that fallback,
// GetCompiledGraph, GetCacheUse, ExportCompiledModel, ...), so a .gem
// export or the daemon's CompileGraph return the dynamic model as before.
// Runs of different shapes run at once on their own plans. A compiled
// model with unknown input dims (AddCompiledModel: a .gem; AddCachedModel)
// plans the same way from a clone of its compiled graph; the model as
// loaded is its dynamic form (StartJitFromCompiled).
//
// Variables: every session has a unique id and its own VarManager in the
// VarManagerPool (runtime/variables), so graphs of one session share their
// variables across runs and graphs, and no session sees another's. A
// compiled graph or loaded model carries its variables' descriptions at
// model-local logical addresses; they are resolved by key into the
// session's manager when its executor loads. Destroying the session frees
// its variable memory.
//
// Compiled-model cache (runtime/cache): with a cache set (set_cache_scope,
// or the graph options `ge.graph_compiler_cache_dir` [+ `ge.graph_key`]),
// CompileGraph compiles through it (session/compile_cache.h): a hit in the
// session's namespace is loaded instead of compiling; a miss is compiled
// and stored. A store that fails (full disk, no permission) is a warning:
// the compiled graph is used all the same.
// Graphs added as a GraphSource are looked up by their direct key at
// AddGraph, so a hit never imports them (see AddGraph).
// A hit holds what a .gem keeps: the flattened graph with its program, or,
// for a mixed graph, also the partitioned form, so it runs mixed as when
// compiled.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/options.h"
#include "base/compute_budget.h"
#include "base/thread_pool.h"
#include "base/value.h"
#include "compiler/build/graph_compiler.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/device/device.h"
#include "runtime/executor/dynamic_executor.h"
#include "runtime/executor/static_executor.h"
#include "runtime/cache/model_cache.h"
#include "runtime/model/gem.h"
#include "runtime/variables/session_variables.h"
#include "session/compile_cache.h"
#include "session/jit_graph.h"

namespace ge::session {

struct GraphIo {
  std::string name;
  ir::ValueType type;
  // An input's default (an ONNX initializer that is also a graph input,
  // the importer's "_default_value"): RunGraph uses it when the caller
  // passes fewer inputs.
  std::optional<Tensor> default_value = std::nullopt;
};

// A multi-batch graph's gears and how its runs went (Session::RunGraph).
struct GearRunCounts {
  bool multi_batch = false;        // compiled with gears
  std::vector<std::string> gears;  // labels, as given ("4", "1,32")
  bool has_dynamic_graph = false;  // hybrid mode
  uint64_t gear_runs = 0;          // runs on a gear's static branch
  uint64_t dynamic_runs = 0;       // runs on the dynamic graph (hybrid)
};

// The path one run of a multi-batch graph took.
enum class RunPath : uint8_t { kGear, kDynamic };

struct GraphInfo {
  std::vector<GraphIo> inputs;   // by Data index
  std::vector<GraphIo> outputs;  // NetOutput order
  std::string graph_name;        // the graph's (the compiled graph's after a direct-mode hit)
};

class Session {
 public:
  // `engines` and `pool` (may be null) must outlive the session; so must
  // `device` when given (variable memory and static arenas come from it;
  // without one the session makes its own). The pool serves the compiler's
  // parallel passes and sets the kernels' thread count (its workers + 1);
  // kernels run on OpenMP (runtime/engines/sdk/parallel.h), never on it.
  Session(const engine::EngineRegistry& engines, OptionMap options, ThreadPool* pool,
          device::Device* device = nullptr);
  // As above, on a device the session owns (a tenant's quota view of a
  // shared device, session::Runtime::NewSession).
  Session(const engine::EngineRegistry& engines, OptionMap options, ThreadPool* pool,
          std::unique_ptr<device::Device> owned_device);
  ~Session();

  // Unique in the process; the key of this session's VarManager.
  uint64_t id() const { return id_; }

  // A copy of variable `name`'s value; NotFound naming it when no graph of
  // this session has registered it.
  absl::StatusOr<Tensor> GetVariable(std::string_view name);
  // Writes `value` into variable `name` (registered by a compiled graph);
  // InvalidArgument when the dtype or shape differ.
  absl::Status SetVariable(std::string_view name, const Tensor& value);
  // Names of this session's variables, sorted.
  std::vector<std::string> ListVariables();

  // Validates the options and keeps the graph under `graph_id`.
  absl::Status AddGraph(uint32_t graph_id, std::unique_ptr<ir::Graph> graph, const OptionMap& options = {});
  // Direct mode (session/compile_cache.h): a model not imported yet. With a
  // cache, the compiled model of its direct key (or ge.graph_key) is looked
  // up first: a hit is installed as the compiled graph without importing
  // (GetGraphInfo then describes the compiled graph; CompileGraph is a
  // no-op and GetCacheUse says hit and direct_hit). A miss imports the
  // model (with the checks of its provenance; their error is returned as
  // is) and CompileGraph compiles it through the cache, writing the direct
  // entry. `source` must stay valid until this returns.
  absl::Status AddGraph(uint32_t graph_id, const GraphSource& source, const OptionMap& options = {});
  absl::Status RemoveGraph(uint32_t graph_id);
  // Compiles the graph (a no-op when it is already compiled).
  // `timeout_seconds` > 0 bounds the compilation (checked between passes):
  // past it, ResourceExhausted naming `timeout_setting`.
  absl::Status CompileGraph(uint32_t graph_id, double timeout_seconds = 0, std::string_view timeout_setting = {});
  // Runs the graph, compiling it first if needed. Inputs are checked
  // against the graph's input types (count, dtype, rank, known dims).
  // `control` (may be null) can stop the run between nodes and tasks.
  absl::StatusOr<std::vector<Value>> RunGraph(uint32_t graph_id, std::vector<Value> inputs,
                                              const runtime::RunControl* control = nullptr);

  // Inputs and outputs with their types (inferred ones once compiled).
  absl::StatusOr<GraphInfo> GetGraphInfo(uint32_t graph_id) const;
  // The compiled form, for reports; FailedPrecondition before compilation.
  absl::StatusOr<const compiler::CompiledGraph*> GetCompiledGraph(uint32_t graph_id);
  // Whether the compiled graph runs on the StaticExecutor; FailedPrecondition
  // before compilation.
  absl::StatusOr<bool> RunsStatically(uint32_t graph_id);
  // How many (sub)graphs of the compiled graph run on a StaticExecutor: 1
  // for a static graph, the static units of a mixed root, else 0.
  absl::StatusOr<int> NumStaticSubgraphs(uint32_t graph_id);

  // Runs by path of a multi-batch graph (zeros for other graphs);
  // FailedPrecondition before compilation.
  absl::StatusOr<GearRunCounts> GetGearRunCounts(uint32_t graph_id);
  // Called once per run of a multi-batch graph with the path it takes
  // (the daemon's ged_gear_runs_total). Set before runs start.
  void set_run_path_observer(std::function<void(RunPath)> observer) { run_path_observer_ = std::move(observer); }

  // A JIT graph's compilations, recompilations and last guard failure;
  // FailedPrecondition for other graphs.
  absl::StatusOr<JitStats> GetJitStats(uint32_t graph_id) const;

  // The cache and namespace CompileGraph and AddCachedModel use for graphs
  // without `ge.graph_compiler_cache_dir` (the cache may be null; it must
  // outlive the session).
  void set_cache_scope(CacheScope scope) { cache_scope_ = std::move(scope); }
  const CacheScope& cache_scope() const { return cache_scope_; }
  // The same in the operator's namespace (gectl, tests).
  void set_model_cache(cache::ModelCache* cache) { cache_scope_ = CacheScope{cache}; }
  // How CompileGraph used the cache; FailedPrecondition before compilation.
  absl::StatusOr<CacheUse> GetCacheUse(uint32_t graph_id);
  // Adds the cached model of `key` as an already compiled graph (LoadModel
  // by key), from the session's namespace or the operator's. NotFound when
  // there is no such entry the session may read (the same message whether
  // another namespace has it or none); FailedPrecondition without a cache.
  absl::Status AddCachedModel(uint32_t graph_id, const std::string& key);

  // The compiled graph as a .gem file's bytes (weights inline), as
  // SaveGem would write it: its static program (rebuilt from the compiled
  // graph), its partitioned form when it runs mixed, and its variables.
  // FailedPrecondition before compilation.
  absl::StatusOr<std::string> ExportCompiledModel(uint32_t graph_id);

  // Adds a graph that is already compiled (a loaded .gem): its program,
  // when set, runs on the StaticExecutor, else its graph on the
  // DynamicExecutor. Fails like CompileGraph when an executor cannot load.
  absl::Status AddCompiledModel(uint32_t graph_id, runtime::CompiledModel model);

  // Charges the host memory of this session's runs (the output cache:
  // dynamic outputs, intermediates, workspaces, static outputs) to `quota`
  // and its chain (the tenant's max_memory_bytes, the daemon's budget).
  // Call before adding graphs: executors keep the cache they were made with.
  // `max_tensor_bytes` (> 0) also bounds each single allocation of the runs,
  // refused as RESOURCE_EXHAUSTED naming max_tensor_bytes.
  void set_memory_quota(std::shared_ptr<device::MemoryQuota> quota, int64_t max_tensor_bytes = 0);
  // The compute-thread budget the session's runs share with every other
  // session on its device (base/compute_budget.h; must outlive the
  // session). Call before adding graphs. Without one the session has its
  // own, of its thread count.
  void set_compute_budget(ComputeBudget* budget) { budget_ = budget; }
  ComputeBudget* compute_budget() const { return budget_; }
  // Bounds the compilations of this session's graphs that are not given a
  // timeout of their own (CompileGraph without one, so RunGraph's implicit
  // compile; a JIT graph's per-shape plans, compiled at run time, and its
  // dynamic form, compiled on first ask): past `seconds` (> 0; 0 leaves
  // them unbounded) they fail ResourceExhausted naming `setting`. Call
  // before adding graphs.
  void set_compile_timeout(double seconds, std::string setting) {
    compile_timeout_seconds_ = seconds;
    compile_timeout_setting_ = std::move(setting);
  }

  // The cache kernel outputs of dynamic runs come from
  // (ExecutorOptions::output_allocator).
  device::CachingAllocator& output_cache() const { return *output_cache_; }
  // Returns the output cache's blocks to the host when it has been idle for
  // ge.exec.output_cache_idle_trim_ms; the bytes returned. The daemon calls
  // it periodically so that a session nobody runs holds no cached memory.
  // A JIT graph's slices have a cache of their own, trimmed with it.
  size_t TrimIdleCaches();

 private:
  struct GraphEntry;
  // Shared: a run or compile keeps its entry alive when RemoveGraph drops
  // it meanwhile.
  absl::StatusOr<std::shared_ptr<GraphEntry>> Find(uint32_t graph_id) const;
  // Creates the executor of a compiled entry (static when `program` is set).
  absl::Status LoadExecutor(GraphEntry& entry, std::optional<runtime::StaticProgram> program);
  absl::StatusOr<device::Device*> GetDevice();
  // The session's variables, created with the device on first use.
  absl::StatusOr<variables::SessionVariables*> GetVariables();
  // The cache scope of a graph's options (ge.graph_compiler_cache_dir, in
  // the operator's namespace, opened on first use), else the session's.
  absl::StatusOr<CacheScope> ScopeFor(const OptionMap& options);
  // Makes `entry` a compiled graph from `model`.
  absl::Status InstallCompiledModel(GraphEntry& entry, runtime::CompiledModel model);
  // Runs a mixed root's partitioned form (see above); false to fall back.
  bool LoadMixed(GraphEntry& entry, runtime::ExecutorOptions options);
  // Builds and loads the static program of a known-shape (sub)graph on the
  // session's device, its executor made with `options` (null when the
  // session has no device).
  using StaticLoader = std::function<absl::StatusOr<std::unique_ptr<runtime::StaticExecutor>>(const ir::Graph&)>;
  StaticLoader MakeStaticLoader(const runtime::ExecutorOptions& options);
  // Multi-batch graphs: selects the branch the inputs take (an input that
  // fits no gear is an error listing them, unless there is a dynamic
  // graph), counts and logs the path.
  // ge.jitCompile: whether `entry` (its options and input types) wants
  // per-shape plans; StartJit makes it a JitGraph when it also can be
  // sliced (no control flow, no variables); false to compile as usual.
  absl::StatusOr<bool> WantsJit(uint32_t graph_id, const GraphEntry& entry);
  absl::StatusOr<bool> StartJit(uint32_t graph_id, GraphEntry& entry);
  // The same for an entry installed from a compiled model (a .gem, a cache
  // entry loaded by key, a direct-mode hit without its source's bytes):
  // with unknown input dims, no static program and no gears, it plans from
  // a clone of the compiled graph (the slices recompile its placed,
  // optimized nodes for the actual shapes), and the model as loaded is its
  // dynamic form.
  absl::Status StartJitFromCompiled(uint32_t graph_id, GraphEntry& entry);
  // Compiles `entry`'s graph as a whole (through the cache) and loads it.
  absl::Status CompileDynamic(uint32_t graph_id, GraphEntry& entry);
  // The compiled form: a JIT graph's is compiled on first ask (call with
  // the entry's compile_mu held); FailedPrecondition for a graph not
  // compiled yet.
  absl::Status DynamicForm(uint32_t graph_id, GraphEntry& entry);
  absl::Status CountGearRun(uint32_t graph_id, GraphEntry& entry, const std::vector<Value>& inputs);

  const engine::EngineRegistry& engines_;
  OptionMap options_;
  ThreadPool* pool_;
  std::unique_ptr<ComputeBudget> owned_budget_;
  ComputeBudget* budget_ = nullptr;
  double compile_timeout_seconds_ = 0;
  std::string compile_timeout_setting_;
  const uint64_t id_;
  mutable std::mutex mu_;
  // Created on first use unless given; declared before graphs_ so that it
  // outlives the executors whose arenas it holds.
  std::unique_ptr<device::Device> owned_device_;
  device::Device* device_ = nullptr;
  // Kernel outputs of the session's dynamic executors come from here (over
  // the host allocator: outputs leave the session and may outlive its
  // device). Closed, so trimmed, when the session ends.
  std::shared_ptr<device::CachingAllocator> output_cache_;
  // Declared before graphs_: executors bind variable memory.
  std::unique_ptr<variables::SessionVariables> variables_;
  CacheScope cache_scope_;
  std::function<void(RunPath)> run_path_observer_;
  // Caches named by ge.graph_compiler_cache_dir, by directory.
  std::map<std::string, std::unique_ptr<cache::ModelCache>> option_caches_;
  std::map<uint32_t, std::shared_ptr<GraphEntry>> graphs_;
};

// Checks run inputs against the graph's declared inputs; messages name the
// input by index and name with the expected and actual types.
absl::Status CheckInputs(const GraphInfo& info, const std::vector<Value>& inputs);

}  // namespace ge::session
