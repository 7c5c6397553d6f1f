// Out-of-line pieces of the status helpers.
#include "base/status.h"

#include <string>

namespace ge {
namespace internal {

void CheckFailed(const char* file, int line, const char* cond, const char* msg) {
  std::fprintf(stderr, "ged: check failed at %s:%d: %s %s\n", file, line, cond, msg);
  std::fflush(stderr);
  std::abort();
}

}  // namespace internal

absl::Status Annotate(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), StrCat(context, ": ", StdView(status.message())));
}

}  // namespace ge
