// Session: graph bookkeeping, option scopes, compile-on-demand and runs.
#include "session/session.h"

#include <atomic>
#include <chrono>
#include <optional>

#include "absl/strings/numbers.h"
#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/ops/gear_index.h"
#include "base/status.h"
#include "compiler/build/task_builder.h"
#include "compiler/passes/compile_deadline.h"
#include "runtime/cache/cache_key.h"
#include "session/jit_graph.h"

namespace ge::session {
namespace {

// The importer's attribute for a graph input's default value
// (compiler/frontend/onnx_importer.h, kAttrDefaultValue).
constexpr std::string_view kAttrDefaultValue = "_default_value";

// Appends the defaults of the inputs after the ones given, as far as every
// one of them has a default; CheckInputs reports any other count mismatch.
void AppendInputDefaults(const GraphInfo& info, std::vector<Value>& inputs) {
  for (size_t i = inputs.size(); i < info.inputs.size(); ++i) {
    if (!info.inputs[i].default_value) return;
  }
  for (size_t i = inputs.size(); i < info.inputs.size(); ++i) inputs.emplace_back(*info.inputs[i].default_value);
}

GraphInfo DescribeGraph(const ir::Graph& graph) {
  GraphInfo info;
  info.graph_name = graph.name();
  for (const ir::Node* data : graph.InputNodes()) {
    const ir::IoDesc& out = data->op_desc().output(0);
    ir::ValueType type = out.type;
    // A multi-batch graph's Data holds the max shape; callers see theirs.
    if (auto user = data->op_desc().GetAttr<Shape>(ir::kAttrUserShape); user && type.is_tensor()) {
      type = ir::ValueType::Tensor(type.dtype(), *user);
    }
    info.inputs.push_back({out.name.empty() ? data->name() : out.name, type,
                           data->op_desc().GetAttr<Tensor>(kAttrDefaultValue)});
  }
  if (const ir::Node* net_output = graph.OutputNode()) {
    for (int i = 0; i < net_output->num_inputs(); ++i) {
      const ir::IoDesc& in = net_output->op_desc().input(i);
      ir::ValueType type = in.type;
      if (ir::OutPort p = net_output->input(i)) type = p.node->op_desc().output(p.index).type;
      info.outputs.push_back({in.name.empty() ? StrCat("output_", i) : in.name, type});
    }
  }
  return info;
}

bool DimsCompatible(const Shape& declared, const Shape& actual) {
  if (declared.unknown_rank()) return true;
  if (declared.rank() != actual.rank()) return false;
  for (size_t i = 0; i < declared.dims().size(); ++i) {
    if (declared.dim(i) >= 0 && declared.dim(i) != actual.dim(i)) return false;
  }
  return true;
}

}  // namespace

struct Session::GraphEntry {
  // Until compiled (a JIT graph's is in its JitGraph, cloned here when its
  // dynamic form is asked for).
  std::unique_ptr<ir::Graph> graph;
  OptionMap options;
  std::unique_ptr<compiler::CompiledGraph> compiled;
  std::unique_ptr<runtime::DynamicExecutor> executor;
  std::unique_ptr<runtime::StaticExecutor> static_executor;
  bool mixed = false;  // `executor` runs the partitioned graph with static subgraphs
  // A multi-batch graph's gear table (its GearIndex node), and its runs by path.
  std::optional<ops::GearTable> gears;
  std::atomic<uint64_t> gear_runs{0};
  std::atomic<uint64_t> dynamic_runs{0};
  // ge.jitCompile: the graph runs as per-shape plans (JIT-compiled slices);
  // `compiled` and its executor, the dynamic form, come on first ask.
  std::unique_ptr<JitGraph> jit;
  GraphInfo info;
  CacheUse cache_use;
  // Direct mode: the direct entry to write once compiled, and whether the
  // user key (ge.graph_key) was looked up at AddGraph and missed.
  DirectTarget direct;
  bool user_key_missed = false;
  std::mutex compile_mu;
};

absl::Status CheckInputs(const GraphInfo& info, const std::vector<Value>& inputs) {
  if (inputs.size() != info.inputs.size()) {
    return InvalidArgument("the graph takes ", info.inputs.size(), " input(s), got ", inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const GraphIo& io = info.inputs[i];
    const Value& v = inputs[i];
    if (io.type.is_tensor()) {
      if (!v.is_tensor()) return InvalidArgument("input ", i, " '", io.name, "': expected a tensor ", io.type.ToString());
      const Tensor& t = v.tensor();
      if (t.dtype() != io.type.dtype() || !DimsCompatible(io.type.shape(), t.shape())) {
        return InvalidArgument("input ", i, " '", io.name, "': expected ", io.type.ToString(), ", got ",
                               DataTypeName(t.dtype()), t.shape().ToString());
      }
    }
  }
  return absl::OkStatus();
}

namespace {
std::atomic<uint64_t> next_session_id{1};

// Starts `deadline` for a compile bounded by `seconds` (> 0; else none).
void BoundCompile(std::optional<compiler::ScopedCompileDeadline>& deadline, double seconds, std::string_view setting) {
  if (seconds <= 0) return;
  deadline.emplace(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds)),
      std::string(setting));
}
}  // namespace

