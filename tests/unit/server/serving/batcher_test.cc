// The batch scheduler (server/serving/batcher.h) with a runner that doubles
// its input and records each batch: coalescing, the preferred size, padding
// to a gear and the split back, the queue bound, deadlines, cancellation,
// and a bad request failing alone.
#include "server/serving/batcher.h"

#include <atomic>
#include <future>
#include <mutex>

#include "gtest/gtest.h"

namespace ge::server::serving {
namespace {

using namespace std::chrono_literals;

// Doubles a [rows, 2] float input; a negative value fails the whole run.
struct Runner {
  std::mutex mu;
  std::vector<int64_t> batch_rows;   // rows each run saw (padded)
  std::promise<void> entered;        // set on the first run
  std::shared_future<void> release;  // when valid, runs wait on it
  bool entered_set = false;

  BatchRunner Fn() {
    return [this](int, std::vector<Tensor> inputs) -> absl::StatusOr<std::vector<Tensor>> {
      {
        std::lock_guard<std::mutex> lock(mu);
        batch_rows.push_back(inputs[0].shape().dim(0));
        if (!entered_set) {
          entered_set = true;
          entered.set_value();
        }
      }
      if (release.valid()) release.wait();
      const Tensor& in = inputs[0];
      absl::StatusOr<Tensor> out = Tensor::Allocate(DataType::kFloat, in.shape());
      for (int64_t i = 0; i < in.NumElements(); ++i) {
        if (in.data<float>()[i] < 0) return absl::InvalidArgumentError("negative input");
        out->data<float>()[i] = 2 * in.data<float>()[i];
      }
      return std::vector<Tensor>{*out};
    };
  }
  std::vector<int64_t> Rows() {
    std::lock_guard<std::mutex> lock(mu);
    return batch_rows;
  }
};

struct Pending {
  std::promise<absl::StatusOr<std::vector<Tensor>>> promise;
  std::future<absl::StatusOr<std::vector<Tensor>>> future = promise.get_future();
};

std::unique_ptr<BatchRequest> Request(float value, int64_t rows, Pending& p) {
  auto r = std::make_unique<BatchRequest>();
  std::vector<float> data(rows * 2);
  for (int64_t i = 0; i < rows * 2; ++i) data[i] = value + static_cast<float>(i);
  r->inputs.push_back(Tensor::FromVector<float>(data, Shape{rows, 2}));
  r->rows = rows;
  r->done = [&p](absl::StatusOr<std::vector<Tensor>> out) { p.promise.set_value(std::move(out)); };
  return r;
}

absl::StatusOr<std::vector<Tensor>> Wait(Pending& p) {
  EXPECT_EQ(p.future.wait_for(30s), std::future_status::ready);
  return p.future.get();
}

void ExpectDoubled(Pending& p, float value, int64_t rows) {
  absl::StatusOr<std::vector<Tensor>> out = Wait(p);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& t = (*out)[0];
  ASSERT_EQ(t.shape(), (Shape{rows, 2}));
  for (int64_t i = 0; i < rows * 2; ++i) EXPECT_EQ(t.data<float>()[i], 2 * (value + i)) << i;
}

BatcherOptions Batching(int64_t max, std::vector<int64_t> preferred, std::chrono::microseconds delay) {
  BatcherOptions o;
  o.name = "test model";
  o.batching = true;
  o.max_batch_size = max;
  o.preferred = std::move(preferred);
  o.max_queue_delay = delay;
  return o;
}

TEST(BatcherTest, CoalescesUpToThePreferredSizeAndSplitsBack) {
  Runner runner;
  std::vector<int64_t> observed;
  std::mutex observed_mu;
  BatchObserver observer;
  observer.batch = [&](int64_t rows, int64_t, int64_t, bool) {
    std::lock_guard<std::mutex> lock(observed_mu);
    observed.push_back(rows);
  };
  // A long delay: the batch leaves when it reaches the preferred 4 rows.
  Batcher b(Batching(8, {4}, 10s), runner.Fn(), observer);
  Pending p[3];
  ASSERT_TRUE(b.Submit(Request(10, 1, p[0])).ok());
  ASSERT_TRUE(b.Submit(Request(20, 2, p[1])).ok());
  ASSERT_TRUE(b.Submit(Request(30, 1, p[2])).ok());
  ExpectDoubled(p[0], 10, 1);
  ExpectDoubled(p[1], 20, 2);
  ExpectDoubled(p[2], 30, 1);
  EXPECT_EQ(runner.Rows(), std::vector<int64_t>{4});
  std::lock_guard<std::mutex> lock(observed_mu);
  EXPECT_EQ(observed, std::vector<int64_t>{4});
}

TEST(BatcherTest, AnOverflowingRequestWaitsForTheNextBatch) {
  Runner runner;
  Batcher b(Batching(4, {}, 50ms), runner.Fn());
  Pending p[3];
  ASSERT_TRUE(b.Submit(Request(1, 3, p[0])).ok());
  ASSERT_TRUE(b.Submit(Request(2, 2, p[1])).ok());  // 3 + 2 > 4
  ASSERT_TRUE(b.Submit(Request(3, 1, p[2])).ok());  // fits beside the first
  ExpectDoubled(p[0], 1, 3);
  ExpectDoubled(p[1], 2, 2);
  ExpectDoubled(p[2], 3, 1);
  EXPECT_EQ(runner.Rows(), (std::vector<int64_t>{4, 2}));
}

TEST(BatcherTest, DifferentNonBatchDimsAreNotMixed) {
  Runner runner;
  Batcher b(Batching(8, {}, 30ms), runner.Fn());
  Pending a, c;
  ASSERT_TRUE(b.Submit(Request(1, 1, a)).ok());
  auto other = std::make_unique<BatchRequest>();
  other->inputs.push_back(Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3}));
  other->done = [&c](absl::StatusOr<std::vector<Tensor>> out) { c.promise.set_value(std::move(out)); };
  ASSERT_TRUE(b.Submit(std::move(other)).ok());
  ExpectDoubled(a, 1, 1);
  absl::StatusOr<std::vector<Tensor>> out = Wait(c);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(runner.Rows(), (std::vector<int64_t>{1, 1}));
}

