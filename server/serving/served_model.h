// ServedModel: one loaded version of a repository model — its completed
// configuration, the session holding one compiled graph per instance
// (compiled through the cache, so instances after the first and restarts
// are cache hits), the batcher in front of them, and its statistics — and
// the inference entry every protocol front end (gRPC now, HTTP later)
// calls with the protocol-free request below.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/tensor.h"
#include "ge/kserve/model_config.pb.h"
#include "server/serving/batcher.h"
#include "session/runtime.h"

namespace ge::server::serving {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// An inference request as the protocols decode it.
struct InferRequest {
  std::string model;
  std::string version;  // empty: the newest ready version
  std::string id;       // echoed
  std::vector<NamedTensor> inputs;
  std::vector<std::string> outputs;  // the outputs wanted; empty: all
  Clock::time_point deadline = Clock::time_point::max();
  std::function<bool()> cancelled;  // may be null
  // The caller's tenant memory (may be null): the request's input and
  // output bytes are charged to it while it is in flight.
  std::shared_ptr<device::MemoryQuota> memory;
};

struct InferResult {
  std::string model;
  std::string version;
  std::string id;
  std::vector<NamedTensor> outputs;
};

using InferDone = std::function<void(absl::StatusOr<InferResult>)>;

// What the metrics see (each may be null).
struct ServingObserver {
  std::function<void(const std::string& model, const std::string& version, absl::StatusCode code)> request;
  std::function<void(const std::string& model, int64_t rows)> batch;
  std::function<void(const std::string& model, double seconds)> queue;
};

// Triton's statistics of a model version (ModelStatistics).
struct ModelStats {
  struct Duration {
    uint64_t count = 0;
    uint64_t ns = 0;
  };
  Duration success, fail, queue, compute_infer;
  uint64_t inference_count = 0;  // rows
  uint64_t execution_count = 0;  // batches
  uint64_t last_inference_ms = 0;
  std::map<int64_t, Duration> batches;  // by rows
};

struct LoadSettings {
  int device = 0;
  std::shared_ptr<device::MemoryQuota> memory;  // executors' memory: the daemon's budget
  int64_t max_tensor_bytes = int64_t{1} << 30;
  double compile_timeout_seconds = 600;
  int64_t default_max_queue_size = 1024;
  ServingObserver observer;
};

class ServedModel {
 public:
  // Loads version `version` of `config` (checked, inputs and outputs not yet
  // completed) from `version_dir`: imports the ONNX file, completes the
  // config, compiles one graph per instance and starts the batcher.
  static absl::StatusOr<std::shared_ptr<ServedModel>> Load(const session::Runtime& runtime,
                                                           inference::ModelConfig config,
                                                           const std::string& version_dir, int64_t version,
                                                           const LoadSettings& settings);
  ~ServedModel();

  const std::string& name() const { return config_.name(); }
  int64_t version() const { return version_; }
  const inference::ModelConfig& config() const { return config_; }
  ModelStats stats() const;
  // Queued and running requests.
  int64_t pending() const { return batcher_->pending(); }
  // Takes no new requests; returns when the queued ones have finished.
  void Stop() { batcher_->Stop(); }

  // Checks `request` against the config (INVALID_ARGUMENT naming the input)
  // and queues it; `done` gets the outputs, or why not. Refusals come
  // through `done` too.
  void Infer(InferRequest request, InferDone done);

 private:
  ServedModel() = default;
  absl::StatusOr<std::vector<Tensor>> Run(int instance, std::vector<Tensor> inputs);
  // The request's inputs in graph order, reshaped for the model; its rows.
  absl::StatusOr<std::vector<Tensor>> CheckInputs(const InferRequest& request, int64_t* rows) const;
  void Record(bool ok, int64_t total_ns);

  inference::ModelConfig config_;
  int64_t version_ = 0;
  std::string label_;  // "model NAME version V"
  ServingObserver observer_;
  std::unique_ptr<session::Session> session_;
  std::vector<int> input_order_;   // config input i -> graph input index
  std::vector<int> output_order_;  // config output i -> graph output index
  mutable std::mutex stats_mu_;
  ModelStats stats_;
  std::unique_ptr<Batcher> batcher_;  // last: its workers use the rest
};

}  // namespace ge::server::serving
