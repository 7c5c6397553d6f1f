// gectl partition: compiles a model and reports where every node was
// placed, which engines rejected it and why, and the execution units the
// splitting produced (static / dynamic subgraphs and their engines).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "compiler/build/graph_compiler.h"
#include "compiler/partition/partition_report.h"

namespace ge::gectl {
namespace {

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
  compile_options.keep_partitioned_graph = true;
  GE_ASSIGN_OR_RETURN(auto graph, LoadModel(flags.model));
  GE_ASSIGN_OR_RETURN(auto runtime, LocalRuntime::Create());
  compiler::GraphCompiler compiler(runtime->engines(), runtime->pool());
  GE_ASSIGN_OR_RETURN(auto compiled, compiler.Compile(std::move(graph), compile_options));
  partition::RejectionMap rejections;
  for (const compiler::NodePlacement& p : compiled->placement.nodes) {
    if (p.rejected.empty()) continue;
    auto& list = rejections[p.node->name()];
    for (const compiler::EngineRejection& r : p.rejected) list.push_back({r.engine, r.reason});
  }
  const partition::PartitionReport report = partition::BuildPartitionReport(*compiled->partitioned, rejections);
  const std::string text =
      flags.report == "json" ? partition::PartitionReportJson(report) + "\n" : partition::PartitionReportText(report);
  std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cout.flush();
  if (flags.dump == "dot") {
    const std::string path = flags.dump_file.empty()
                                 ? std::filesystem::path(flags.model).stem().string() + ".partition.dot"
                                 : flags.dump_file;
    GE_RETURN_IF_ERROR(WriteFile(path, partition::PartitionDot(*compiled->partitioned)));
  }
  return absl::OkStatus();
}

}  // namespace

int PartitionCommand(const PartitionFlags& flags) {
  absl::Status s = Partition(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
