// CachingAllocator over a CpuDevice: size classes, reuse, the limits,
// trimming (on demand, when idle with an injected clock, on a refused
// request, on Close and destruction), tensors that outlive the cache, and
// concurrent use.
#include "runtime/device/caching_allocator.h"

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/device/device.h"

namespace ge::device {
namespace {

using Clock = std::chrono::steady_clock;

CpuDevice MakeDevice(int64_t memory_bytes = 0) {
  DeviceSpec spec;
  spec.name = "cpu:0";
  spec.memory_bytes = memory_bytes;
  spec.num_threads = 1;
  return CpuDevice(spec);
}

TEST(CachingAllocatorTest, SizeClassesAreMultiplesOf64ThenFourPerPowerOfTwo) {
  EXPECT_EQ(CachingAllocator::ClassSize(0), 64u);
  EXPECT_EQ(CachingAllocator::ClassSize(1), 64u);
  EXPECT_EQ(CachingAllocator::ClassSize(64), 64u);
  EXPECT_EQ(CachingAllocator::ClassSize(65), 128u);
  EXPECT_EQ(CachingAllocator::ClassSize(256), 256u);
  EXPECT_EQ(CachingAllocator::ClassSize(257), 320u);
  EXPECT_EQ(CachingAllocator::ClassSize(1000), 1024u);
  EXPECT_EQ(CachingAllocator::ClassSize(1025), 1280u);
  EXPECT_EQ(CachingAllocator::ClassSize(3 << 20), size_t{3} << 20);
  size_t previous = 0;
  for (size_t bytes = 1; bytes < (1 << 16); bytes += 7) {
    size_t c = CachingAllocator::ClassSize(bytes);
    ASSERT_GE(c, bytes);
    ASSERT_GE(c, previous) << bytes;
    ASSERT_EQ(c % 64, 0u);
    if (bytes > 256) {
      ASSERT_LE(c, bytes + bytes / 4 + 64) << bytes;
    }
    previous = c;
  }
}

TEST(CachingAllocatorTest, ReusesAFreedBlockOfTheSameClass) {
  CpuDevice device = MakeDevice();
  CachingAllocator cache(&device);
  void* a = cache.Allocate(1000, kTensorAlignment);
  ASSERT_NE(a, nullptr);
  cache.Free(a, 1000);
  EXPECT_EQ(cache.stats().bytes_cached, 1024);
  EXPECT_EQ(cache.stats().blocks_cached, 1);
  void* b = cache.Allocate(1010, kTensorAlignment);  // same class (1024)
  EXPECT_EQ(b, a);
  void* c = cache.Allocate(1100, kTensorAlignment);  // class 1280: a new block
  EXPECT_NE(c, a);
  CachingAllocatorStats s = cache.stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 2);
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.bytes_in_use, 1024 + 1280);
  EXPECT_EQ(device.memory_stats().allocations, 2);
  cache.Free(b, 1010);
  cache.Free(c, 1100);
  EXPECT_EQ(device.memory_stats().in_use_bytes, 1024 + 1280);
  EXPECT_EQ(cache.Trim(), 1024u + 1280u);
  EXPECT_EQ(device.memory_stats().in_use_bytes, 0);
  s = cache.stats();
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.trims, 1);
  EXPECT_EQ(s.bytes_trimmed, 1024 + 1280);
  EXPECT_EQ(cache.Trim(), 0u);
  EXPECT_EQ(cache.stats().trims, 1);
}

TEST(CachingAllocatorTest, LimitsSendBlocksBackToTheDevice) {
  CpuDevice device = MakeDevice();
  CachingAllocatorOptions options;
  options.max_cached_bytes = 2048;
  options.max_block_bytes = 4096;
  CachingAllocator cache(&device, options);
  void* big = cache.Allocate(5000, kTensorAlignment);  // above max_block_bytes: 64-byte rounding only
  void* a = cache.Allocate(1024, kTensorAlignment);
  void* b = cache.Allocate(1024, kTensorAlignment);
  void* c = cache.Allocate(1024, kTensorAlignment);
  EXPECT_EQ(cache.stats().bytes_in_use, 5056 + 3 * 1024);
  cache.Free(big, 5000);
  cache.Free(a, 1024);
  cache.Free(b, 1024);
  cache.Free(c, 1024);  // would exceed max_cached_bytes
  EXPECT_EQ(cache.stats().bytes_cached, 2048);
  EXPECT_EQ(device.memory_stats().in_use_bytes, 2048);
}

TEST(CachingAllocatorTest, TrimsWhenIdleOnTheNextCallOrWhenAsked) {
  CpuDevice device = MakeDevice();
  Clock::time_point now{};
  CachingAllocatorOptions options;
  options.idle_trim = std::chrono::milliseconds(100);
  options.clock = [&now] { return now; };
  CachingAllocator cache(&device, options);
  cache.Free(cache.Allocate(512, kTensorAlignment), 512);
  now += std::chrono::milliseconds(99);
  EXPECT_EQ(cache.TrimIfIdle(), 0u);
  void* a = cache.Allocate(512, kTensorAlignment);  // activity: a hit
  EXPECT_EQ(cache.stats().hits, 1);
  cache.Free(a, 512);
  now += std::chrono::milliseconds(100);
  EXPECT_EQ(cache.TrimIfIdle(), 512u);
  EXPECT_EQ(device.memory_stats().in_use_bytes, 0);

  cache.Free(cache.Allocate(512, kTensorAlignment), 512);
  now += std::chrono::milliseconds(150);
  void* b = cache.Allocate(64, kTensorAlignment);  // idle: the 512-byte block goes first
  EXPECT_EQ(cache.stats().bytes_cached, 0);
  EXPECT_EQ(device.memory_stats().in_use_bytes, 64);
  EXPECT_EQ(cache.stats().trims, 2);
  cache.Free(b, 64);
}

