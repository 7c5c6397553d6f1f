// ComputeBudget: a scope holds one token (nested scopes none more), teams
// take what is free (kFlexible) or wait for all of it holding nothing
// (kWhole), ComputeWait gives tokens back while a thread waits, a thread
// outside any scope is not limited, and with more workers than tokens the
// extra ones wait until a token is given back. Blocking is observed through
// the budget's waiter count (polled with a deadline), never by sleeping.
#include "base/compute_budget.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/poll.h"

namespace ge {
namespace {

using ::ge::testing::PollUntil;
constexpr auto kDeadline = std::chrono::seconds(30);

// A one-shot event.
class Event {
 public:
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    set_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return set_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool set_ = false;
};

TEST(ComputeBudgetTest, AScopeHoldsOneTokenAndNestedScopesNoMore) {
  ComputeBudget budget(2);
  EXPECT_EQ(budget.capacity(), 2);
  EXPECT_EQ(ComputeBudget::Current(), nullptr);
  {
    ComputeScope outer(&budget);
    EXPECT_EQ(ComputeBudget::Current(), &budget);
    EXPECT_EQ(ComputeBudget::HeldByThisThread(), 1);
    EXPECT_EQ(budget.busy(), 1);
    {
      ComputeScope inner(&budget);
      EXPECT_EQ(budget.busy(), 1);
    }
    EXPECT_EQ(budget.busy(), 1);
  }
  EXPECT_EQ(budget.busy(), 0);
  EXPECT_EQ(budget.peak(), 1);
  EXPECT_EQ(ComputeBudget::Current(), nullptr);
  ComputeScope none(nullptr);  // no budget: a no-op
  EXPECT_EQ(ComputeBudget::Current(), nullptr);
}

TEST(ComputeBudgetTest, AFlexibleTeamTakesWhatIsFree) {
  ComputeBudget budget(3);
  ComputeScope scope(&budget);
  {
    ComputeTeam team(4, ComputeTeam::Mode::kFlexible);  // capped at the budget
    EXPECT_EQ(team.size(), 3);
    EXPECT_EQ(budget.busy(), 3);
  }
  EXPECT_EQ(budget.busy(), 1);
  Event holding, release;
  std::thread other([&] {
    ComputeScope s(&budget);
    holding.Notify();
    release.Wait();
  });
  holding.Wait();
  {
    ComputeTeam team(3, ComputeTeam::Mode::kFlexible);
    EXPECT_EQ(team.size(), 2);  // the other thread holds the third token
  }
  release.Notify();
  other.join();
  EXPECT_EQ(budget.busy(), 1);
  ComputeTeam one(1, ComputeTeam::Mode::kFlexible);
  EXPECT_EQ(one.size(), 1);
}

TEST(ComputeBudgetTest, AThreadOutsideAnyScopeIsNotLimited) {
  ComputeBudget budget(1);
  ComputeTeam team(8, ComputeTeam::Mode::kWhole);
  EXPECT_EQ(team.size(), 8);
  EXPECT_EQ(budget.busy(), 0);
}

TEST(ComputeBudgetTest, AWholeTeamWaitsHoldingNothing) {
  ComputeBudget budget(2);
  Event holding, release;
  std::thread other([&] {
    ComputeScope s(&budget);
    holding.Notify();
    release.Wait();
  });
  holding.Wait();
  std::atomic<int> team_size{0};
  std::thread whole([&] {
    ComputeScope s(&budget);  // the second token
    ComputeTeam team(2, ComputeTeam::Mode::kWhole);
    team_size = team.size();
  });
  // The team waits, and gave its own token back meanwhile.
  ASSERT_TRUE(PollUntil(kDeadline, [&] { return budget.waiting() == 1; }));
  EXPECT_EQ(budget.busy(), 1);
  EXPECT_EQ(team_size.load(), 0);
  release.Notify();
  whole.join();
  other.join();
  EXPECT_EQ(team_size.load(), 2);
  EXPECT_EQ(budget.busy(), 0);
  EXPECT_EQ(budget.peak(), 2);
}

TEST(ComputeBudgetTest, ComputeWaitGivesTokensBackWhileWaiting) {
  ComputeBudget budget(1);
  ComputeScope scope(&budget);
  EXPECT_EQ(budget.busy(), 1);
  {
    ComputeWait wait;
    EXPECT_EQ(budget.busy(), 0);
    EXPECT_EQ(ComputeBudget::HeldByThisThread(), 0);
    // Another thread computes while this one waits for it.
    std::thread helper([&] {
      ComputeScope s(&budget);
      EXPECT_EQ(budget.busy(), 1);
    });
    helper.join();
  }
  EXPECT_EQ(budget.busy(), 1);
  EXPECT_EQ(ComputeBudget::HeldByThisThread(), 1);
}

TEST(ComputeBudgetTest, WorkersBeyondTheBudgetWaitForAToken) {
  ComputeBudget budget(2);
  constexpr int kWorkers = 5;
  std::atomic<int> inside{0}, max_inside{0}, done{0};
  std::vector<std::unique_ptr<Event>> release;
  for (int i = 0; i < kWorkers; ++i) release.push_back(std::make_unique<Event>());
  std::vector<int> order;
  std::mutex order_mu;
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i) {
    workers.emplace_back([&, i] {
      ComputeScope s(&budget);
      const int now = ++inside;
      for (int seen = max_inside; now > seen && !max_inside.compare_exchange_weak(seen, now);) {
      }
      {
        std::lock_guard<std::mutex> lock(order_mu);
        order.push_back(i);
      }
      release[i]->Wait();
      --inside;
      ++done;
    });
  }
  // Two get in, three wait; releasing one lets exactly one more in.
  ASSERT_TRUE(PollUntil(kDeadline, [&] { return budget.waiting() == kWorkers - 2; }));
  EXPECT_EQ(inside.load(), 2);
  for (int k = 0; k < kWorkers; ++k) {
    int next;
    {
      ASSERT_TRUE(PollUntil(kDeadline, [&] {
        std::lock_guard<std::mutex> lock(order_mu);
        return static_cast<int>(order.size()) > k;
      }));
      std::lock_guard<std::mutex> lock(order_mu);
      next = order[k];
    }
    release[next]->Notify();
  }
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(done.load(), kWorkers);
  EXPECT_EQ(max_inside.load(), 2);
  EXPECT_EQ(budget.peak(), 2);
  EXPECT_EQ(budget.busy(), 0);
}

}  // namespace
}  // namespace ge
