// CRC-32C: the standard check value, the iSCSI test vectors, and agreement with a bit-at-a-time
// reference for every length and split point.
#include "runtime/checkpoint/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace cohort {
namespace {

// The definition, one bit at a time: reflected Castagnoli polynomial, inverted in and out.
uint32_t ReferenceCrc32c(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFF;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78 : 0);
  }
  return ~crc;
}

std::string Pattern(size_t length) {
  std::string bytes(length, '\0');
  uint32_t state = 12345;
  for (char& c : bytes) {
    state = state * 1103515245 + 12345;
    c = static_cast<char>(state >> 24);
  }
  return bytes;
}

TEST(Crc32cTest, StandardCheckValue) { EXPECT_EQ(Crc32c("123456789"), 0xE3069283u); }

TEST(Crc32cTest, EmptyInputIsZero) { EXPECT_EQ(Crc32c(""), 0u); }

TEST(Crc32cTest, Rfc3720TestVectors) {
  std::string ascending(32, '\0');
  std::string descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32cTest, MatchesTheBitwiseDefinitionForEveryLength) {
  const std::string bytes = Pattern(300);
  for (size_t length = 0; length <= bytes.size(); ++length) {
    const std::string prefix = bytes.substr(0, length);
    ASSERT_EQ(Crc32c(prefix), ReferenceCrc32c(prefix)) << "length " << length;
  }
}

TEST(Crc32cTest, ExtendingEqualsOneShotAtEverySplit) {
  const std::string bytes = Pattern(77);
  const uint32_t whole = Crc32c(bytes);
  for (size_t split = 0; split <= bytes.size(); ++split) {
    const absl::string_view view(bytes);
    EXPECT_EQ(Crc32cExtend(Crc32c(view.substr(0, split)), view.substr(split)), whole) << split;
  }
}

TEST(Crc32cTest, UnalignedStartsGiveTheSameResult) {
  const std::string bytes = Pattern(64 + 8);
  const std::string expected = bytes.substr(3, 64);
  EXPECT_EQ(Crc32c(absl::string_view(bytes).substr(3, 64)), ReferenceCrc32c(expected));
}

}  // namespace
}  // namespace cohort
