// The transports of `gectl perf`: a KServe v2 model's metadata, and
// PerfTargets that send one ModelInfer over gRPC
// (inference.GRPCInferenceService) or one POST .../infer over HTTP/REST
// with the binary-data extension. Both send the same inputs, built once
// from the model's metadata: floating-point inputs uniform in [0, 1) from
// the seed, integer and BOOL inputs zeros, BYTES inputs empty strings.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/gectl/commands.h"
#include "client/gectl/perf_load.h"

namespace ge::gectl::perf {

struct PerfConnection {
  std::string protocol = "grpc";  // grpc | http
  // remote.remote is HOST:PORT; the token is sent as Authorization:
  // Bearer; TLS is for gRPC only.
  RemoteFlags remote;
  double timeout_seconds() const { return remote.timeout_seconds > 0 ? remote.timeout_seconds : 60; }
};

struct PerfTensor {
  std::string name;
  std::string datatype;        // KServe name: FP32, INT64, BYTES, ...
  std::vector<int64_t> shape;  // concrete
  std::string data;            // raw bytes (BYTES: length-prefixed)
};

struct PerfModel {
  std::string name;
  std::string version;     // empty: the server's choice
  int max_batch_size = 0;  // from the model's config; 0: no batch dim
  std::vector<PerfTensor> inputs;
  std::vector<std::string> outputs;
};

// Reads the model's metadata (and config, for max_batch_size) and builds
// its inputs: dim 0 is `batch` when the model batches (max_batch_size > 0,
// or -1 leading every input's metadata shape where the config is not
// available); other -1 dims come from `shapes` (input name -> dims without
// the batch dim when the model batches, all dims otherwise).
absl::StatusOr<PerfModel> PrepareModel(const PerfConnection& connection, const std::string& model,
                                       const std::string& version, int batch,
                                       const std::map<std::string, std::vector<int64_t>>& shapes, uint64_t seed);

// A model's server-side counters (KServe/Triton ModelStatistics), summed
// over its versions; differences of two readings describe a measurement.
struct ServerStats {
  struct Duration {
    int64_t count = 0;
    int64_t ns = 0;
  };
  int64_t inference_count = 0;  // rows inferred
  int64_t execution_count = 0;  // batches run
  Duration queue;
  Duration compute_infer;
  std::map<int64_t, Duration> batches;  // rows -> compute_infer of batches of that many rows

  ServerStats Minus(const ServerStats& earlier) const;
};

// NOT_FOUND or UNIMPLEMENTED when the server keeps no statistics for it.
// Reads a model's ServerStats over one connection kept for every reading
// (a gRPC channel or an HTTP keep-alive connection). Not thread-safe.
class ServerStatsReader {
 public:
  static absl::StatusOr<std::unique_ptr<ServerStatsReader>> Open(const PerfConnection& connection,
                                                                 const PerfModel& model);
  virtual ~ServerStatsReader() = default;
  virtual absl::StatusOr<ServerStats> Read() = 0;
};

// A factory of targets that each send the prepared request; every target
// has its own connection (HTTP) or call context (gRPC, one channel shared).
absl::StatusOr<TargetFactory> MakeTargetFactory(const PerfConnection& connection, const PerfModel& model);

}  // namespace ge::gectl::perf
