// Element type names, sizes and the 16-bit float conversions.
#include "base/dtype.h"

#include <array>
#include <cmath>

namespace ge {
namespace {

struct DataTypeInfo {
  DataType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DataTypeInfo, 17> kInfos = {{
    {DataType::kUndefined, "undefined", 0},
    {DataType::kFloat, "f32", 4},
    {DataType::kUint8, "u8", 1},
    {DataType::kInt8, "i8", 1},
    {DataType::kUint16, "u16", 2},
    {DataType::kInt16, "i16", 2},
    {DataType::kInt32, "i32", 4},
    {DataType::kInt64, "i64", 8},
    {DataType::kString, "string", 0},
    {DataType::kBool, "bool", 1},
    {DataType::kFloat16, "f16", 2},
    {DataType::kDouble, "f64", 8},
    {DataType::kUint32, "u32", 4},
    {DataType::kUint64, "u64", 8},
    {DataType::kComplex64, "c64", 8},
    {DataType::kComplex128, "c128", 16},
    {DataType::kBFloat16, "bf16", 2},
}};

}  // namespace

bool IsValidDataType(int32_t value) { return value >= 0 && value <= kMaxDataTypeValue; }

size_t DataTypeSize(DataType dtype) {
  auto v = static_cast<int32_t>(dtype);
  return IsValidDataType(v) ? kInfos[v].size : 0;
}

std::string_view DataTypeName(DataType dtype) {
  auto v = static_cast<int32_t>(dtype);
  return IsValidDataType(v) ? kInfos[v].name : std::string_view("invalid");
}

std::optional<DataType> ParseDataType(std::string_view name) {
  for (const auto& info : kInfos) {
    if (info.name == name && info.dtype != DataType::kUndefined) return info.dtype;
  }
  return std::nullopt;
}

bool IsFloatingPoint(DataType dtype) {
  return dtype == DataType::kFloat || dtype == DataType::kDouble ||
         dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
}

bool IsSignedInteger(DataType dtype) {
  return dtype == DataType::kInt8 || dtype == DataType::kInt16 || dtype == DataType::kInt32 ||
         dtype == DataType::kInt64;
}

bool IsInteger(DataType dtype) {
  return IsSignedInteger(dtype) || dtype == DataType::kUint8 || dtype == DataType::kUint16 ||
         dtype == DataType::kUint32 || dtype == DataType::kUint64;
}

// Round-to-nearest-even conversion from binary32 to binary16, handling
// subnormals, infinities and NaN.
Float16::Float16(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof(f));
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    bits = static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    return;
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (abs < 0x38800000u) {  // subnormal half or zero
    // Add 0.5 in float space scaled so the mantissa lands in the low bits.
    float magic;
    const uint32_t magic_bits = 0x3f000000u;  // 0.5f
    std::memcpy(&magic, &magic_bits, sizeof(magic));
    float a;
    std::memcpy(&a, &abs, sizeof(a));
    a += magic;
    uint32_t r;
    std::memcpy(&r, &a, sizeof(r));
    bits = static_cast<uint16_t>(sign | (r - magic_bits));
    return;
  }
  const uint32_t mant_odd = (abs >> 13) & 1u;
  uint32_t rounded = abs + 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
  bits = static_cast<uint16_t>(sign | (rounded >> 13));
}

Float16::operator float() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = std::ldexp(static_cast<float>(mant), -24);
      std::memcpy(&out, &f, sizeof(out));
      out |= sign;
    }
  } else if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float result;
  std::memcpy(&result, &out, sizeof(result));
  return result;
}

BFloat16::BFloat16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN stays a quiet NaN
    bits = static_cast<uint16_t>((u >> 16) | 0x40u);
    return;
  }
  const uint32_t rounding_bias = 0x7fffu + ((u >> 16) & 1u);
  bits = static_cast<uint16_t>((u + rounding_bias) >> 16);
}

}  // namespace ge
