// OmpParallelRange, the parallel loop of the engines' threading contract:
// every index once, blocks as asked, never more threads than allowed, small
// work inline on the caller, loops nested in another's region inline, and
// with several workers sharing a device's ComputeBudget never more threads
// computing at once than the budget holds (counted inside the loop bodies,
// independently of the budget's own counter).
#include "runtime/engines/sdk/parallel.h"

#include <omp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/compute_budget.h"
#include "gtest/gtest.h"

namespace ge::engine::sdk {
namespace {

TEST(OmpParallelRangeTest, CoversEveryIndexOnceInBlocks) {
  for (int threads : {1, 2, 4}) {
    for (int64_t n : {0, 1, 7, 64, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> bad_blocks{0};
      OmpParallelRange(threads, n, 16, [&](int64_t begin, int64_t end) {
        if (begin % 16 != 0 || (end - begin > 16 && threads > 1)) bad_blocks++;
        for (int64_t i = begin; i < end; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
      EXPECT_EQ(bad_blocks.load(), 0) << "threads=" << threads << " n=" << n;
    }
  }
}

TEST(OmpParallelRangeTest, NeverUsesMoreThreadsThanAllowed) {
  std::mutex mu;
  std::set<int> team_sizes;
  OmpParallelRange(2, 1 << 12, 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(mu);
    team_sizes.insert(omp_get_num_threads());
  });
  ASSERT_FALSE(team_sizes.empty());
  EXPECT_LE(*team_sizes.rbegin(), 2);
}

TEST(OmpParallelRangeTest, SmallWorkRunsInlineOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  int calls = 0;
  bool on_caller = true;
  // One block (n <= block) or one thread: a single call on this thread.
  OmpParallelRange(4, 10, 16, [&](int64_t begin, int64_t end) {
    ++calls;
    on_caller = on_caller && std::this_thread::get_id() == caller && begin == 0 && end == 10;
  });
  OmpParallelRange(1, 1000, 16, [&](int64_t begin, int64_t end) {
    ++calls;
    on_caller = on_caller && std::this_thread::get_id() == caller && begin == 0 && end == 1000;
  });
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(on_caller);
}

TEST(OmpParallelRangeTest, ALoopInsideAnotherLoopsRegionRunsInline) {
  constexpr int64_t kOuter = 8, kInner = 1000;
  std::vector<std::atomic<int>> hits(kOuter * kInner);
  std::atomic<int> inner_teams_above_one{0};
  OmpParallelRange(2, kOuter, 1, [&](int64_t ob, int64_t oe) {
    for (int64_t o = ob; o < oe; ++o) {
      OmpParallelRange(4, kInner, 10, [&](int64_t b, int64_t e) {
        if (omp_get_num_threads() > 2) inner_teams_above_one++;
        for (int64_t i = b; i < e; ++i) hits[o * kInner + i]++;
      });
    }
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_EQ(inner_teams_above_one.load(), 0);
}

TEST(OmpParallelForTest, OneBlockPerThreadAtMost) {
  std::atomic<int> blocks{0};
  std::vector<std::atomic<int>> hits(1000);
  OmpParallelFor(3, 1000, 10, [&](int64_t b, int64_t e) {
    blocks++;
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_EQ(blocks.load(), 3);
  blocks = 0;
  OmpParallelFor(4, 15, 10, [&](int64_t, int64_t) { blocks++; });  // two blocks of at least 10
  EXPECT_EQ(blocks.load(), 2);
}

// Threads inside loop bodies now and at most, over every worker.
std::atomic<int> g_inside{0};
std::atomic<int> g_max_inside{0};

void Enter() {
  const int now = ++g_inside;
  for (int seen = g_max_inside; now > seen && !g_max_inside.compare_exchange_weak(seen, now);) {
  }
}

TEST(OmpParallelRangeTest, WorkersSharingABudgetNeverComputeOnMoreThreads) {
  for (int capacity : {1, 2, 3}) {
    ComputeBudget budget(capacity);
    g_inside = 0;
    g_max_inside = 0;
    constexpr int kWorkers = 4;
    std::atomic<int> teams_above_one{0};
    std::atomic<int64_t> checksum{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&] {
        const ComputeScope scope(&budget);
        for (int rep = 0; rep < 40; ++rep) {
          // The worker's own serial work counts as a compute thread too.
          Enter();
          int64_t serial = 0;
          for (int i = 0; i < 20000; ++i) serial += i % 7;
          --g_inside;
          OmpParallelRange(capacity + 1, 64, 1, [&](int64_t b, int64_t e) {
            Enter();
            if (omp_get_num_threads() > 1) teams_above_one++;
            int64_t sum = 0;
            for (int64_t i = b; i < e; ++i) {
              for (int k = 0; k < 2000; ++k) sum += (i * k) % 5;
            }
            checksum += sum;
            --g_inside;
          });
          checksum += serial;
        }
      });
    }
    for (std::thread& t : workers) t.join();
    EXPECT_LE(g_max_inside.load(), capacity) << "capacity " << capacity;
    EXPECT_LE(budget.peak(), capacity);
    EXPECT_EQ(budget.busy(), 0);
    if (capacity == 1) {
      EXPECT_EQ(teams_above_one.load(), 0);
    }
    EXPECT_GT(checksum.load(), 0);
  }
}

}  // namespace
}  // namespace ge::engine::sdk
