// Buffer allocation and Tensor helpers.
#include "base/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"

namespace ge {
namespace {

class AlignedHostAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes, size_t alignment) override {
    if (bytes == 0) bytes = alignment;
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, rounded);
  }
  void Free(void* ptr, size_t) override { std::free(ptr); }
  std::string_view name() const override { return "host"; }
};

size_t RoundUp(size_t bytes) { return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment; }

}  // namespace

Allocator* HostAllocator() {
  static AlignedHostAllocator* allocator = new AlignedHostAllocator();
  return allocator;
}

absl::StatusOr<std::shared_ptr<Buffer>> Buffer::Allocate(size_t bytes, Allocator* allocator) {
  if (allocator == nullptr) allocator = HostAllocator();
  if (bytes > (size_t{1} << 48)) {
    return ResourceExhausted("cannot allocate ", bytes, " bytes on ", allocator->name(),
                             ": larger than any supported tensor");
  }
  void* data = allocator->Allocate(RoundUp(bytes), kTensorAlignment);
  if (data == nullptr) {
    return ResourceExhausted("out of memory on ", allocator->name(), ": could not allocate ",
                             bytes, " bytes");
  }
  std::shared_ptr<Buffer> buffer(new Buffer());
  buffer->data_ = data;
  buffer->size_ = bytes;
  buffer->allocator_ = allocator;
  return buffer;
}

absl::StatusOr<std::shared_ptr<Buffer>> Buffer::AllocateStrings(size_t count) {
  if (count > (size_t{1} << 40) / sizeof(std::string)) {
    return ResourceExhausted("cannot allocate ", count, " strings");
  }
  GE_ASSIGN_OR_RETURN(auto buffer, Allocate(count * sizeof(std::string)));
  auto* strings = static_cast<std::string*>(buffer->data_);
  for (size_t i = 0; i < count; ++i) new (&strings[i]) std::string();
  buffer->string_count_ = count;
  return buffer;
}

std::shared_ptr<Buffer> Buffer::Wrap(void* data, size_t bytes, std::function<void()> release) {
  std::shared_ptr<Buffer> buffer(new Buffer());
  buffer->data_ = data;
  buffer->size_ = bytes;
  buffer->release_ = std::move(release);
  return buffer;
}

Buffer::~Buffer() {
  if (string_count_ > 0) {
    auto* strings = static_cast<std::string*>(data_);
    for (size_t i = 0; i < string_count_; ++i) strings[i].~basic_string();
  }
  if (allocator_ != nullptr) {
    allocator_->Free(data_, RoundUp(size_));
  } else if (release_) {
    release_();
  }
}

absl::StatusOr<size_t> ByteSizeOf(DataType dtype, int64_t count) {
  if (count < 0) return InvalidArgument("negative element count ", count);
  size_t elem = dtype == DataType::kString ? sizeof(std::string) : DataTypeSize(dtype);
  if (elem == 0) return InvalidArgument("data type ", DataTypeName(dtype), " has no size");
  if (static_cast<uint64_t>(count) > (uint64_t{1} << 62) / elem) {
    return InvalidArgument("byte size of ", count, " elements of ", DataTypeName(dtype),
                           " overflows");
  }
  return static_cast<size_t>(count) * elem;
}

Tensor::Tensor(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t byte_offset)
    : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), byte_offset_(byte_offset) {}

absl::StatusOr<Tensor> Tensor::Allocate(DataType dtype, const Shape& shape, Allocator* allocator) {
  GE_ASSIGN_OR_RETURN(int64_t count, shape.NumElements());
  GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(dtype, count));
  std::shared_ptr<Buffer> buffer;
  if (dtype == DataType::kString) {
    GE_ASSIGN_OR_RETURN(buffer, Buffer::AllocateStrings(static_cast<size_t>(count)));
  } else {
    GE_ASSIGN_OR_RETURN(buffer, Buffer::Allocate(bytes, allocator));
    std::memset(buffer->data(), 0, bytes);
  }
  return Tensor(dtype, shape, std::move(buffer));
}

