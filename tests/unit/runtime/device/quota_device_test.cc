#include "runtime/device/quota_device.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace ge::device {
namespace {

DeviceSpec Spec(int64_t memory_bytes) {
  DeviceSpec spec;
  spec.name = "cpu:0";
  spec.memory_bytes = memory_bytes;
  spec.num_threads = 1;
  return spec;
}

TEST(QuotaDeviceTest, ChargesTheQuotaAndReleasesOnFree) {
  CpuDevice device(Spec(0));
  auto quota = std::make_shared<MemoryQuota>("tenant a", 1024);
  QuotaDevice view(device, quota);
  absl::StatusOr<void*> p = view.Malloc(100);  // charged as 128
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(quota->in_use_bytes(), 128);
  EXPECT_EQ(view.memory_stats().in_use_bytes, 128);
  EXPECT_EQ(view.memory_stats().capacity_bytes, 1024);
  EXPECT_EQ(device.memory_stats().in_use_bytes, 128);
  ASSERT_TRUE(view.FreeMemory(*p).ok());
  EXPECT_EQ(quota->in_use_bytes(), 0);
  EXPECT_EQ(device.memory_stats().in_use_bytes, 0);
}

// Two views (two sessions of one tenant) share one quota; another owner's
// quota on the same device is untouched.
TEST(QuotaDeviceTest, ViewsShareTheirOwnersQuotaOnly) {
  CpuDevice device(Spec(0));
  auto a = std::make_shared<MemoryQuota>("tenant a", 1024);
  auto b = std::make_shared<MemoryQuota>("tenant b", 1024);
  QuotaDevice a1(device, a), a2(device, a), b1(device, b);
  ASSERT_TRUE(a1.Malloc(768).ok());
  absl::StatusOr<void*> refused = a2.Malloc(512);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("tenant a cannot allocate 512 bytes: it holds 768 of its 1024-byte"),
            std::string_view::npos)
      << refused.status();
  EXPECT_EQ(a->failed_reservations(), 1);
  EXPECT_EQ(a2.memory_stats().failed_allocations, 1);
  EXPECT_TRUE(b1.Malloc(1024).ok());  // b's share is its own
  EXPECT_EQ(a2.Allocate(512, kTensorAlignment), nullptr);
}

TEST(QuotaDeviceTest, TheDevicesOwnRefusalReleasesTheReservation) {
  CpuDevice device(Spec(256));
  auto quota = std::make_shared<MemoryQuota>("tenant a", 0);  // unlimited: counts only
  QuotaDevice view(device, quota);
  absl::StatusOr<void*> refused = view.Malloc(512);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("device cpu:0: cannot allocate 512 bytes"), std::string_view::npos)
      << refused.status();
  EXPECT_EQ(quota->in_use_bytes(), 0);
}

TEST(QuotaDeviceTest, ClosingAViewReturnsWhatItStillHolds) {
  CpuDevice device(Spec(0));
  auto quota = std::make_shared<MemoryQuota>("tenant a", 4096);
  {
    QuotaDevice view(device, quota);
    ASSERT_TRUE(view.Malloc(1000).ok());
    void* p = view.Allocate(64, kTensorAlignment);
    ASSERT_NE(p, nullptr);
    view.Free(p, 64);
    EXPECT_EQ(quota->in_use_bytes(), 1024);
  }
  EXPECT_EQ(quota->in_use_bytes(), 0);
  EXPECT_EQ(device.memory_stats().in_use_bytes, 0);
}

TEST(QuotaDeviceTest, ForeignPointersAreRefused) {
  CpuDevice device(Spec(0));
  QuotaDevice view(device, std::make_shared<MemoryQuota>("tenant a", 0));
  absl::StatusOr<void*> p = device.Malloc(64);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(view.FreeMemory(*p).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(device.FreeMemory(*p).ok());
}

// Concurrent reservations never pass the limit together.
TEST(QuotaDeviceTest, ConcurrentReservationsRespectTheLimit) {
  MemoryQuota quota("tenant a", 64 * 100);
  std::vector<std::thread> threads;
  std::atomic<int> granted{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) granted += quota.TryReserve(64) ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(granted.load(), 100);
  EXPECT_EQ(quota.in_use_bytes(), 64 * 100);
  EXPECT_EQ(quota.failed_reservations(), 300);
}

}  // namespace
}  // namespace ge::device
