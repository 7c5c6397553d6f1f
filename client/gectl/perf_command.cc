// gectl perf: a load generator for the KServe v2 protocol in the manner of
// Triton's perf_analyzer (docs/cli.md). For each concurrency or request
// rate of the range it measures windows until three in a row are stable
// (perf_load.h), then prints a row: throughput, latency percentiles,
// requests and errors; -f writes the rows as JSON. The model's inputs are
// built once from its metadata (perf_targets.h).
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/io/json_writer.h"
#include "base/status.h"
#include "client/cpp/client.h"
#include "client/gectl/commands.h"
#include "client/gectl/perf_load.h"
#include "client/gectl/perf_targets.h"

namespace ge::gectl {
namespace {

// NAME:D0,D1,... (perf_analyzer's form); NAME=D0,... is accepted too.
absl::Status ParseShapeFlag(const std::string& flag, std::map<std::string, std::vector<int64_t>>& shapes) {
  const size_t sep = flag.find_last_of(":=");
  if (sep == std::string::npos || sep == 0) return InvalidArgument("--shape '", flag, "' is not NAME:D0,D1,...");
  std::vector<int64_t> dims;
  const std::string list = flag.substr(sep + 1);
  if (!list.empty()) {
    for (absl::string_view d : absl::StrSplit(list, ',')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(d, &v) || v < 0) return InvalidArgument("--shape '", flag, "': '", d, "' is not a dim");
      dims.push_back(v);
    }
  }
  if (!shapes.emplace(flag.substr(0, sep), std::move(dims)).second) {
    return InvalidArgument("--shape gives input '", flag.substr(0, sep), "' twice");
  }
  return absl::OkStatus();
}

std::string FormatRow(const perf::LevelResult& r, bool rate) {
  std::ostringstream row;
  row << std::fixed << std::setprecision(rate ? 1 : 0) << std::setw(11) << r.level << std::setprecision(1)
      << std::setw(14) << r.throughput << std::setprecision(0) << std::setw(10) << r.p50_us << std::setw(10) << r.p90_us
      << std::setw(10) << r.p99_us << std::setw(10) << r.avg_us << std::setw(10) << r.stats.requests << std::setw(8)
      << r.stats.errors;
  if (rate) row << std::setw(9) << r.stats.delayed;
  row << "  " << (r.stable ? "yes" : "no");
  return row.str();
}

double PerUnitUs(const perf::ServerStats::Duration& d) { return d.count > 0 ? d.ns / 1e3 / d.count : 0; }

// The server's side of a level (ModelStatistics differences), as
// perf_analyzer prints it: batches, rows per batch, queue and compute time.
std::string FormatServer(const perf::ServerStats& s) {
  std::ostringstream line;
  line << std::fixed << std::setprecision(0) << "            server: " << s.execution_count << " batches, "
       << std::setprecision(2)
       << (s.execution_count > 0 ? static_cast<double>(s.inference_count) / s.execution_count : 0)
       << " rows each, queue " << std::setprecision(0) << PerUnitUs(s.queue) << " us per request, compute "
       << PerUnitUs(s.compute_infer) << " us per batch";
  if (!s.batches.empty()) {
    const auto& [rows, d] = *s.batches.rbegin();
    line << " (" << rows << " rows: " << PerUnitUs(d) << " us)";
  }
  return line.str();
}

void WriteServer(io::JsonWriter& json, const perf::ServerStats& s) {
  json.Key("server").BeginObject();
  json.Key("inference_count").Int(s.inference_count).Key("execution_count").Int(s.execution_count);
  json.Key("queue_us_per_request").Double(PerUnitUs(s.queue));
  json.Key("compute_infer_us_per_batch").Double(PerUnitUs(s.compute_infer));
  json.Key("batches").BeginArray();
  for (const auto& [rows, d] : s.batches) {
    json.BeginObject().Key("rows").Int(rows).Key("count").Int(d.count);
    json.Key("compute_infer_us").Double(PerUnitUs(d)).EndObject();
  }
  json.EndArray().EndObject();
}

void WriteLevel(io::JsonWriter& json, const perf::LevelResult& r, bool rate, const perf::ServerStats* server) {
  json.BeginObject();
  if (rate) {
    json.Key("request_rate").Double(r.level);
  } else {
    json.Key("concurrency").Int(static_cast<int64_t>(r.level));
  }
  json.Key("throughput_infer_per_sec").Double(r.throughput);
  json.Key("p50_us").Double(r.p50_us).Key("p90_us").Double(r.p90_us).Key("p95_us").Double(r.p95_us);
  json.Key("p99_us").Double(r.p99_us).Key("avg_us").Double(r.avg_us);
  json.Key("requests").Int(r.stats.requests).Key("errors").Int(r.stats.errors);
  json.Key("delayed").Int(r.stats.delayed).Key("seconds").Double(r.stats.seconds);
  json.Key("stable").Bool(r.stable).Key("windows").Int(r.windows);
  json.Key("error_codes").BeginObject();
  for (const auto& [code, n] : r.stats.error_codes) json.Key(code).Int(n);
  json.EndObject();
  if (!r.stats.first_error.ok()) json.Key("first_error").String(r.stats.first_error.ToString());
  if (server != nullptr) WriteServer(json, *server);
  json.EndObject();
}

absl::Status Perf(const PerfFlags& flags, const RemoteFlags& remote) {
  if (!flags.concurrency_range.empty() && !flags.request_rate_range.empty()) {
    return InvalidArgument("give --concurrency-range or --request-rate-range, not both");
  }
  if (flags.measurement_interval_ms <= 0) return InvalidArgument("--measurement-interval must be positive");
  if (!(flags.stability_percentage > 0)) return InvalidArgument("--stability-percentage must be positive");
  perf::PerfConnection connection;
  connection.protocol = flags.protocol;
  connection.remote = remote;
  connection.remote.remote = flags.url;
  if (connection.remote.remote.empty()) {
    connection.remote.remote = flags.protocol == "http" ? "127.0.0.1:8000" : client::DefaultAddress();
  }
  if (connection.remote.token.empty()) {
    const char* env = std::getenv("GED_TOKEN");
    if (env != nullptr) connection.remote.token = env;
  }

  const bool rate = !flags.request_rate_range.empty();
  GE_ASSIGN_OR_RETURN(std::vector<double> levels,
                      perf::ParseRange(rate ? flags.request_rate_range
                                            : (flags.concurrency_range.empty() ? "1" : flags.concurrency_range),
                                       /*integral=*/!rate));
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& s : flags.shapes) GE_RETURN_IF_ERROR(ParseShapeFlag(s, shapes));
  GE_ASSIGN_OR_RETURN(perf::PerfModel model, perf::PrepareModel(connection, flags.model, flags.model_version,
                                                                flags.batch, shapes, flags.seed));
  GE_ASSIGN_OR_RETURN(perf::TargetFactory factory, perf::MakeTargetFactory(connection, model));
  perf::MeasureOptions options;
  options.window_seconds = flags.measurement_interval_ms / 1000.0;
  options.stability = flags.stability_percentage / 100.0;
  options.max_trials = flags.max_trials;
  options.batch = flags.batch;
  options.max_threads = flags.max_threads;

