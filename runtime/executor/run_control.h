// RunControl: what may stop a run that has started, checked by the
// executors between steps (DynamicExecutor: before every node, in every
// subgraph; StaticExecutor: before every task): a deadline and a
// cancellation test. A run without one (nullptr) pays nothing.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace ge::runtime {

class RunControl {
 public:
  using Clock = std::chrono::steady_clock;

  // A client whose own deadline passes cancels the call a little before the
  // server's copy of that deadline passes (the copy is measured from when
  // the request arrived): a cancellation within this much of the deadline
  // is reported as the deadline.
  static constexpr std::chrono::milliseconds kDeadlineSlack{50};

  void set_deadline(Clock::time_point deadline) { deadline_ = deadline; }
  // `cancelled` is called from the run's threads (several at once under
  // inter-op parallelism); it must be cheap and thread-safe.
  void set_cancelled(std::function<bool()> cancelled) { cancelled_ = std::move(cancelled); }

  // OK, else CANCELLED or DEADLINE_EXCEEDED saying the run stopped before
  // `next` (a node name).
  absl::Status Check(std::string_view next) const;

 private:
  std::optional<Clock::time_point> deadline_;
  std::function<bool()> cancelled_;
};

}  // namespace ge::runtime
