// The batch scheduler (batcher.h).
#include "server/serving/batcher.h"

#include <algorithm>
#include <cstring>

#include "base/logging.h"
#include "base/status.h"
#include "base/strings.h"

namespace ge::server::serving {
namespace {

int64_t Ns(Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }
// How often a worker waiting for a batch checks its queue for cancelled
// requests.
constexpr auto kCancelCheck = std::chrono::milliseconds(20);

int64_t NowNs() { return Ns(Clock::now().time_since_epoch()); }

// Same dtypes and the same dims but dim 0: may share a batch.
bool SameShapes(const BatchRequest& a, const BatchRequest& b) {
  if (a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const Tensor& x = a.inputs[i];
    const Tensor& y = b.inputs[i];
    if (x.dtype() != y.dtype() || x.shape().rank() != y.shape().rank() || x.shape().rank() < 1) return false;
    for (int64_t d = 1; d < x.shape().rank(); ++d) {
      if (x.shape().dim(d) != y.shape().dim(d)) return false;
    }
  }
  return true;
}

}  // namespace

Batcher::Batcher(BatcherOptions options, BatchRunner run, BatchObserver observer)
    : options_(std::move(options)), run_(std::move(run)), observer_(std::move(observer)) {
  for (int64_t p : options_.preferred) largest_preferred_ = std::max(largest_preferred_, p);
  if (largest_preferred_ == 0) largest_preferred_ = options_.max_batch_size;
  const int instances = std::max(1, options_.instances);
  for (int i = 0; i < instances; ++i) workers_.emplace_back([this, i] { Work(i); });
}

Batcher::~Batcher() { Stop(); }

absl::Status Batcher::Submit(std::unique_ptr<BatchRequest> request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::UnavailableError(StrCat(options_.name, " is unloading and takes no new requests"));
    if (static_cast<int64_t>(queue_.size()) >= options_.max_queue_size) {
      return ResourceExhausted(options_.name, ": the batch queue holds ", queue_.size(),
                               " requests, its bound (max_queue_size); retry later");
    }
    request->enqueued = Clock::now();
    queue_.push_back(std::move(request));
  }
  cv_.notify_all();
  return absl::OkStatus();
}

void Batcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

int64_t Batcher::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(queue_.size()) + running_;
}

void Batcher::TakeExpired(Batch& expired) {
  const Clock::time_point now = Clock::now();
  for (auto it = queue_.begin(); it != queue_.end();) {
    BatchRequest& r = **it;
    if (r.deadline <= now || (r.cancelled && r.cancelled())) {
      expired.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

Batcher::Batch Batcher::PickBatch(Clock::time_point now, Clock::time_point* wake) {
  Batch batch;
  *wake = Clock::time_point::max();
  for (const auto& r : queue_) *wake = std::min(*wake, r->deadline);
  if (queue_.empty()) return batch;
  if (!options_.batching) {
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
    return batch;
  }
  // The oldest request fixes the shapes; later ones join while they fit.
  const BatchRequest& head = *queue_.front();
  std::vector<size_t> members;
  int64_t rows = 0;
  for (size_t i = 0; i < queue_.size(); ++i) {
    const BatchRequest& r = *queue_[i];
    if (i != 0 && !SameShapes(head, r)) continue;
    if (rows + r.rows > options_.max_batch_size) continue;
    members.push_back(i);
    rows += r.rows;
    if (rows >= largest_preferred_) break;
  }
  const bool full = rows >= largest_preferred_ || rows >= options_.max_batch_size;
  const Clock::time_point due = head.enqueued + options_.max_queue_delay;
  if (!full && now < due && !stopping_) {
    *wake = std::min(*wake, due);
    return batch;
  }
  for (size_t i : members) batch.push_back(std::move(queue_[i]));
  for (auto it = members.rbegin(); it != members.rend(); ++it) queue_.erase(queue_.begin() + *it);
  return batch;
}

void Batcher::Work(int instance) {
  for (;;) {
    Batch expired;
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        TakeExpired(expired);
        if (!expired.empty()) break;
        if (queue_.empty()) {
          if (stopping_) return;
          cv_.wait(lock);
          continue;
        }
        Clock::time_point wake;
        batch = PickBatch(Clock::now(), &wake);
        if (!batch.empty()) break;
        // A caller may cancel at any time with no one to wake us: with
        // cancellable requests queued, look again every kCancelCheck.
        for (const auto& r : queue_) {
          if (r->cancelled) {
            wake = std::min(wake, Clock::now() + kCancelCheck);
            break;
          }
        }
        if (wake == Clock::time_point::max()) {
          cv_.wait(lock);
        } else {
          cv_.wait_until(lock, wake);
        }
      }
      running_ += static_cast<int64_t>(batch.size());
    }
    for (auto& r : expired) {
      const bool cancelled = r->cancelled && r->cancelled() && r->deadline > Clock::now();
      r->done(cancelled ? absl::CancelledError(StrCat(options_.name, ": the caller cancelled the request in the queue"))
                        : absl::DeadlineExceededError(
                              StrCat(options_.name, ": the request's deadline passed in the batch queue")));
    }
    if (batch.empty()) continue;
    const int64_t count = static_cast<int64_t>(batch.size());
    RunBatch(instance, std::move(batch));
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ -= count;
    }
    // Another worker may wait for a batch this one's departure completes.
    cv_.notify_all();
  }
}

