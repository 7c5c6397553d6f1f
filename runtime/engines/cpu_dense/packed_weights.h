// A constant input's weights packed once for its storage: what cpu_dense's
// own kernels (the packed GEMM's panels, the small-output and the
// few-output-channel convolutions) share between the plans of one kernel,
// and, through SharedPackings (shared_packings.h), with every other kernel
// that packs the same storage the same way (the per-shape plans of one
// graph).
//
// Constant storage holds the same values for the kernel's life, so the
// buffer's address and offset (and whatever else shaped the packing: the
// kind of packing, dims, transposition) identify a packing; the buffer is
// kept alive so that the address cannot be reused by other values. Get is
// safe from several threads at once (two first runs of one compiled model):
// one packs while the others wait and then share its result, and the data a
// call returns stays valid while the caller holds it, even when a later call
// packs other storage.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/tensor.h"
#include "runtime/engines/cpu_dense/shared_packings.h"

namespace ge::engine::cpu_dense {

class StoragePackedWeights {
 public:
  using Data = std::shared_ptr<const std::vector<float>>;

  // `kind` names the packing function (one per kind: packings of one kind
  // are shared between kernels).
  explicit StoragePackedWeights(std::string kind) : kind_(std::move(kind)) {}

  // `w` packed by `pack(w)` (a std::vector<float>), `shape_key` naming what
  // else the packing depends on: the last packing when it was of the same
  // storage and key, else a live packing of the same kind, storage and key
  // made by another kernel, else packed now (`*packed` set to whether it
  // was).
  template <typename PackFn>
  Data Get(const Tensor& w, std::vector<int64_t> shape_key, const PackFn& pack, bool* packed = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    if (packed != nullptr) *packed = false;
    if (SameLocked(w, shape_key)) return data_;
    std::string key = absl::StrCat("storage:", kind_);
    for (int64_t k : shape_key) absl::StrAppend(&key, ",", k);
    data_ = SharedPackings::Get<std::vector<float>>(
        w, key, [&] { return std::make_shared<std::vector<float>>(pack(w)); }, packed);
    source_ = w.buffer();
    offset_ = w.byte_offset();
    dtype_ = w.dtype();
    dims_ = w.shape();
    shape_key_ = std::move(shape_key);
    return data_;
  }

  // Whether the last packing was of `w`'s storage with this key.
  bool PackedFrom(const Tensor& w, const std::vector<int64_t>& shape_key) const {
    std::lock_guard<std::mutex> lock(mu_);
    return SameLocked(w, shape_key);
  }

 private:
  bool SameLocked(const Tensor& w, const std::vector<int64_t>& shape_key) const {
    return source_ != nullptr && w.buffer() == source_ && w.byte_offset() == offset_ && shape_key == shape_key_ &&
           w.dtype() == dtype_ && w.shape() == dims_;
  }

  const std::string kind_;
  mutable std::mutex mu_;
  Data data_;
  std::shared_ptr<Buffer> source_;  // kept alive: its address identifies the packed values
  size_t offset_ = 0;
  DataType dtype_ = DataType::kUndefined;  // the storage's dtype and dims as packed
  Shape dims_;
  std::vector<int64_t> shape_key_;
};

}  // namespace ge::engine::cpu_dense