Session::Session(const engine::EngineRegistry& engines, OptionMap options, ThreadPool* pool,
                 std::unique_ptr<device::Device> owned_device)
    : Session(engines, std::move(options), pool, owned_device.get()) {
  owned_device_ = std::move(owned_device);
}

Session::Session(const engine::EngineRegistry& engines, OptionMap options, ThreadPool* pool, device::Device* device)
    : engines_(engines),
      options_(std::move(options)),
      pool_(pool),
      owned_budget_(std::make_unique<ComputeBudget>(pool ? pool->num_threads() + 1 : 1)),
      budget_(owned_budget_.get()),
      id_(next_session_id++),
      device_(device) {
  device::CachingAllocatorOptions cache_options;
  cache_options.name = StrCat("host (outputs of session ", id_, ")");
  // Validated with the other options where sessions are made (an unparsable
  // value keeps the default here).
  int64_t idle_ms = 0;
  if (auto it = options_.find("ge.exec.output_cache_idle_trim_ms");
      it != options_.end() && absl::SimpleAtoi(it->second, &idle_ms) && idle_ms >= 0) {
    cache_options.idle_trim = std::chrono::milliseconds(idle_ms);
  }
  output_cache_ = std::make_shared<device::CachingAllocator>(nullptr, std::move(cache_options));
}

void Session::set_memory_quota(std::shared_ptr<device::MemoryQuota> quota, int64_t max_tensor_bytes) {
  device::CachingAllocatorOptions cache_options = output_cache_->options();
  cache_options.quota = std::move(quota);
  cache_options.max_allocation_bytes = max_tensor_bytes;
  cache_options.max_allocation_key = "max_tensor_bytes";
  output_cache_->Close();
  output_cache_ = std::make_shared<device::CachingAllocator>(nullptr, std::move(cache_options));
}

// Executors go first (they bind variable memory), then the variables.
Session::~Session() {
  graphs_.clear();
  output_cache_->Close();
  variables_.reset();
  absl::Status freed = variables::VarManagerPool::Global().Destroy(id_);
  if (!freed.ok() && freed.code() != absl::StatusCode::kNotFound) {
    GE_LOG_ERROR("session", "session {}: {}", id_, freed.message());
  }
}

size_t Session::TrimIdleCaches() {
  size_t trimmed = output_cache_->TrimIfIdle();
  std::vector<std::shared_ptr<GraphEntry>> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, entry] : graphs_) entries.push_back(entry);
  }
  for (const std::shared_ptr<GraphEntry>& entry : entries) {
    // A graph compiling meanwhile is not idle: skipped.
    std::unique_lock<std::mutex> lock(entry->compile_mu, std::try_to_lock);
    if (lock.owns_lock() && entry->jit) trimmed += entry->jit->TrimIdleCaches();
  }
  return trimmed;
}

absl::StatusOr<variables::SessionVariables*> Session::GetVariables() {
  GE_ASSIGN_OR_RETURN(device::Device * device, GetDevice());
  std::lock_guard<std::mutex> lock(mu_);
  if (!variables_) {
    auto bins_option = options_.find("ge.exec.value_bins");
    GE_ASSIGN_OR_RETURN(variables::ValueBins bins,
                        variables::ParseValueBins(bins_option == options_.end() ? "" : bins_option->second));
    uint64_t limit = 0;
    if (auto it = options_.find("ge.variableMemoryMaxSize"); it != options_.end()) {
      if (!absl::SimpleAtoi(it->second, &limit)) return InvalidArgument("bad ge.variableMemoryMaxSize '", it->second, "'");
    }
    variables_ = std::make_unique<variables::SessionVariables>(
        variables::VarManagerPool::Global().GetOrCreate(id_, device, limit), &variables::FileConstantCache::Global(),
        std::move(bins));
  }
  return variables_.get();
}

