#include "runtime/executor/run_control.h"

#include <gtest/gtest.h>

#include <atomic>

namespace ge::runtime {
namespace {

using std::chrono::seconds;

TEST(RunControlTest, NothingSetNeverStops) {
  RunControl control;
  EXPECT_TRUE(control.Check("n").ok());
}

TEST(RunControlTest, PassedDeadlineNamesTheNextNode) {
  RunControl control;
  control.set_deadline(RunControl::Clock::now() - seconds(1));
  const absl::Status s = control.Check("mm3");
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("before node 'mm3'"), std::string_view::npos) << s;
}

TEST(RunControlTest, CancellationFarFromTheDeadlineIsCancellation) {
  std::atomic<bool> cancelled{false};
  RunControl control;
  control.set_deadline(RunControl::Clock::now() + seconds(60));
  control.set_cancelled([&] { return cancelled.load(); });
  EXPECT_TRUE(control.Check("a").ok());
  cancelled = true;
  const absl::Status s = control.Check("b");
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
  EXPECT_NE(s.message().find("cancelled before node 'b'"), std::string_view::npos) << s;
}

// A client cancels when its own deadline passes, which can be a little
// before the server's copy of it: that is reported as the deadline.
TEST(RunControlTest, CancellationJustBeforeTheDeadlineIsTheDeadline) {
  RunControl control;
  control.set_deadline(RunControl::Clock::now() + RunControl::kDeadlineSlack / 2);
  control.set_cancelled([] { return true; });
  EXPECT_EQ(control.Check("c").code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace ge::runtime
