// gectl perf's load generator (client/gectl/perf_load.h) with targets that
// answer at once: ranges, percentiles, the stability rule, and what the
// concurrency and request-rate loops count. Nothing here depends on how
// fast the machine is: counts are checked against what the schedule
// allows, not against a speed.
#include "client/gectl/perf_load.h"

#include <atomic>
#include <chrono>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ge::gectl::perf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseRangeTest, LevelsFromStartToEndByStep) {
  EXPECT_THAT(*ParseRange("1:16:5", true), ElementsAre(1, 6, 11, 16));
  EXPECT_THAT(*ParseRange("4", true), ElementsAre(4));
  EXPECT_THAT(*ParseRange("2:3", true), ElementsAre(2, 3));
  EXPECT_THAT(*ParseRange("0.5:1.5:0.5", false), ElementsAre(0.5, 1.0, 1.5));
}

TEST(ParseRangeTest, RefusesBadRanges) {
  for (const char* bad : {"", "0", "-1:4", "4:2", "1:4:0", "1:2:3:4", "a:b", "1.5", "1:100000"}) {
    EXPECT_FALSE(ParseRange(bad, true).ok()) << bad;
  }
  EXPECT_THAT(ParseRange("1:5000:1", true).status().message(), HasSubstr("more than 1000 levels"));
}

TEST(PercentileTest, InterpolatesBetweenRanks) {
  const std::vector<double> v = {10, 20, 30, 40, 50};
  EXPECT_DOUBLE_EQ(Percentile(v, 0.0), 10);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.5), 30);
  EXPECT_DOUBLE_EQ(Percentile(v, 1.0), 50);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.9), 46);
  EXPECT_DOUBLE_EQ(Percentile({}, 0.5), 0);
}

WindowStats Window(double seconds, int ok, double latency_us) {
  WindowStats w;
  w.seconds = seconds;
  w.requests = ok;
  w.latency_us.assign(static_cast<size_t>(ok), latency_us);
  return w;
}

TEST(IsStableTest, LastThreeWindowsWithinTheMargin) {
  std::vector<WindowStats> w = {Window(1, 10, 500), Window(1, 100, 100), Window(1, 104, 103)};
  EXPECT_FALSE(IsStable(w, 0.10, 1));  // the first window is far off
  w.push_back(Window(1, 98, 99));
  EXPECT_TRUE(IsStable(w, 0.10, 1));
  w.push_back(Window(1, 100, 140));  // latency moves by a third
  EXPECT_FALSE(IsStable(w, 0.10, 1));
  EXPECT_FALSE(IsStable({Window(1, 0, 0), Window(1, 0, 0), Window(1, 0, 0)}, 0.10, 1));
  EXPECT_FALSE(IsStable({Window(1, 5, 1), Window(1, 5, 1)}, 0.10, 1));
}

TEST(WindowStatsTest, ThroughputCountsRowsOfSuccessfulRequests) {
  WindowStats w = Window(2, 10, 100);
  w.requests = 12;
  w.errors = 2;
  EXPECT_DOUBLE_EQ(w.Throughput(4), 20);  // 10 successes x 4 rows / 2 s
  w.Merge(Window(2, 10, 300));
  EXPECT_DOUBLE_EQ(w.seconds, 4);
  EXPECT_EQ(w.requests, 22);
  EXPECT_DOUBLE_EQ(w.AverageLatencyUs(), 200);
}

// Answers at once; every `fail_every`-th request fails with UNAVAILABLE.
class InstantTarget : public PerfTarget {
 public:
  InstantTarget(std::atomic<int64_t>* sent, int fail_every) : sent_(sent), fail_every_(fail_every) {}
  absl::Status Infer() override {
    const int64_t n = sent_->fetch_add(1) + 1;
    if (fail_every_ > 0 && n % fail_every_ == 0) return absl::UnavailableError("no instance");
    return absl::OkStatus();
  }

 private:
  std::atomic<int64_t>* sent_;
  int fail_every_;
};

TargetFactory Instant(std::atomic<int64_t>* sent, int fail_every, std::atomic<int>* made) {
  return [=]() -> absl::StatusOr<std::unique_ptr<PerfTarget>> {
    made->fetch_add(1);
    return std::make_unique<InstantTarget>(sent, fail_every);
  };
}

TEST(MeasureConcurrencyTest, OneTargetPerSenderAndEveryEndCounted) {
  std::atomic<int64_t> sent{0};
  std::atomic<int> made{0};
  MeasureOptions options;
  options.window_seconds = 0.05;
  options.max_trials = 4;
  options.batch = 2;
  absl::StatusOr<LevelResult> r = MeasureConcurrency(Instant(&sent, 3, &made), 3, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(made.load(), 3);
  EXPECT_EQ(r->level, 3);
  EXPECT_GE(r->windows, 3);
  EXPECT_LE(r->windows, 4);
  EXPECT_GT(r->stats.requests, 0);
  EXPECT_LE(r->stats.requests, sent.load());
  EXPECT_EQ(r->stats.requests, r->stats.errors + static_cast<int64_t>(r->stats.latency_us.size()));
  EXPECT_GT(r->stats.errors, 0);
  EXPECT_EQ(r->stats.error_codes.at("UNAVAILABLE"), r->stats.errors);
  EXPECT_EQ(r->stats.first_error.code(), absl::StatusCode::kUnavailable);
  EXPECT_NEAR(r->throughput, r->stats.Throughput(2), 1e-9);
  EXPECT_LE(r->p50_us, r->p99_us);
}

TEST(MeasureRateTest, NeverSendsAheadOfTheSchedule) {
  std::atomic<int64_t> sent{0};
  std::atomic<int> made{0};
  MeasureOptions options;
  options.window_seconds = 0.1;
  options.max_trials = 3;
  options.max_threads = 2;
  const double rate = 200;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<LevelResult> r = MeasureRate(Instant(&sent, 0, &made), rate, options);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(made.load(), 2);
  EXPECT_EQ(r->stats.errors, 0);
  EXPECT_GT(r->stats.requests, 0);
  EXPECT_EQ(r->windows, 3);
  // Start times are 1/rate apart from the level's start: however slow the
  // machine, no more than rate x elapsed + 1 requests can have been sent.
  EXPECT_LE(static_cast<double>(sent.load()), rate * elapsed + 1);
  EXPECT_LE(r->stats.requests, sent.load());
}

TEST(MeasureTest, RefusesBadOptionsAndFactoryFailures) {
  std::atomic<int64_t> sent{0};
  std::atomic<int> made{0};
  MeasureOptions options;
  options.window_seconds = 0;
  EXPECT_FALSE(MeasureConcurrency(Instant(&sent, 0, &made), 1, options).ok());
  options = MeasureOptions{};
  EXPECT_FALSE(MeasureConcurrency(Instant(&sent, 0, &made), 0, options).ok());
  EXPECT_FALSE(MeasureRate(Instant(&sent, 0, &made), -1, options).ok());
  const TargetFactory broken = []() -> absl::StatusOr<std::unique_ptr<PerfTarget>> {
    return absl::UnavailableError("cannot connect");
  };
  EXPECT_EQ(MeasureConcurrency(broken, 2, options).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(made.load(), 0);
}

}  // namespace
}  // namespace ge::gectl::perf
