// QuotaDevice: per-owner accounting over a shared device (see the header).
#include "runtime/device/quota_device.h"

#include <algorithm>

#include "base/logging.h"
#include "base/status.h"

namespace ge::device {
namespace {

// What the quota is charged for `bytes`: the device's own rounding, so the
// quota and the device agree on what is held.
int64_t Charged(size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  return static_cast<int64_t>(rounded);
}

}  // namespace

QuotaDevice::QuotaDevice(Device& device, std::shared_ptr<MemoryQuota> quota)
    : device_(device), quota_(std::move(quota)) {
  stats_.capacity_bytes = quota_->limit_bytes();
}

QuotaDevice::~QuotaDevice() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!live_.empty()) {
    GE_LOG_WARN("device", "{} ({}): {} allocation(s) ({} bytes) still live when its view closed", device_.name(),
                quota_->owner(), live_.size(), stats_.in_use_bytes);
  }
  for (auto& [ptr, charged] : live_) {
    (void)device_.FreeMemory(ptr);
    quota_->Release(charged);
  }
}

absl::StatusOr<void*> QuotaDevice::Malloc(size_t bytes) {
  const int64_t charged = Charged(bytes);
  if (absl::Status reserved = quota_->Reserve(charged, static_cast<int64_t>(bytes)); !reserved.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.failed_allocations;
    return absl::Status(reserved.code(), StrCat("device ", device_.name(), ": ", StdView(reserved.message())));
  }
  absl::StatusOr<void*> ptr = device_.Malloc(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (!ptr.ok()) {
    quota_->Release(charged);
    ++stats_.failed_allocations;
    return ptr.status();
  }
  live_.emplace(*ptr, charged);
  stats_.in_use_bytes += charged;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.in_use_bytes);
  ++stats_.allocations;
  return ptr;
}

absl::Status QuotaDevice::FreeMemory(void* ptr) {
  if (ptr == nullptr) return absl::OkStatus();
  int64_t charged = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it == live_.end()) {
      return InvalidArgument("device ", device_.name(), " (", quota_->owner(), "): freeing memory it did not allocate");
    }
    charged = it->second;
    live_.erase(it);
    stats_.in_use_bytes -= charged;
  }
  quota_->Release(charged);
  return device_.FreeMemory(ptr);
}

MemoryStats QuotaDevice::memory_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void* QuotaDevice::Allocate(size_t bytes, size_t alignment) {
  GE_CHECK(alignment <= kTensorAlignment);
  absl::StatusOr<void*> ptr = Malloc(bytes);
  if (!ptr.ok()) {
    GE_LOG_DEBUG("device", "{}", ptr.status().message());
    return nullptr;
  }
  return *ptr;
}

void QuotaDevice::Free(void* ptr, size_t) {
  absl::Status s = FreeMemory(ptr);
  GE_CHECK_MSG(s.ok(), "freeing a pointer the quota device did not allocate");
}

}  // namespace ge::device
