// gectl inspect: a model's inputs, outputs, op histogram and opsets, read
// without compiling (so it also describes models ged cannot import).
#include <iostream>

#include "base/status.h"
#include "client/gectl/commands.h"
#include "session/tools.h"

namespace ge::gectl {

int InspectCommand(const InspectFlags& flags) {
  if (flags.format != "text" && flags.format != "json") {
    return ReportError(InvalidArgument("bad --format '", flags.format, "': expected text or json"));
  }
  absl::StatusOr<std::string> summary = session::InspectOnnxModel(flags.model, flags.format == "json");
  if (!summary.ok()) return ReportError(summary.status());
  std::cout << *summary;
  return 0;
}

}  // namespace ge::gectl
