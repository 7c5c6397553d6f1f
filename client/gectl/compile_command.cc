// gectl compile: the atc analogue. Imports a model, compiles it with the
// given options for this host's engines, and writes a .gem compiled model
// (runtime/model/gem.h) that `gectl run` and `gectl bench` load without
// compiling again.
#include <iostream>

#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "compiler/build/model_builder.h"
#include "absl/strings/numbers.h"
#include "runtime/model/external_weights.h"
#include "runtime/model/gem.h"

namespace ge::gectl {
namespace {

absl::Status Compile(const CompileFlags& flags) {
  if (!runtime::IsGemPath(flags.output)) return InvalidArgument("-o ", flags.output, ": the output must end in .gem");
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
  GE_ASSIGN_OR_RETURN(auto graph, LoadModel(flags.model));
  GE_ASSIGN_OR_RETURN(auto rt, LocalRuntime::Create(flags.threads));
  GE_ASSIGN_OR_RETURN(runtime::CompiledModel model,
                      compiler::BuildCompiledModel(std::move(graph), options, rt->engines(), rt->pool()));
  if (external_weight != 0) GE_RETURN_IF_ERROR(runtime::ExternalizeWeights(model, flags.output, external_weight));
  runtime::GemWriteOptions write;
  write.external_weights = flags.external_weights;
  GE_RETURN_IF_ERROR(runtime::SaveGem(model, flags.output, rt->engines(), write));
  std::cout << flags.output << ": " << (model.program ? "static" : "dynamic");
  if (model.program) {
    std::cout << ", " << model.program->tasks.size() << " tasks, arena " << model.program->arena_bytes
              << " bytes (lower bound " << model.program->lower_bound_bytes << ")";
  }
  std::cout << std::endl;
  return absl::OkStatus();
}

}  // namespace

int CompileCommand(const CompileFlags& flags) {
  absl::Status s = Compile(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
