// Model tools (see tools.h).
#include "session/tools.h"

#include <chrono>

#include "base/io/json_writer.h"
#include "base/ir/text_format.h"
#include "base/logging.h"
#include "base/status.h"
#include "compiler/build/graph_compiler.h"
#include "compiler/frontend/onnx_inspect.h"
#include "compiler/frontend/onnx_opset_adapter.h"
#include "compiler/partition/partition_report.h"
#include "runtime/model/external_weights.h"
#include "runtime/model/gem.h"

namespace ge::session {

// The compiled graph PartitionModel leaves for the process exit. A
// namespace-scope variable the compiler must keep (a function-local static
// that nothing reads was optimized away and LeakSanitizer reported the
// graph).
compiler::CompiledGraph* g_left_for_exit = nullptr;

namespace {

// Logs (at info level) how long each phase took.
class Stopwatch {
 public:
  void Lap(std::string_view phase) {
    const auto now = std::chrono::steady_clock::now();
    GE_LOG_INFO("gectl", "partition: {} took {:.1f} ms", phase,
                std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

std::string ToJson(const frontend::OnnxModelSummary& s, const std::string& path) {
  io::JsonWriter w;
  w.BeginObject().Key("model").String(path).Key("producer").String(s.producer_name);
  w.Key("ir_version").Int(s.ir_version);
  w.Key("opsets").BeginArray();
  for (const auto& [domain, version] : s.opset_imports) {
    w.BeginObject().Key("domain").String(domain).Key("version").Int(version).EndObject();
  }
  w.EndArray();
  for (const auto& [key, list] : {std::pair{"inputs", &s.inputs}, std::pair{"outputs", &s.outputs}}) {
    w.Key(key).BeginArray();
    for (const auto& v : *list) w.BeginObject().Key("name").String(v.name).Key("type").String(v.type).EndObject();
    w.EndArray();
  }
  w.Key("ops").BeginArray();
  for (const auto& [op, count] : s.op_histogram) {
    w.BeginObject().Key("op").String(op).Key("count").Int(count).EndObject();
  }
  w.EndArray().EndObject();
  return w.str();
}

}  // namespace

bool IsCompiledModelPath(std::string_view path) { return runtime::IsGemPath(path); }

absl::StatusOr<PartitionOutput> PartitionModel(const Runtime& rt, std::unique_ptr<ir::Graph> graph,
                                               const OptionMap& options, bool json, bool dot, bool leak_for_exit) {
  GE_ASSIGN_OR_RETURN(compiler::CompileOptions compile_options, compiler::CompileOptions::FromOptions(options));
  // The report and the drawing are taken from the partitioned tree while the
  // compiler holds it (before flattening), so no copy of it is kept.
  partition::PartitionReport report;
  PartitionOutput out;
  // Nothing runs here: the compilation ends with the partitioned tree.
  compile_options.stop_after_partitioning = true;
  compile_options.on_partitioned = [&](const ir::Graph& partitioned) {
    report = partition::BuildPartitionReport(partitioned, {});
    if (dot) out.dot = partition::PartitionDot(partitioned);
    return absl::OkStatus();
  };
  Stopwatch watch;
  ThreadPool* pool = rt.num_devices() > 0 ? rt.device(0).pool() : nullptr;
  compiler::GraphCompiler compiler(rt.engines(), pool);
  GE_ASSIGN_OR_RETURN(auto compiled, compiler.Compile(std::move(graph), compile_options));
  watch.Lap("compile");
  // What the placer said about each node, by name (flattening keeps names).
  partition::RejectionMap rejections;
  for (const compiler::NodePlacement& p : compiled->placement.nodes) {
    // Nodes of one name in several subgraphs (the gear branches of a
    // multi-batch graph are copies) were rejected alike: list them once.
    if (p.rejected.empty() || rejections.contains(p.node->name())) continue;
    auto& list = rejections[p.node->name()];
    for (const compiler::EngineRejection& r : p.rejected) list.push_back({r.engine, r.reason});
  }
  if (!rejections.empty()) {
    for (partition::ReportNode& n : report.nodes) {
      auto it = rejections.find(n.name);
      if (it != rejections.end()) n.rejected = it->second;
    }
  }
  // Why each node went where it did, and the estimates when cost decided.
  StringMap<const compiler::NodePlacement*> placed;
  for (const compiler::NodePlacement& p : compiled->placement.nodes) {
    if (p.reason != compiler::PlacementReason::kPriority) placed.try_emplace(p.node->name(), &p);
  }
  for (partition::ReportNode& n : report.nodes) {
    auto it = placed.find(n.name);
    if (it == placed.end()) continue;
    n.reason = std::string(compiler::PlacementReasonName(it->second->reason));
    for (const compiler::EngineEstimate& e : it->second->estimates) n.estimates.push_back({e.engine, e.ns});
  }
  out.report = json ? partition::PartitionReportJson(report) + "\n" : partition::PartitionReportText(report);
  watch.Lap("report");
  // The process ends right after gectl's command: freeing a million-node
  // graph node by node takes seconds and returns nothing anyone uses
  // (clang's -disable-free). The static pointer keeps it reachable, so leak
  // checkers do not report it.
  if (leak_for_exit) g_left_for_exit = compiled.release();
  return out;
}

absl::StatusOr<std::vector<CompilePassInfo>> ListCompilePasses(const Runtime& rt, const OptionMap& options) {
  GE_ASSIGN_OR_RETURN(compiler::CompileOptions compile_options, compiler::CompileOptions::FromOptions(options));
  compiler::GraphCompiler compiler(rt.engines(), nullptr);
  GE_ASSIGN_OR_RETURN(std::vector<compiler::PassListing> passes, compiler.ListPasses(compile_options));
  std::vector<CompilePassInfo> out;
  out.reserve(passes.size());
  for (compiler::PassListing& p : passes) {
    out.push_back({std::move(p.name), p.required, std::move(p.description), std::move(p.parent)});
  }
  return out;
}

absl::StatusOr<std::string> RunCompilePasses(const Runtime& rt, std::unique_ptr<ir::Graph> graph,
                                             const OptionMap& options, const std::vector<std::string>& passes) {
  if (passes.empty()) return InvalidArgument("no pass to run (see gectl opt --list-passes)");
  GE_ASSIGN_OR_RETURN(compiler::CompileOptions compile_options, compiler::CompileOptions::FromOptions(options));
  compile_options.only_passes = passes;
  ThreadPool* pool = rt.num_devices() > 0 ? rt.device(0).pool() : nullptr;
  compiler::GraphCompiler compiler(rt.engines(), pool);
  GE_ASSIGN_OR_RETURN(auto compiled, compiler.Compile(std::move(graph), compile_options));
  return ir::PrintGraph(*compiled->graph);
}

absl::StatusOr<std::string> InspectOnnxModel(const std::string& path, bool json) {
  GE_ASSIGN_OR_RETURN(frontend::OnnxModelSummary summary, frontend::InspectOnnx(path));
  return json ? ToJson(summary, path) + "\n" : summary.ToString();
}

absl::Status WriteCompiledModel(runtime::CompiledModel& model, const std::string& path, const Runtime& rt,
                                const GemWriteFlags& flags) {
  if (flags.external_weight != 0) {
    GE_RETURN_IF_ERROR(runtime::ExternalizeWeights(model, path, flags.external_weight));
  }
  runtime::GemWriteOptions write;
  write.external_weights = flags.external_weights;
  return runtime::SaveGem(model, path, rt.engines(), write);
}

std::vector<OpsetAdapterInfo> ListOpsetAdapters() {
  std::vector<OpsetAdapterInfo> out;
  for (const frontend::OpsetAdapter& a : frontend::BuiltinOpsetAdapters().all()) {
    out.push_back({a.op_type, a.first_version, a.last_version, a.canonical});
  }
  return out;
}

std::map<std::string, std::vector<std::string>> KernelEnginesByOpType(const Runtime& rt) {
  std::map<std::string, std::vector<std::string>> kernels;
  for (const std::string& name : rt.engines().Names()) {
    const engine::Engine* e = rt.engines().Find(name);
    for (const std::string& type : e->info_store().SupportedOpTypes()) kernels[type].push_back(name);
  }
  return kernels;
}

}  // namespace ge::session
