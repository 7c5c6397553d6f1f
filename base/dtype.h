// Element types of tensors.
//
// DataType values equal ONNX's TensorProto.DataType (and ge.v1.DataType), so
// conversions between the three are casts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace ge {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

inline constexpr int kMaxDataTypeValue = 16;

// Bytes per element; 0 for kUndefined; sizeof(std::string) is NOT used for
// strings: kString reports 0 because strings are not stored as raw bytes.
size_t DataTypeSize(DataType dtype);
// Short lowercase name used in the text form and messages: f32, f16, bf16,
// f64, i8..i64, u8..u64, bool, string, c64, c128.
std::string_view DataTypeName(DataType dtype);
// Parses DataTypeName's spelling; nullopt when unknown.
std::optional<DataType> ParseDataType(std::string_view name);
bool IsValidDataType(int32_t value);
bool IsFloatingPoint(DataType dtype);  // f16, bf16, f32, f64
bool IsInteger(DataType dtype);        // signed and unsigned, not bool
bool IsSignedInteger(DataType dtype);

// IEEE half and bfloat16 as 16-bit storage types with float conversions.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float value);
  explicit operator float() const;
  static Float16 FromBits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value);
  explicit operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  }
  static BFloat16 FromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

// Maps a C++ element type to its DataType.
template <typename T>
struct DataTypeOf;
#define GE_DATATYPE_OF(T, V) \
  template <>                \
  struct DataTypeOf<T> {     \
    static constexpr DataType value = DataType::V; \
  }
GE_DATATYPE_OF(float, kFloat);
GE_DATATYPE_OF(double, kDouble);
GE_DATATYPE_OF(int8_t, kInt8);
GE_DATATYPE_OF(int16_t, kInt16);
GE_DATATYPE_OF(int32_t, kInt32);
GE_DATATYPE_OF(int64_t, kInt64);
GE_DATATYPE_OF(uint8_t, kUint8);
GE_DATATYPE_OF(uint16_t, kUint16);
GE_DATATYPE_OF(uint32_t, kUint32);
GE_DATATYPE_OF(uint64_t, kUint64);
GE_DATATYPE_OF(bool, kBool);
GE_DATATYPE_OF(Float16, kFloat16);
GE_DATATYPE_OF(BFloat16, kBFloat16);
GE_DATATYPE_OF(std::string, kString);
#undef GE_DATATYPE_OF

}  // namespace ge
