// OmpParallelRange, the parallel loop of the engines' threading contract:
// every index once, blocks as asked, never more threads than allowed, and
// small work inline on the caller.
#include "runtime/engines/sdk/parallel.h"

#include <omp.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

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

}  // namespace
}  // namespace ge::engine::sdk
