// CachingAllocator: size-class free lists over another allocator.
#include "runtime/device/caching_allocator.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "base/status.h"

namespace ge::device {
namespace {

size_t RoundUp64(size_t bytes) {
  if (bytes == 0) bytes = 1;
  return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

bool Aligned(const void* p, size_t alignment) {
  return alignment == 0 || reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

}  // namespace

size_t CachingAllocator::ClassSize(size_t bytes) {
  const size_t rounded = RoundUp64(bytes);
  if (rounded <= 256) return rounded;
  // Four classes per power of two: (4..7) * 2^(k-2), the smallest >= bytes.
  size_t p = 256;
  while (p < (size_t{1} << 62) && p * 2 < rounded) p *= 2;  // p < rounded <= 2p
  const size_t step = p / 4;
  return (rounded + step - 1) / step * step;
}

CachingAllocator::CachingAllocator(Allocator* underlying, CachingAllocatorOptions options)
    : underlying_(underlying ? underlying : HostAllocator()), options_(std::move(options)), last_activity_(Now()) {}

CachingAllocator::~CachingAllocator() { Trim(); }

absl::StatusOr<void*> CachingAllocator::AllocateUnderlying(size_t size, size_t alignment) {
  const size_t align = alignment > kTensorAlignment ? alignment : kTensorAlignment;
  const std::shared_ptr<MemoryQuota>& quota = options_.quota;
  if (quota != nullptr) {
    absl::Status reserved = quota->Reserve(static_cast<int64_t>(size));
    // Cached blocks are charged too: giving them back may make room.
    if (!reserved.ok() && Trim() > 0) reserved = quota->Reserve(static_cast<int64_t>(size));
    if (!reserved.ok()) return reserved;
  }
  void* block = underlying_->Allocate(size, align);
  if (block == nullptr && Trim() > 0) block = underlying_->Allocate(size, align);
  if (block == nullptr) {
    if (quota != nullptr) quota->Release(static_cast<int64_t>(size));
    return ResourceExhausted("out of memory on ", name(), ": could not allocate ", size, " bytes from ",
                             underlying_->name());
  }
  return block;
}

void CachingAllocator::FreeUnderlying(void* ptr, size_t size) {
  underlying_->Free(ptr, size);
  if (options_.quota != nullptr) options_.quota->Release(static_cast<int64_t>(size));
}

absl::StatusOr<void*> CachingAllocator::AllocateOrStatus(size_t bytes, size_t alignment) {
  if (options_.max_allocation_bytes > 0 && bytes > static_cast<uint64_t>(options_.max_allocation_bytes)) {
    return ResourceExhausted("cannot allocate ", bytes, " bytes on ", name(), ": more than ",
                             options_.max_allocation_key, " (", options_.max_allocation_bytes, ")");
  }
  const size_t size = RoundUp64(bytes) > options_.max_block_bytes ? RoundUp64(bytes) : ClassSize(bytes);
  std::vector<std::pair<void*, size_t>> idle;
  void* block = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TakeIfIdleLocked(Now(), idle);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty() && Aligned(it->second.back(), alignment)) {
      block = it->second.back();
      it->second.pop_back();
      stats_.bytes_cached -= static_cast<int64_t>(size);
      --stats_.blocks_cached;
      ++stats_.hits;
      stats_.bytes_in_use += static_cast<int64_t>(size);
    } else {
      ++stats_.misses;
    }
  }
  Release(idle);
  if (block != nullptr) return block;
  GE_ASSIGN_OR_RETURN(block, AllocateUnderlying(size, alignment));
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_in_use += static_cast<int64_t>(size);
  return block;
}

void* CachingAllocator::Allocate(size_t bytes, size_t alignment) {
  absl::StatusOr<void*> block = AllocateOrStatus(bytes, alignment);
  return block.ok() ? *block : nullptr;
}

void CachingAllocator::Free(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  const size_t size = RoundUp64(bytes) > options_.max_block_bytes ? RoundUp64(bytes) : ClassSize(bytes);
  std::vector<std::pair<void*, size_t>> idle;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TakeIfIdleLocked(Now(), idle);
    stats_.bytes_in_use -= static_cast<int64_t>(size);
    if (!closed_ && size <= options_.max_block_bytes &&
        static_cast<size_t>(stats_.bytes_cached) + size <= options_.max_cached_bytes) {
      free_[size].push_back(ptr);
      stats_.bytes_cached += static_cast<int64_t>(size);
      ++stats_.blocks_cached;
      cached = true;
    }
  }
  Release(idle);
  if (!cached) FreeUnderlying(ptr, size);
}

