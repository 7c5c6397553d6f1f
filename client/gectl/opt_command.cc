// gectl opt: the compile pipeline's passes by name. --list-passes lists
// them in order (required ones marked, sub-passes under the pass that runs
// them); --passes a,b IN runs only those passes on IN (ONNX, or ged's text
// form for any other extension) and prints the text form after them. The
// golden pass tests (tests/passes/) run through it.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/ir/text_format.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "session/tools.h"

namespace ge::gectl {
namespace {

absl::StatusOr<std::unique_ptr<ir::Graph>> LoadGraph(const std::string& path, const OptionMap& options) {
  GE_RETURN_IF_ERROR(CheckModelPath(path));
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".onnx") == 0) return LoadModel(path, options);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return InvalidArgument("cannot read ", path);
  absl::StatusOr<std::unique_ptr<ir::Graph>> graph = ir::ParseGraph(text.str());
  if (!graph.ok()) return Annotate(graph.status(), path);
  return graph;
}

void PrintPasses(const std::vector<session::CompilePassInfo>& passes) {
  size_t width = 0;
  for (const auto& p : passes) width = std::max(width, p.name.size() + (p.parent.empty() ? 0 : 2));
  for (const auto& p : passes) {
    std::string name = p.parent.empty() ? p.name : "  " + p.name;
    name.resize(width, ' ');
    std::cout << name << "  " << (p.required ? "required" : "optional") << "  " << p.description;
    if (!p.parent.empty()) std::cout << " (runs inside " << p.parent << ")";
    std::cout << "\n";
  }
}

absl::Status Opt(const OptFlags& flags) {
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  // The engines first: they register the op types the text form may use.
  GE_ASSIGN_OR_RETURN(auto runtime, LocalRuntime::Create());
  if (flags.list_passes) {
    if (!flags.model.empty() || !flags.passes.empty()) {
      return InvalidArgument("--list-passes takes neither --passes nor a model");
    }
    GE_ASSIGN_OR_RETURN(std::vector<session::CompilePassInfo> passes,
                        session::ListCompilePasses(runtime->root(), options));
    PrintPasses(passes);
    return absl::OkStatus();
  }
  if (flags.model.empty()) return InvalidArgument("gectl opt needs a model (or --list-passes)");
  const std::vector<std::string> passes = ParseListOption(flags.passes);
  if (passes.empty()) return InvalidArgument("--passes names no pass (see gectl opt --list-passes)");
  GE_ASSIGN_OR_RETURN(auto graph, LoadGraph(flags.model, options));
  GE_ASSIGN_OR_RETURN(std::string text, session::RunCompilePasses(runtime->root(), std::move(graph), options, passes));
  std::cout << text;
  return absl::OkStatus();
}

}  // namespace

int OptCommand(const OptFlags& flags) {
  absl::Status s = Opt(flags);
  std::cout.flush();
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
