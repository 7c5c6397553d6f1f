// Element type names and sizes, and the 16-bit float conversions checked
// exhaustively against a reference computed in double precision.
#include "base/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"

namespace ge {
namespace {

float Bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

uint32_t BitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// The exact value of an IEEE half, in double.
double HalfValue(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0x1f) return mant ? std::nan("") : sign * std::numeric_limits<double>::infinity();
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}

bool HalfIsNan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
bool BFloatIsNan(uint16_t h) { return (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0; }

TEST(DtypeTest, NamesRoundTrip) {
  for (int v = 1; v <= kMaxDataTypeValue; ++v) {
    const auto dtype = static_cast<DataType>(v);
    auto parsed = ParseDataType(DataTypeName(dtype));
    ASSERT_TRUE(parsed.has_value()) << DataTypeName(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_EQ(DataTypeName(DataType::kFloat), "f32");
  EXPECT_EQ(DataTypeName(DataType::kBFloat16), "bf16");
  EXPECT_EQ(DataTypeName(DataType::kComplex128), "c128");
  EXPECT_EQ(DataTypeName(DataType::kUndefined), "undefined");
  EXPECT_EQ(DataTypeName(static_cast<DataType>(99)), "invalid");
  EXPECT_FALSE(ParseDataType("undefined").has_value());
  EXPECT_FALSE(ParseDataType("float32").has_value());
  EXPECT_FALSE(ParseDataType("").has_value());
}

TEST(DtypeTest, SizesAndClasses) {
  EXPECT_EQ(DataTypeSize(DataType::kUndefined), 0u);
  EXPECT_EQ(DataTypeSize(DataType::kString), 0u);
  EXPECT_EQ(DataTypeSize(DataType::kBool), 1u);
  EXPECT_EQ(DataTypeSize(DataType::kInt8), 1u);
  EXPECT_EQ(DataTypeSize(DataType::kFloat16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kBFloat16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kUint32), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kDouble), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kComplex64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kComplex128), 16u);
  EXPECT_EQ(DataTypeSize(static_cast<DataType>(-1)), 0u);
  EXPECT_TRUE(IsValidDataType(0));
  EXPECT_TRUE(IsValidDataType(16));
  EXPECT_FALSE(IsValidDataType(17));
  EXPECT_FALSE(IsValidDataType(-1));
  EXPECT_TRUE(IsFloatingPoint(DataType::kBFloat16));
  EXPECT_FALSE(IsFloatingPoint(DataType::kComplex64));
  EXPECT_TRUE(IsInteger(DataType::kUint64));
  EXPECT_FALSE(IsInteger(DataType::kBool));
  EXPECT_TRUE(IsSignedInteger(DataType::kInt16));
  EXPECT_FALSE(IsSignedInteger(DataType::kUint16));
  EXPECT_EQ(DataTypeOf<Float16>::value, DataType::kFloat16);
  EXPECT_EQ(DataTypeOf<std::string>::value, DataType::kString);
  EXPECT_EQ(DataTypeOf<uint64_t>::value, DataType::kUint64);
}

TEST(DtypeTest, HalfToFloatIsExactForEveryPattern) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = static_cast<float>(Float16::FromBits(static_cast<uint16_t>(h)));
    if (HalfIsNan(h)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_EQ(std::signbit(f), (h >> 15) != 0) << std::hex << h;
    } else {
      EXPECT_EQ(static_cast<double>(f), HalfValue(h)) << std::hex << h;
      EXPECT_EQ(std::signbit(f), (h >> 15) != 0) << std::hex << h;  // -0 stays -0
    }
  }
}

TEST(DtypeTest, HalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t back = Float16(static_cast<float>(Float16::FromBits(h))).bits;
    if (HalfIsNan(h)) {
      EXPECT_TRUE(HalfIsNan(back)) << std::hex << h;
      EXPECT_EQ(back & 0x8000, h & 0x8000) << std::hex << h;
    } else {
      EXPECT_EQ(back, h) << std::hex << h;
    }
  }
}