absl::StatusOr<std::shared_ptr<Buffer>> CachingAllocator::AllocateBuffer(size_t bytes) {
  if (bytes > (size_t{1} << 48) && options_.max_allocation_bytes <= 0) {
    return ResourceExhausted("cannot allocate ", bytes, " bytes on ", name(), ": larger than any supported tensor");
  }
  GE_ASSIGN_OR_RETURN(void* data, AllocateOrStatus(bytes, kTensorAlignment));
  return Buffer::Wrap(data, bytes, [self = shared_from_this(), data, bytes] { self->Free(data, bytes); });
}

absl::StatusOr<Tensor> CachingAllocator::AllocateTensor(DataType dtype, const Shape& shape) {
  GE_ASSIGN_OR_RETURN(int64_t count, shape.NumElements());
  GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(dtype, count));
  if (dtype == DataType::kString) {
    const std::shared_ptr<MemoryQuota>& quota = options_.quota;
    if (quota == nullptr) return Tensor::Allocate(dtype, shape);
    GE_RETURN_IF_ERROR(quota->Reserve(static_cast<int64_t>(bytes)));
    absl::StatusOr<Tensor> strings = Tensor::Allocate(dtype, shape);
    if (!strings.ok()) {
      quota->Release(static_cast<int64_t>(bytes));
      return strings.status();
    }
    // A view of the strings that returns the charge when the last user goes.
    std::shared_ptr<Buffer> inner = strings->buffer();
    std::shared_ptr<Buffer> charged = Buffer::Wrap(
        inner->data(), inner->size(), [inner, quota, bytes] { quota->Release(static_cast<int64_t>(bytes)); });
    return Tensor(dtype, shape, std::move(charged));
  }
  GE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, AllocateBuffer(bytes));
  std::memset(buffer->data(), 0, bytes);
  return Tensor(dtype, shape, std::move(buffer));
}

void CachingAllocator::TakeIfIdleLocked(Clock::time_point now, std::vector<std::pair<void*, size_t>>& out) {
  if (options_.idle_trim.count() > 0 && now - last_activity_ >= options_.idle_trim) TakeAllLocked(out);
  last_activity_ = now;
}

void CachingAllocator::TakeAllLocked(std::vector<std::pair<void*, size_t>>& out) {
  for (auto& [size, blocks] : free_) {
    for (void* p : blocks) out.emplace_back(p, size);
  }
  free_.clear();
  if (!out.empty()) {
    ++stats_.trims;
    stats_.bytes_trimmed += stats_.bytes_cached;
  }
  stats_.bytes_cached = 0;
  stats_.blocks_cached = 0;
}

void CachingAllocator::Release(const std::vector<std::pair<void*, size_t>>& blocks) {
  for (const auto& [p, size] : blocks) FreeUnderlying(p, size);
}

size_t CachingAllocator::Trim() {
  std::vector<std::pair<void*, size_t>> blocks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TakeAllLocked(blocks);
  }
  Release(blocks);
  size_t bytes = 0;
  for (const auto& block : blocks) bytes += block.second;
  return bytes;
}

size_t CachingAllocator::TrimIfIdle() {
  std::vector<std::pair<void*, size_t>> blocks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.idle_trim.count() > 0 && Now() - last_activity_ >= options_.idle_trim) TakeAllLocked(blocks);
  }
  Release(blocks);
  size_t bytes = 0;
  for (const auto& block : blocks) bytes += block.second;
  return bytes;
}

void CachingAllocator::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  Trim();
}

CachingAllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace ge::device
