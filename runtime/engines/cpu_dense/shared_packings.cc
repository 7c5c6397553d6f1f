#include "runtime/engines/cpu_dense/shared_packings.h"

#include <cstdlib>
#include <map>
#include <string_view>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace ge::engine::cpu_dense {
namespace {

using Name = std::tuple<const Buffer*, size_t, std::string>;

struct Cache {
  std::mutex mu;
  std::map<Name, std::shared_ptr<void>> slots;  // SharedPackings::Slot, erased to keep it private
  size_t sweep_at = 64;                         // sweeps dead names when the map grows past this
};

Cache& TheCache() {
  static Cache* cache = new Cache();  // never destroyed: kernels may pack during exit
  return *cache;
}

std::atomic<bool>& EnabledFlag() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("GED_CPU_DENSE_SHARED_PACKINGS");
    return v == nullptr || std::string_view(v) != "0";
  }()};
  return on;
}

}  // namespace

std::atomic<int64_t>& SharedPackings::Made() {
  static std::atomic<int64_t> made{0};
  return made;
}

size_t SharedPackings::Size() {
  Cache& cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.slots.size();
}

void SharedPackings::SetEnabled(bool on) { EnabledFlag().store(on, std::memory_order_relaxed); }

bool SharedPackings::Enabled() { return EnabledFlag().load(std::memory_order_relaxed); }

std::shared_ptr<SharedPackings::Slot> SharedPackings::SlotFor(const Tensor& source, const std::string& key) {
  if (source.buffer() == nullptr) return nullptr;
  std::string full = absl::StrCat(key, "|", static_cast<int>(source.dtype()), "|");
  for (int64_t d : source.shape().dims()) absl::StrAppend(&full, d, ",");
  Name name(source.buffer().get(), source.byte_offset(), std::move(full));
  Cache& cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  auto it = cache.slots.find(name);
  if (it != cache.slots.end()) return std::static_pointer_cast<Slot>(it->second);
  if (cache.slots.size() >= cache.sweep_at) {
    // Dead names: no packing alive and no caller inside Get. A live packing
    // keeps its storage, so a dead name's address may now hold other values.
    for (auto s = cache.slots.begin(); s != cache.slots.end();) {
      const bool dead = s->second.use_count() == 1 && std::static_pointer_cast<Slot>(s->second)->data.expired();
      s = dead ? cache.slots.erase(s) : std::next(s);
    }
    cache.sweep_at = std::max<size_t>(64, 2 * cache.slots.size());
  }
  auto slot = std::make_shared<Slot>();
  cache.slots.emplace(std::move(name), slot);
  return slot;
}

}  // namespace ge::engine::cpu_dense
