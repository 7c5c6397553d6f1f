#include "runtime/executor/run_control.h"

#include "base/status.h"

namespace ge::runtime {

absl::Status RunControl::Check(std::string_view next) const {
  // The deadline first: gRPC marks a call cancelled when its deadline
  // passes too, and the deadline is the better explanation then.
  if (deadline_ && Clock::now() >= *deadline_) {
    return absl::DeadlineExceededError(StrCat("the deadline passed during the run, before node '", next, "'"));
  }
  if (cancelled_ && cancelled_()) {
    return absl::CancelledError(StrCat("the run was cancelled before node '", next, "'"));
  }
  return absl::OkStatus();
}

}  // namespace ge::runtime
