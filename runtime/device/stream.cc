// Stream: one worker thread draining an in-order queue; Event: a generation
// counter recorded and completed through stream tasks.
#include "runtime/device/stream.h"

#include <pthread.h>

#include "base/status.h"

namespace ge::device {

bool Event::Query() const {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ >= recorded_;
}

absl::Status Event::Synchronize(absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = recorded_;
  auto ready = [&] { return completed_ >= target; };
  if (timeout == absl::InfiniteDuration()) {
    cv_.wait(lock, ready);
    return absl::OkStatus();
  }
  if (!cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout), ready)) {
    return absl::DeadlineExceededError(StrCat("event not reached within ", absl::FormatDuration(timeout)));
  }
  return absl::OkStatus();
}

void Event::RecordOnHost() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    completed_ = ++recorded_;
  }
  cv_.notify_all();
}

void Event::Arm() {
  std::lock_guard<std::mutex> lock(mu_);
  ++recorded_;
}

void Event::Complete(uint64_t generation) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (generation > completed_) completed_ = generation;
  }
  cv_.notify_all();
}

Stream::Stream(std::string name) : name_(std::move(name)) {
  worker_ = std::thread([this] { Loop(); });
  pthread_setname_np(worker_.native_handle(), name_.substr(0, 15).c_str());
}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void Stream::Push(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
    ++enqueued_;
  }
  cv_.notify_all();
}

void Stream::Enqueue(std::function<absl::Status()> task) { Push({std::move(task), false}); }

void Stream::RecordEvent(Event* event) {
  event->Arm();
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(event->mu_);
    generation = event->recorded_;
  }
  Push({[event, generation] {
          event->Complete(generation);
          return absl::OkStatus();
        },
        true});
}

void Stream::WaitEvent(const Event* event) {
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(event->mu_);
    target = event->recorded_;
  }
  Push({[event, target] {
          std::unique_lock<std::mutex> lock(event->mu_);
          event->cv_.wait(lock, [&] { return event->completed_ >= target; });
          return absl::OkStatus();
        },
        true});
}

absl::Status Stream::Synchronize(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = enqueued_;
  auto ready = [&] { return done_ >= target; };
  if (timeout == absl::InfiniteDuration()) {
    cv_.wait(lock, ready);
  } else if (!cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout), ready)) {
    return absl::DeadlineExceededError(
        StrCat("stream ", name_, ": ", target - done_, " task(s) still pending after ", absl::FormatDuration(timeout)));
  }
  absl::Status error = std::move(error_);
  error_ = absl::OkStatus();
  return error;
}

void Stream::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    auto task = std::move(queue_.front());
    queue_.pop_front();
    const bool skip = !error_.ok() && !task.always_run;
    lock.unlock();
    absl::Status s = skip ? absl::OkStatus() : task.fn();
    lock.lock();
    if (!s.ok() && error_.ok()) error_ = Annotate(s, StrCat("stream ", name_));
    ++done_;
    cv_.notify_all();
  }
}

}  // namespace ge::device
