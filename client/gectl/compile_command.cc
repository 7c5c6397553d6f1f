// gectl compile: the atc analogue. Imports a model, compiles it with the
// given options for this host's engines, and writes a .gem compiled model
// that `gectl run` and `gectl bench` load without compiling again. It
// compiles through the cache as every other path does (session/
// compile_cache.h, the operator's namespace, ge.graph_key respected): a hit
// is written out without compiling; a miss is compiled and stored (a store
// that fails is a warning, the .gem is written all the same).
#include <chrono>
#include <iostream>

#include "absl/strings/numbers.h"
#include "base/logging.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "session/compile_cache.h"
#include "session/tools.h"

namespace ge::gectl {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::Status Compile(const CompileFlags& flags) {
  if (!session::IsCompiledModelPath(flags.output))
    return InvalidArgument("-o ", flags.output, ": the output must end in .gem");
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  if (flags.external_weight >= 0) options["ge.externalWeight"] = std::to_string(flags.external_weight);
  int external_weight = 0;
  if (auto it = options.find("ge.externalWeight"); it != options.end()) {
    GE_RETURN_IF_ERROR(ValidateOptions({{it->first, it->second}}));
    (void)absl::SimpleAtoi(it->second, &external_weight);
  }
  if (external_weight != 0 && flags.external_weights) {
    return InvalidArgument("--external-weights and --external-weight ", external_weight, " are alternatives: pick one");
  }
  auto start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(auto graph, LoadModel(flags.model, options));
  const double import_seconds = Since(start);
  GE_ASSIGN_OR_RETURN(auto rt, LocalRuntime::Create(flags.threads));
  session::CacheUse report;
  start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(
      runtime::CompiledModel model,
      session::CompileThroughCache(graph, options, rt->engines(), rt->pool(), rt->root().OperatorScope(), &report));
  const double compile_seconds = Since(start);
  session::GemWriteFlags write;
  write.external_weights = flags.external_weights;
  write.external_weight = external_weight;
  start = std::chrono::steady_clock::now();
  GE_RETURN_IF_ERROR(session::WriteCompiledModel(model, flags.output, rt->root(), write));
  const double write_seconds = Since(start);
  std::cout << flags.output << ": " << (model.program ? "static" : "dynamic");
  if (model.program) {
    std::cout << ", " << model.program->tasks.size() << " tasks, arena " << model.program->arena_bytes
              << " bytes (lower bound " << model.program->lower_bound_bytes << ")";
  }
  std::cout << std::endl;
  if (!report.key.empty()) {
    std::cout << "cache: " << (report.hit ? "hit " : "miss ") << report.key;
    if (!report.hit) std::cout << (report.store_error.empty() ? " (stored)" : " (not stored)");
    std::cout << std::endl;
  }
  if (flags.timings) {
    std::cout << "timings: import " << import_seconds << " s, hash " << report.hash_seconds << " s, cache read "
              << report.lookup.read << " s, verify " << report.lookup.verify << " s, load " << report.lookup.load
              << " s, " << (report.hit ? "hit total " : "compile total ") << compile_seconds << " s, write "
              << write_seconds << " s" << std::endl;
  }
  return absl::OkStatus();
}

}  // namespace

int CompileCommand(const CompileFlags& flags) {
  absl::Status s = Compile(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
