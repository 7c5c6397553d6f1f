// gectl run and dump: import, compile and execute in process.
#include "client/gectl/commands.h"

#include <filesystem>
#include <iostream>

#include "base/io/npy.h"
#include "base/ir/dot.h"
#include "base/ir/text_format.h"
#include "base/status.h"
#include "client/gectl/local_runtime.h"
#include "client/gectl/model_inputs.h"

namespace ge::gectl {
namespace {

absl::Status Run(const RunFlags& flags) {
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  InputSpec spec;
  spec.seed = flags.seed;
  for (const std::string& f : flags.inputs) GE_RETURN_IF_ERROR(ParseInputFlag(f, spec));
  for (const std::string& f : flags.shapes) GE_RETURN_IF_ERROR(ParseShapeFlag(f, spec));
  GE_ASSIGN_OR_RETURN(auto runtime, LocalRuntime::Create());
  GE_ASSIGN_OR_RETURN(auto session, runtime->OpenModel(flags.model, options));
  GE_ASSIGN_OR_RETURN(session::GraphInfo info, session->GetGraphInfo(0));
  GE_ASSIGN_OR_RETURN(std::vector<Value> inputs, MakeInputs(info, spec));
  GE_ASSIGN_OR_RETURN(std::vector<Value> outputs, session->RunGraph(0, std::move(inputs)));
  std::vector<std::string> names;
  for (const auto& io : info.outputs) names.push_back(io.name);
  if (!flags.output_dir.empty()) return SaveOutputs(flags.output_dir, names, outputs);
  for (size_t i = 0; i < outputs.size(); ++i) PrintOutputSummary(names[i], outputs[i]);
  return absl::OkStatus();
}

absl::Status Dump(const DumpFlags& flags) {
  if (flags.format != "text" && flags.format != "dot") {
    return InvalidArgument("bad --format '", flags.format, "': expected text or dot");
  }
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  GE_ASSIGN_OR_RETURN(auto graph, LoadModel(flags.model, options));
  const ir::Graph* to_print = graph.get();
  std::unique_ptr<LocalRuntime> runtime;
  std::unique_ptr<session::Session> session;
  if (flags.compiled) {
    GE_ASSIGN_OR_RETURN(runtime, LocalRuntime::Create());
    GE_ASSIGN_OR_RETURN(session, runtime->NewSession(std::move(graph), options));
    GE_RETURN_IF_ERROR(session->CompileGraph(0));
    GE_ASSIGN_OR_RETURN(const compiler::CompiledGraph* compiled, session->GetCompiledGraph(0));
    to_print = compiled->graph.get();
  }
  std::cout << (flags.format == "text" ? ir::PrintGraph(*to_print) : ir::ToDot(*to_print, ir::DotOptions()));
  return absl::OkStatus();
}

}  // namespace

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk: return 0;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDeadlineExceeded:
      return 1;
    default:
      return 2;
  }
}

int ReportError(const absl::Status& status) {
  std::string message(status.message());
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  std::cerr << "gectl: error: " << message << std::endl;
  return ExitCodeFor(status);
}

int RunCommand(const RunFlags& flags) {
  absl::Status s = Run(flags);
  return s.ok() ? 0 : ReportError(s);
}

int DumpCommand(const DumpFlags& flags) {
  absl::Status s = Dump(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