absl::StatusOr<Tensor> Session::GetVariable(std::string_view name) {
  GE_ASSIGN_OR_RETURN(variables::SessionVariables * vars, GetVariables());
  GE_ASSIGN_OR_RETURN(Tensor value, vars->manager().GetVarTensor(name));
  return value.Clone();
}

absl::Status Session::SetVariable(std::string_view name, const Tensor& value) {
  GE_ASSIGN_OR_RETURN(variables::SessionVariables * vars, GetVariables());
  return vars->manager().WriteVar(name, value);
}

std::vector<std::string> Session::ListVariables() {
  absl::StatusOr<variables::SessionVariables*> vars = GetVariables();
  return vars.ok() ? (*vars)->manager().VarNames() : std::vector<std::string>{};
}

absl::Status Session::AddGraph(uint32_t graph_id, std::unique_ptr<ir::Graph> graph, const OptionMap& options) {
  OptionMap merged = options_;
  for (const auto& [k, v] : options) merged[k] = v;
  GE_RETURN_IF_ERROR(ValidateOptions(merged));
  auto entry = std::make_shared<GraphEntry>();
  entry->info = DescribeGraph(*graph);
  entry->graph = std::move(graph);
  entry->options = std::move(merged);
  std::lock_guard<std::mutex> lock(mu_);
  if (graphs_.contains(graph_id)) return AlreadyExists("graph ", graph_id, " already exists in this session");
  graphs_.emplace(graph_id, std::move(entry));
  return absl::OkStatus();
}

absl::Status Session::AddGraph(uint32_t graph_id, const GraphSource& source, const OptionMap& options) {
  OptionMap merged = options_;
  for (const auto& [k, v] : options) merged[k] = v;
  GE_RETURN_IF_ERROR(ValidateOptions(merged));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (graphs_.contains(graph_id)) return AlreadyExists("graph ", graph_id, " already exists in this session");
  }
  auto entry = std::make_shared<GraphEntry>();
  entry->options = std::move(merged);
  CacheScope scope;
  if (absl::StatusOr<CacheScope> found = ScopeFor(entry->options); found.ok()) {
    scope = *std::move(found);
  } else {
    Logger("cache").warn("graph {} compiles without the cache: {}", graph_id, found.status().message());
  }
  if (scope.cache != nullptr) {
    absl::StatusOr<runtime::CompiledModel> hit =
        LookupSource(source, entry->options, engines_, pool_, scope, &entry->cache_use);
    if (hit.ok()) {
      const std::string key = entry->cache_use.key;
      absl::Status installed = InstallCompiledModel(*entry, *std::move(hit));
      if (installed.ok()) {
        // A graph with unknown input dims gets per-shape plans (JIT) from
        // its source, imported after all; the hit is its dynamic form.
        GE_ASSIGN_OR_RETURN(bool jit, WantsJit(graph_id, *entry));
        if (jit) {
          // A source without its bytes (added by digest) cannot: the hit
          // runs as its dynamic form.
          absl::StatusOr<ImportedGraph> imported = ImportSource(source, entry->cache_use, nullptr);
          if (imported.ok()) {
            entry->graph = std::move(imported->graph);
          } else {
            // It plans from the compiled graph instead (StartJitFromCompiled).
            GE_LOG_INFO("session", "graph {} plans from its cached compiled form: {}", graph_id,
                        imported.status().message());
            GE_RETURN_IF_ERROR(StartJitFromCompiled(graph_id, *entry));
          }
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (graphs_.contains(graph_id)) return AlreadyExists("graph ", graph_id, " already exists in this session");
        graphs_.emplace(graph_id, std::move(entry));
        return absl::OkStatus();
      }
      // A hit this host cannot load: import and compile instead.
      Logger("cache").warn("cache entry {} cannot be loaded, importing: {}", key, installed.message());
      entry->compiled.reset();
      entry->options = options_;
      for (const auto& [k, v] : options) entry->options[k] = v;
      entry->cache_use.hit = entry->cache_use.direct_hit = false;
    } else {
      entry->user_key_missed = entry->cache_use.direct_key.empty() && !entry->cache_use.key.empty();
    }
  }
  GE_ASSIGN_OR_RETURN(ImportedGraph imported, ImportSource(source, entry->cache_use, &entry->direct));
  if (imported.graph == nullptr) return Internal("the importer returned no graph");
  entry->info = DescribeGraph(*imported.graph);
  entry->graph = std::move(imported.graph);
  std::lock_guard<std::mutex> lock(mu_);
  if (graphs_.contains(graph_id)) return AlreadyExists("graph ", graph_id, " already exists in this session");
  graphs_.emplace(graph_id, std::move(entry));
  return absl::OkStatus();
}

