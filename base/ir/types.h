// Static types of graph values: TensorDesc (dtype, shape, format) and
// ValueType (a tensor, a sequence of tensors, or an optional of either).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/dtype.h"
#include "base/shape.h"

namespace ge::ir {

// Memory layout of a tensor. kND is plain row-major with no layout meaning.
// The blocked formats are engine-private (oneDNN's nChw8c / nChw16c / OIhw16i16o);
// they appear only inside an engine's subgraphs, and TransData nodes convert
// at subgraph boundaries.
enum class Format : uint8_t {
  kND = 0,
  kNCHW,
  kNHWC,
  kNCDHW,
  kNDHWC,
  kNChw8c,
  kNChw16c,
  kBlocked,  // opaque: meaningful only to the engine that produced it
};

std::string_view FormatName(Format format);
std::optional<Format> ParseFormat(std::string_view name);

struct TensorDesc {
  DataType dtype = DataType::kUndefined;
  Shape shape;
  Format format = Format::kND;

  TensorDesc() = default;
  TensorDesc(DataType d, Shape s, Format f = Format::kND) : dtype(d), shape(std::move(s)), format(f) {}

  // "f32[1,3,224,224]", with "@NCHW" appended when the format is not ND.
  std::string ToString() const;
  friend bool operator==(const TensorDesc& a, const TensorDesc& b) {
    return a.dtype == b.dtype && a.shape == b.shape && a.format == b.format;
  }
  friend bool operator!=(const TensorDesc& a, const TensorDesc& b) { return !(a == b); }
};

class ValueType {
 public:
  enum class Kind : uint8_t { kTensor, kSequence, kOptional };

  ValueType() = default;  // an undefined tensor
  ValueType(TensorDesc desc) : tensor_(std::move(desc)) {}  // NOLINT: implicit by design
  static ValueType Tensor(DataType dtype, Shape shape) { return ValueType(TensorDesc(dtype, std::move(shape))); }
  static ValueType Sequence(ValueType element);
  static ValueType Optional(ValueType element);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  // The tensor description; for a sequence or optional, the innermost tensor's.
  const TensorDesc& tensor() const;
  TensorDesc& mutable_tensor();
  // The element of a sequence or optional; null for a tensor.
  const ValueType* element() const { return element_.get(); }
  DataType dtype() const { return tensor().dtype; }
  const Shape& shape() const { return tensor().shape; }

  // "f32[1,3]", "seq<f32[?]>", "opt<f32[2]>", "opt<seq<i64[-1]>>".
  std::string ToString() const;
  static absl::StatusOr<ValueType> Parse(std::string_view text);

  friend bool operator==(const ValueType& a, const ValueType& b);
  friend bool operator!=(const ValueType& a, const ValueType& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::kTensor;
  TensorDesc tensor_;                          // for kTensor
  std::shared_ptr<const ValueType> element_;  // for kSequence and kOptional
};

}  // namespace ge::ir
