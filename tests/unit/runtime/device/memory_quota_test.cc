// MemoryQuota chains (tenant device quota -> tenant memory quota -> daemon
// budget): refusals name the limit that was reached and take nothing,
// releases return bytes along the chain, concurrent charges never pass a
// limit; the caching allocator charges its blocks, returns them on trim and
// reports the quota's refusal; the default daemon budget.
#include "runtime/device/memory_quota.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/device/caching_allocator.h"
#include "runtime/device/quota_device.h"

namespace ge::device {
namespace {

using ::testing::HasSubstr;

struct Chain {
  std::shared_ptr<MemoryQuota> budget =
      std::make_shared<MemoryQuota>("the daemon", 10000, nullptr, "memory_budget_bytes", "memory budget");
  std::shared_ptr<MemoryQuota> tenant =
      std::make_shared<MemoryQuota>("tenant alice", 4000, budget, "max_memory_bytes of tenant alice");
  std::shared_ptr<MemoryQuota> device = std::make_shared<MemoryQuota>(
      "tenant alice", 1000, tenant, "max_device_memory_bytes of tenant alice", "device memory quota");
};

TEST(MemoryQuotaTest, AReservationChargesEveryQuotaOfTheChainAndReleaseReturnsIt) {
  Chain c;
  ASSERT_TRUE(c.device->Reserve(600).ok());
  EXPECT_EQ(c.device->in_use_bytes(), 600);
  EXPECT_EQ(c.tenant->in_use_bytes(), 600);
  EXPECT_EQ(c.budget->in_use_bytes(), 600);
  ASSERT_TRUE(c.tenant->Reserve(1000).ok());  // host memory: not the device quota
  EXPECT_EQ(c.device->in_use_bytes(), 600);
  EXPECT_EQ(c.tenant->in_use_bytes(), 1600);
  EXPECT_EQ(c.budget->in_use_bytes(), 1600);
  c.device->Release(600);
  c.tenant->Release(1000);
  EXPECT_EQ(c.device->in_use_bytes(), 0);
  EXPECT_EQ(c.tenant->in_use_bytes(), 0);
  EXPECT_EQ(c.budget->in_use_bytes(), 0);
  EXPECT_EQ(c.tenant->peak_bytes(), 1600);
}

TEST(MemoryQuotaTest, TheRefusalNamesTheLimitReachedAndTakesNothing) {
  Chain c;
  absl::Status s = c.device->Reserve(1001);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("tenant alice cannot allocate 1001 bytes"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("it holds 0 of its 1000-byte device memory quota (max_device_memory_bytes of tenant alice)"));

  ASSERT_TRUE(c.tenant->Reserve(3500).ok());
  s = c.device->Reserve(600);  // fits the device quota, not the tenant's
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("(max_memory_bytes of tenant alice)"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("tenant alice holds 3500 of its 4000-byte memory quota"));
  EXPECT_EQ(c.device->in_use_bytes(), 0) << "a refused reservation takes nothing below the refusing quota";

  auto bob = std::make_shared<MemoryQuota>("tenant bob", 0, c.budget, "max_memory_bytes of tenant bob");
  ASSERT_TRUE(bob->Reserve(6000).ok());
  s = bob->Reserve(1000);  // the daemon budget: 3500 + 6000 + 1000 > 10000
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("tenant bob cannot allocate 1000 bytes"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("the daemon holds 9500 of its 10000-byte memory budget (memory_budget_bytes)"));
  EXPECT_EQ(bob->in_use_bytes(), 6000);
  EXPECT_EQ(c.budget->in_use_bytes(), 9500);
  EXPECT_EQ(c.budget->failed_reservations(), 1);
  EXPECT_EQ(c.tenant->Reserve(-1).code(), absl::StatusCode::kInvalidArgument);
}

TEST(MemoryQuotaTest, ConcurrentChargesOfTwoTenantsNeverPassTheBudget) {
  auto budget = std::make_shared<MemoryQuota>("the daemon", 64 * 100, nullptr, "memory_budget_bytes");
  auto a = std::make_shared<MemoryQuota>("tenant a", 64 * 80, budget, "max_memory_bytes of tenant a");
  auto b = std::make_shared<MemoryQuota>("tenant b", 0, budget, "max_memory_bytes of tenant b");
  std::atomic<int64_t> max_seen{0};
  auto worker = [&](MemoryQuota* q) {
    for (int i = 0; i < 20000; ++i) {
      if (!q->TryReserve(64)) continue;
      int64_t now = budget->in_use_bytes();
      int64_t seen = max_seen.load();
      while (now > seen && !max_seen.compare_exchange_weak(seen, now)) {
      }
      q->Release(64);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t % 2 ? a.get() : b.get());
  for (auto& t : threads) t.join();
  EXPECT_LE(max_seen.load(), 64 * 100);
  EXPECT_EQ(budget->in_use_bytes(), 0);
  EXPECT_EQ(a->in_use_bytes(), 0);
  EXPECT_EQ(b->in_use_bytes(), 0);
  EXPECT_LE(a->peak_bytes(), 64 * 80);
}

TEST(MemoryQuotaTest, AQuotaDeviceChargesTheWholeChain) {
  Chain c;
  DeviceSpec spec;
  spec.num_threads = 1;
  CpuDevice cpu(spec);
  QuotaDevice view(cpu, c.device);
  absl::StatusOr<void*> p = view.Malloc(512);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(c.budget->in_use_bytes(), 512);
  absl::StatusOr<void*> q = view.Malloc(1000);
  EXPECT_EQ(q.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(q.status().message()), HasSubstr("device cpu:0: tenant alice cannot allocate 1000 bytes"));
  ASSERT_TRUE(view.FreeMemory(*p).ok());
  EXPECT_EQ(c.budget->in_use_bytes(), 0);
}

TEST(MemoryQuotaTest, TheCachingAllocatorChargesItsBlocksUntilTheyGoBack) {
  Chain c;
  CachingAllocatorOptions options;
  options.quota = c.tenant;
  auto cache = std::make_shared<CachingAllocator>(nullptr, options);
  {
    absl::StatusOr<Tensor> t = cache->AllocateTensor(DataType::kFloat, Shape{500});  // 2000 bytes
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(c.tenant->in_use_bytes(), 2048);
    absl::StatusOr<Tensor> big = cache->AllocateTensor(DataType::kFloat, Shape{1000});
    EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(big.status().message()), HasSubstr("max_memory_bytes of tenant alice"));
    absl::StatusOr<Tensor> strings = cache->AllocateTensor(DataType::kString, Shape{1000});
    EXPECT_EQ(strings.status().code(), absl::StatusCode::kResourceExhausted);
  }
  // Freed into the cache: still held, so still charged.
  EXPECT_EQ(c.tenant->in_use_bytes(), 2048);
  // A request the quota refuses gives the cached blocks back first.
  absl::StatusOr<Tensor> t = cache->AllocateTensor(DataType::kFloat, Shape{750});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(c.tenant->in_use_bytes(), static_cast<int64_t>(CachingAllocator::ClassSize(3000)));
  t = absl::InternalError("dropped");
  cache->Trim();
  EXPECT_EQ(c.tenant->in_use_bytes(), 0);
  EXPECT_EQ(c.budget->in_use_bytes(), 0);
  {
    absl::StatusOr<Tensor> s = cache->AllocateTensor(DataType::kString, Shape{10});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(c.tenant->in_use_bytes(), static_cast<int64_t>(10 * sizeof(std::string)));
    s->data<std::string>()[3] = "kept";
    EXPECT_EQ(s->data<std::string>()[3], "kept");
  }
  EXPECT_EQ(c.tenant->in_use_bytes(), 0);
  absl::StatusOr<std::shared_ptr<Buffer>> workspace = cache->AllocateBuffer(3000);
  ASSERT_TRUE(workspace.ok());
  EXPECT_GE(c.tenant->in_use_bytes(), 3000);
}

TEST(MemoryQuotaTest, TheDefaultBudgetIsFourFifthsOfTheSmallestBound) {
  EXPECT_EQ(DefaultMemoryBudgetBytes({1000, 0, 0}), 800);
  EXPECT_EQ(DefaultMemoryBudgetBytes({1000, 500, 0}), 400);
  EXPECT_EQ(DefaultMemoryBudgetBytes({1000, 500, 250}), 200);
  EXPECT_EQ(DefaultMemoryBudgetBytes({0, 0, 0}), 0);
  const HostMemoryLimits host = ReadHostMemoryLimits();
  EXPECT_GT(host.physical_bytes, 0);
  EXPECT_GT(DefaultMemoryBudgetBytes(host), 0);
  EXPECT_LE(DefaultMemoryBudgetBytes(host), host.physical_bytes);
}

}  // namespace
}  // namespace ge::device
