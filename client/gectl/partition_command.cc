// gectl partition: compiles a model and reports where every node was
// placed, which engines rejected it and why, and the execution units the
// splitting produced (static / dynamic subgraphs and their engines).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "base/logging.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "compiler/build/graph_compiler.h"
#include "compiler/partition/partition_report.h"

namespace ge::gectl {

// The compiled graph Partition leaves for the process exit. A namespace-scope
// variable the compiler must keep (a function-local static that nothing
// reads was optimized away and LeakSanitizer reported the graph).
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

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return InvalidArgument("cannot write ", path);
  return absl::OkStatus();
}

absl::Status Partition(const PartitionFlags& flags) {
  if (flags.report != "json" && flags.report != "text") {
    return InvalidArgument("bad --report '", flags.report, "': expected json or text");
  }
  if (!flags.dump.empty() && flags.dump != "dot") {
    return InvalidArgument("bad --dump '", flags.dump, "': expected dot");
  }
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  GE_ASSIGN_OR_RETURN(compiler::CompileOptions compile_options, compiler::CompileOptions::FromOptions(options));
  // The report and the drawing are taken from the partitioned tree while the
  // compiler holds it (before flattening), so no copy of it is kept.
  partition::PartitionReport report;
  std::string dot;
  // Nothing runs here: the compilation ends with the partitioned tree.
  compile_options.stop_after_partitioning = true;
  compile_options.on_partitioned = [&](const ir::Graph& partitioned) {
    report = partition::BuildPartitionReport(partitioned, {});
    if (flags.dump == "dot") dot = partition::PartitionDot(partitioned);
    return absl::OkStatus();
  };
  Stopwatch watch;
  GE_ASSIGN_OR_RETURN(auto graph, LoadModel(flags.model, options));
  watch.Lap("import");
  GE_ASSIGN_OR_RETURN(auto runtime, LocalRuntime::Create());
  compiler::GraphCompiler compiler(runtime->engines(), runtime->pool());
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
  const std::string text =
      flags.report == "json" ? partition::PartitionReportJson(report) + "\n" : partition::PartitionReportText(report);
  std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cout.flush();
  watch.Lap("report");
  if (flags.dump == "dot") {
    const std::string path = flags.dump_file.empty()
                                 ? std::filesystem::path(flags.model).stem().string() + ".partition.dot"
                                 : flags.dump_file;
    GE_RETURN_IF_ERROR(WriteFile(path, dot));
  }
  // The process ends right after this command: freeing a million-node graph
  // node by node takes seconds and returns nothing anyone uses (clang's
  // -disable-free). The static pointer keeps it reachable, so leak checkers
  // do not report it.
  g_left_for_exit = compiled.release();
  return absl::OkStatus();
}

}  // namespace

int PartitionCommand(const PartitionFlags& flags) {
  absl::Status s = Partition(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
