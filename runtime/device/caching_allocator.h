// CachingAllocator: an Allocator layered over another (a device, or the host
// allocator) that keeps freed blocks for reuse, so that a dynamic executor
// running the same graph again does not go back to the device for every
// kernel output.
//
// Requests are rounded up to a size class: multiples of 64 bytes up to
// 256 bytes, then four classes per power of two (at most 25% waste). A freed
// block goes onto its class's free list unless it is larger than
// `max_block_bytes` or the cache would exceed `max_cached_bytes`; an
// allocation takes a block of its class when there is one (a hit) and asks
// the underlying allocator otherwise (a miss). When the underlying allocator
// refuses, the cache is trimmed and the request retried once.
//
// Trimming returns every cached block to the underlying allocator: Trim()
// on demand; by itself when `idle_trim` has passed since the last Allocate
// or Free (checked on the next call, or by TrimIfIdle(), so there is no
// background thread); and by Close() and the destructor. After Close() the
// cache still serves requests but frees go straight back.
//
// Accounting: with `quota` set, every block the cache holds from the
// underlying allocator (handed out or cached) is charged to it and to its
// chain (memory_quota.h); a request the quota refuses trims the cache and
// retries once, then fails with the quota's RESOURCE_EXHAUSTED naming the
// limit (AllocateTensor, AllocateBuffer). String tensors, whose buffers hold
// constructed objects and come from the host, are charged for their bytes
// while they live.
//
// Lifetime: Allocate / Free through the Allocator interface need the cache
// to outlive its blocks. AllocateTensor instead gives buffers that own a
// reference to the cache (create it with std::make_shared), so tensors may
// outlive whoever made the cache; the underlying allocator must outlive
// every block either way. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/allocator.h"
#include "base/tensor.h"
#include "runtime/device/memory_quota.h"

namespace ge::device {

struct CachingAllocatorOptions {
  std::string name = "caching";
  // Freed blocks above either limit go back to the underlying allocator.
  size_t max_cached_bytes = size_t{256} << 20;
  size_t max_block_bytes = size_t{256} << 20;
  // Trim when nothing was allocated or freed for this long (0: never).
  std::chrono::milliseconds idle_trim{2000};
  // The time source of idle trimming (tests inject one); null: steady_clock.
  std::function<std::chrono::steady_clock::time_point()> clock;
  // Charged for every block taken from the underlying allocator (null: no
  // accounting). Must outlive the cache's blocks (tensors keep it alive).
  std::shared_ptr<MemoryQuota> quota;
  // One allocation above this many bytes is RESOURCE_EXHAUSTED naming
  // `max_allocation_key` (the daemon's max_tensor_bytes: no single dynamic
  // output, intermediate or workspace beyond it); 0: no such bound.
  int64_t max_allocation_bytes = 0;
  std::string max_allocation_key = "max_allocation_bytes";
};

struct CachingAllocatorStats {
  int64_t bytes_cached = 0;   // in free lists now
  int64_t blocks_cached = 0;
  int64_t bytes_in_use = 0;   // handed out and not freed (class sizes)
  int64_t hits = 0;           // allocations served from a free list
  int64_t misses = 0;         // allocations that went to the underlying allocator
  int64_t trims = 0;          // trims that released at least one block
  int64_t bytes_trimmed = 0;  // released by trims, in total
};

class CachingAllocator final : public Allocator, public std::enable_shared_from_this<CachingAllocator> {
 public:
  // `underlying` (null: the host allocator) must outlive every block.
  explicit CachingAllocator(Allocator* underlying, CachingAllocatorOptions options = {});
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // The size a request of `bytes` is served with.
  static size_t ClassSize(size_t bytes);

  void* Allocate(size_t bytes, size_t alignment) override;
  void Free(void* ptr, size_t bytes) override;
  std::string_view name() const override { return options_.name; }

  // A zero-filled tensor whose buffer comes from this cache and keeps it
  // alive (the cache must be owned by a shared_ptr). Strings come from the
  // host (their buffers hold constructed objects).
  absl::StatusOr<Tensor> AllocateTensor(DataType dtype, const Shape& shape);
  // `bytes` of uninitialized memory from this cache, as a buffer that keeps
  // the cache alive; the quota's error (or ResourceExhausted) when refused.
  absl::StatusOr<std::shared_ptr<Buffer>> AllocateBuffer(size_t bytes);

  // Releases every cached block; returns the bytes released.
  size_t Trim();
  // Trims when idle for `idle_trim`; returns the bytes released.
  size_t TrimIfIdle();
  // Trims and stops caching (later frees go straight back).
  void Close();
  CachingAllocatorStats stats() const;
  const CachingAllocatorOptions& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point Now() const { return options_.clock ? options_.clock() : Clock::now(); }
  // Takes the cached blocks out when idle (caller holds mu_); `now` becomes
  // the last activity.
  void TakeIfIdleLocked(Clock::time_point now, std::vector<std::pair<void*, size_t>>& out);
  void TakeAllLocked(std::vector<std::pair<void*, size_t>>& out);
  void Release(const std::vector<std::pair<void*, size_t>>& blocks);
  // A block of class size `size` from the underlying allocator, charged to
  // the quota (trimming and retrying once when refused).
  absl::StatusOr<void*> AllocateUnderlying(size_t size, size_t alignment);
  void FreeUnderlying(void* ptr, size_t size);
  // Allocate with the reason of a refusal.
  absl::StatusOr<void*> AllocateOrStatus(size_t bytes, size_t alignment);

  Allocator* const underlying_;
  const CachingAllocatorOptions options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<size_t, std::vector<void*>> free_;  // class size -> blocks
  CachingAllocatorStats stats_;
  Clock::time_point last_activity_;
  bool closed_ = false;
};

}  // namespace ge::device