// Every midpoint between neighbouring halves rounds to the even one, and
// the floats just beside it round to the nearer one (subnormals included).
TEST(DtypeTest, FloatToHalfRoundsToNearestEven) {
  for (uint32_t sign : {0u, 0x8000u}) {
    for (uint32_t h = 0; h < 0x7bff; ++h) {
      const uint16_t lo = static_cast<uint16_t>(sign | h);
      const uint16_t hi = static_cast<uint16_t>(sign | (h + 1));
      const float mid = static_cast<float>((HalfValue(lo) + HalfValue(hi)) / 2);  // exact
      const uint16_t even = (h & 1) ? hi : lo;
      ASSERT_EQ(Float16(mid).bits, even) << std::hex << lo;
      const float toward_hi = std::nextafter(mid, sign ? -1e9f : 1e9f);
      const float toward_lo = std::nextafter(mid, 0.0f);
      ASSERT_EQ(Float16(toward_hi).bits, hi) << std::hex << lo;
      ASSERT_EQ(Float16(toward_lo).bits, lo) << std::hex << lo;
    }
  }
}

TEST(DtypeTest, FloatToHalfEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Float16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Float16(65519.996f).bits, 0x7bff);
  EXPECT_EQ(Float16(65520.0f).bits, 0x7c00);  // the midpoint to "65536" rounds to inf
  EXPECT_EQ(Float16(1e10f).bits, 0x7c00);
  EXPECT_EQ(Float16(-1e10f).bits, 0xfc00);
  EXPECT_EQ(Float16(inf).bits, 0x7c00);
  EXPECT_EQ(Float16(-inf).bits, 0xfc00);
  EXPECT_EQ(Float16(std::numeric_limits<float>::max()).bits, 0x7c00);
  EXPECT_TRUE(HalfIsNan(Float16(std::nanf("")).bits));
  EXPECT_TRUE(HalfIsNan(Float16(Bits(0x7f800001)).bits));  // signalling NaN stays NaN
  EXPECT_EQ(Float16(Bits(0xffc00000)).bits & 0x8000, 0x8000);
  EXPECT_EQ(Float16(0.0f).bits, 0x0000);
  EXPECT_EQ(Float16(-0.0f).bits, 0x8000);
  EXPECT_EQ(Float16(std::ldexp(1.0f, -25)).bits, 0x0000);  // half the smallest subnormal: ties to 0
  EXPECT_EQ(Float16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)).bits, 0x0001);
  EXPECT_EQ(Float16(std::ldexp(1.0f, -24)).bits, 0x0001);
  EXPECT_EQ(Float16(std::ldexp(3.0f, -25)).bits, 0x0002);  // 1.5 ulp: ties to even (2)
  EXPECT_EQ(Float16(std::ldexp(1.0f, -14)).bits, 0x0400);  // smallest normal
  EXPECT_EQ(Float16(1e-30f).bits, 0x0000);
  EXPECT_EQ(Float16(std::numeric_limits<float>::denorm_min()).bits, 0x0000);
  EXPECT_EQ(Float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(Float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(Float16(0.1f).bits, 0x2e66);
}

TEST(DtypeTest, BFloat16RoundTripsAndRounds) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = static_cast<float>(BFloat16::FromBits(h));
    EXPECT_EQ(BitsOf(f), h << 16);  // widening is exact
    const uint16_t back = BFloat16(f).bits;
    if (BFloatIsNan(h)) {
      EXPECT_TRUE(BFloatIsNan(back)) << std::hex << h;
    } else {
      EXPECT_EQ(back, h) << std::hex << h;
    }
  }
  for (uint32_t h = 0; h < 0x7f7f; ++h) {  // midpoints round to even
    const float mid = Bits((h << 16) | 0x8000u);
    ASSERT_EQ(BFloat16(mid).bits, (h & 1) ? h + 1 : h) << std::hex << h;
    ASSERT_EQ(BFloat16(Bits((h << 16) | 0x8001u)).bits, h + 1) << std::hex << h;
    ASSERT_EQ(BFloat16(Bits((h << 16) | 0x7fffu)).bits, h) << std::hex << h;
  }
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);  // rounds up to inf
  EXPECT_EQ(BFloat16(-std::numeric_limits<float>::infinity()).bits, 0xff80);
  EXPECT_TRUE(BFloatIsNan(BFloat16(Bits(0x7f800001)).bits));  // low payload bits only
  EXPECT_TRUE(BFloatIsNan(BFloat16(Bits(0xffffffff)).bits));
  EXPECT_EQ(BFloat16(1e-45f).bits, 0x0000);
  EXPECT_EQ(BFloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
}

}  // namespace
}  // namespace ge
