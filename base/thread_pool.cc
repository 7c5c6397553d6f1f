// ThreadPool: workers draining one FIFO queue.
#include "base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include <pthread.h>

namespace ge {

ThreadPool::ThreadPool(int num_threads, std::string name) : name_(std::move(name)) {
  workers_.reserve(std::max(0, num_threads));
  for (int i = 0; i < num_threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
    std::string thread_name = (name_ + "-" + std::to_string(i)).substr(0, 15);
    pthread_setname_np(workers_.back().native_handle(), thread_name.c_str());
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::Schedule(std::function<void()> task) {
  if (workers_.empty()) {
    task();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_block,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  min_block = std::max<int64_t>(1, min_block);
  const int64_t max_blocks = static_cast<int64_t>(workers_.size()) + 1;
  const int64_t blocks = std::min(max_blocks, (n + min_block - 1) / min_block);
  if (blocks <= 1) {
    fn(0, n);
    return;
  }
  const int64_t block = (n + blocks - 1) / blocks;
  struct Shared {
    std::mutex mu;
    std::condition_variable done_cv;
    int64_t remaining;
  };
  auto shared = std::make_shared<Shared>();
  shared->remaining = blocks - 1;
  for (int64_t b = 1; b < blocks; ++b) {
    const int64_t begin = b * block;
    const int64_t end = std::min(n, begin + block);
    Schedule([shared, &fn, begin, end] {
      if (begin < end) fn(begin, end);
      std::lock_guard<std::mutex> lock(shared->mu);
      if (--shared->remaining == 0) shared->done_cv.notify_all();
    });
  }
  fn(0, std::min(n, block));
  std::unique_lock<std::mutex> lock(shared->mu);
  shared->done_cv.wait(lock, [&] { return shared->remaining == 0; });
}

}  // namespace ge
