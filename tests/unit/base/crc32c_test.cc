// CRC-32C: the standard check values (RFC 3720), and incremental use equal
// to one shot at every length and alignment.
#include "base/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace ge {
namespace {

TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(Crc32c("", 0), 0u);
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
}

TEST(Crc32cTest, IncrementalEqualsOneShotAtEveryLengthAndOffset) {
  std::string data(300, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + 7);
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t length = 0; offset + length <= data.size(); length += 13) {
      const uint32_t whole = Crc32c(data.data() + offset, length);
      const size_t half = length / 2;
      const uint32_t first = Crc32c(data.data() + offset, half);
      EXPECT_EQ(Crc32c(data.data() + offset + half, length - half, first), whole) << offset << " " << length;
    }
  }
}

}  // namespace
}  // namespace ge