int64_t Batcher::GearFor(int64_t rows) const {
  for (int64_t g : options_.gears) {
    if (g >= rows) return g;
  }
  return rows;
}

void Batcher::RunBatch(int instance, Batch batch) {
  const Clock::time_point now = Clock::now();
  if (observer_.dequeued) {
    for (const auto& r : batch) observer_.dequeued(Ns(now - r->enqueued));
  }
  if (RunTogether(instance, batch)) return;
  // A batch of several failed: each request alone, so that only the bad one
  // fails.
  Logger("server").debug("{}: a batch of {} requests failed; running them one by one", options_.name, batch.size());
  for (auto& r : batch) {
    Batch one;
    one.push_back(std::move(r));
    RunTogether(instance, one);
  }
}

bool Batcher::RunTogether(int instance, Batch& batch) {
  const int64_t start = NowNs();
  absl::StatusOr<std::vector<Tensor>> outputs;
  int64_t rows = 0;
  for (const auto& r : batch) rows += r->rows;
  const bool by_rows = options_.max_batch_size > 0;  // pad to a gear and split back
  if (!by_rows) {
    outputs = run_(instance, batch.front()->inputs);
  } else {
    const int64_t gear = GearFor(rows);
    std::vector<Tensor> inputs;
    absl::Status status;
    for (size_t i = 0; i < batch.front()->inputs.size() && status.ok(); ++i) {
      std::vector<const Tensor*> parts;
      for (const auto& r : batch) parts.push_back(&r->inputs[i]);
      absl::StatusOr<Tensor> joined = Concat(parts, gear);
      if (joined.ok()) {
        inputs.push_back(*std::move(joined));
      } else {
        status = joined.status();
      }
    }
    outputs = status.ok() ? run_(instance, std::move(inputs)) : absl::StatusOr<std::vector<Tensor>>(status);
    if (outputs.ok()) {
      for (const Tensor& t : *outputs) {
        if (t.shape().rank() < 1 || t.shape().dim(0) != gear) {
          outputs = Internal(options_.name, ": an output has shape ", t.shape().ToString(), ", not ", gear,
                             " rows as its batch");
          break;
        }
      }
    }
  }
  if (observer_.batch) observer_.batch(rows, static_cast<int64_t>(batch.size()), NowNs() - start, outputs.ok());
  if (!outputs.ok() && batch.size() > 1) return false;
  if (!by_rows || !outputs.ok()) {
    batch.front()->done(std::move(outputs));
    return true;
  }
  int64_t begin = 0;
  for (auto& r : batch) {
    std::vector<Tensor> mine;
    absl::Status status;
    for (const Tensor& t : *outputs) {
      absl::StatusOr<Tensor> part = SliceRows(t, begin, begin + r->rows);
      if (!part.ok()) {
        status = part.status();
        break;
      }
      mine.push_back(*std::move(part));
    }
    begin += r->rows;
    if (status.ok()) {
      r->done(std::move(mine));
    } else {
      r->done(status);
    }
  }
  return true;
}

absl::StatusOr<Tensor> Batcher::Concat(const std::vector<const Tensor*>& parts, int64_t rows) {
  const Tensor& first = *parts.front();
  if (parts.size() == 1 && first.shape().dim(0) == rows) return first;
  Shape shape = first.shape();
  shape.set_dim(0, rows);
  GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(first.dtype(), shape));
  const int64_t row_elements = rows == 0 ? 0 : shape.NumElementsUnchecked() / rows;
  int64_t at = 0;  // elements written
  for (const Tensor* p : parts) {
    const int64_t n = p->NumElements();
    if (first.dtype() == DataType::kString) {
      const std::string* src = p->data<std::string>();
      std::string* dst = out.data<std::string>() + at;
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    } else {
      const size_t size = DataTypeSize(first.dtype());
      if (n > 0) std::memcpy(static_cast<char*>(out.raw_data()) + at * size, p->raw_data(), n * size);
    }
    at += n;
  }
  (void)row_elements;  // the padded rows stay zero (empty strings)
  return out;
}

absl::StatusOr<Tensor> Batcher::SliceRows(const Tensor& batch, int64_t begin, int64_t end) {
  Shape shape = batch.shape();
  const int64_t rows = shape.dim(0);
  if (begin < 0 || end > rows || begin > end) {
    return Internal("rows [", begin, ", ", end, ") are not in an output of ", rows, " rows");
  }
  const int64_t row_elements = rows == 0 ? 0 : batch.NumElements() / rows;
  shape.set_dim(0, end - begin);
  GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(batch.dtype(), shape));
  const int64_t n = (end - begin) * row_elements;
  if (batch.dtype() == DataType::kString) {
    const std::string* src = batch.data<std::string>() + begin * row_elements;
    std::string* dst = out.data<std::string>();
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  } else {
    const size_t size = DataTypeSize(batch.dtype());
    if (n > 0)
      std::memcpy(out.raw_data(), static_cast<const char*>(batch.raw_data()) + begin * row_elements * size, n * size);
  }
  return out;
}

}  // namespace ge::server::serving
