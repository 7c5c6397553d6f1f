// CpuDevice and DeviceManager.
#include "runtime/device/device.h"

#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/logging.h"
#include "base/status.h"
#include "base/strings.h"

namespace ge::device {
namespace {

size_t RoundUp(size_t bytes) {
  if (bytes == 0) bytes = 1;
  return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

absl::StatusOr<int64_t> ParseBytes(std::string_view text) {
  int64_t scale = 1;
  std::string_view digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': scale = int64_t{1} << 10; break;
      case 'M': case 'm': scale = int64_t{1} << 20; break;
      case 'G': case 'g': scale = int64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) digits.remove_suffix(1);
  }
  int64_t n;
  if (!absl::SimpleAtoi(AbslView(digits), &n) || n < 0 || n > (int64_t{1} << 50) / scale) {
    return InvalidArgument("bad memory size '", text, "': expected bytes with an optional K, M or G suffix");
  }
  return n * scale;
}

}  // namespace

CpuDevice::CpuDevice(DeviceSpec spec) : spec_(std::move(spec)) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  num_threads_ = spec_.num_threads > 0 ? spec_.num_threads : cores;
  pool_ = std::make_unique<ThreadPool>(num_threads_ - 1, spec_.name + "-intra");
  stats_.capacity_bytes = spec_.memory_bytes;
}

CpuDevice::~CpuDevice() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!live_.empty()) {
    GE_LOG_WARN("device", "{}: {} allocation(s) ({} bytes) still live at shutdown", spec_.name, live_.size(),
                stats_.in_use_bytes);
  }
  for (auto& [ptr, size] : live_) std::free(ptr);
}

absl::StatusOr<void*> CpuDevice::Malloc(size_t bytes) {
  const size_t rounded = RoundUp(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (spec_.memory_bytes > 0 && stats_.in_use_bytes + static_cast<int64_t>(rounded) > spec_.memory_bytes) {
    ++stats_.failed_allocations;
    return ResourceExhausted("device ", spec_.name, ": cannot allocate ", bytes, " bytes: ",
                             spec_.memory_bytes - stats_.in_use_bytes, " of ", spec_.memory_bytes, " bytes free");
  }
  void* ptr = std::aligned_alloc(kTensorAlignment, rounded);
  if (ptr == nullptr) {
    ++stats_.failed_allocations;
    return ResourceExhausted("device ", spec_.name, ": the host refused ", bytes, " bytes");
  }
  live_.emplace(ptr, rounded);
  stats_.in_use_bytes += static_cast<int64_t>(rounded);
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.in_use_bytes);
  ++stats_.allocations;
  return ptr;
}

absl::Status CpuDevice::FreeMemory(void* ptr) {
  if (ptr == nullptr) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return InvalidArgument("device ", spec_.name, ": freeing memory it did not allocate");
  stats_.in_use_bytes -= static_cast<int64_t>(it->second);
  live_.erase(it);
  std::free(ptr);
  return absl::OkStatus();
}

void* CpuDevice::Allocate(size_t bytes, size_t alignment) {
  GE_CHECK(alignment <= kTensorAlignment);
  auto ptr = Malloc(bytes);
  if (!ptr.ok()) {
    GE_LOG_DEBUG("device", "{}", ptr.status().message());
    return nullptr;
  }
  return *ptr;
}

void CpuDevice::Free(void* ptr, size_t) {
  absl::Status s = FreeMemory(ptr);
  GE_CHECK_MSG(s.ok(), "freeing a pointer the device did not allocate");
}

absl::Status CpuDevice::Memcpy(void* dst, size_t dst_capacity, const void* src, size_t count, MemcpyKind) {
  if (count > dst_capacity) {
    return InvalidArgument("device ", spec_.name, ": copy of ", count, " bytes into a ", dst_capacity, "-byte buffer");
  }
  if (count > 0) std::memmove(dst, src, count);
  return absl::OkStatus();
}

std::unique_ptr<Stream> CpuDevice::CreateStream(std::string name) {
  return std::make_unique<Stream>(spec_.name + "/" + name);
}

MemoryStats CpuDevice::memory_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

absl::StatusOr<std::unique_ptr<DeviceManager>> DeviceManager::Create(const std::vector<DeviceSpec>& specs) {
  auto manager = std::unique_ptr<DeviceManager>(new DeviceManager());
  for (const DeviceSpec& spec : specs) {
    int ordinal;
    if (spec.name.rfind("cpu:", 0) != 0 || !absl::SimpleAtoi(AbslView(spec.name).substr(4), &ordinal) || ordinal < 0) {
      return InvalidArgument("bad device name '", spec.name, "': expected cpu:N");
    }
    if (manager->Get(spec.name).ok()) return InvalidArgument("device ", spec.name, " is declared twice");
    if (spec.num_threads < 0 || spec.memory_bytes < 0) {
      return InvalidArgument("device ", spec.name, ": threads and memory must not be negative");
    }
    manager->devices_.push_back(std::make_unique<CpuDevice>(spec));
  }
  return manager;
}

absl::StatusOr<std::vector<DeviceSpec>> DeviceManager::ParseDeviceSpecs(std::string_view text) {
  std::vector<DeviceSpec> specs;
  for (absl::string_view entry : absl::StrSplit(AbslView(text), ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    std::vector<absl::string_view> parts = absl::StrSplit(entry, ':');
    if (parts.size() < 2) return InvalidArgument("bad device '", StdView(entry), "': expected cpu:N[:threads=T][:memory=M]");
    DeviceSpec spec;
    spec.name = StrCat(StdView(parts[0]), ":", StdView(parts[1]));
    for (size_t i = 2; i < parts.size(); ++i) {
      std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
      if (kv.first == "threads") {
        if (!absl::SimpleAtoi(kv.second, &spec.num_threads) || spec.num_threads < 1) {
          return InvalidArgument("bad threads '", StdView(kv.second), "' for device ", spec.name);
        }
      } else if (kv.first == "memory") {
        GE_ASSIGN_OR_RETURN(spec.memory_bytes, ParseBytes(StdView(kv.second)));
      } else {
        return InvalidArgument("unknown device setting '", StdView(kv.first), "' for ", spec.name,
                               " (expected threads or memory)");
      }
    }
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) return InvalidArgument("no device given");
  return specs;
}

absl::StatusOr<Device*> DeviceManager::Get(std::string_view name) const {
  std::vector<std::string> names;
  for (const auto& d : devices_) {
    if (d->name() == name) return d.get();
    names.emplace_back(d->name());
  }
  return NotFound("no device ", name, " (devices: ", absl::StrJoin(names, ", "), ")");
}

std::vector<Device*> DeviceManager::devices() const {
  std::vector<Device*> out;
  for (const auto& d : devices_) out.push_back(d.get());
  return out;
}

}  // namespace ge::device