TEST(CachingAllocatorTest, ARefusedRequestTrimsAndRetries) {
  CpuDevice device = MakeDevice(4096);
  CachingAllocator cache(&device);
  cache.Free(cache.Allocate(2048, kTensorAlignment), 2048);
  void* a = cache.Allocate(3072, kTensorAlignment);  // 2048 cached + 3072 > 4096 until trimmed
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(cache.stats().bytes_cached, 0);
  EXPECT_EQ(device.memory_stats().failed_allocations, 1);
  EXPECT_EQ(cache.Allocate(2048, kTensorAlignment), nullptr);  // nothing cached to trim
  cache.Free(a, 3072);
}

TEST(CachingAllocatorTest, CloseAndDestructionReturnEverything) {
  CpuDevice device = MakeDevice();
  {
    CachingAllocator cache(&device);
    void* a = cache.Allocate(100, kTensorAlignment);
    cache.Free(cache.Allocate(300, kTensorAlignment), 300);
    cache.Close();
    EXPECT_EQ(device.memory_stats().in_use_bytes, 128);
    cache.Free(a, 100);  // closed: not cached
    EXPECT_EQ(cache.stats().bytes_cached, 0);
    EXPECT_EQ(device.memory_stats().in_use_bytes, 0);
    cache.Free(cache.Allocate(300, kTensorAlignment), 300);  // still served after Close
  }
  {
    CachingAllocator cache(&device);
    cache.Free(cache.Allocate(300, kTensorAlignment), 300);
    EXPECT_EQ(device.memory_stats().in_use_bytes, 320);
  }
  EXPECT_EQ(device.memory_stats().in_use_bytes, 0);
}

// Kernel outputs (the dynamic executor's ExecuteContext::Output) are
// buffers without the zero fill: a reused block keeps its bytes, while
// AllocateTensor clears the same block.
TEST(CachingAllocatorTest, BuffersComeAsTheyWereTensorsZeroed) {
  CpuDevice device = MakeDevice();
  auto cache = std::make_shared<CachingAllocator>(&device);
  const void* first;
  {
    auto b = cache->AllocateBuffer(80);
    ASSERT_TRUE(b.ok()) << b.status();
    first = (*b)->data();
    for (int i = 0; i < 20; ++i) static_cast<float*>((*b)->data())[i] = static_cast<float>(i) + 0.5f;
  }
  {
    auto b = cache->AllocateBuffer(80);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ((*b)->data(), first);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(static_cast<const float*>((*b)->data())[i], static_cast<float>(i) + 0.5f);
  }
  auto z = cache->AllocateTensor(DataType::kFloat, Shape{20});
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->raw_data(), first);
  for (int64_t i = 0; i < 20; ++i) ASSERT_EQ(z->data<float>()[i], 0.0f);
  EXPECT_EQ(cache->stats().hits, 2);
}

TEST(CachingAllocatorTest, TensorsAreZeroedReusedAndOutliveTheCache) {
  CpuDevice device = MakeDevice();
  auto cache = std::make_shared<CachingAllocator>(&device);
  const void* first;
  {
    auto t = cache->AllocateTensor(DataType::kFloat, Shape{4, 5});
    ASSERT_TRUE(t.ok()) << t.status();
    first = t->raw_data();
    std::memset(t->raw_data(), 0xff, t->SizeInBytes());
  }
  auto t = cache->AllocateTensor(DataType::kFloat, Shape{5, 4});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->raw_data(), first);
  for (int64_t i = 0; i < 20; ++i) ASSERT_EQ(t->data<float>()[i], 0.0f);
  EXPECT_EQ(cache->stats().hits, 1);
  auto s = cache->AllocateTensor(DataType::kString, Shape{2});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->data<std::string>()[1], "");
  cache->Close();
  cache.reset();  // the tensor holds the cache
  EXPECT_EQ(device.memory_stats().in_use_bytes, 128);
  *t = Tensor();
  EXPECT_EQ(device.memory_stats().in_use_bytes, 0);
}

TEST(CachingAllocatorTest, ConcurrentUseKeepsBlocksPrivateAndCountsRight) {
  CpuDevice device = MakeDevice();
  CachingAllocator cache(&device);
  std::atomic<bool> corrupt{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int i = 0; i < 2000; ++i) {
        if (live.size() < 8 && (live.empty() || rng() % 2 == 0)) {
          size_t bytes = 1 + rng() % 5000;
          auto* p = static_cast<unsigned char*>(cache.Allocate(bytes, kTensorAlignment));
          if (p == nullptr) { corrupt = true; return; }
          std::memset(p, t + 1, bytes);
          live.emplace_back(p, bytes);
        } else {
          size_t k = rng() % live.size();
          auto [p, bytes] = live[k];
          for (size_t j = 0; j < bytes; ++j) {
            if (p[j] != t + 1) corrupt = true;
          }
          cache.Free(p, bytes);
          live.erase(live.begin() + static_cast<long>(k));
        }
      }
      for (auto [p, bytes] : live) cache.Free(p, bytes);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_FALSE(corrupt);
  CachingAllocatorStats s = cache.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_GT(s.hits, 0);
  EXPECT_EQ(s.misses, device.memory_stats().allocations);
  EXPECT_EQ(device.memory_stats().in_use_bytes, s.bytes_cached);
  cache.Trim();
  EXPECT_EQ(device.memory_stats().in_use_bytes, 0);
}

}  // namespace
}  // namespace ge::device
