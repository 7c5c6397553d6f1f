// gectl bench: latency percentiles of repeated runs of one model, in
// process, with the inputs gectl run would use; also the time opening the
// model took (import and compilation for .onnx, loading for .gem) and, with
// --output-dir, the last run's outputs.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "base/io/json_writer.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "client/gectl/model_inputs.h"

namespace ge::gectl {
namespace {

double Percentile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

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
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  InputSpec spec;
  spec.seed = flags.seed;
  for (const std::string& f : flags.inputs) GE_RETURN_IF_ERROR(ParseInputFlag(f, spec));
  for (const std::string& f : flags.shapes) GE_RETURN_IF_ERROR(ParseShapeFlag(f, spec));
  GE_ASSIGN_OR_RETURN(auto runtime, LocalRuntime::Create(flags.threads));
  const auto open_start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(auto session, runtime->OpenModel(flags.model, options));
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - open_start).count();
  GE_ASSIGN_OR_RETURN(session::GraphInfo info, session->GetGraphInfo(0));
  GE_ASSIGN_OR_RETURN(std::vector<Value> inputs, MakeInputs(info, spec));
  for (int i = 0; i < flags.warmup; ++i) GE_RETURN_IF_ERROR(session->RunGraph(0, inputs).status());
  std::vector<double> ms;
  ms.reserve(flags.iterations);
  std::vector<Value> outputs;
  for (int i = 0; i < flags.iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    GE_ASSIGN_OR_RETURN(outputs, session->RunGraph(0, inputs));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
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
  w.Key("peak_rss_mb").Double(PeakRssMb()).Key("compile_ms").Double(compile_ms).EndObject();
  std::cout << w.str() << std::endl;
  return absl::OkStatus();
}

}  // namespace

int BenchCommand(const BenchFlags& flags) {
  absl::Status s = Bench(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
