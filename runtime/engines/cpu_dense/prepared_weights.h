// Packed weights carried from compile to load: the prepared state of
// cpu_dense's kernels (engine::TaskDef::prepared, kernel_builder.h).
//
// A kernel packs a constant weights input once, at Prepare
// (PackedWeights::Preload, dense_kernel.h): a oneDNN reorder into the layout
// its primitive prefers, 40-100 ms for resnet50's convolutions. At compile
// time cpu_dense's kernel builder (CpuDenseKernelBuilder) records every
// packing of a task's Prepare and keeps the packed bytes in the task, with
// their description in the task's parameter blob: what the bytes were packed
// for (oneDNN's version and build hash and the ISA it dispatched on), then
// one line per buffer with its packed layout (every field of oneDNN's
// blocked memory descriptor, as text) and size. A .gem with external
// weights (every cache entry) keeps the buffers beside the weights, and a
// load maps them.
//
// At load the builder offers the buffers to the kernel's Prepare (a Scope
// on the calling thread): each packing takes the next buffer only when this
// process packs for the same target and the recorded layout and size are
// exactly those the plan computes now; it packs as before otherwise
// (counted by PreparedMismatches). So a buffer is never read past its end
// nor in a layout it was not written in. The values are not checked: a
// .gem's packed weights are as trusted as its Const values
// (docs/security.md). Every kernel that packs through PackedWeights takes
// part, whatever its dtype: an int8 packing's zero-point compensation lives
// in the same buffer and is part of the descriptor (its extra fields). A
// packing whose reorder carried attributes (scales) would need them in the
// layout line; PackedWeights's reorders carry none.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/tensor.h"
#include "runtime/engines/cpu_dense/dnnl_util.h"

namespace ge::engine::cpu_dense {

// TaskDef::param_version of a task whose blob describes prepared buffers.
inline constexpr uint32_t kPreparedParamVersion = 1;

// The text form of a packed layout (every field of a blocked descriptor);
// empty for descriptors that are not plainly blocked (never kept).
std::string LayoutKey(const dnnl::memory::desc& md);

// What this process packs for: oneDNN's version, build hash and ISA.
std::string PackingTarget();

class PreparedWeights {
 public:
  // Recording (compile time): collects the packings of one Prepare.
  PreparedWeights() = default;
  // Adopting (load time): the buffers of a task and its parameter blob.
  // InvalidArgument when the blob is malformed or its buffer count differs
  // from `buffers`'. A blob packed for another target gives a set that
  // adopts nothing (usable() false).
  static absl::StatusOr<PreparedWeights> ForLoad(std::string_view params, std::vector<std::shared_ptr<Buffer>> buffers);

  // The set in effect on this thread (null outside any Scope).
  static PreparedWeights* Current();
  class Scope {
   public:
    explicit Scope(PreparedWeights* set);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PreparedWeights* previous_;
  };

  bool recording() const { return !adopting_; }
  bool usable() const { return usable_; }
  // Adopting: the next buffer when it was packed as `packed` (layout and
  // size), else null (the caller packs). Either way the buffer is used up.
  std::shared_ptr<Buffer> Take(const dnnl::memory::desc& packed);
  // Recording: `memory` holds the constant weights packed as `packed`
  // (its data kept alive by `memory`, or by `owner` when given).
  void Record(const dnnl::memory::desc& packed, const dnnl::memory& memory, std::shared_ptr<Buffer> owner = nullptr);

  bool empty() const { return items_.empty(); }
  // Recording: the parameter blob describing the buffers, and the buffers.
  std::string Params() const;
  std::vector<std::shared_ptr<Buffer>> Buffers() const;

 private:
  struct Item {
    std::string layout;
    size_t size = 0;
    std::shared_ptr<Buffer> bytes;
  };
  bool adopting_ = false;
  bool usable_ = true;
  std::vector<Item> items_;
  size_t next_ = 0;
};

// Packings served by a prepared buffer instead of a reorder, and prepared
// buffers refused (another target, layout or size): tests check that a
// cache hit packs nothing.
std::atomic<int64_t>& PreparedAdoptions();
std::atomic<int64_t>& PreparedMismatches();

}  // namespace ge::engine::cpu_dense
