// The CPU device HAL: capacity accounting and its errors, memcpy bounds,
// streams (order, errors, timeouts) and events across streams.
#include "runtime/device/device.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace ge::device {
namespace {

TEST(DeviceTest, CapacityIsAccountedAndExhaustionNamesTheDevice) {
  CpuDevice dev({"cpu:3", /*memory_bytes=*/4096, /*num_threads=*/2});
  auto a = dev.Malloc(1000);  // rounds to 1024
  ASSERT_TRUE(a.ok());
  auto b = dev.Malloc(3000);  // rounds to 3008
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(dev.memory_stats().in_use_bytes, 1024 + 3008);
  auto c = dev.Malloc(100);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(c.status().message()), "device cpu:3: cannot allocate 100 bytes: 64 of 4096 bytes free");
  EXPECT_EQ(dev.Allocate(100, 64), nullptr);
  EXPECT_EQ(dev.memory_stats().failed_allocations, 2);
  ASSERT_TRUE(dev.FreeMemory(*b).ok());
  auto d = dev.Malloc(100);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(dev.memory_stats().peak_bytes, 4032);
  int local;
  EXPECT_EQ(dev.FreeMemory(&local).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*a) % kTensorAlignment, 0u);
  ASSERT_TRUE(dev.FreeMemory(*a).ok());
  ASSERT_TRUE(dev.FreeMemory(*d).ok());
  EXPECT_EQ(dev.memory_stats().in_use_bytes, 0);
}

TEST(DeviceTest, MemcpyChecksTheDestination) {
  CpuDevice dev({"cpu:0", 0, 1});
  char src[8] = "abcdefg";
  char dst[8] = {};
  EXPECT_TRUE(dev.Memcpy(dst, sizeof(dst), src, 8, MemcpyKind::kHostToDevice).ok());
  EXPECT_STREQ(dst, "abcdefg");
  EXPECT_EQ(dev.Memcpy(dst, 4, src, 8, MemcpyKind::kDeviceToHost).code(), absl::StatusCode::kInvalidArgument);
}

TEST(StreamTest, RunsInOrderAndReportsTheFirstError) {
  CpuDevice dev({"cpu:0", 0, 1});
  auto stream = dev.CreateStream("s");
  std::vector<int> seen;
  for (int i = 0; i < 100; ++i) {
    stream->Enqueue([&seen, i] {
      seen.push_back(i);
      return absl::OkStatus();
    });
  }
  ASSERT_TRUE(stream->Synchronize().ok());
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[i], i);
  stream->Enqueue([] { return absl::InternalError("boom"); });
  bool ran_after_error = false;
  stream->Enqueue([&] {
    ran_after_error = true;
    return absl::OkStatus();
  });
  absl::Status s = stream->Synchronize();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(std::string(s.message()), "stream cpu:0/s: boom");
  EXPECT_FALSE(ran_after_error);
  EXPECT_TRUE(stream->Synchronize().ok()) << "the error is reported once";
}

TEST(StreamTest, SynchronizeTimesOut) {
  CpuDevice dev({"cpu:0", 0, 1});
  auto stream = dev.CreateStream("slow");
  std::atomic<bool> release{false};
  stream->Enqueue([&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return absl::OkStatus();
  });
  absl::Status s = stream->Synchronize(absl::Milliseconds(20));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  release = true;
  EXPECT_TRUE(stream->Synchronize().ok());
}

TEST(EventTest, OrdersWorkAcrossStreams) {
  CpuDevice dev({"cpu:0", 0, 1});
  auto producer = dev.CreateStream("producer");
  auto consumer = dev.CreateStream("consumer");
  std::atomic<bool> go{false};
  std::atomic<int> value{0};
  Event ready;
  producer->Enqueue([&] {
    while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    value = 42;
    return absl::OkStatus();
  });
  producer->RecordEvent(&ready);
  consumer->WaitEvent(&ready);
  int observed = -1;
  consumer->Enqueue([&] {
    observed = value;
    return absl::OkStatus();
  });
  EXPECT_FALSE(ready.Query());
  EXPECT_EQ(ready.Synchronize(absl::Milliseconds(10)).code(), absl::StatusCode::kDeadlineExceeded);
  go = true;
  ASSERT_TRUE(consumer->Synchronize().ok());
  EXPECT_EQ(observed, 42);
  EXPECT_TRUE(ready.Query());
}

TEST(DeviceManagerTest, ParsesSpecsAndRejectsBadOnes) {
  auto specs = DeviceManager::ParseDeviceSpecs("cpu:0:threads=2:memory=4G, cpu:1");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].num_threads, 2);
  EXPECT_EQ((*specs)[0].memory_bytes, int64_t{4} << 30);
  auto manager = DeviceManager::Create(*specs);
  ASSERT_TRUE(manager.ok());
  EXPECT_TRUE((*manager)->Get("cpu:1").ok());
  EXPECT_EQ(std::string((*manager)->Get("cpu:9").status().message()), "no device cpu:9 (devices: cpu:0, cpu:1)");
  EXPECT_FALSE(DeviceManager::ParseDeviceSpecs("cpu:0:speed=9").ok());
  EXPECT_FALSE(DeviceManager::ParseDeviceSpecs("cpu:0:memory=lots").ok());
  EXPECT_FALSE(DeviceManager::ParseDeviceSpecs("").ok());
  EXPECT_FALSE(DeviceManager::Create({{"gpu:0", 0, 0}}).ok());
  EXPECT_FALSE(DeviceManager::Create({{"cpu:0", 0, 0}, {"cpu:0", 0, 0}}).ok());
}

}  // namespace
}  // namespace ge::device
