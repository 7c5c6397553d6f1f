// Batcher: the scheduler in front of one repository model version
// (docs/serving.md, "Dynamic batching"). Requests wait in one bounded
// queue; `instances` workers (the config's instance_group count) each take
// the next batch and run it on their own executor.
//
// Without batching a worker takes one request at a time. With batching,
// requests whose inputs have the same dtypes and non-batch dims are
// coalesced by rows (dim 0) up to max_batch_size, in arrival order; one that
// would overflow the batch, or has other dims, waits for a later batch. A
// batch leaves as soon as it reaches the largest preferred size (or
// max_batch_size), else when its oldest request has waited
// max_queue_delay_microseconds. It runs on the smallest gear that holds it
// (the input padded with zero rows, the padded output rows dropped) and is
// split back into each request's rows. When a batch of several requests
// fails, each of its requests runs again alone, so a bad request fails
// alone. A request leaves the queue with DEADLINE_EXCEEDED or CANCELLED
// when its deadline passes or its caller cancels, checked whenever a worker
// looks at the queue and at least at every deadline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "base/tensor.h"

namespace ge::server::serving {

using Clock = std::chrono::steady_clock;

struct BatchRequest {
  // By model input; dim 0 is the request's rows when the model batches.
  std::vector<Tensor> inputs;
  int64_t rows = 1;
  Clock::time_point deadline = Clock::time_point::max();
  std::function<bool()> cancelled;  // may be null
  // Called once, on a worker thread (or in Submit's caller for a refusal
  // Submit returns instead): the outputs by model output, rows of this
  // request only, or why it failed.
  std::function<void(absl::StatusOr<std::vector<Tensor>>)> done;
  Clock::time_point enqueued{};
};

struct BatcherOptions {
  std::string name;       // "model version", for messages and threads
  bool batching = false;  // coalesce requests (dynamic_batching with max_batch_size > 0)
  // Rows of a batch; > 0: requests carry rows in dim 0, and each run is
  // padded to a gear and split back, batching or not.
  int64_t max_batch_size = 0;
  std::vector<int64_t> preferred;  // preferred_batch_size, any order
  std::vector<int64_t> gears;      // the compiled batch sizes (sorted); empty: run at the batch's own rows
  std::chrono::microseconds max_queue_delay{0};
  int64_t max_queue_size = 1024;
  int instances = 1;
};

// What the batcher reports (each may be null).
struct BatchObserver {
  std::function<void(int64_t rows, int64_t requests, int64_t run_ns, bool ok)> batch;  // each run
  std::function<void(int64_t queue_ns)> dequeued;                                      // each request taken for a run
};

// Runs `inputs` (a whole batch, padded to a gear) on instance `instance`.
using BatchRunner = std::function<absl::StatusOr<std::vector<Tensor>>(int instance, std::vector<Tensor> inputs)>;

class Batcher {
 public:
  Batcher(BatcherOptions options, BatchRunner run, BatchObserver observer = {});
  ~Batcher();  // Stop()
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues the request: RESOURCE_EXHAUSTED naming max_queue_size when the
  // queue is full, UNAVAILABLE once stopping (`done` is not called then).
  absl::Status Submit(std::unique_ptr<BatchRequest> request);
  // No new requests; the queued ones still run; returns when the workers
  // have finished.
  void Stop();
  // Queued plus running requests: 0 once everything handed in is done.
  int64_t pending() const;
  const BatcherOptions& options() const { return options_; }

  // Concatenates the requests' tensors of one input along dim 0 and pads to
  // `rows` (zeros); splits a batch output back into rows [begin, end).
  static absl::StatusOr<Tensor> Concat(const std::vector<const Tensor*>& parts, int64_t rows);
  static absl::StatusOr<Tensor> SliceRows(const Tensor& batch, int64_t begin, int64_t end);

 private:
  using Batch = std::vector<std::unique_ptr<BatchRequest>>;
  void Work(int instance);
  // Under mu_: removes the requests past their deadline or cancelled into
  // `expired`; picks the next batch (empty: nothing to run yet, `wake` set to
  // when to look again).
  void TakeExpired(Batch& expired);
  Batch PickBatch(Clock::time_point now, Clock::time_point* wake);
  void RunBatch(int instance, Batch batch);
  // Runs `batch` as one (padded to a gear) and completes its requests;
  // false (nothing completed) when it failed and has more than one request.
  bool RunTogether(int instance, Batch& batch);
  int64_t GearFor(int64_t rows) const;

  const BatcherOptions options_;
  const BatchRunner run_;
  const BatchObserver observer_;
  int64_t largest_preferred_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<BatchRequest>> queue_;
  int64_t running_ = 0;  // requests taken by workers, not yet done
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ge::server::serving