absl::Status Session::RemoveGraph(uint32_t graph_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (graphs_.erase(graph_id) == 0) return NotFound("graph ", graph_id, " does not exist in this session");
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Session::GraphEntry>> Session::Find(uint32_t graph_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = graphs_.find(graph_id);
  if (it == graphs_.end()) return NotFound("graph ", graph_id, " does not exist in this session");
  return it->second;
}

absl::Status Session::CompileGraph(uint32_t graph_id, double timeout_seconds, std::string_view timeout_setting) {
  std::optional<compiler::ScopedCompileDeadline> deadline;
  if (timeout_seconds > 0) {
    BoundCompile(deadline, timeout_seconds, timeout_setting);
  } else {
    BoundCompile(deadline, compile_timeout_seconds_, compile_timeout_setting_);
  }
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  if (entry->jit) return absl::OkStatus();
  GE_ASSIGN_OR_RETURN(bool jit, StartJit(graph_id, *entry));
  if (jit || entry->compiled) return absl::OkStatus();
  return CompileDynamic(graph_id, *entry);
}

absl::Status Session::CompileDynamic(uint32_t graph_id, GraphEntry& entry_ref) {
  GraphEntry* entry = &entry_ref;
  if (entry->graph == nullptr) return Internal("graph ", graph_id, " has no graph to compile");
  // A cache problem never fails a compile: it is a warning, and the graph
  // compiles without the cache.
  CacheScope scope;
  if (absl::StatusOr<CacheScope> found = ScopeFor(entry->options); found.ok()) {
    scope = *std::move(found);
  } else {
    Logger("cache").warn("graph {} compiles without the cache: {}", graph_id, found.status().message());
  }
  absl::StatusOr<runtime::CompiledModel> model =
      CompileThroughCache(entry->graph, entry->options, engines_, pool_, scope, &entry->cache_use,
                          /*lookup=*/!entry->user_key_missed, &entry->direct);
  if (!model.ok()) return model.status();
  if (entry->cache_use.hit) {
    absl::Status installed = InstallCompiledModel(*entry, *std::move(model));
    if (installed.ok()) return absl::OkStatus();
    // A hit this host cannot load (an executor refused it): compile instead.
    Logger("cache").warn("cache entry {} cannot be loaded, compiling: {}", entry->cache_use.key, installed.message());
    entry->compiled.reset();
    model = CompileThroughCache(entry->graph, entry->options, engines_, pool_, scope, &entry->cache_use,
                                /*lookup=*/false, &entry->direct);
    if (!model.ok()) return model.status();
  }
  absl::Status loaded = InstallCompiledModel(*entry, *std::move(model));
  if (!loaded.ok()) entry->compiled.reset();
  return loaded;
}

absl::StatusOr<bool> Session::WantsJit(uint32_t graph_id, const GraphEntry& entry) {
  GE_ASSIGN_OR_RETURN(bool enabled, ParseBoolOption("ge.jitCompile", OptionOrDefault(entry.options, "ge.jitCompile")));
  if (!enabled) return false;
  bool unknown = false;
  for (const GraphIo& in : entry.info.inputs) {
    if (!in.type.is_tensor()) return false;  // sequences, optionals: the dynamic executor's
    unknown = unknown || !in.type.shape().IsFullyKnown();
  }
  if (!unknown) return false;  // nothing to learn at run time: compile as usual
  for (const char* gears : {"ge.dynamicBatchSize", "ge.dynamicImageSize", "ge.dynamicDims"}) {
    if (!OptionOrDefault(entry.options, gears).empty()) {
      GE_LOG_INFO("session", "graph {} compiles its gears ({}): ge.jitCompile does not apply", graph_id, gears);
      return false;
    }
  }
  return true;
}

absl::StatusOr<bool> Session::StartJit(uint32_t graph_id, GraphEntry& entry) {
  if (entry.graph == nullptr) return false;
  GE_ASSIGN_OR_RETURN(bool wanted, WantsJit(graph_id, entry));
  if (!wanted) return false;
  JitLimits limits;
  GE_ASSIGN_OR_RETURN(limits.max_recompiles,
                      ParseIntOption("ge.jitMaxRecompiles", OptionOrDefault(entry.options, "ge.jitMaxRecompiles")));
  GE_ASSIGN_OR_RETURN(limits.max_plans,
                      ParseIntOption("ge.jitMaxPlans", OptionOrDefault(entry.options, "ge.jitMaxPlans")));
  GE_ASSIGN_OR_RETURN(limits.max_plan_bytes,
                      ParseIntOption("ge.jitPlanMemoryBytes", OptionOrDefault(entry.options, "ge.jitPlanMemoryBytes")));
  if (!JitGraph::CanSlice(*entry.graph)) {
    GE_LOG_INFO("session", "graph {} compiles as a whole: JIT slicing does not take control flow", graph_id);
    return false;
  }
  // Variables live in this session's VarManager; the slices' session has
  // its own, so graphs that read or write variables run as a whole.
  bool variables = false;
  entry.graph->ForEachNode([&](const ir::Node* n) { variables = variables || n->type() == ir::kVariable; });
  if (variables) {
    GE_LOG_INFO("session", "graph {} compiles as a whole: JIT slices do not take variables", graph_id);
    return false;
  }
  GE_ASSIGN_OR_RETURN(device::Device * device, GetDevice());
  // The slices compile with the graph's options, without the JIT and cache keys.
  OptionMap options = entry.options;
  for (const char* key : {"ge.jitMaxRecompiles", "ge.jitMaxPlans", "ge.jitPlanMemoryBytes",
                          "ge.graph_compiler_cache_dir", "ge.graph_key"}) {
    options.erase(key);
  }
  options["ge.jitCompile"] = "0";  // a slice's inputs are known: it compiles as a whole
  // The JitGraph holds the only copy of the graph; the dynamic form
  // compiles from a clone of it (tensors are shared).
  entry.jit =
      std::make_unique<JitGraph>(graph_id, std::move(entry.graph), std::move(options), limits, engines_, pool_, device);
  entry.jit->set_compute_budget(budget_);
  entry.jit->set_compile_timeout(compile_timeout_seconds_, compile_timeout_setting_);
  const device::CachingAllocatorOptions& cache = output_cache_->options();
  entry.jit->set_memory_quota(cache.quota, cache.max_allocation_bytes);
  return true;
}

absl::Status Session::StartJitFromCompiled(uint32_t graph_id, GraphEntry& entry) {
  // A static program, gears or no compiled graph: nothing to plan.
  if (entry.jit || entry.compiled == nullptr || entry.static_executor || entry.gears) return absl::OkStatus();
  // The JitGraph owns what it plans from: a clone (tensors are shared with
  // the compiled graph, which stays the dynamic form).
  entry.graph = entry.compiled->graph->Clone();
  // Flattening left the dynamic partitioner's verdict for unknown dims on
  // the nodes; each slice's compile decides again for its shapes.
  entry.graph->mutable_attrs().erase(std::string(ir::kAttrIsUnknownShape));
  entry.graph->ForEachNode([](ir::Node* n) { n->mutable_op_desc().RemoveAttr(ir::kAttrIsUnknownShape); });
  absl::StatusOr<bool> started = StartJit(graph_id, entry);
  entry.graph.reset();
  if (!started.ok()) return started.status();
  if (*started) GE_LOG_INFO("session", "graph {}: per-shape plans from the compiled model", graph_id);
  return absl::OkStatus();
}

absl::StatusOr<JitStats> Session::GetJitStats(uint32_t graph_id) const {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  if (!entry->jit) return FailedPrecondition("graph ", graph_id, " does not run JIT-compiled (ge.jitCompile)");
  return entry->jit->stats();
}

absl::Status Session::DynamicForm(uint32_t graph_id, GraphEntry& entry) {
  if (entry.compiled) return absl::OkStatus();
  if (!entry.jit) return FailedPrecondition("graph ", graph_id, " is not compiled");
  GE_LOG_INFO("session", "graph {}: compiling its dynamic form", graph_id);
  if (entry.graph == nullptr) entry.graph = entry.jit->CloneGraph();
  std::optional<compiler::ScopedCompileDeadline> deadline;
  BoundCompile(deadline, compile_timeout_seconds_, compile_timeout_setting_);
  absl::Status compiled = CompileDynamic(graph_id, entry);
  return Annotate(compiled, StrCat("graph ", graph_id, "'s dynamic form"));
}

absl::StatusOr<CacheScope> Session::ScopeFor(const OptionMap& options) {
  const std::string dir = OptionOrDefault(options, "ge.graph_compiler_cache_dir");
  if (dir.empty()) return cache_scope_;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = option_caches_.find(dir);
  if (it != option_caches_.end()) return CacheScope{it->second.get()};
  cache::ModelCacheOptions cache_options;
  cache_options.dir = dir;
  absl::StatusOr<std::unique_ptr<cache::ModelCache>> opened = cache::ModelCache::Open(cache_options);
  if (!opened.ok()) return Annotate(opened.status(), "ge.graph_compiler_cache_dir");
  return CacheScope{option_caches_.emplace(dir, *std::move(opened)).first->second.get()};
}

absl::Status Session::InstallCompiledModel(GraphEntry& entry, runtime::CompiledModel model) {
  for (const auto& [k, v] : model.options) entry.options[k] = v;
  entry.compiled = std::make_unique<compiler::CompiledGraph>();
  GE_ASSIGN_OR_RETURN(entry.compiled->options, compiler::CompileOptions::FromOptions(entry.options));
  entry.compiled->graph = std::move(model.graph);
  entry.compiled->partitioned = std::move(model.partitioned);
  entry.compiled->variables = std::move(model.variables);
  return LoadExecutor(entry, std::move(model.program));
}

absl::StatusOr<std::string> Session::ExportCompiledModel(uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  GE_RETURN_IF_ERROR(DynamicForm(graph_id, *entry));
  const compiler::CompiledGraph& compiled = *entry->compiled;
  // The executor owns the program it loaded; building it again from the
  // compiled graph gives the same tasks.
  std::optional<runtime::StaticProgram> program;
  if (entry->static_executor) {
    const int threads = pool_ ? pool_->num_threads() + 1 : 1;
    GE_ASSIGN_OR_RETURN(program, compiler::BuildStaticProgram(*compiled.graph, engines_, threads));
  }
  GE_ASSIGN_OR_RETURN(runtime::GemBytes bytes,
                      runtime::SerializeGem(*compiled.graph, program ? &*program : nullptr, entry->options, engines_,
                                            /*external_weights=*/false, /*weights_file=*/"",
                                            entry->mixed ? compiled.partitioned.get() : nullptr,
                                            &compiled.variables));
  return std::move(bytes.gem);
}

absl::StatusOr<CacheUse> Session::GetCacheUse(uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  GE_RETURN_IF_ERROR(DynamicForm(graph_id, *entry));
  return entry->cache_use;
}

absl::Status Session::AddCachedModel(uint32_t graph_id, const std::string& key) {
  if (cache_scope_.cache == nullptr) {
    return FailedPrecondition("this session has no compiled-model cache to load key ", key, " from");
  }
  GE_ASSIGN_OR_RETURN(runtime::CompiledModel model, LoadCachedModel(cache_scope_, key, engines_));
  auto entry = std::make_shared<GraphEntry>();
  entry->options = options_;
  GE_RETURN_IF_ERROR(InstallCompiledModel(*entry, std::move(model)));
  entry->cache_use.key = key;
  entry->cache_use.hit = true;
  GE_RETURN_IF_ERROR(StartJitFromCompiled(graph_id, *entry));
  std::lock_guard<std::mutex> lock(mu_);
  if (graphs_.contains(graph_id)) return AlreadyExists("graph ", graph_id, " already exists in this session");
  graphs_.emplace(graph_id, std::move(entry));
  return absl::OkStatus();
}

absl::Status Session::LoadExecutor(GraphEntry& entry, std::optional<runtime::StaticProgram> program) {
  runtime::ExecutorOptions exec_options;
  exec_options.intra_op_threads = pool_ ? pool_->num_threads() + 1 : 1;
  exec_options.compute_budget = budget_;
  exec_options.output_allocator = output_cache_;
  if (auto it = entry.options.find("ge.exec.inter_op_parallelism"); it != entry.options.end()) {
    if (!absl::SimpleAtoi(it->second, &exec_options.inter_op_parallelism) || exec_options.inter_op_parallelism < 1 ||
        exec_options.inter_op_parallelism > 256) {
      return InvalidArgument("bad ge.exec.inter_op_parallelism '", it->second, "': expected an integer from 1 to 256");
    }
  }
  GE_ASSIGN_OR_RETURN(variables::SessionVariables * vars, GetVariables());
  // The model's variables become the session's, by key, before any kernel runs.
  GE_RETURN_IF_ERROR(vars->manager().Restore(entry.compiled->variables));
  exec_options.variables = vars;
  // Loop bodies and branches whose compiled types are all known run their
  // static programs (runtime/executor/static_body.h).
  exec_options.static_body_loader = MakeStaticLoader(exec_options);
  if (program) {
    GE_ASSIGN_OR_RETURN(device::Device * device, GetDevice());
    GE_ASSIGN_OR_RETURN(entry.static_executor,
                        runtime::StaticExecutor::Load(*std::move(program), engines_, *device, exec_options));
  } else if (!LoadMixed(entry, exec_options)) {
    GE_ASSIGN_OR_RETURN(entry.executor,
                        runtime::DynamicExecutor::Create(*entry.compiled->graph, engines_, exec_options));
  }
  // A JIT graph's runs read its info meanwhile: it keeps the source's.
  if (!entry.jit) entry.info = DescribeGraph(*entry.compiled->graph);
  entry.gears.reset();
  for (const ir::Node* node : entry.compiled->graph->nodes()) {
    if (node->type() != ops::kGearIndex) continue;
    GE_ASSIGN_OR_RETURN(entry.gears, ops::GearTable::FromOpDesc(node->op_desc()));
  }
  return absl::OkStatus();
}

Session::StaticLoader Session::MakeStaticLoader(const runtime::ExecutorOptions& options) {
  absl::StatusOr<device::Device*> device = GetDevice();
  if (!device.ok()) return nullptr;
  const int threads = pool_ ? pool_->num_threads() + 1 : 1;
  runtime::ExecutorOptions static_options = options;
  static_options.static_loader = nullptr;
  static_options.static_body_loader = nullptr;
  return [this, device = *device, threads,
          static_options](const ir::Graph& graph) -> absl::StatusOr<std::unique_ptr<runtime::StaticExecutor>> {
    GE_ASSIGN_OR_RETURN(runtime::StaticProgram program, compiler::BuildStaticProgram(graph, engines_, threads));
    return runtime::StaticExecutor::Load(std::move(program), engines_, *device, static_options);
  };
}

bool Session::LoadMixed(GraphEntry& entry, runtime::ExecutorOptions options) {
  const ir::Graph* partitioned = entry.compiled->partitioned.get();
  if (partitioned == nullptr) return false;
  bool has_static_call = false;
  auto consider = [&](const ir::Node* node) {
    has_static_call = has_static_call || (node->type() == ir::kPartitionedCall &&
                                          !node->op_desc().GetAttrOr<bool>(ir::kAttrIsUnknownShape, true));
  };
  // Static units sit in the root, or in the branches of a multi-batch Case.
  partitioned->ForEachNode(consider);
  for (const ir::Graph* sub : partitioned->subgraphs()) sub->ForEachNode(consider);
  if (!has_static_call) return false;
  options.static_loader = MakeStaticLoader(options);
  if (!options.static_loader) return false;
  absl::StatusOr<std::unique_ptr<runtime::DynamicExecutor>> mixed =
      runtime::DynamicExecutor::Create(*partitioned, engines_, options);
  if (!mixed.ok()) {
    GE_LOG_INFO("session", "the partitioned graph cannot run mixed, running it flattened: {}", mixed.status().message());
    return false;
  }
  if ((*mixed)->num_static_subgraphs() == 0) return false;
  entry.executor = *std::move(mixed);
  entry.mixed = true;
  return true;
}

absl::StatusOr<int> Session::NumStaticSubgraphs(uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  GE_RETURN_IF_ERROR(DynamicForm(graph_id, *entry));
  if (entry->static_executor) return 1;
  return entry->mixed ? entry->executor->num_static_subgraphs() : 0;
}

absl::StatusOr<device::Device*> Session::GetDevice() {
  std::lock_guard<std::mutex> lock(mu_);
  if (device_ == nullptr) {
    // Memory only: kernels use the session's pool, so the device gets no workers.
    device::DeviceSpec spec;
    spec.num_threads = 1;
    owned_device_ = std::make_unique<device::CpuDevice>(spec);
    device_ = owned_device_.get();
  }
  return device_;
}

absl::Status Session::AddCompiledModel(uint32_t graph_id, runtime::CompiledModel model) {
  if (model.graph == nullptr) return InvalidArgument("compiled model for graph ", graph_id, " has no graph");
  auto entry = std::make_shared<GraphEntry>();
  entry->options = options_;
  GE_RETURN_IF_ERROR(InstallCompiledModel(*entry, std::move(model)));
  GE_RETURN_IF_ERROR(StartJitFromCompiled(graph_id, *entry));
  std::lock_guard<std::mutex> lock(mu_);
  if (graphs_.contains(graph_id)) return AlreadyExists("graph ", graph_id, " already exists in this session");
  graphs_.emplace(graph_id, std::move(entry));
  return absl::OkStatus();
}

absl::StatusOr<bool> Session::RunsStatically(uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  GE_RETURN_IF_ERROR(DynamicForm(graph_id, *entry));
  return entry->static_executor != nullptr;
}

absl::StatusOr<std::vector<Value>> Session::RunGraph(uint32_t graph_id, std::vector<Value> inputs,
                                                    const runtime::RunControl* control) {
  GE_RETURN_IF_ERROR(CompileGraph(graph_id));
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  AppendInputDefaults(entry->info, inputs);
  GE_RETURN_IF_ERROR(CheckInputs(entry->info, inputs));
  if (entry->jit) {
    GE_ASSIGN_OR_RETURN(std::optional<std::vector<Value>> planned, entry->jit->Run(inputs, control));
    if (planned) return *std::move(planned);
    // No plan for these inputs (the bound, or not plannable): the dynamic form.
    runtime::DynamicExecutor* executor = nullptr;
    runtime::StaticExecutor* static_executor = nullptr;
    {
      std::lock_guard<std::mutex> lock(entry->compile_mu);
      GE_RETURN_IF_ERROR(DynamicForm(graph_id, *entry));
      executor = entry->executor.get();
      static_executor = entry->static_executor.get();
    }
    if (static_executor != nullptr) return static_executor->Run(std::move(inputs), control);
    return executor->Run(std::move(inputs), control);
  }
  if (entry->gears) GE_RETURN_IF_ERROR(CountGearRun(graph_id, *entry, inputs));
  if (entry->static_executor) return entry->static_executor->Run(std::move(inputs), control);
  return entry->executor->Run(std::move(inputs), control);
}

absl::Status Session::CountGearRun(uint32_t graph_id, GraphEntry& entry, const std::vector<Value>& inputs) {
  std::vector<Shape> shapes;
  shapes.reserve(inputs.size());
  for (const Value& v : inputs) shapes.push_back(v.is_tensor() ? v.tensor().shape() : Shape::UnknownRank());
  // The GearIndex node selects the same branch; choosing here first gives
  // the caller the error before any node runs, and the path to count.
  GE_ASSIGN_OR_RETURN(int64_t branch, entry.gears->Select(shapes));
  const bool gear = branch < static_cast<int64_t>(entry.gears->gears.size());
  (gear ? entry.gear_runs : entry.dynamic_runs).fetch_add(1, std::memory_order_relaxed);
  if (gear) {
    GE_LOG_DEBUG("session", "graph {}: gear {} ({})", graph_id, branch, entry.gears->labels[branch]);
  } else {
    GE_LOG_INFO("session", "graph {}: inputs fit no gear ({}), running the dynamic graph", graph_id,
                entry.gears->GearList());
  }
  if (run_path_observer_) run_path_observer_(gear ? RunPath::kGear : RunPath::kDynamic);
  return absl::OkStatus();
}

absl::StatusOr<GearRunCounts> Session::GetGearRunCounts(uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  GE_RETURN_IF_ERROR(DynamicForm(graph_id, *entry));
  GearRunCounts counts;
  counts.multi_batch = entry->gears.has_value();
  if (entry->gears) {
    counts.gears = entry->gears->labels;
    counts.has_dynamic_graph = entry->gears->fallback_branch >= 0;
  }
  counts.gear_runs = entry->gear_runs.load();
  counts.dynamic_runs = entry->dynamic_runs.load();
  return counts;
}

absl::StatusOr<GraphInfo> Session::GetGraphInfo(uint32_t graph_id) const {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  return entry->info;
}

absl::StatusOr<const compiler::CompiledGraph*> Session::GetCompiledGraph(uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(std::shared_ptr<GraphEntry> entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  GE_RETURN_IF_ERROR(DynamicForm(graph_id, *entry));
  return entry->compiled.get();
}

}  // namespace ge::session
