// A device's budget of compute threads (issue 20 item 4, the threading
// contract's rule 3, runtime/engines/sdk/parallel.h): with several workers
// running on one device at once, at most `threads` threads compute at once.
//
// The budget holds one token per compute thread. A thread that computes
// holds tokens while it does: an executor opens a ComputeScope around the
// kernels it runs (one token for the thread itself, taken blocking, held
// again for free by nested scopes on the same thread: control-flow
// subgraphs), and a kernel that opens a parallel team asks for the team's
// other members with a ComputeTeam. A team either takes what is free at once
// (kFlexible: OpenMP loops whose team size is the kernel's choice) or waits
// for its whole size (kWhole: oneDNN primitives, whose team size is fixed
// when they are created), giving up the thread's own tokens while it waits.
//
// Deadlock freedom rests on one rule: a thread never waits for another
// thread while it holds tokens. Threads that wait for others (an executor
// waiting for its inter-op helpers or a stream) do so inside a ComputeWait,
// which hands the thread's tokens back and takes them again afterwards; so
// every token holder is computing and eventually gives its tokens back.
//
// A thread outside any scope (kernel test harnesses, the compiler's
// constant folding) is not limited: its teams get the size they ask for.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace ge {

class ComputeBudget {
 public:
  // `threads` tokens (at least 1).
  explicit ComputeBudget(int threads);
  ComputeBudget(const ComputeBudget&) = delete;
  ComputeBudget& operator=(const ComputeBudget&) = delete;

  int capacity() const { return capacity_; }
  // Tokens held now, and the most held at once since creation or the last
  // ResetPeak (tests and metrics).
  int busy() const { return capacity_ - free_.load(std::memory_order_relaxed); }
  int peak() const { return peak_.load(std::memory_order_relaxed); }
  void ResetPeak() { peak_.store(busy(), std::memory_order_relaxed); }
  // Threads waiting for tokens now.
  int waiting() const { return waiters_.load(std::memory_order_relaxed); }

  // The budget the calling thread computes under (its innermost
  // ComputeScope), or null; and the tokens it holds of it.
  static ComputeBudget* Current();
  static int HeldByThisThread();

 private:
  friend class ComputeScope;
  friend class ComputeTeam;
  friend class ComputeWait;

  // Takes up to `n` tokens without waiting; returns how many.
  int TakeUpTo(int n);
  // Takes exactly `n` (at most capacity) tokens, waiting until they are free.
  void Take(int n);
  void Give(int n);
  void NotePeak();

  const int capacity_;
  std::atomic<int> free_;
  std::atomic<int> peak_{0};
  std::atomic<int> waiters_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

// Binds the calling thread to `budget` and holds one token of it for the
// scope's life (waiting for it when none is free). Nested scopes of the same
// budget on the same thread take nothing. A null budget makes it a no-op.
class ComputeScope {
 public:
  explicit ComputeScope(ComputeBudget* budget);
  ~ComputeScope();
  ComputeScope(const ComputeScope&) = delete;
  ComputeScope& operator=(const ComputeScope&) = delete;

 private:
  ComputeBudget* budget_;
  ComputeBudget* saved_budget_ = nullptr;
  int saved_held_ = 0;
  bool took_ = false;
};

// The members of one parallel team: size() threads, the calling thread
// included, whose tokens are held until the team is destroyed.
class ComputeTeam {
 public:
  enum class Mode {
    kFlexible,  // at least the caller, plus what is free now (never waits)
    kWhole,     // exactly `want` (at most the budget), waiting for them
  };
  ComputeTeam(int want, Mode mode);
  ~ComputeTeam();
  ComputeTeam(const ComputeTeam&) = delete;
  ComputeTeam& operator=(const ComputeTeam&) = delete;

  int size() const { return size_; }

 private:
  ComputeBudget* budget_ = nullptr;
  int extra_ = 0;  // tokens taken beyond those the thread held before
  int size_ = 1;
};

// Hands the calling thread's tokens back while it waits for other threads;
// takes as many again (waiting) when destroyed.
class ComputeWait {
 public:
  ComputeWait();
  ~ComputeWait();
  ComputeWait(const ComputeWait&) = delete;
  ComputeWait& operator=(const ComputeWait&) = delete;

 private:
  ComputeBudget* budget_ = nullptr;
  int held_ = 0;
};

}  // namespace ge
