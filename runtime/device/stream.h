// Stream and Event: in-order work queues on a device, shaped like ACL's
// aclrtStream / aclrtEvent.
//
// A Stream runs the tasks enqueued on it one after another on its own
// thread. A task that fails marks the stream failed: later tasks are skipped
// and Synchronize returns the first error. Events order work across
// streams: RecordEvent marks a point in a stream, WaitEvent makes a stream
// wait for a point recorded in another.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ge::device {

class Event {
 public:
  Event() = default;
  // True when every task before the most recent record has run (and true
  // for an event never recorded).
  bool Query() const;
  // Waits until Query() is true; DeadlineExceeded after `timeout`.
  absl::Status Synchronize(absl::Duration timeout = absl::InfiniteDuration()) const;
  // Records a point the host has reached: complete at once (work the host
  // did itself is done), for waiters that do not know where it ran.
  void RecordOnHost();

 private:
  friend class Stream;
  void Arm();
  void Complete(uint64_t generation);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  uint64_t recorded_ = 0;   // generation of the last RecordEvent
  uint64_t completed_ = 0;  // generation that has completed
};

class Stream {
 public:
  explicit Stream(std::string name);
  ~Stream();  // drains the queue
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  const std::string& name() const { return name_; }
  void Enqueue(std::function<absl::Status()> task);
  // Marks `event` complete once the tasks enqueued so far have run.
  void RecordEvent(Event* event);
  // Tasks enqueued after this wait until `event`'s current record completes.
  void WaitEvent(const Event* event);
  // Waits for every enqueued task; returns the first task error (and clears
  // it), or DeadlineExceeded naming the stream after `timeout`.
  absl::Status Synchronize(absl::Duration timeout = absl::InfiniteDuration());

 private:
  struct Task {
    std::function<absl::Status()> fn;
    bool always_run;  // event bookkeeping runs even after a failure
  };
  void Push(Task task);
  void Loop();

  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  uint64_t enqueued_ = 0;
  uint64_t done_ = 0;
  absl::Status error_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace ge::device
