// gectl bench: latency percentiles of repeated runs of one model, in
// process, with the inputs gectl run would use; also the time opening the
// model took (import and compilation for .onnx, loading for .gem) and, with
// --output-dir, the last run's outputs. With --workers N, N sessions of the
// model on the one device run at once (each its --iterations), sharing the
// device's compute threads as a daemon's workers do: the percentiles are
// over every run, and runs_per_s is the throughput. An input given several
// times (--input or --shape) makes input sets, run in turn (a server's
// requests of varying shapes): the JSON line adds the percentiles per set.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "base/io/json_writer.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "client/gectl/model_inputs.h"
#include "client/gectl/perf_load.h"

namespace ge::gectl {
namespace {

using perf::Percentile;

// The process's own peak RSS: VmHWM of /proc/self/status, which starts
// afresh at exec. getrusage's ru_maxrss does not: it keeps the high-water
// mark of the process image before exec, i.e. of a large parent that forked
// gectl (a Python driver holding models measured its own RSS). ru_maxrss
// only where /proc is missing.
double PeakRssMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;  // in kB
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

absl::Status Bench(const BenchFlags& flags) {
  if (flags.iterations < 1) return InvalidArgument("--iterations must be at least 1");
  if (flags.warmup < 0) return InvalidArgument("--warmup must not be negative");
  if (flags.threads < 0) return InvalidArgument("--threads must not be negative");
  if (flags.workers < 1) return InvalidArgument("--workers must be at least 1");
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  // Set k holds the k-th --input / --shape of each name; a name given
  // fewer times keeps its last value in the later sets.
  std::vector<InputSpec> specs(1);
  specs[0].seed = flags.seed;
  auto add_flag = [&](const std::string& f, auto parse, auto has) -> absl::Status {
    size_t k = 0;
    InputSpec probe;
    GE_RETURN_IF_ERROR(parse(f, probe));
    while (k < specs.size() && has(specs[k], probe)) ++k;
    if (k == specs.size()) specs.emplace_back().seed = flags.seed;  // filled in from the set before below
    return parse(f, specs[k]);
  };
  for (const std::string& f : flags.inputs) {
    GE_RETURN_IF_ERROR(add_flag(f, ParseInputFlag, [](const InputSpec& spec, const InputSpec& one) {
      return spec.files.contains(one.files.begin()->first) &&
             spec.files.at(one.files.begin()->first) != one.files.begin()->second;
    }));
  }
  for (const std::string& f : flags.shapes) {
    GE_RETURN_IF_ERROR(add_flag(f, ParseShapeFlag, [](const InputSpec& spec, const InputSpec& one) {
      return spec.shapes.contains(one.shapes.begin()->first) &&
             spec.shapes.at(one.shapes.begin()->first) != one.shapes.begin()->second;
    }));
  }
  GE_ASSIGN_OR_RETURN(auto runtime, LocalRuntime::Create(flags.threads));
  const auto open_start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(auto session, runtime->OpenModel(flags.model, options));
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - open_start).count();
  GE_ASSIGN_OR_RETURN(session::GraphInfo info, session->GetGraphInfo(0));
  for (size_t k = 1; k < specs.size(); ++k) {
    for (const auto& [name, file] : specs[k - 1].files) {
      if (!specs[k].files.contains(name) && !specs[k].shapes.contains(name)) specs[k].files[name] = file;
    }
    for (const auto& [name, shape] : specs[k - 1].shapes) {
      if (!specs[k].files.contains(name) && !specs[k].shapes.contains(name)) specs[k].shapes[name] = shape;
    }
  }
  std::vector<std::vector<Value>> input_sets;
  for (const InputSpec& spec : specs) {
    GE_ASSIGN_OR_RETURN(std::vector<Value> inputs, MakeInputs(info, spec));
    input_sets.push_back(std::move(inputs));
  }
  const size_t num_sets = input_sets.size();
  std::vector<std::unique_ptr<session::Session>> sessions;
  sessions.push_back(std::move(session));
  for (int w = 1; w < flags.workers; ++w) {
    GE_ASSIGN_OR_RETURN(auto more, runtime->OpenModel(flags.model, options));
    sessions.push_back(std::move(more));
  }
  // Each warm-up run takes the next set, as the timed runs do.
  for (auto& s : sessions) {
    for (int i = 0; i < flags.warmup; ++i) GE_RETURN_IF_ERROR(s->RunGraph(0, input_sets[i % num_sets]).status());
  }
  std::vector<std::vector<double>> worker_ms(sessions.size());
  std::vector<absl::Status> worker_status(sessions.size());
  std::vector<Value> outputs;
  auto timed_runs = [&](size_t w) {
    worker_ms[w].reserve(flags.iterations);
    for (int i = 0; i < flags.iterations; ++i) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<std::vector<Value>> out = sessions[w]->RunGraph(0, input_sets[i % num_sets]);
      if (!out.ok()) {
        worker_status[w] = out.status();
        return;
      }
      worker_ms[w].push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      if (w == 0) outputs = *std::move(out);
    }
  };
  const auto timed_start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (size_t w = 1; w < sessions.size(); ++w) workers.emplace_back(timed_runs, w);
  timed_runs(0);
  for (std::thread& t : workers) t.join();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - timed_start).count();
  std::vector<double> ms;
  std::vector<std::vector<double>> set_ms(num_sets);
  for (size_t w = 0; w < sessions.size(); ++w) {
    GE_RETURN_IF_ERROR(worker_status[w]);
    ms.insert(ms.end(), worker_ms[w].begin(), worker_ms[w].end());
    for (size_t i = 0; i < worker_ms[w].size(); ++i) set_ms[i % num_sets].push_back(worker_ms[w][i]);
  }
  if (!flags.output_dir.empty()) {
    std::vector<std::string> names;
    for (const auto& io : info.outputs) names.push_back(io.name);
    GE_RETURN_IF_ERROR(SaveOutputs(flags.output_dir, names, outputs));
  }
  double mean = 0;
  for (double v : ms) mean += v;
  mean /= static_cast<double>(ms.size());
  std::sort(ms.begin(), ms.end());
  io::JsonWriter w;
  w.BeginObject().Key("model").String(flags.model).Key("iterations").Int(flags.iterations);
  w.Key("p50_ms").Double(Percentile(ms, 0.5)).Key("p90_ms").Double(Percentile(ms, 0.9));
  w.Key("p99_ms").Double(Percentile(ms, 0.99)).Key("mean_ms").Double(mean);
  w.Key("peak_rss_mb").Double(PeakRssMb()).Key("compile_ms").Double(compile_ms);
  if (flags.workers > 1) {
    w.Key("workers").Int(flags.workers).Key("runs_per_s").Double(static_cast<double>(ms.size()) / wall_s);
  }
  if (num_sets > 1) {
    w.Key("sets").BeginArray();
    for (std::vector<double>& set : set_ms) {
      std::sort(set.begin(), set.end());
      w.BeginObject().Key("runs").Int(static_cast<int64_t>(set.size()));
      if (!set.empty()) w.Key("p50_ms").Double(Percentile(set, 0.5)).Key("p90_ms").Double(Percentile(set, 0.9));
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  std::cout << w.str() << std::endl;
  return absl::OkStatus();
}

}  // namespace

int BenchCommand(const BenchFlags& flags) {
  absl::Status s = Bench(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
