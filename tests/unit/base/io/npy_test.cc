// .npy round trips for every dtype, numpy's own header variants, and every
// malformed-file error.
#include "base/io/npy.h"

#include <cstring>

#include "gtest/gtest.h"

namespace ge::io {
namespace {

std::string Header(const std::string& dict, int major = 1) {
  std::string h = dict;
  std::string out = std::string("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  if (major == 1) {
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>(h.size() >> 8);
  } else {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  }
  return out + h;
}

template <typename T>
void RoundTrip(std::vector<T> values, Shape shape) {
  Tensor t = Tensor::FromVector<T>(values, shape);
  auto bytes = SerializeNpy(t);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ((bytes->find('\n') + 1) % 64, 0u) << "data must start 64-byte aligned";
  auto back = ParseNpy(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(TensorsEqual(*back, t)) << back->DebugString() << " vs " << t.DebugString();
}

TEST(NpyTest, RoundTripsEveryDtype) {
  RoundTrip<float>({1.5f, -2, 3, 4, 5, 6}, Shape{2, 3});
  RoundTrip<double>({1e300, -0.0}, Shape{2});
  RoundTrip<int8_t>({-128, 127}, Shape{2});
  RoundTrip<int16_t>({-3}, Shape{});
  RoundTrip<int32_t>({1, 2, 3, 4}, Shape{2, 2, 1});
  RoundTrip<int64_t>({INT64_MIN, INT64_MAX}, Shape{2});
  RoundTrip<uint8_t>({0, 255}, Shape{2});
  RoundTrip<uint16_t>({65535}, Shape{1});
  RoundTrip<uint32_t>({4000000000u}, Shape{1});
  RoundTrip<uint64_t>({UINT64_MAX}, Shape{1});
  RoundTrip<bool>({true, false, true}, Shape{3});
  RoundTrip<Float16>({Float16(1.5f), Float16(-2.0f)}, Shape{2});
  RoundTrip<std::string>({"a", "héllo", "", "日本"}, Shape{2, 2});
  RoundTrip<float>({}, Shape{0, 3});
}

TEST(NpyTest, BFloat16IsWidenedToFloat32) {
  Tensor t = Tensor::FromVector<BFloat16>({BFloat16(1.5f), BFloat16(-3.0f)}, Shape{2});
  auto back = ParseNpy(*SerializeNpy(t));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(TensorsEqual(*back, Tensor::FromVector<float>({1.5f, -3.0f}, Shape{2})));
}

TEST(NpyTest, ReadsBigEndianFortranAndVersion2) {
  // >i4, Fortran order, shape (2, 3): memory holds columns.
  std::string bytes = Header("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }\n", 2);
  const int32_t column_major[] = {1, 4, 2, 5, 3, 6};
  for (int32_t v : column_major) {
    for (int b = 3; b >= 0; --b) bytes += static_cast<char>((v >> (8 * b)) & 0xff);
  }
  auto t = ParseNpy(bytes);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(TensorsEqual(*t, Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3})));
}

TEST(NpyTest, ReadsByteStrings) {
  std::string bytes = Header("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }\n");
  bytes += std::string("ab\0xyz", 6);
  auto t = ParseNpy(bytes);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<std::string>()[0], "ab");
  EXPECT_EQ(t->data<std::string>()[1], "xyz");
}

// Byte strings that are not UTF-8 (read from '|S' files, or made by a
// kernel) are written as '<U' with U+FFFD for each byte that does not start
// a well-formed sequence, never as values past U+10FFFF or surrogates.
TEST(NpyTest, InvalidUtf8IsWrittenAsReplacementCharacters) {
  const std::vector<std::string> values = {
      std::string("ok\xc3\xa9", 4),          // "oké": kept
      std::string("\xf7\xbf\xbf\xbf", 4),  // past U+10FFFF
      std::string("\xed\xa0\x80", 3),       // a surrogate
      std::string("\xc0\xaf", 2),            // overlong '/'
      std::string("a\xe2\x82", 3),           // truncated
      std::string("\x80x", 2)};              // stray continuation byte
  const std::string fffd = "\xef\xbf\xbd";
  const std::vector<std::string> expected = {std::string("ok\xc3\xa9", 4), fffd + fffd + fffd + fffd,
                                             fffd + fffd + fffd, fffd + fffd, "a" + fffd + fffd, fffd + "x"};
  Tensor t = Tensor::FromVector<std::string>(values, Shape{6});
  auto bytes = SerializeNpy(t);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto back = ParseNpy(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(back->data<std::string>()[i], expected[i]) << i;
}

TEST(NpyTest, RejectsMalformedFiles) {
  struct Case {
    std::string bytes;
    std::string needle;
  };
  const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n";
  std::vector<Case> cases = {
      {"hello", "bad magic"},
      {Header(good_dict) + std::string(8, '\0'), "shorter than its shape"},
      {Header("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\n") + std::string(8, '\0'), "pickled"},
      {Header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n"), "structured"},
      {Header("{'fortran_order': False, 'shape': (1,), }\n"), "lacks 'descr'"},
      {Header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n"), "bad .npy dim"},
      {Header("{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }\n"), "unsupported .npy dtype"},
      {Header(good_dict, 9), "unsupported .npy format version 9"},
      {Header(good_dict).substr(0, 20), "truncated"},
      {Header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }\n"), "overflow"},
      // Found by the npy fuzzer: a bool byte other than 0/1 is UB once read.
      {Header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n") + std::string("\x01\x00\x20", 3),
       "bool element 2 is byte 32, not 0 or 1"},
      // Also found by the fuzzer: UCS-4 values with no UTF-8 form.
      {Header("{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }\n") + std::string("a\0\0\0\xff\xff\xff\xff", 8),
       "string element 1 holds ffffffff (hex), which is not a Unicode code point"},
      {Header("{'descr': '>U1', 'fortran_order': False, 'shape': (1,), }\n") + std::string("\0\0\xd8\0", 4),
       "string element 0 holds d800 (hex)"},
  };
  for (const Case& c : cases) {
    auto t = ParseNpy(c.bytes, "x.npy");
    ASSERT_FALSE(t.ok()) << c.needle;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(t.status().message()).find(c.needle), std::string::npos) << t.status();
    EXPECT_NE(std::string(t.status().message()).find("x.npy"), std::string::npos) << t.status();
  }
}

}  // namespace
}  // namespace ge::io
