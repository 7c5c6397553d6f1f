// Packed forms of constant weights shared by every kernel of the process
// that packs the same storage the same way: the per-shape plans of one
// graph (session/jit_graph.h makes one static plan per input shape, each
// with its own kernels) then hold one copy of each packing instead of one
// per plan (docs/design/jit.md "Shared weight packings").
//
// A packing is named by the weights' storage (buffer address and byte
// offset) and a key the caller builds from everything else that shaped it:
// what kind of packing it is, the weights' dtype and dims, and the packed
// layout (a oneDNN descriptor's text, when the layout is chosen per input
// shape). Only constant weights may be packed here: their storage holds the
// same values for its whole life. A packing keeps its source storage alive,
// so while any kernel holds it the address cannot name other values; the
// cache itself holds packings weakly, so a packing is freed when the last
// kernel holding it goes, and a later request for the same name packs again.
//
// Get is safe from several threads at once: calls for one name wait for the
// first to pack and then share its result; calls for other names proceed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "base/tensor.h"

namespace ge::engine::cpu_dense {

class SharedPackings {
 public:
  // The packing of `source`'s storage named `key`: a live one made earlier
  // (by any kernel), else `make()` (a std::shared_ptr<T>) now, `*packed`
  // set to whether it was made. With sharing off (SetSharedPackings), always
  // `make()`. `key` must determine T and the packed values.
  template <typename T, typename Make>
  static std::shared_ptr<T> Get(const Tensor& source, const std::string& key, const Make& make,
                                bool* packed = nullptr) {
    if (packed != nullptr) *packed = false;
    std::shared_ptr<Slot> slot = Enabled() ? SlotFor(source, key) : nullptr;
    if (slot == nullptr) {
      if (packed != nullptr) *packed = true;
      Made().fetch_add(1, std::memory_order_relaxed);
      return make();
    }
    std::lock_guard<std::mutex> lock(slot->mu);
    if (std::shared_ptr<void> live = slot->data.lock()) return std::static_pointer_cast<T>(live);
    std::shared_ptr<T> made = make();
    // The result keeps the source storage alive (its address names it).
    auto holder = std::make_shared<std::pair<std::shared_ptr<Buffer>, std::shared_ptr<T>>>(source.buffer(), made);
    std::shared_ptr<T> out(holder, made.get());
    slot->data = out;
    if (packed != nullptr) *packed = true;
    Made().fetch_add(1, std::memory_order_relaxed);
    return out;
  }

  // Packings made through Get since the start (shared or not): tests count
  // them.
  static std::atomic<int64_t>& Made();
  // Names the cache holds now (live or not yet swept).
  static size_t Size();
  // Turns sharing on or off (on by default; GED_CPU_DENSE_SHARED_PACKINGS=0
  // in the environment, read once, turns it off): for tests and
  // comparisons. Not for kernels packing at the same time.
  static void SetEnabled(bool on);
  static bool Enabled();

 private:
  struct Slot {
    std::mutex mu;
    std::weak_ptr<void> data;
  };
  // The slot of this name, made when new; null when `source` has no storage.
  static std::shared_ptr<Slot> SlotFor(const Tensor& source, const std::string& key);
};

}  // namespace ge::engine::cpu_dense
