// The measurement loops of `gectl perf` (perf_load.h): sending threads,
// the window recorder, the stability rule and the statistics of a level.
#include "client/gectl/perf_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/status.h"

namespace ge::gectl::perf {
namespace {

using Clock = std::chrono::steady_clock;

// What every sending thread records into; the controller cuts windows.
class Recorder {
 public:
  void Record(const absl::Status& status, double latency_us, bool delayed) {
    std::lock_guard<std::mutex> lock(mu_);
    ++current_.requests;
    if (delayed) ++current_.delayed;
    if (status.ok()) {
      current_.latency_us.push_back(latency_us);
      return;
    }
    ++current_.errors;
    ++current_.error_codes[std::string(absl::StatusCodeToString(status.code()))];
    if (current_.first_error.ok()) current_.first_error = status;
  }
  // Returns what was recorded since the last cut, as a window of `seconds`.
  WindowStats Cut(double seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    WindowStats out = std::move(current_);
    current_ = WindowStats{};
    out.seconds = seconds;
    return out;
  }

 private:
  std::mutex mu_;
  WindowStats current_;
};

double MicrosSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

absl::StatusOr<std::vector<std::unique_ptr<PerfTarget>>> MakeTargets(const TargetFactory& factory, int n) {
  std::vector<std::unique_ptr<PerfTarget>> targets;
  for (int i = 0; i < n; ++i) {
    GE_ASSIGN_OR_RETURN(std::unique_ptr<PerfTarget> target, factory());
    targets.push_back(std::move(target));
  }
  return targets;
}

absl::Status CheckOptions(const MeasureOptions& options) {
  if (!(options.window_seconds > 0)) return InvalidArgument("the measurement interval must be positive");
  if (!(options.stability > 0)) return InvalidArgument("the stability percentage must be positive");
  if (options.max_trials < 1) return InvalidArgument("--max-trials must be at least 1");
  if (options.batch < 1) return InvalidArgument("the batch size must be at least 1");
  if (options.max_threads < 1) return InvalidArgument("--max-threads must be at least 1");
  return absl::OkStatus();
}

// Cuts windows from `recorder` until the last three are stable or the
// trials are spent; fills everything of `result` but `level`.
void MeasureWindows(Recorder& recorder, const MeasureOptions& options, LevelResult& result) {
  std::vector<WindowStats> windows;
  const auto window =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.window_seconds));
  Clock::time_point start = Clock::now();
  recorder.Cut(0);  // what ended before the first window started
  while (static_cast<int>(windows.size()) < options.max_trials) {
    const Clock::time_point end = start + window;
    std::this_thread::sleep_until(end);
    const Clock::time_point now = Clock::now();
    windows.push_back(recorder.Cut(std::chrono::duration<double>(now - start).count()));
    start = now;
    if (IsStable(windows, options.stability, options.batch)) {
      result.stable = true;
      break;
    }
  }
  result.windows = static_cast<int>(windows.size());
  const size_t first = windows.size() > 3 ? windows.size() - 3 : 0;
  for (size_t i = first; i < windows.size(); ++i) result.stats.Merge(windows[i]);
  std::vector<double>& lat = result.stats.latency_us;
  std::sort(lat.begin(), lat.end());
  result.throughput = result.stats.Throughput(options.batch);
  result.avg_us = result.stats.AverageLatencyUs();
  result.p50_us = Percentile(lat, 0.50);
  result.p90_us = Percentile(lat, 0.90);
  result.p95_us = Percentile(lat, 0.95);
  result.p99_us = Percentile(lat, 0.99);
}

}  // namespace

absl::StatusOr<std::vector<double>> ParseRange(const std::string& text, bool integral) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.empty() || parts.size() > 3) return InvalidArgument("range '", text, "' is not A[:B[:S]]");
  double v[3] = {0, 0, 1};
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!absl::SimpleAtod(parts[i], &v[i]) || !std::isfinite(v[i])) {
      return InvalidArgument("range '", text, "': '", parts[i], "' is not a number");
    }
    if (integral && v[i] != std::floor(v[i])) {
      return InvalidArgument("range '", text, "': '", parts[i], "' is not a whole number");
    }
  }
  if (parts.size() == 1) v[1] = v[0];
  if (v[0] <= 0) return InvalidArgument("range '", text, "': the start must be positive");
  if (v[1] < v[0]) return InvalidArgument("range '", text, "': the end is below the start");
  if (v[2] <= 0) return InvalidArgument("range '", text, "': the step must be positive");
  if ((v[1] - v[0]) / v[2] >= 1000) return InvalidArgument("range '", text, "' has more than 1000 levels");
  std::vector<double> levels;
  // The end is included when a step lands on it (within rounding).
  for (double x = v[0]; x <= v[1] * (1 + 1e-12); x += v[2]) levels.push_back(x);
  return levels;
}

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

