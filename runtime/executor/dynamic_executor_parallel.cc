// DynamicExecutor's parallel runs: ready steps drained by the caller and up
// to inter_op_parallelism - 1 pool threads, pipeline stages entered in
// order, independent engines' steps queued on their streams.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/device/stream.h"
#include "runtime/executor/dynamic_executor.h"
#include "runtime/executor/dynamic_executor_step.h"
#include "runtime/executor/static_executor.h"

namespace ge::runtime {

// The state of one parallel run, shared by the threads that work on it (a
// worker scheduled late finds the run over and touches nothing else).
struct DynamicExecutor::ParallelRun {
  DynamicExecutor* exec = nullptr;
  std::vector<Value>* slots = nullptr;
  std::unique_ptr<std::atomic<int>[]> uses;  // remaining consumers per slot
  int max_runners = 1;
  std::mutex mu;
  std::condition_variable cv;
  // Guarded by mu:
  std::vector<int> pending;  // unfinished predecessors per step
  std::vector<int> ready;
  size_t remaining = 0;  // steps not yet finished
  int running = 0;       // steps being computed
  int runners = 1;       // threads in Drain, the caller included
  absl::Status error;
  std::vector<size_t> stage_remaining;  // unfinished nodes per pipeline stage
  std::unique_ptr<std::atomic<bool>[]> stage_started;
};

absl::StatusOr<std::vector<Value>> DynamicExecutor::ExecuteParallel(std::vector<Value>& slots) {
  auto run = std::make_shared<ParallelRun>();
  run->exec = this;
  run->slots = &slots;
  run->uses.reset(new std::atomic<int>[num_slots_]);
  for (size_t i = 0; i < num_slots_; ++i) run->uses[i].store(slot_uses_[i], std::memory_order_relaxed);
  run->max_runners =
      std::min(options_.inter_op_parallelism, options_.inter_op_pool ? options_.inter_op_pool->num_threads() + 1 : 1);
  run->pending = num_predecessors_;
  run->remaining = num_compute_steps_;
  run->stage_started.reset(new std::atomic<bool>[stages_.num_stages()]);
  for (int k = 0; k < stages_.num_stages(); ++k) {
    run->stage_remaining.push_back(stages_.members(k).size());
    run->stage_started[k].store(false, std::memory_order_relaxed);
  }
  {
    std::lock_guard<std::mutex> lock(run->mu);
    for (int s : initial_ready_) MakeReadyLocked(run, s);
    std::reverse(run->ready.begin(), run->ready.end());  // taken from the back
  }
  Drain(run, /*caller=*/true);
  std::lock_guard<std::mutex> lock(run->mu);
  if (!run->error.ok()) return run->error;
  return CollectOutputs(slots);
}

void DynamicExecutor::MakeReadyLocked(const std::shared_ptr<ParallelRun>& run, int s) {
  const int stream = run->exec->steps_[s].stream;
  if (stream < 0) {
    run->ready.push_back(s);
    return;
  }
  ++run->running;
  const DynamicExecutor& exec = *run->exec;
  if (const int stage = exec.steps_[s].stage; stage > 0) {  // the previous stage's sync point
    exec.streams_[stream]->WaitEvent(&exec.stages_.done(stage - 1));
    if (StageObserver* observer = exec.options_.stage_observer) {
      observer->SyncWaited(exec.stages_.level(stage - 1), exec.StreamName(stream));
    }
  }
  run->exec->streams_[stream]->Enqueue([run, s] {
    {
      std::lock_guard<std::mutex> lock(run->mu);
      if (!run->error.ok()) {  // the run has failed: skip
        --run->running;
        run->cv.notify_all();
        return absl::OkStatus();
      }
    }
    absl::Status status = RunOne(*run, s);
    std::lock_guard<std::mutex> lock(run->mu);
    FinishLocked(run, s, std::move(status));
    return absl::OkStatus();  // errors are the run's, not the stream's
  });
}

std::string_view DynamicExecutor::StreamName(int stream) const {
  return stream < 0 ? std::string_view("host") : std::string_view(streams_[stream]->name());
}

void DynamicExecutor::EnterStage(ParallelRun& r, int s) {
  const DynamicExecutor& exec = *r.exec;
  const int stage = exec.steps_[s].stage;
  if (stage < 0) return;
  StageObserver* observer = exec.options_.stage_observer;
  if (stage > 0 && exec.steps_[s].stream < 0) {  // a stream waits in its queue instead
    // Stage k-1's event completes once the stream that finished it has run
    // past its record (at once when the host finished it).
    (void)exec.stages_.done(stage - 1).Synchronize();
    if (observer) observer->SyncWaited(exec.stages_.level(stage - 1), "host");
  }
  if (observer && !r.stage_started[stage].exchange(true)) observer->StageStarted(exec.stages_.level(stage));
}

void DynamicExecutor::FinishStageLocked(const std::shared_ptr<ParallelRun>& run, int s) {
  ParallelRun& r = *run;
  const DynamicExecutor& exec = *r.exec;
  const int stage = exec.steps_[s].stage;
  if (stage < 0 || --r.stage_remaining[stage] > 0) return;
  // Stage complete: record its sync point where its last node ran (inside
  // that stream's task: the event completes right after it), then release
  // the next stage.
  const int stream = exec.steps_[s].stream;
  device::Event& done = exec.stages_.done(stage);
  if (stream >= 0) {
    exec.streams_[stream]->RecordEvent(&done);
  } else {
    done.RecordOnHost();
  }
  if (StageObserver* observer = exec.options_.stage_observer) {
    observer->StageFinished(exec.stages_.level(stage));
    observer->SyncRecorded(exec.stages_.level(stage), exec.StreamName(stream));
  }
  if (stage + 1 >= exec.stages_.num_stages()) return;
  for (int next : exec.stages_.members(stage + 1)) {
    if (--r.pending[next] == 0) MakeReadyLocked(run, next);
  }
}

absl::Status DynamicExecutor::RunOne(ParallelRun& r, int s) {
  DynamicExecutor& exec = *r.exec;
  Step& step = exec.steps_[s];
  if (exec.control_ != nullptr) GE_RETURN_IF_ERROR(exec.control_->Check(step.node->name()));
  EnterStage(r, s);
  // The node's token, taken by whichever thread runs it (the caller, an
  // inter-op worker, a stream); threads wait for one another only without
  // tokens (Drain), so taking one here always ends.
  absl::Status status;
  {
    const ComputeScope compute(exec.options_.compute_budget);
    status = exec.RunStep(step, *r.slots, r.uses.get());
  }
  if (!status.ok()) return WithNodePrefix(status, step.node->name(), step.node->type());
  for (int slot : step.inputs) {
    if (slot >= 0 && r.uses[slot].fetch_sub(1, std::memory_order_acq_rel) == 1) (*r.slots)[slot] = Value();
  }
  return absl::OkStatus();
}

void DynamicExecutor::FinishLocked(const std::shared_ptr<ParallelRun>& run, int s, absl::Status status) {
  ParallelRun& r = *run;
  --r.running;
  if (!status.ok()) {
    if (r.error.ok()) r.error = std::move(status);
  } else {
    --r.remaining;
    for (int next : r.exec->successors_[s]) {
      if (--r.pending[next] == 0) MakeReadyLocked(run, next);
    }
    FinishStageLocked(run, s);
  }
  r.cv.notify_all();
}

void DynamicExecutor::Drain(const std::shared_ptr<ParallelRun>& run, bool caller) {
  ParallelRun& r = *run;
  // A caller that holds compute tokens (a subgraph's run inside a
  // control-flow kernel) gives them back while it drains: it waits here for
  // other threads, and each node it runs takes its own (RunOne). Declared
  // before the lock, so that the tokens are taken again after it is released.
  const ComputeWait drain_without_tokens;
  std::unique_lock<std::mutex> lock(r.mu);
  for (;;) {
    if (!r.error.ok() || r.ready.empty()) {
      if (!caller) {
        --r.runners;
        return;
      }
      if (r.error.ok() ? r.remaining == 0 : r.running == 0) return;
      r.cv.wait(lock);
      continue;
    }
    const int s = r.ready.back();
    r.ready.pop_back();
    ++r.running;
    // Helpers for what else is ready (the pool has room for max_runners - 1).
    for (size_t i = 0; i < r.ready.size() && r.runners < r.max_runners; ++i) {
      ++r.runners;
      r.exec->options_.inter_op_pool->Schedule([run] { Drain(run, /*caller=*/false); });
    }
    lock.unlock();
    absl::Status status = RunOne(r, s);
    lock.lock();
    FinishLocked(run, s, std::move(status));
  }
}

}  // namespace ge::runtime
