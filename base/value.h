// Run-time values: a tensor, a sequence of tensors, or nothing (an empty
// optional or an absent optional input).
//
// A sequence's elements live in storage shared by the copies of the value
// (copy-on-write): copying a Value is O(1) whatever the sequence's length,
// and the first change through a copy that shares its storage copies the
// element handles (never their data). A value whose storage is not shared
// grows in place, so a loop that appends to a sequence it owns (a kernel
// given its input by ExecuteContext::owned_input) is amortized O(1) per
// element. Readers see value semantics: a change through one copy is never
// seen through another.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/tensor.h"

namespace ge {

class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence };

  Value() = default;  // kNone
  Value(Tensor tensor) : kind_(Kind::kTensor), tensor_(std::move(tensor)) {}  // NOLINT
  static Value Sequence(std::vector<Tensor> items, DataType element_dtype) {
    Value v;
    v.kind_ = Kind::kSequence;
    v.sequence_ = std::make_shared<SequenceStorage>(std::move(items));
    v.element_dtype_ = element_dtype;
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  const Tensor& tensor() const { return tensor_; }
  Tensor& mutable_tensor() { return tensor_; }
  // The elements (empty for a value that is not a sequence).
  const std::vector<Tensor>& sequence() const { return sequence_ ? sequence_->items : EmptyItems(); }
  // The elements for changing: copies them first when the storage is shared
  // with another value. Forgets the shape summary (sequence_shapes_uniform),
  // which is worked out again on the next read; finish changing through the
  // reference before reading it. The members below keep the summary.
  std::vector<Tensor>& mutable_sequence() {
    SequenceStorage& s = Unique();
    s.mismatches.store(kUnknown, std::memory_order_relaxed);
    return s.items;
  }
  // Inserts `item` (its handle, not its data) before position `at` (at most
  // the size; the size appends): amortized O(1) at the end when the
  // storage is not shared.
  void InsertIntoSequence(size_t at, Tensor item) {
    SequenceStorage& s = Unique();
    if (at == 0) {
      s.mismatches.store(s.items.empty() ? 0 : kUnknown, std::memory_order_relaxed);
    } else {
      s.Count(item, +1);
    }
    s.items.insert(s.items.begin() + static_cast<std::ptrdiff_t>(at), std::move(item));
  }
  void AppendToSequence(Tensor item) { InsertIntoSequence(sequence().size(), std::move(item)); }
  // Replaces element `at` (< size).
  void SetSequenceItem(size_t at, Tensor item) {
    SequenceStorage& s = Unique();
    if (at == 0) {
      s.mismatches.store(s.items.size() == 1 ? 0 : kUnknown, std::memory_order_relaxed);
    } else {
      s.Count(s.items[at], -1);
      s.Count(item, +1);
    }
    s.items[at] = std::move(item);
  }
  // Erases element `at` (< size): O(1) at the end.
  void EraseFromSequence(size_t at) {
    SequenceStorage& s = Unique();
    if (at == 0) {
      s.mismatches.store(kUnknown, std::memory_order_relaxed);
    } else {
      s.Count(s.items[at], -1);
    }
    s.items.erase(s.items.begin() + static_cast<std::ptrdiff_t>(at));
  }
  // Whether every element has element 0's shape (true for an empty
  // sequence). Amortized O(1): the storage counts the elements whose shape
  // differs from element 0's.
  bool sequence_shapes_uniform() const {
    if (!sequence_) return true;
    int64_t mismatches = sequence_->mismatches.load(std::memory_order_relaxed);
    if (mismatches == kUnknown) {
      const std::vector<Tensor>& items = sequence_->items;
      mismatches = 0;
      for (const Tensor& t : items) mismatches += t.shape() != items.front().shape();
      // Readers of shared storage may race here; they store the same count.
      sequence_->mismatches.store(mismatches, std::memory_order_relaxed);
    }
    return mismatches == 0;
  }
  // The element handles copied so far because a changed sequence's storage
  // was shared (process-wide; tests count them).
  static int64_t SequenceElementsCopied() { return ElementCopies().load(std::memory_order_relaxed); }
  // Whether this value and `other` are sequences sharing one storage (tests).
  bool SharesSequenceWith(const Value& other) const { return sequence_ && sequence_ == other.sequence_; }
  // Element dtype of a sequence (meaningful for empty sequences too).
  DataType element_dtype() const { return element_dtype_; }

 private:
  static constexpr int64_t kUnknown = -1;
  struct SequenceStorage {
    explicit SequenceStorage(std::vector<Tensor> elements) : items(std::move(elements)) {}
    // Adds `sign` to the count for `item`, a non-first element, when known.
    void Count(const Tensor& item, int sign) {
      const int64_t m = mismatches.load(std::memory_order_relaxed);
      if (m != kUnknown && item.shape() != items.front().shape()) mismatches.store(m + sign, std::memory_order_relaxed);
    }
    std::vector<Tensor> items;
    // Elements whose shape differs from element 0's, or kUnknown.
    mutable std::atomic<int64_t> mismatches{kUnknown};
  };
  static std::atomic<int64_t>& ElementCopies() {
    static std::atomic<int64_t> copies{0};
    return copies;
  }
  static const std::vector<Tensor>& EmptyItems() {
    static const std::vector<Tensor>* empty = new std::vector<Tensor>();
    return *empty;
  }
  // The storage, copied first when another value shares it. A count of one
  // means no other value can reach it (a copy would have to read this one);
  // the fence orders this thread's writes after the reads other holders
  // made before they let go.
  SequenceStorage& Unique() {
    if (!sequence_) {
      sequence_ = std::make_shared<SequenceStorage>(std::vector<Tensor>());
    } else if (sequence_.use_count() != 1) {
      ElementCopies().fetch_add(static_cast<int64_t>(sequence_->items.size()), std::memory_order_relaxed);
      auto copy = std::make_shared<SequenceStorage>(sequence_->items);
      copy->mismatches.store(sequence_->mismatches.load(std::memory_order_relaxed), std::memory_order_relaxed);
      sequence_ = std::move(copy);
    } else {
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    return *sequence_;
  }

  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  std::shared_ptr<SequenceStorage> sequence_;
  DataType element_dtype_ = DataType::kUndefined;
};

}  // namespace ge
