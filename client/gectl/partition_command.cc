// gectl partition: compiles a model and reports where every node was
// placed, which engines rejected it and why, and the execution units the
// splitting produced (static / dynamic subgraphs and their engines).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "session/tools.h"

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
  GE_ASSIGN_OR_RETURN(auto graph, LoadModel(flags.model, options));
  GE_ASSIGN_OR_RETURN(auto runtime, LocalRuntime::Create());
  GE_ASSIGN_OR_RETURN(session::PartitionOutput out,
                      session::PartitionModel(runtime->root(), std::move(graph), options, flags.report == "json",
                                              flags.dump == "dot", /*leak_for_exit=*/true));
  std::cout.write(out.report.data(), static_cast<std::streamsize>(out.report.size()));
  std::cout.flush();
  if (flags.dump == "dot") {
    const std::string path = flags.dump_file.empty()
                                 ? std::filesystem::path(flags.model).stem().string() + ".partition.dot"
                                 : flags.dump_file;
    GE_RETURN_IF_ERROR(WriteFile(path, out.dot));
  }
  return absl::OkStatus();
}

}  // namespace

int PartitionCommand(const PartitionFlags& flags) {
  absl::Status s = Partition(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
