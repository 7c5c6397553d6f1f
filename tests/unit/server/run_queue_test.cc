// RunQueue: bounded admission, every accepted task runs, and the
// destructor drains.
#include "server/run_queue.h"

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "gtest/gtest.h"

namespace ge::server {
namespace {

// Blocks tasks until Open().
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(RunQueueTest, FullQueueIsResourceExhausted) {
  Gate gate;
  std::atomic<int> done{0};
  {
    RunQueue q("cpu:7", /*workers=*/1, /*capacity=*/2);
    // One running plus two waiting fill it.
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(q.Submit([&] {
        gate.Wait();
        ++done;
      }).ok());
    }
    absl::Status s = q.Submit([&] { ++done; });
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(s.message().find("cpu:7"), absl::string_view::npos) << s;
    gate.Open();
  }
  EXPECT_EQ(done.load(), 3);
}

TEST(RunQueueTest, ZeroCapacityAcceptsOnlyWhatWorkersTake) {
  Gate gate;
  RunQueue q("cpu:0", /*workers=*/2, /*capacity=*/0);
  EXPECT_TRUE(q.Submit([&] { gate.Wait(); }).ok());
  EXPECT_TRUE(q.Submit([&] { gate.Wait(); }).ok());
  EXPECT_EQ(q.Submit([] {}).code(), absl::StatusCode::kResourceExhausted);
  gate.Open();
}

TEST(RunQueueTest, ManyTasksAllRun) {
  std::atomic<int> done{0};
  {
    RunQueue q("cpu:0", 2, 1000);
    for (int i = 0; i < 500; ++i) ASSERT_TRUE(q.Submit([&] { ++done; }).ok());
  }
  EXPECT_EQ(done.load(), 500);
}

}  // namespace
}  // namespace ge::server
