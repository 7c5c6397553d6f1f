// A constant input's weights packed once for its storage: what cpu_dense's
// own kernels (the packed GEMM's panels, the small-output and the
// few-output-channel convolutions) share between the plans of one kernel.
//
// Constant storage holds the same values for the kernel's life, so the
// buffer's address and offset (and whatever else shaped the packing: dims,
// transposition) identify a packing; the buffer is kept alive so that the
// address cannot be reused by other values. Get is safe from several
// threads at once (two first runs of one compiled model): one packs while
// the others wait and then share its result, and the data a call returns
// stays valid while the caller holds it, even when a later call packs other
// storage.
#pragma once

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "base/tensor.h"

namespace ge::engine::cpu_dense {

class StoragePackedWeights {
 public:
  using Data = std::shared_ptr<const std::vector<float>>;

  // `w` packed by `pack(w)` (a std::vector<float>), `shape_key` naming what
  // else the packing depends on: the last packing when it was of the same
  // storage and key, else packed now (`*packed` set to whether it was).
  template <typename PackFn>
  Data Get(const Tensor& w, std::vector<int64_t> shape_key, const PackFn& pack, bool* packed = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    if (packed != nullptr) *packed = false;
    if (SameLocked(w, shape_key)) return data_;
    data_ = std::make_shared<const std::vector<float>>(pack(w));
    source_ = w.buffer();
    offset_ = w.byte_offset();
    shape_key_ = std::move(shape_key);
    if (packed != nullptr) *packed = true;
    return data_;
  }

  // Whether the last packing was of `w`'s storage with this key.
  bool PackedFrom(const Tensor& w, const std::vector<int64_t>& shape_key) const {
    std::lock_guard<std::mutex> lock(mu_);
    return SameLocked(w, shape_key);
  }

 private:
  bool SameLocked(const Tensor& w, const std::vector<int64_t>& shape_key) const {
    return source_ != nullptr && w.buffer() == source_ && w.byte_offset() == offset_ && shape_key == shape_key_;
  }

  mutable std::mutex mu_;
  Data data_;
  std::shared_ptr<Buffer> source_;  // kept alive: its address identifies the packed values
  size_t offset_ = 0;
  std::vector<int64_t> shape_key_;
};

}  // namespace ge::engine::cpu_dense
