// Tensor shapes with unknown dims (-1) and unknown rank (-2), as in GE.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ge {

inline constexpr int64_t kUnknownDim = -1;
inline constexpr int64_t kUnknownRank = -2;

class Shape {
 public:
  using Dims = absl::InlinedVector<int64_t, 6>;

  Shape() = default;  // a scalar
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {}
  static Shape UnknownRank() {
    Shape s;
    s.unknown_rank_ = true;
    return s;
  }

  bool unknown_rank() const { return unknown_rank_; }
  // The rank; -1 when the rank is unknown.
  int64_t rank() const { return unknown_rank_ ? -1 : static_cast<int64_t>(dims_.size()); }
  const Dims& dims() const { return dims_; }
  absl::Span<const int64_t> span() const { return dims_; }
  int64_t dim(size_t i) const { return dims_[i]; }
  void set_dim(size_t i, int64_t d) { dims_[i] = d; }
  void push_back(int64_t d) { dims_.push_back(d); }
  bool is_scalar() const { return !unknown_rank_ && dims_.empty(); }

  // True when the rank and every dim are known.
  bool IsFullyKnown() const;
  // Element count of a fully known shape; InvalidArgument on overflow past
  // int64 or on unknown or negative dims.
  absl::StatusOr<int64_t> NumElements() const;
  // Element count without checks; the caller knows the shape is valid.
  int64_t NumElementsUnchecked() const;

  // "[1,3,-1]" or "[?]" (unknown rank) or "[]" (scalar).
  std::string ToString() const;
  // Parses ToString()'s form.
  static absl::StatusOr<Shape> Parse(std::string_view text);
  // GE's flat form: {-2} for unknown rank, else the dims.
  std::vector<int64_t> ToGeDims() const;
  static Shape FromGeDims(absl::Span<const int64_t> dims);

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.unknown_rank_ == b.unknown_rank_ && a.dims_ == b.dims_;
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

  template <typename H>
  friend H AbslHashValue(H h, const Shape& s) {
    return H::combine(std::move(h), s.unknown_rank_, s.dims_);
  }

 private:
  Dims dims_;
  bool unknown_rank_ = false;
};

// Row-major strides in elements.
Shape::Dims ContiguousStrides(absl::Span<const int64_t> dims);

}  // namespace ge