TEST(BatcherTest, PadsToTheNextGearAndDropsThePaddedRows) {
  Runner runner;
  BatcherOptions o = Batching(8, {3}, 10s);
  o.gears = {1, 4, 8};
  Batcher b(o, runner.Fn());
  Pending p[3];
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(b.Submit(Request(10.0f * i, 1, p[i])).ok());
  for (int i = 0; i < 3; ++i) ExpectDoubled(p[i], 10.0f * i, 1);
  EXPECT_EQ(runner.Rows(), std::vector<int64_t>{4});
}

TEST(BatcherTest, ABadRequestFailsAlone) {
  Runner runner;
  Batcher b(Batching(8, {3}, 10s), runner.Fn());
  Pending p[3];
  ASSERT_TRUE(b.Submit(Request(1, 1, p[0])).ok());
  ASSERT_TRUE(b.Submit(Request(-100, 1, p[1])).ok());
  ASSERT_TRUE(b.Submit(Request(5, 1, p[2])).ok());
  ExpectDoubled(p[0], 1, 1);
  absl::StatusOr<std::vector<Tensor>> bad = Wait(p[1]);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  ExpectDoubled(p[2], 5, 1);
  EXPECT_EQ(runner.Rows(), (std::vector<int64_t>{3, 1, 1, 1}));
}

TEST(BatcherTest, TheQueueIsBounded) {
  Runner runner;
  std::promise<void> gate;
  runner.release = gate.get_future().share();
  BatcherOptions o;
  o.name = "bounded";
  o.max_queue_size = 2;
  Batcher b(o, runner.Fn());
  Pending p[4];
  ASSERT_TRUE(b.Submit(Request(1, 1, p[0])).ok());
  runner.entered.get_future().wait();  // the worker holds p[0]
  ASSERT_TRUE(b.Submit(Request(2, 1, p[1])).ok());
  ASSERT_TRUE(b.Submit(Request(3, 1, p[2])).ok());
  absl::Status full = b.Submit(Request(4, 1, p[3]));
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("max_queue_size"), std::string::npos) << full;
  EXPECT_EQ(b.pending(), 3);
  gate.set_value();
  for (int i = 0; i < 3; ++i) ExpectDoubled(p[i], static_cast<float>(i + 1), 1);
}

TEST(BatcherTest, ARequestLeavesTheQueueOnItsDeadline) {
  Runner runner;
  Batcher b(Batching(8, {}, 10s), runner.Fn());
  Pending p;
  auto r = Request(1, 1, p);
  r->deadline = Clock::now() + 50ms;
  ASSERT_TRUE(b.Submit(std::move(r)).ok());
  EXPECT_EQ(Wait(p).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(runner.Rows().empty());
}

TEST(BatcherTest, ACancelledRequestLeavesTheQueue) {
  Runner runner;
  Batcher b(Batching(8, {}, 10s), runner.Fn());
  Pending p;
  std::atomic<bool> cancelled{false};
  auto r = Request(1, 1, p);
  r->cancelled = [&cancelled] { return cancelled.load(); };
  ASSERT_TRUE(b.Submit(std::move(r)).ok());
  cancelled = true;
  EXPECT_EQ(Wait(p).status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(runner.Rows().empty());
}

TEST(BatcherTest, StopRunsWhatIsQueuedAndRefusesTheRest) {
  Runner runner;
  Batcher b(Batching(8, {}, 10s), runner.Fn());
  Pending p, q;
  ASSERT_TRUE(b.Submit(Request(7, 2, p)).ok());
  b.Stop();  // the queued request runs at once, without waiting for its delay
  ExpectDoubled(p, 7, 2);
  EXPECT_EQ(b.Submit(Request(1, 1, q)).code(), absl::StatusCode::kUnavailable);
}

TEST(BatcherTest, ConcatAndSliceStrings) {
  Tensor a = Tensor::FromVector<std::string>({"a", "bb"}, Shape{2, 1});
  Tensor c = Tensor::FromVector<std::string>({"ccc"}, Shape{1, 1});
  absl::StatusOr<Tensor> joined = Batcher::Concat({&a, &c}, 4);
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_EQ(joined->shape(), (Shape{4, 1}));
  EXPECT_EQ(joined->data<std::string>()[2], "ccc");
  EXPECT_EQ(joined->data<std::string>()[3], "");
  absl::StatusOr<Tensor> part = Batcher::SliceRows(*joined, 1, 3);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->data<std::string>()[0], "bb");
  EXPECT_EQ(part->data<std::string>()[1], "ccc");
  EXPECT_FALSE(Batcher::SliceRows(*joined, 3, 5).ok());
}

}  // namespace
}  // namespace ge::server::serving
