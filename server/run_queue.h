// RunQueue: one device's bounded queue of runs and its worker pool.
//
// At most `workers` runs execute at once on a device; up to `capacity` more
// wait in order. Submitting past that is RESOURCE_EXHAUSTED at once (the
// client backs off or goes elsewhere) instead of an unbounded backlog whose
// deadlines would all expire in the queue. Workers are a ge::ThreadPool.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "base/thread_pool.h"

namespace ge::server {

class RunQueue {
 public:
  RunQueue(std::string device, int workers, int64_t capacity);
  // Finishes every accepted task first.
  ~RunQueue();

  // Queues `task`; ResourceExhausted naming the device and capacity when
  // `capacity` tasks already wait.
  absl::Status Submit(std::function<void()> task);

  const std::string& device() const { return device_; }
  int workers() const { return workers_; }
  int64_t capacity() const { return capacity_; }
  int64_t queued() const { return queued_.load(); }
  int64_t running() const { return running_.load(); }

 private:
  std::string device_;
  int workers_;
  int64_t capacity_;
  std::atomic<int64_t> queued_{0};
  std::atomic<int64_t> running_{0};
  ThreadPool pool_;  // last: destroyed (joined) first
};

}  // namespace ge::server
