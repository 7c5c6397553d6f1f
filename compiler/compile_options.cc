// Parsing of the compiler's option keys.
#include "compiler/compile_options.h"

#include "base/status.h"

namespace ge::compiler {

absl::StatusOr<CompileOptions> CompileOptions::FromOptions(const OptionMap& options) {
  GE_RETURN_IF_ERROR(ValidateOptions(options));
  CompileOptions out;
  out.exclude_engines = ParseListOption(OptionOrDefault(options, "ge.exec.exclude_engines"));
  out.preferred_core_engine = OptionOrDefault(options, "ge.engineType");
  out.host_exec_ops = ParseListOption(OptionOrDefault(options, "ge.exec.host_exec_ops"));
  GE_ASSIGN_OR_RETURN(out.disable_host_cpu_fallback,
                      ParseBoolOption("ge.exec.disable_host_cpu_fallback",
                                      OptionOrDefault(options, "ge.exec.disable_host_cpu_fallback")));
  GE_ASSIGN_OR_RETURN(int64_t dump, ParseIntOption("ge.dump_graph", OptionOrDefault(options, "ge.dump_graph")));
  out.dump_graph_level = static_cast<int>(dump);
  out.dump_path = OptionOrDefault(options, "ge.dump_path");
  return out;
}

}  // namespace ge::compiler