  std::cout << "model " << model.name << (model.version.empty() ? "" : " version " + model.version) << " at "
            << connection.remote.remote << " over " << connection.protocol << ", batch " << flags.batch
            << ", windows of " << flags.measurement_interval_ms << " ms, stable within " << flags.stability_percentage
            << "%\n";
  std::cout << (rate ? "   rate/s" : "concurrency") << "  throughput/s   p50 us    p90 us    p99 us    avg us"
            << "  requests  errors" << (rate ? "  delayed" : "") << "  stable\n"
            << std::flush;
  std::vector<perf::LevelResult> results;
  std::vector<std::optional<perf::ServerStats>> server;  // per level, when the server keeps statistics
  // Server statistics are optional: a server without them (or refusing
  // them) leaves the server lines out after one warning.
  std::unique_ptr<perf::ServerStatsReader> stats_reader;
  bool server_stats = true;
  const auto warn = [](const absl::Status& s) {
    if (!absl::IsNotFound(s) && !absl::IsUnimplemented(s)) {
      std::cerr << "gectl: warning: no server statistics: " << s.message() << "\n";
    }
  };
  if (absl::StatusOr<std::unique_ptr<perf::ServerStatsReader>> opened =
          perf::ServerStatsReader::Open(connection, model);
      opened.ok()) {
    stats_reader = std::move(*opened);
  } else {
    server_stats = false;
    warn(opened.status());
  }
  absl::Status first_failure;
  for (double level : levels) {
    absl::StatusOr<perf::ServerStats> before;
    if (server_stats) {
      before = stats_reader->Read();
      if (!before.ok()) {
        server_stats = false;
        warn(before.status());
      }
    }
    absl::StatusOr<perf::LevelResult> r = rate ? perf::MeasureRate(factory, level, options)
                                               : perf::MeasureConcurrency(factory, static_cast<int>(level), options);
    GE_RETURN_IF_ERROR(r.status());
    std::cout << FormatRow(*r, rate) << "\n";
    server.emplace_back();
    if (server_stats) {
      absl::StatusOr<perf::ServerStats> after = stats_reader->Read();
      if (after.ok()) {
        server.back() = after->Minus(*before);
        std::cout << FormatServer(*server.back()) << "\n";
      }
    }
    std::cout << std::flush;
    if (!r->stable) {
      std::cerr << "gectl: warning: " << (rate ? "rate " : "concurrency ") << r->level << " was not stable within "
                << flags.stability_percentage << "% after " << r->windows << " windows\n";
    }
    if (first_failure.ok()) first_failure = r->stats.first_error;
    results.push_back(std::move(*r));
  }
  if (!flags.output_file.empty()) {
    io::JsonWriter json;
    json.BeginObject().Key("model").String(model.name).Key("version").String(model.version);
    json.Key("protocol").String(connection.protocol).Key("address").String(connection.remote.remote);
    json.Key("batch_size").Int(flags.batch).Key("mode").String(rate ? "request_rate" : "concurrency");
    json.Key("measurement_interval_ms").Int(flags.measurement_interval_ms);
    json.Key("stability_percentage").Double(flags.stability_percentage);
    json.Key("rows").BeginArray();
    for (size_t i = 0; i < results.size(); ++i) {
      WriteLevel(json, results[i], rate, server[i] ? &*server[i] : nullptr);
    }
    json.EndArray().EndObject();
    std::ofstream out(flags.output_file, std::ios::binary | std::ios::trunc);
    out << json.str() << "\n";
    if (!out.flush()) return InvalidArgument("cannot write ", flags.output_file);
  }
  return first_failure;
}

}  // namespace

int PerfCommand(const PerfFlags& flags, const RemoteFlags& remote) {
  const absl::Status status = Perf(flags, remote);
  return status.ok() ? 0 : ReportError(status);
}

}  // namespace ge::gectl
