// CompileOptions: the typed form of the option keys the compiler reads.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/options.h"

namespace ge::compiler {

struct CompileOptions {
  // ge.exec.exclude_engines
  std::vector<std::string> exclude_engines;
  // ge.engineType: wins ops both cpu_dense and cpu_vector support.
  std::string preferred_core_engine = "cpu_dense";
  // ge.exec.host_exec_ops
  std::vector<std::string> host_exec_ops;
  // ge.exec.disable_host_cpu_fallback
  bool disable_host_cpu_fallback = false;
  // ge.dump_graph / ge.dump_path
  int dump_graph_level = 0;
  std::string dump_path = ".";

  // Validates `options` (unknown keys and bad values are errors) and parses
  // the keys above; keys for other layers are ignored here.
  static absl::StatusOr<CompileOptions> FromOptions(const OptionMap& options);
};

}  // namespace ge::compiler
