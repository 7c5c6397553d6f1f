// gectl: the command-line client of ged. Flag parsing only; the commands
// live in commands.cc. CLI11 is included in this one file (it is slow to
// compile).
#include <exception>
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/logging.h"
#include "base/openmp_env.h"
#include "base/version.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"gectl: compile, run and inspect models with ged"};
  app.set_version_flag("--version", std::string("gectl ") + GED_VERSION_STRING);
  app.require_subcommand(1);
  // Global flags may also follow the subcommand (gectl compile M -o X --cache-dir D).
  app.fallthrough();
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str();
  std::vector<std::string> plugin_dirs;
  app.add_option("--plugin-dir", plugin_dirs,
                 "Also load engine plugins (custom operators) from DIR, after the built-in engines (repeatable)");

  ge::gectl::CacheSettings cache_settings;
  std::string cache_max_size;
  app.add_option("--cache-dir", cache_settings.dir,
                 "Compiled-model cache directory (default $XDG_CACHE_HOME/ged, else ~/.cache/ged)");
  app.add_flag("--no-cache", cache_settings.disabled, "Neither read nor write the compiled-model cache");
  app.add_option("--cache-remote", cache_settings.remote,
                 "Shared remote cache tier: redis://HOST:PORT or unix:/PATH (default: none)");
  app.add_option("--cache-remote-key-file", cache_settings.remote_key_file,
                 "The remote tier's HMAC key (required with --cache-remote): entries are signed and checked");
  app.add_option("--cache-max-size", cache_max_size,
                 "Evict least recently used entries beyond this size (bytes, K/M/G/T; default 8G)");

  // atc's gear flags, in both spellings (docs/cli.md); they become options.
  auto add_gear_flags = [](CLI::App* cmd, ge::gectl::GearFlags& gears) {
    cmd->add_option("--dynamic_batch_size,--dynamic-batch-size", gears.dynamic_batch_size,
                    "Gears of the batch dim, e.g. 1,4,8 (ge.dynamicBatchSize)");
    cmd->add_option("--dynamic_image_size,--dynamic-image-size", gears.dynamic_image_size,
                    "Gears of H,W, e.g. \"224,224;256,256\" (ge.dynamicImageSize)");
    cmd->add_option("--dynamic_dims,--dynamic-dims", gears.dynamic_dims,
                    "Gears of the unknown dims, e.g. \"1,32;1,64\" (ge.dynamicDims)");
    cmd->add_option("--input_shape,--input-shape", gears.input_shape,
                    "Input shapes, -1 for dynamic dims, e.g. \"input:1,-1,128\" (ge.inputShape)");
    cmd->add_flag("--compile_hybrid_mode,--compile-hybrid-mode", gears.hybrid,
                  "Also compile the dynamic graph for inputs that fit no gear (ge.compileHybridMode=1)");
  };
  ge::gectl::RunFlags run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run a model on given or random inputs");
  run_cmd->add_option("model", run.model, "Model file (.onnx or .gem)")->required();
  run_cmd->add_option("--input", run.inputs, "NAME=FILE.npy (repeatable)");
  run_cmd->add_option("--shape", run.shapes, "NAME=D0,D1,... for random inputs with unknown dims (repeatable)");
  run_cmd->add_option("--output-dir", run.output_dir, "Save each output as DIR/<name>.npy");
  run_cmd->add_option("--seed", run.seed, "Seed of the random inputs")->capture_default_str();
  run_cmd->add_option("--option", run.options, "KEY=VALUE compile option (repeatable)");
  ge::gectl::GearFlags run_gears;
  add_gear_flags(run_cmd, run_gears);
  // The flags of every command that talks to a daemon.
  auto add_connection_flags = [](CLI::App* cmd, ge::gectl::RemoteFlags& flags) {
    cmd->add_option("--token", flags.token, "Tenant token (default $GED_TOKEN)");
    cmd->add_option("--timeout", flags.timeout_seconds, "Deadline in seconds of each call to the daemon");
    cmd->add_option("--tls-ca", flags.tls_ca, "TLS: PEM file of the CA that signed the daemon's certificate");
    cmd->add_option("--tls-cert", flags.tls_cert, "TLS: PEM certificate of this client (mutual TLS)");
    cmd->add_option("--tls-key", flags.tls_key, "TLS: PEM private key of --tls-cert");
    cmd->add_option("--tls-server-name", flags.tls_server_name,
                    "TLS: the name the daemon's certificate carries, when not the host of the address");
  };
  ge::gectl::RemoteFlags run_remote;
  run_cmd->add_option("--remote", run_remote.remote, "Run on the daemon at HOST:PORT instead of in process");
  add_connection_flags(run_cmd, run_remote);

  // Commands that always talk to a daemon.
  ge::gectl::RemoteFlags remote;
  std::string health_service;
  auto add_remote_flags = [&remote, &add_connection_flags](CLI::App* cmd) {
    cmd->add_option("--remote", remote.remote, "Daemon HOST:PORT (default $GED_ADDRESS, else 127.0.0.1:50051)");
    add_connection_flags(cmd, remote);
  };
  ge::gectl::SessionFlags session;
  CLI::App* session_cmd = app.add_subcommand("session", "List, create or destroy sessions on the daemon");
  session_cmd->add_option("action", session.action, "ls, create or destroy")->required();
  session_cmd->add_option("session_id", session.session_id, "Session to destroy");
  session_cmd->add_option("--option", session.options, "KEY=VALUE session option for create (repeatable)");
  add_remote_flags(session_cmd);
  CLI::App* status_cmd = app.add_subcommand("status", "Show the daemon's version, sessions, devices and engines");
  add_remote_flags(status_cmd);
  CLI::App* health_cmd = app.add_subcommand("health", "Exit 0 when the daemon reports SERVING");
  health_cmd->add_option("--service", health_service, "Service name (default: the whole server)");
  add_remote_flags(health_cmd);

  ge::gectl::CompileFlags compile;
  CLI::App* compile_cmd = app.add_subcommand("compile", "Compile a model into a .gem compiled model");
  compile_cmd->add_option("model", compile.model, "Model file (.onnx)")->required();
  compile_cmd->add_option("-o,--output", compile.output, "Output file (.gem)")->required();
  compile_cmd->add_option("--option", compile.options, "KEY=VALUE compile option (repeatable)");
  ge::gectl::GearFlags compile_gears;
  add_gear_flags(compile_cmd, compile_gears);
  compile_cmd->add_flag("--external-weights", compile.external_weights, "Write weights to OUT.gem.weights");
  compile_cmd->add_option("--external-weight", compile.external_weight,
                          "Weights as FileConstants: 1 one file per weight, 2 one merged file (ge.externalWeight)")
      ->check(CLI::Range(0, 2));
  compile_cmd->add_option("--threads", compile.threads, "Intra-op threads kernels are prepared for (0: every core)")
      ->capture_default_str();

  compile_cmd->add_flag("--timings", compile.timings, "Also print where the time went (import, hash, cache, write)");
  ge::gectl::RemoteFlags compile_remote;
  compile_cmd->add_option("--remote", compile_remote.remote,
                          "Compile on the daemon at HOST:PORT (through its cache) instead of in process");
  add_connection_flags(compile_cmd, compile_remote);

  ge::gectl::CacheFlags cache;
  CLI::App* cache_cmd = app.add_subcommand("cache", "List, check or shrink the compiled-model cache");
  cache_cmd->add_option("action", cache.action, "ls, stat, verify or gc")->required();
  cache_cmd->add_option("--max-size", cache.max_size, "gc: keep at most this many bytes (K/M/G/T suffixes)");

  ge::gectl::BenchFlags bench;
  CLI::App* bench_cmd = app.add_subcommand("bench", "Time repeated runs of a model; one JSON line on stdout");
  bench_cmd->add_option("model", bench.model, "Model file (.onnx or .gem)")->required();
  bench_cmd->add_option("--iterations", bench.iterations, "Timed runs")->capture_default_str();
  bench_cmd->add_option("--warmup", bench.warmup, "Untimed runs first")->capture_default_str();
  bench_cmd->add_option("--threads", bench.threads, "Intra-op threads (0: every core)")->capture_default_str();
  bench_cmd->add_option("--workers", bench.workers, "Sessions running the model at once on the device")
      ->capture_default_str();
  bench_cmd->add_option("--input", bench.inputs, "NAME=FILE.npy (repeatable)");
  bench_cmd->add_option("--shape", bench.shapes, "NAME=D0,D1,... for random inputs (repeatable)");
  bench_cmd->add_option("--seed", bench.seed, "Seed of the random inputs")->capture_default_str();
  bench_cmd->add_option("--option", bench.options, "KEY=VALUE compile option (repeatable)");
  bench_cmd->add_option("--output-dir", bench.output_dir, "Save the last run's outputs as DIR/<name>.npy");
  ge::gectl::GearFlags bench_gears;
  add_gear_flags(bench_cmd, bench_gears);

  ge::gectl::DumpFlags dump;
  CLI::App* dump_cmd = app.add_subcommand("dump", "Print a model's graph as text or DOT");
  dump_cmd->add_option("model", dump.model, "Model file (.onnx)")->required();
  dump_cmd->add_option("--format", dump.format, "text or dot")->capture_default_str();
  dump_cmd->add_flag("--compiled", dump.compiled, "Dump after compilation (typed and placed)");
  dump_cmd->add_option("--option", dump.options, "KEY=VALUE compile option (repeatable)");

  ge::gectl::PartitionFlags partition;
  CLI::App* partition_cmd =
      app.add_subcommand("partition", "Compile a model and report its placement and subgraphs");
  partition_cmd->add_option("model", partition.model, "Model file (.onnx)")->required();
  partition_cmd->add_option("--option", partition.options, "KEY=VALUE compile option (repeatable)");
  ge::gectl::GearFlags partition_gears;
  add_gear_flags(partition_cmd, partition_gears);
  partition_cmd->add_option("--report", partition.report, "json or text")->capture_default_str();
  partition_cmd->add_option("--dump", partition.dump, "dot: also draw the partitioned graph");
  partition_cmd->add_option("--dump-file", partition.dump_file, "Where --dump writes (default <model>.partition.dot)");

  ge::gectl::InspectFlags inspect;
  CLI::App* inspect_cmd = app.add_subcommand("inspect", "Show a model's inputs, outputs, ops and opsets");
  inspect_cmd->add_option("model", inspect.model, "Model file (.onnx)")->required();
  inspect_cmd->add_option("--format", inspect.format, "text or json")->capture_default_str();

  ge::gectl::OpsFlags ops;
  CLI::App* ops_cmd = app.add_subcommand("ops", "List the registered ops, their engines and the ONNX opset adapters");
  ops_cmd->add_flag("--list", ops.list, "List every op (required)");
  ops_cmd->add_option("--format", ops.format, "text or json")->capture_default_str();

  ge::gectl::OptFlags opt;
  CLI::App* opt_cmd =
      app.add_subcommand("opt", "List the compile pipeline's passes, or run some and print the graph's text form");
  opt_cmd->add_option("model", opt.model, "Model file (.onnx, or ged's text form for any other extension)");
  opt_cmd->add_flag("--list-passes", opt.list_passes, "List the passes in pipeline order");
  opt_cmd->add_option("--passes", opt.passes, "Comma-separated passes to run (in pipeline order)");
  opt_cmd->add_option("--option", opt.options, "KEY=VALUE compile option (repeatable)");

  ge::gectl::PerfFlags perf;
  ge::gectl::RemoteFlags perf_remote;
  CLI::App* perf_cmd = app.add_subcommand(
      "perf", "Measure throughput and latency of a served model over KServe v2, at concurrencies or request rates");
  perf_cmd->add_option("-m,--model-name", perf.model, "The repository model")->required();
  perf_cmd->add_option("-x,--model-version", perf.model_version, "Its version (default: the server's choice)");
  perf_cmd->add_option("-u,--url", perf.url,
                       "HOST:PORT of the server (default: $GED_ADDRESS or 127.0.0.1:50051 for grpc, "
                       "127.0.0.1:8000 for http)");
  perf_cmd->add_option("-i,--protocol", perf.protocol, "grpc or http")->capture_default_str();
  perf_cmd->add_option("--concurrency-range", perf.concurrency_range,
                       "A[:B[:S]]: requests kept in flight, from A to B by S (default 1)");
  perf_cmd->add_option("--request-rate-range", perf.request_rate_range,
                       "A[:B[:S]]: requests started per second, from A to B by S");
  perf_cmd->add_option("-b,--batch-size", perf.batch, "Rows per request (models that batch)")->capture_default_str();
  perf_cmd->add_option("--shape", perf.shapes, "NAME:D0,D1,...: dims of an input with dynamic dims (repeatable)");
  perf_cmd->add_option("-p,--measurement-interval", perf.measurement_interval_ms, "Window length in ms")
      ->capture_default_str();
  perf_cmd
      ->add_option("-s,--stability-percentage", perf.stability_percentage,
                   "Three windows in a row within this % of their mean make a stable measurement")
      ->capture_default_str();
  perf_cmd->add_option("-r,--max-trials", perf.max_trials, "Windows per level before giving up on stability")
      ->capture_default_str();
  perf_cmd->add_option("--max-threads", perf.max_threads, "Sending threads in request-rate mode")
      ->capture_default_str();
  perf_cmd->add_option("-f,--output", perf.output_file, "Also write the rows as JSON to this file");
  perf_cmd->add_option("--seed", perf.seed, "Seed of the random inputs")->capture_default_str();
  add_connection_flags(perf_cmd, perf_remote);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "gectl: error: " << e.what() << " (see gectl --help)" << std::endl;
    return 1;
  }
  // Before any engine plugin loads libgomp (base/openmp_env.h). Commands
  // that run kernels here choose by the host's load for their team size;
  // the others (remote, cache, inspection) take the default unmeasured.
  ge::OpenMpWaiting omp_waiting;
  {
    const bool local_run = run_cmd->parsed() && run_remote.remote.empty();
    const bool local_compile = compile_cmd->parsed() && compile_remote.remote.empty();
    const int threads = bench_cmd->parsed() ? bench.threads : local_compile ? compile.threads : 0;
    const bool computes = local_run || local_compile || bench_cmd->parsed();
    omp_waiting = ge::ConfigureOpenMpWaiting(threads, computes ? ge::DefaultHostLoadProbe() : ge::HostLoadProbe());
  }
  try {
    if (absl::Status s = ge::SetLogLevel(log_level); !s.ok()) return ge::gectl::ReportError(s);
    ge::LogOpenMpWaiting(omp_waiting);
    if (absl::Status s = ge::gectl::SetPluginDirectories(plugin_dirs); !s.ok()) return ge::gectl::ReportError(s);
    if (!cache_max_size.empty()) {
      absl::StatusOr<int64_t> bytes = ge::gectl::ParseByteSize(cache_max_size);
      if (!bytes.ok()) return ge::gectl::ReportError(bytes.status());
      cache_settings.max_bytes = *bytes;
    }
    if (absl::Status s = ge::gectl::SetCacheSettings(cache_settings); !s.ok()) return ge::gectl::ReportError(s);
    for (auto [gears, options] : {std::pair{&run_gears, &run.options}, std::pair{&compile_gears, &compile.options},
                                  std::pair{&bench_gears, &bench.options},
                                  std::pair{&partition_gears, &partition.options}}) {
      if (absl::Status s = ge::gectl::AddGearFlags(*gears, *options); !s.ok()) return ge::gectl::ReportError(s);
    }
    if (run_cmd->parsed()) {
      return run_remote.remote.empty() ? ge::gectl::RunCommand(run) : ge::gectl::RemoteRunCommand(run, run_remote);
    }
    if (session_cmd->parsed()) return ge::gectl::SessionCommand(session, remote);
    if (status_cmd->parsed()) return ge::gectl::StatusCommand(remote);
    if (health_cmd->parsed()) return ge::gectl::HealthCommand(remote, health_service);
    if (compile_cmd->parsed()) {
      return compile_remote.remote.empty() ? ge::gectl::CompileCommand(compile)
                                           : ge::gectl::RemoteCompileCommand(compile, compile_remote);
    }
    if (cache_cmd->parsed()) return ge::gectl::CacheCommand(cache);
    if (bench_cmd->parsed()) return ge::gectl::BenchCommand(bench);
    if (dump_cmd->parsed()) return ge::gectl::DumpCommand(dump);
    if (partition_cmd->parsed()) return ge::gectl::PartitionCommand(partition);
    if (inspect_cmd->parsed()) return ge::gectl::InspectCommand(inspect);
    if (ops_cmd->parsed()) return ge::gectl::OpsCommand(ops);
    if (opt_cmd->parsed()) return ge::gectl::OptCommand(opt);
    if (perf_cmd->parsed()) return ge::gectl::PerfCommand(perf, perf_remote);
  } catch (const std::exception& e) {
    std::cerr << "gectl: internal error: " << e.what() << std::endl;
    return 2;
  }
  return 2;
}