template <>
Tensor Tensor::FromVector<bool>(const std::vector<bool>& values, const Shape& shape) {
  auto t = Allocate(DataType::kBool, shape);
  GE_CHECK(t.ok());
  GE_CHECK(static_cast<int64_t>(values.size()) == t->NumElements());
  bool* out = t->data<bool>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return *std::move(t);
}

size_t Tensor::SizeInBytes() const {
  size_t elem = dtype_ == DataType::kString ? sizeof(std::string) : DataTypeSize(dtype_);
  return static_cast<size_t>(NumElements()) * elem;
}

double Tensor::GetAsDouble(int64_t i) const {
  switch (dtype_) {
    case DataType::kFloat: return data<float>()[i];
    case DataType::kDouble: return data<double>()[i];
    case DataType::kFloat16: return static_cast<float>(data<Float16>()[i]);
    case DataType::kBFloat16: return static_cast<float>(data<BFloat16>()[i]);
    case DataType::kInt8: return data<int8_t>()[i];
    case DataType::kInt16: return data<int16_t>()[i];
    case DataType::kInt32: return data<int32_t>()[i];
    case DataType::kInt64: return static_cast<double>(data<int64_t>()[i]);
    case DataType::kUint8: return data<uint8_t>()[i];
    case DataType::kUint16: return data<uint16_t>()[i];
    case DataType::kUint32: return data<uint32_t>()[i];
    case DataType::kUint64: return static_cast<double>(data<uint64_t>()[i]);
    case DataType::kBool: return data<bool>()[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

int64_t Tensor::GetAsInt64(int64_t i) const {
  switch (dtype_) {
    case DataType::kInt8: return data<int8_t>()[i];
    case DataType::kInt16: return data<int16_t>()[i];
    case DataType::kInt32: return data<int32_t>()[i];
    case DataType::kInt64: return data<int64_t>()[i];
    case DataType::kUint8: return data<uint8_t>()[i];
    case DataType::kUint16: return data<uint16_t>()[i];
    case DataType::kUint32: return data<uint32_t>()[i];
    case DataType::kUint64: return static_cast<int64_t>(data<uint64_t>()[i]);
    case DataType::kBool: return data<bool>()[i] ? 1 : 0;
    default: return static_cast<int64_t>(GetAsDouble(i));
  }
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> out(static_cast<size_t>(NumElements()));
  for (int64_t i = 0; i < NumElements(); ++i) out[i] = GetAsInt64(i);
  return out;
}

Tensor Tensor::Reshaped(const Shape& shape) const {
  GE_CHECK(shape.NumElementsUnchecked() == NumElements());
  return Tensor(dtype_, shape, buffer_, byte_offset_);
}

absl::StatusOr<Tensor> Tensor::Clone(Allocator* allocator) const {
  GE_ASSIGN_OR_RETURN(Tensor copy, Allocate(dtype_, shape_, allocator));
  if (dtype_ == DataType::kString) {
    for (int64_t i = 0; i < NumElements(); ++i) copy.data<std::string>()[i] = data<std::string>()[i];
  } else if (SizeInBytes() > 0) {
    std::memcpy(copy.raw_data(), raw_data(), SizeInBytes());
  }
  return copy;
}

std::string Tensor::DebugString(int max_values) const {
  std::string out = StrCat(DataTypeName(dtype_), shape_.ToString(), " {");
  int64_t n = std::min<int64_t>(NumElements(), max_values);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    if (dtype_ == DataType::kString) {
      StrAppend(&out, "\"", data<std::string>()[i], "\"");
    } else if (IsFloatingPoint(dtype_)) {
      StrAppend(&out, GetAsDouble(i));
    } else {
      StrAppend(&out, GetAsInt64(i));
    }
  }
  if (NumElements() > n) out += ", ...";
  out += "}";
  return out;
}

bool TensorsEqual(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DataType::kString) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
    }
    return true;
  }
  return a.SizeInBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.SizeInBytes()) == 0;
}

}  // namespace ge