void WindowStats::Merge(const WindowStats& other) {
  seconds += other.seconds;
  requests += other.requests;
  errors += other.errors;
  delayed += other.delayed;
  latency_us.insert(latency_us.end(), other.latency_us.begin(), other.latency_us.end());
  for (const auto& [code, n] : other.error_codes) error_codes[code] += n;
  if (first_error.ok()) first_error = other.first_error;
}

double WindowStats::Throughput(int batch) const {
  if (seconds <= 0) return 0;
  return static_cast<double>(latency_us.size()) * batch / seconds;
}

double WindowStats::AverageLatencyUs() const {
  if (latency_us.empty()) return 0;
  double sum = 0;
  for (double l : latency_us) sum += l;
  return sum / static_cast<double>(latency_us.size());
}

bool IsStable(const std::vector<WindowStats>& windows, double stability, int batch) {
  if (windows.size() < 3) return false;
  const WindowStats* last[3] = {&windows[windows.size() - 3], &windows[windows.size() - 2], &windows.back()};
  const auto within = [stability](const double(&x)[3]) {
    const double mean = (x[0] + x[1] + x[2]) / 3;
    if (!(mean > 0)) return false;
    for (double v : x) {
      if (std::fabs(v - mean) > stability * mean) return false;
    }
    return true;
  };
  double throughput[3];
  double latency[3];
  for (int i = 0; i < 3; ++i) {
    if (last[i]->latency_us.empty()) return false;
    throughput[i] = last[i]->Throughput(batch);
    latency[i] = last[i]->AverageLatencyUs();
  }
  return within(throughput) && within(latency);
}

absl::StatusOr<LevelResult> MeasureConcurrency(const TargetFactory& factory, int concurrency,
                                               const MeasureOptions& options) {
  GE_RETURN_IF_ERROR(CheckOptions(options));
  if (concurrency < 1) return InvalidArgument("the concurrency must be at least 1");
  GE_ASSIGN_OR_RETURN(auto targets, MakeTargets(factory, concurrency));
  Recorder recorder;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  threads.reserve(targets.size());
  for (auto& target : targets) {
    threads.emplace_back([&recorder, &stop, t = target.get()] {
      while (!stop.load(std::memory_order_relaxed)) {
        const Clock::time_point sent = Clock::now();
        const absl::Status status = t->Infer();
        recorder.Record(status, MicrosSince(sent), /*delayed=*/false);
      }
    });
  }
  LevelResult result;
  result.level = concurrency;
  MeasureWindows(recorder, options, result);
  stop = true;
  for (std::thread& t : threads) t.join();
  return result;
}

absl::StatusOr<LevelResult> MeasureRate(const TargetFactory& factory, double rate, const MeasureOptions& options) {
  GE_RETURN_IF_ERROR(CheckOptions(options));
  if (!(rate > 0)) return InvalidArgument("the request rate must be positive");
  GE_ASSIGN_OR_RETURN(auto targets, MakeTargets(factory, options.max_threads));
  Recorder recorder;
  std::mutex mu;
  std::condition_variable ready;      // a start time is due, or stop
  std::condition_variable stopping;   // wakes the scheduler early
  std::deque<Clock::time_point> due;  // start times not yet taken by a thread
  bool stop = false;
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  // Late by more than this: the request waited for a free thread.
  const Clock::duration late = std::chrono::milliseconds(1) + interval / 10;
  std::vector<std::thread> threads;
  for (auto& target : targets) {
    threads.emplace_back([&, t = target.get()] {
      for (;;) {
        Clock::time_point when;
        {
          std::unique_lock<std::mutex> lock(mu);
          ready.wait(lock, [&] { return stop || !due.empty(); });
          if (stop) return;
          when = due.front();
          due.pop_front();
        }
        const Clock::time_point sent = Clock::now();
        const absl::Status status = t->Infer();
        recorder.Record(status, MicrosSince(sent), sent - when > late);
      }
    });
  }
  std::thread scheduler([&] {
    Clock::time_point next = Clock::now();
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (stopping.wait_until(lock, next, [&] { return stop; })) return;
        due.push_back(next);
      }
      ready.notify_one();
      next += interval;
    }
  });
  LevelResult result;
  result.level = rate;
  MeasureWindows(recorder, options, result);
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  ready.notify_all();
  stopping.notify_all();
  scheduler.join();
  for (std::thread& t : threads) t.join();
  return result;
}

}  // namespace ge::gectl::perf
