// gectl's subcommands. main.cc parses flags (CLI11 lives there only); each
// command returns the process exit code: 0 success, 1 user error, 2
// internal error (docs/cli.md). Results go to stdout, errors to stderr as
// one line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ge::gectl {

struct RunFlags {
  std::string model;
  std::vector<std::string> inputs;   // NAME=FILE.npy
  std::vector<std::string> shapes;   // NAME=D0,D1,...
  std::vector<std::string> options;  // KEY=VALUE
  std::string output_dir;
  uint64_t seed = 0;
};

struct DumpFlags {
  std::string model;
  std::string format = "text";  // text | dot
  bool compiled = false;        // dump after compilation (placed, typed)
  std::vector<std::string> options;
};

struct InspectFlags {
  std::string model;
  std::string format = "text";  // text | json
};

struct OpsFlags {
  bool list = false;
  std::string format = "text";
};

struct BenchFlags {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::vector<std::string> options;
  uint64_t seed = 0;
  int iterations = 100;
  int warmup = 10;
  int threads = 0;  // the device's thread count; 0 means every core
  int workers = 1;  // sessions running the model at once on the one device
  std::string output_dir;  // when set, the last run's outputs as DIR/<name>.npy
};

struct PartitionFlags {
  std::string model;
  std::vector<std::string> options;  // KEY=VALUE
  std::string report = "text";       // text | json
  std::string dump;                  // "" | dot
  std::string dump_file;             // default: <model stem>.partition.dot
};

struct OptFlags {
  std::string model;  // ONNX, or the text form for other extensions
  bool list_passes = false;
  std::string passes;                // a,b: the passes to run
  std::vector<std::string> options;  // KEY=VALUE
};

// Where the daemon commands (and run --remote) connect: --remote, else
// $GED_ADDRESS, else 127.0.0.1:50051; --token, else $GED_TOKEN.
struct RemoteFlags {
  std::string remote;
  std::string token;
  double timeout_seconds = 0;  // 0: the client library's default
  std::string tls_ca;           // PEM files (docs/cli.md); any set: TLS
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
};

// gectl perf (perf_command.cc): load on a KServe v2 model.
struct PerfFlags {
  std::string model;                // -m
  std::string model_version;        // --model-version; empty: the server's choice
  std::string url;                  // -u HOST:PORT; default by protocol
  std::string protocol = "grpc";    // -i grpc | http
  std::string concurrency_range;    // A:B:S; default 1
  std::string request_rate_range;   // A:B:S requests per second
  int batch = 1;                    // -b
  std::vector<std::string> shapes;  // NAME:D0,D1,... (dims of dynamic inputs)
  int measurement_interval_ms = 5000;
  double stability_percentage = 10;
  int max_trials = 10;
  int max_threads = 16;     // request-rate mode's sending threads
  std::string output_file;  // -f OUT.json
  uint64_t seed = 0;
};

struct SessionFlags {
  std::string action;                // ls | create | destroy
  std::string session_id;            // destroy
  std::vector<std::string> options;  // create: KEY=VALUE
};

struct CompileFlags {
  std::string model;
  std::string output;                // OUT.gem
  std::vector<std::string> options;  // KEY=VALUE
  bool external_weights = false;     // weights to OUT.gem.weights
  int external_weight = -1;          // ge.externalWeight: 1 one file per weight, 2 one merged file
  int threads = 0;                   // the thread budget kernels are prepared for
  bool timings = false;              // print where the time went (import, hash, cache, write)
};

struct CacheFlags {
  std::string action;    // ls | stat | verify | gc
  std::string max_size;  // gc: bytes, with K/M/G/T; empty: the configured limit
};

int RunCommand(const RunFlags& flags);
int CompileCommand(const CompileFlags& flags);
// remote_commands.cc: the same run through the daemon, and the commands
// that always talk to a daemon. `health` exits 0 only when SERVING.
int RemoteRunCommand(const RunFlags& flags, const RemoteFlags& remote);
// `compile --remote`: the daemon compiles; its .gem is written to -o.
int RemoteCompileCommand(const CompileFlags& flags, const RemoteFlags& remote);
// Exit code 0 when every request succeeded; else that of the first
// failure (ExitCodeFor), after printing every row.
int PerfCommand(const PerfFlags& flags, const RemoteFlags& remote);
int SessionCommand(const SessionFlags& flags, const RemoteFlags& remote);
int StatusCommand(const RemoteFlags& remote);
int HealthCommand(const RemoteFlags& remote, const std::string& service);
int PartitionCommand(const PartitionFlags& flags);
// `verify` exits 0 when no entry a reader would load is corrupt, else 1
// (listing what it moved aside).
int CacheCommand(const CacheFlags& flags);
// "512M", "2G", "1048576": bytes with an optional binary suffix.
absl::StatusOr<int64_t> ParseByteSize(const std::string& text);
int BenchCommand(const BenchFlags& flags);
int DumpCommand(const DumpFlags& flags);
int InspectCommand(const InspectFlags& flags);
// gectl ops --list: the op registry, the engines' kernels and the opset
// adapters (ops_command.cc).
int OpsCommand(const OpsFlags& flags);
// gectl opt: list the compile pipeline's passes, or run some and print the
// text form (opt_command.cc).
int OptCommand(const OptFlags& flags);

// 1 for errors the user can fix (bad input, unsupported model, limits), 2
// for the rest.
int ExitCodeFor(const absl::Status& status);
// Prints "gectl: error: <message>" on stderr and returns ExitCodeFor.
int ReportError(const absl::Status& status);

}  // namespace ge::gectl
