// A fixed-size thread pool with a blocking ParallelFor.
//
// ged creates threads only here and in executor streams. ParallelFor splits a
// range into blocks, runs them on the pool and on the calling thread, and
// returns when all are done; it is safe to call from several threads at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ge {

class ThreadPool {
 public:
  // `num_threads` workers (0 means run everything on the caller).
  ThreadPool(int num_threads, std::string name);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()); }
  // Runs `task` on a worker (on the caller when there are no workers).
  void Schedule(std::function<void()> task);
  // Calls fn(begin, end) over [0, n) in blocks of at least `min_block`.
  void ParallelFor(int64_t n, int64_t min_block, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop();

  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ge
