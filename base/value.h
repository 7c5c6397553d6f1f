// Run-time values: a tensor, a sequence of tensors, or nothing (an empty
// optional or an absent optional input).
#pragma once

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
    v.sequence_ = std::move(items);
    v.element_dtype_ = element_dtype;
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  const Tensor& tensor() const { return tensor_; }
  Tensor& mutable_tensor() { return tensor_; }
  const std::vector<Tensor>& sequence() const { return sequence_; }
  std::vector<Tensor>& mutable_sequence() { return sequence_; }
  // Element dtype of a sequence (meaningful for empty sequences too).
  DataType element_dtype() const { return element_dtype_; }

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  std::vector<Tensor> sequence_;
  DataType element_dtype_ = DataType::kUndefined;
};

}  // namespace ge
