// ComputeBudget: tokens in an atomic counter (taking and giving back cost
// one atomic operation when nobody waits), a condition variable for the
// threads that wait; the calling thread's budget and tokens in thread-local
// state (one copy in the process: ge_base is a shared library).
#include "base/compute_budget.h"

#include <algorithm>

namespace ge {
namespace {

struct ThreadState {
  ComputeBudget* budget = nullptr;
  int held = 0;
};

thread_local ThreadState t_state;

}  // namespace

ComputeBudget::ComputeBudget(int threads) : capacity_(std::max(1, threads)), free_(capacity_) {}

ComputeBudget* ComputeBudget::Current() { return t_state.budget; }

int ComputeBudget::HeldByThisThread() { return t_state.held; }

void ComputeBudget::NotePeak() {
  const int now = busy();
  int seen = peak_.load(std::memory_order_relaxed);
  while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

int ComputeBudget::TakeUpTo(int n) {
  if (n <= 0) return 0;
  int seen = free_.load(std::memory_order_relaxed);
  for (;;) {
    const int take = std::min(seen, n);
    if (take <= 0) return 0;
    if (free_.compare_exchange_weak(seen, seen - take, std::memory_order_acquire, std::memory_order_relaxed)) {
      NotePeak();
      return take;
    }
  }
}

void ComputeBudget::Take(int n) {
  n = std::min(n, capacity_);
  if (n <= 0) return;
  auto try_take = [&] {
    int seen = free_.load(std::memory_order_seq_cst);
    while (seen >= n) {
      if (free_.compare_exchange_weak(seen, seen - n, std::memory_order_seq_cst)) return true;
    }
    return false;
  };
  if (try_take()) {
    NotePeak();
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  // Counted before the check: a Give that adds tokens after the check sees
  // the waiter and notifies under the lock, which this thread holds until
  // it sleeps (seq_cst on both sides orders the two).
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  cv_.wait(lock, try_take);
  waiters_.fetch_sub(1, std::memory_order_relaxed);
  NotePeak();
}

void ComputeBudget::Give(int n) {
  if (n <= 0) return;
  free_.fetch_add(n, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }
}

ComputeScope::ComputeScope(ComputeBudget* budget) : budget_(budget) {
  if (budget_ == nullptr) return;
  saved_budget_ = t_state.budget;
  saved_held_ = t_state.held;
  if (t_state.budget == budget_ && t_state.held > 0) return;  // nested: the thread's token serves
  budget_->Take(1);
  took_ = true;
  t_state.budget = budget_;
  t_state.held = 1;
}

ComputeScope::~ComputeScope() {
  if (budget_ == nullptr) return;
  if (took_) budget_->Give(t_state.held);
  t_state.budget = saved_budget_;
  t_state.held = saved_held_;
}

ComputeTeam::ComputeTeam(int want, Mode mode) {
  ComputeBudget* budget = t_state.budget;
  if (want <= 1) return;
  if (budget == nullptr) {  // not under any device's budget: unlimited
    size_ = want;
    return;
  }
  budget_ = budget;
  want = std::min(want, budget->capacity());
  const int held = t_state.held;
  if (held >= want) {
    size_ = held;
    return;
  }
  if (mode == Mode::kFlexible) {
    if (held == 0) {
      budget->Take(1);
      extra_ = 1;
    }
    extra_ += budget->TakeUpTo(want - held - extra_);
  } else {
    const int got = budget->TakeUpTo(want - held);
    if (got == want - held) {
      extra_ = got;
    } else {
      // Wait for the whole team holding nothing (the rule that keeps the
      // budget free of deadlock): give back the partial grant and the
      // thread's own tokens, then take the team at once.
      budget->Give(got + held);
      budget->Take(want);
      extra_ = want - held;
    }
  }
  t_state.held = held + extra_;
  size_ = std::max(1, t_state.held);
}

ComputeTeam::~ComputeTeam() {
  if (budget_ == nullptr || extra_ == 0) return;
  t_state.held -= extra_;
  budget_->Give(extra_);
}

ComputeWait::ComputeWait() : budget_(t_state.budget), held_(t_state.held) {
  if (budget_ == nullptr || held_ == 0) return;
  t_state.held = 0;
  budget_->Give(held_);
}

ComputeWait::~ComputeWait() {
  if (budget_ == nullptr || held_ == 0) return;
  budget_->Take(held_);
  t_state.held = held_;
}

}  // namespace ge
