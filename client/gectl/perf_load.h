// The load generator behind `gectl perf` (docs/cli.md), in the manner of
// Triton's perf_analyzer, independent of the transport: a PerfTarget sends
// one inference request and says how it ended; the runners keep a given
// number of requests in flight (concurrency mode) or start requests on a
// fixed schedule (request-rate mode), cut the run into measurement windows
// and repeat windows until the last three are stable: their throughputs
// and average latencies each lie within `stability` (a fraction) of the
// three windows' mean. A level's row merges those three windows.
//
// Latency is the time from sending a request to its answer, measured by the
// sending thread; throughput counts successful requests times the batch
// size per second of window. Failed requests are counted by status code
// and leave throughput and latency alone.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ge::gectl::perf {

// Sends one request and returns how it ended. One target per sending
// thread (a target need not be thread-safe).
class PerfTarget {
 public:
  virtual ~PerfTarget() = default;
  virtual absl::Status Infer() = 0;
};
using TargetFactory = std::function<absl::StatusOr<std::unique_ptr<PerfTarget>>()>;

// "A:B:S" (S defaults to 1, B to A): the levels A, A+S, ... up to B.
// Levels must be positive, A <= B, S > 0, and there are at most 1000.
absl::StatusOr<std::vector<double>> ParseRange(const std::string& text, bool integral);

// The q-quantile (0..1) of ascending `sorted`, by linear interpolation.
double Percentile(const std::vector<double>& sorted, double q);

struct WindowStats {
  double seconds = 0;                          // the window's length
  int64_t requests = 0;                        // ended inside the window
  int64_t errors = 0;                          // of those, failed
  int64_t delayed = 0;                         // rate mode: sent late (no thread free)
  std::vector<double> latency_us;              // of the successful ones
  std::map<std::string, int64_t> error_codes;  // code name -> count
  absl::Status first_error;                    // the first failure; OK when none

  void Merge(const WindowStats& other);
  double Throughput(int batch) const;  // inferences per second
  double AverageLatencyUs() const;
};

// Whether the last three of `windows` are stable under `stability` (a
// fraction, 0.1 for 10%). Windows with no successful request never are.
bool IsStable(const std::vector<WindowStats>& windows, double stability, int batch);

struct MeasureOptions {
  double window_seconds = 5;
  double stability = 0.10;
  int max_trials = 10;  // windows per level before giving up on stability
  int batch = 1;
  int max_threads = 16;  // rate mode: sending threads
};

struct LevelResult {
  double level = 0;  // concurrency, or requests per second
  bool stable = false;
  int windows = 0;    // measured before stopping
  WindowStats stats;  // the last three windows merged
  double throughput = 0;
  double p50_us = 0, p90_us = 0, p95_us = 0, p99_us = 0, avg_us = 0;
};

// Keeps `concurrency` requests in flight, each thread sending its next one
// when the previous answers.
absl::StatusOr<LevelResult> MeasureConcurrency(const TargetFactory& factory, int concurrency,
                                               const MeasureOptions& options);
// Starts `rate` requests per second at even intervals on up to
// options.max_threads sending threads; a request whose thread was busy at
// its start time is sent late and counted as delayed.
absl::StatusOr<LevelResult> MeasureRate(const TargetFactory& factory, double rate, const MeasureOptions& options);

}  // namespace ge::gectl::perf
