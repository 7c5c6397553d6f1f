// RunQueue: admission by an atomic count of waiting tasks, execution on a
// ThreadPool sized to the device's concurrent runs.
#include "server/run_queue.h"

#include "base/status.h"

namespace ge::server {

RunQueue::RunQueue(std::string device, int workers, int64_t capacity)
    : device_(std::move(device)), workers_(workers), capacity_(capacity), pool_(workers, "run-" + device_) {}

RunQueue::~RunQueue() = default;

absl::Status RunQueue::Submit(std::function<void()> task) {
  // Tasks waiting beyond the free workers count against the capacity.
  const int64_t waiting = queued_.fetch_add(1) + running_.load() - workers_;
  if (waiting >= capacity_) {
    queued_.fetch_sub(1);
    return ResourceExhausted("the run queue of device ", device_, " is full (", capacity_,
                             " runs waiting, ", workers_, " running); retry later");
  }
  pool_.Schedule([this, task = std::move(task)] {
    running_.fetch_add(1);  // before leaving the queue: the sum never dips
    queued_.fetch_sub(1);
    task();
    running_.fetch_sub(1);
  });
  return absl::OkStatus();
}

}  // namespace ge::server
