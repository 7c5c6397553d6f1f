// omp_budget_bench: the threading contract's mechanics in isolation (issue 20
// item 4): W workers, each a thread that runs ITERS "kernels" under one
// device's ComputeBudget of T threads. A kernel is some serial work on the
// worker (an executor's per-op cost, a small op) and then an OpenMP loop of T
// threads over ELEMS elements (sdk::OmpParallelRange, a team sized by what the
// budget has free), or, with --whole, a team that waits for all T threads (as
// cpu_dense's oneDNN primitives do). Prints one JSON line: the p50 and p90
// time per kernel over every worker, kernels per second, and the budget's
// peak. Run it under different OMP_WAIT_POLICY / GOMP_SPINCOUNT settings to
// compare how OpenMP's idle threads wait (docs/perf.md).
//
//   omp_budget_bench [--workers W] [--threads T] [--iters N] [--elems E] [--serial S] [--whole] [--no-budget]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/compute_budget.h"
#include "runtime/engines/sdk/parallel.h"

namespace {

struct Flags {
  int workers = 1;
  int threads = 2;
  int iters = 2000;
  int64_t elems = 1 << 16;
  int64_t serial = 1 << 12;
  bool whole = false;
  bool budget = true;
};

float Work(float v) { return std::tanh(v) * 0.5f + v * 0.25f; }

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoll(argv[++i]) : 0LL; };
    if (a == "--workers") {
      f.workers = static_cast<int>(next());
    } else if (a == "--threads") {
      f.threads = static_cast<int>(next());
    } else if (a == "--iters") {
      f.iters = static_cast<int>(next());
    } else if (a == "--elems") {
      f.elems = next();
    } else if (a == "--serial") {
      f.serial = next();
    } else if (a == "--whole") {
      f.whole = true;
    } else if (a == "--no-budget") {
      f.budget = false;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 1;
    }
  }
  ge::ComputeBudget budget(f.threads);
  std::vector<std::vector<double>> times(f.workers);
  auto worker = [&](int w) {
    std::vector<float> x(f.elems, 0.5f), y(f.elems), s(f.serial, 0.25f);
    const ge::ComputeScope scope(f.budget ? &budget : nullptr);
    times[w].reserve(f.iters);
    for (int it = 0; it < f.iters; ++it) {
      const auto start = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < f.serial; ++i) s[i] = Work(s[i]);
      auto body = [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = Work(x[i]);
      };
      if (f.whole) {
        const ge::ComputeTeam team(f.threads, ge::ComputeTeam::Mode::kWhole);
        const int n = team.size();
#pragma omp parallel num_threads(n)
        {
          const int64_t per = (f.elems + n - 1) / n;
          const int64_t b = per * omp_get_thread_num();
          body(std::min(b, f.elems), std::min(b + per, f.elems));
        }
      } else {
        ge::engine::sdk::OmpParallelRange(f.threads, f.elems, (f.elems + f.threads - 1) / f.threads, body);
      }
      times[w].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int w = 1; w < f.workers; ++w) pool.emplace_back(worker, w);
  worker(0);
  for (std::thread& t : pool) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (auto& t : times) all.insert(all.end(), t.begin(), t.end());
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  std::printf(
      "{\"workers\": %d, \"threads\": %d, \"mode\": \"%s\", \"budget\": %s, \"wait_policy\": \"%s\", "
      "\"spincount\": \"%s\", \"p50_us\": %.1f, \"p90_us\": %.1f, \"kernels_per_s\": %.0f, \"peak\": %d}\n",
      f.workers, f.threads, f.whole ? "whole" : "flexible", f.budget ? "true" : "false", policy ? policy : "",
      spin ? spin : "", Percentile(all, 0.5), Percentile(all, 0.9), static_cast<double>(all.size()) / wall,
      budget.peak());
  return 0;
}
