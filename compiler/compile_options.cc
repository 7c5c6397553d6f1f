// Parsing of the compiler's option keys.
#include "compiler/compile_options.h"

#include "base/status.h"

namespace ge::compiler {

absl::StatusOr<CompileOptions> CompileOptions::FromOptions(const OptionMap& options) {
  GE_RETURN_IF_ERROR(ValidateOptions(options));
  CompileOptions out;
  out.exclude_engines = ParseListOption(OptionOrDefault(options, "ge.exec.exclude_engines"));
  out.preferred_engine = OptionOrDefault(options, "ge.engineType");
  if (out.preferred_engine == "auto") out.preferred_engine.clear();
  out.host_exec_ops = ParseListOption(OptionOrDefault(options, "ge.exec.host_exec_ops"));
  GE_ASSIGN_OR_RETURN(out.disable_host_cpu_fallback,
                      ParseBoolOption("ge.exec.disable_host_cpu_fallback",
                                      OptionOrDefault(options, "ge.exec.disable_host_cpu_fallback")));
  GE_ASSIGN_OR_RETURN(int64_t dump, ParseIntOption("ge.dump_graph", OptionOrDefault(options, "ge.dump_graph")));
  out.dump_graph_level = static_cast<int>(dump);
  out.dump_path = OptionOrDefault(options, "ge.dump_path");
  GE_ASSIGN_OR_RETURN(out.static_model_ops_lower_limit,
                      ParseIntOption("ge.exec.static_model_ops_lower_limit",
                                     OptionOrDefault(options, "ge.exec.static_model_ops_lower_limit")));
  GE_ASSIGN_OR_RETURN(out.host_scheduling_max_threshold,
                      ParseIntOption("ge.host_scheduling_max_threshold",
                                     OptionOrDefault(options, "ge.host_scheduling_max_threshold")));
  GE_ASSIGN_OR_RETURN(out.tiling_schedule_optimize,
                      ParseBoolOption("ge.tiling_schedule_optimize", OptionOrDefault(options, "ge.tiling_schedule_optimize")));
  GE_ASSIGN_OR_RETURN(out.constant_folding,
                      ParseBoolOption("ge.oo.constantFolding", OptionOrDefault(options, "ge.oo.constantFolding")));
  GE_ASSIGN_OR_RETURN(out.verify_each_step,
                      ParseBoolOption("ge.verify_each_step", OptionOrDefault(options, "ge.verify_each_step")));
#ifndef NDEBUG
  out.verify_each_step = true;
#endif
  if (const std::string seed = OptionOrDefault(options, "ge.exec.seed"); !seed.empty()) {
    GE_ASSIGN_OR_RETURN(int64_t value, ParseIntOption("ge.exec.seed", seed));
    out.random_seed = value;
  }
  out.subgraph_backends = ParseListOption(OptionOrDefault(options, "ge.subgraph_backends"));
  // The backend names are checked by the compiler driver
  // (compiler/build/compile_pipeline.h), which knows the partitioners.
  out.disabled_passes = ParseListOption(OptionOrDefault(options, "ge.disable_passes"));
  GE_ASSIGN_OR_RETURN(out.gears, ParseGearOptions(options));
  return out;
}

}  // namespace ge::compiler
