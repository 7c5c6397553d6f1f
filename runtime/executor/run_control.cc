#include "runtime/executor/run_control.h"

#include "base/status.h"

namespace ge::runtime {

absl::Status RunControl::Check(std::string_view next) const {
  // The deadline first: gRPC marks a call cancelled when its deadline
  // passes too, and the deadline is the better explanation then.
  const auto deadline_error = [&] {
    return absl::DeadlineExceededError(StrCat("the deadline passed during the run, before node '", next, "'"));
  };
  if (deadline_ && Clock::now() >= *deadline_) return deadline_error();
  if (cancelled_ && cancelled_()) {
    if (deadline_ && Clock::now() >= *deadline_ - kDeadlineSlack) return deadline_error();
    return absl::CancelledError(StrCat("the run was cancelled before node '", next, "'"));
  }
  return absl::OkStatus();
}

}  // namespace ge::runtime
