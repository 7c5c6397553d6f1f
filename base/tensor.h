// Tensors: a typed, shaped view over reference-counted storage.
//
// A Tensor is cheap to copy (it shares its Buffer). Storage is contiguous and
// row-major. Strings are stored as std::string elements constructed in the
// buffer, so every dtype reads through data<T>().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/allocator.h"
#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"

namespace ge {

class Buffer {
 public:
  // Allocates `bytes` (rounded up to the alignment) from `allocator`;
  // ResourceExhausted naming the allocator when it fails.
  static absl::StatusOr<std::shared_ptr<Buffer>> Allocate(size_t bytes,
                                                          Allocator* allocator = nullptr);
  // Allocates `count` default-constructed strings.
  static absl::StatusOr<std::shared_ptr<Buffer>> AllocateStrings(size_t count);
  // Wraps memory the caller owns; `release` runs when the last user is gone.
  static std::shared_ptr<Buffer> Wrap(void* data, size_t bytes, std::function<void()> release);

  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  size_t string_count() const { return string_count_; }

 private:
  Buffer() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
  size_t string_count_ = 0;  // > 0 when the buffer holds std::string objects
  Allocator* allocator_ = nullptr;
  std::function<void()> release_;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: dtype kUndefined, no storage
  Tensor(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t byte_offset = 0);

  // A new zero-filled tensor (empty strings for kString). The shape must be
  // fully known; its byte size must fit in memory.
  static absl::StatusOr<Tensor> Allocate(DataType dtype, const Shape& shape,
                                         Allocator* allocator = nullptr);
  // Test and constant helpers; they abort on a size mismatch (programmer error).
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, const Shape& shape);
  template <typename T>
  static Tensor Scalar(T value) {
    return FromVector<T>({value}, Shape{});
  }

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t NumElements() const { return shape_.NumElementsUnchecked(); }
  // Bytes of the elements (for strings: count * sizeof(std::string)).
  size_t SizeInBytes() const;
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  size_t byte_offset() const { return byte_offset_; }

  void* raw_data() const {
    return buffer_ ? static_cast<char*>(buffer_->data()) + byte_offset_ : nullptr;
  }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  absl::Span<T> span() const {
    return absl::Span<T>(data<T>(), static_cast<size_t>(NumElements()));
  }
  // Element i converted to double or int64 whatever the dtype (not strings);
  // for shape inference and tests, not for kernels' inner loops.
  double GetAsDouble(int64_t index) const;
  int64_t GetAsInt64(int64_t index) const;
  std::vector<int64_t> ToInt64Vector() const;

  // Same storage, another shape of the same element count.
  Tensor Reshaped(const Shape& shape) const;
  // A deep copy into new storage.
  absl::StatusOr<Tensor> Clone(Allocator* allocator = nullptr) const;
  // "f32[2,3] {1, 2, 3, ...}" with at most `max_values` values.
  std::string DebugString(int max_values = 8) const;

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  std::shared_ptr<Buffer> buffer_;
  size_t byte_offset_ = 0;
};

// Byte size of `count` elements of `dtype` with overflow checks.
absl::StatusOr<size_t> ByteSizeOf(DataType dtype, int64_t count);

// True when both tensors have the same dtype, shape and bytes (strings
// compared by value).
bool TensorsEqual(const Tensor& a, const Tensor& b);

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values, const Shape& shape) {
  auto t = Allocate(DataTypeOf<T>::value, shape);
  GE_CHECK(t.ok());
  GE_CHECK(static_cast<int64_t>(values.size()) == t->NumElements());
  T* out = t->template data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return *std::move(t);
}
// std::vector<bool> is packed; spell it out.
template <>
Tensor Tensor::FromVector<bool>(const std::vector<bool>& values, const Shape& shape);

}  // namespace ge
