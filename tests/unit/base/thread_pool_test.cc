// ThreadPool: Schedule, ParallelFor coverage and blocking, concurrent
// callers, inline mode, draining at destruction.
#include "base/thread_pool.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace ge {
namespace {

// Every index of [0, n) is visited exactly once, blocks are non-empty and
// inside the range.
void ExpectExactCover(ThreadPool& pool, int64_t n, int64_t min_block) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::atomic<bool> bad_block{false};
  pool.ParallelFor(n, min_block, [&](int64_t begin, int64_t end) {
    if (begin < 0 || end > n || begin >= end) bad_block = true;
    for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  EXPECT_FALSE(bad_block) << "n=" << n << " min_block=" << min_block;
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "i=" << i << " n=" << n;
}

TEST(ThreadPoolTest, ParallelForCoversTheRangeExactlyOnce) {
  for (int threads : {0, 1, 3}) {
    ThreadPool pool(threads, "cover");
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {1, 2, 3, 7, 100, 1001}) {
      for (int64_t min_block : {0, 1, 4, 1000}) ExpectExactCover(pool, n, min_block);
    }
  }
}

TEST(ThreadPoolTest, ParallelForWithNothingToDoCallsNothing) {
  ThreadPool pool(2, "empty");
  int calls = 0;
  pool.ParallelFor(0, 1, [&](int64_t, int64_t) { ++calls; });
  pool.ParallelFor(-5, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPoolTest, ParallelForUsesTheWorkersAndBlocksUntilDone) {
  ThreadPool pool(2, "blocks");
  std::atomic<int> finished{0};
  std::vector<std::thread::id> ids(3);
  pool.ParallelFor(3, 1, [&](int64_t begin, int64_t) {
    ids[begin] = std::this_thread::get_id();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished.fetch_add(1);
  });
  EXPECT_EQ(finished.load(), 3);                  // all blocks done when it returns
  EXPECT_EQ(ids[0], std::this_thread::get_id());  // the caller runs a block
  EXPECT_NE(ids[1], std::this_thread::get_id());
}

TEST(ThreadPoolTest, ConcurrentCallersDoNotInterfere) {
  ThreadPool pool(3, "concurrent");
  std::vector<std::thread> callers;
  std::vector<int64_t> sums(4, 0);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 50; ++round) {
        std::atomic<int64_t> sum{0};
        pool.ParallelFor(1000, 10, [&](int64_t begin, int64_t end) {
          int64_t local = 0;
          for (int64_t i = begin; i < end; ++i) local += i;
          sum.fetch_add(local);
        });
        sums[c] += sum.load();
      }
    });
  }
  for (auto& t : callers) t.join();
  for (int64_t s : sums) EXPECT_EQ(s, 50 * (999 * 1000 / 2));
}

TEST(ThreadPoolTest, ScheduleRunsInlineWithoutWorkers) {
  ThreadPool pool(0, "inline");
  std::thread::id ran_on;
  pool.Schedule([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(ThreadPoolTest, DestructionDrainsQueuedTasks) {
  std::atomic<int> done{0};
  {
    ThreadPool pool(2, "drain");
    for (int i = 0; i < 100; ++i) {
      pool.Schedule([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        done.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(done.load(), 100);
}

}  // namespace
}  // namespace ge
