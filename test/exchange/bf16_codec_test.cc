// Bf16Codec: hand-checked bfloat16 bit patterns, NaN handling, random round trips.
#include "runtime/exchange/compression/wire/bf16_codec.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace cohort {
namespace {

uint16_t EncodeBits(uint32_t bits) {
  const float value = std::bit_cast<float>(bits);
  uint16_t word = 0;
  Bf16Codec().Encode(&value, 1, &word);
  return word;
}

TEST(Bf16CodecTest, NameAndSize) {
  Bf16Codec codec;
  EXPECT_EQ(codec.name(), "bf16");
  EXPECT_EQ(codec.EncodedBytes(3), 6u);
}

TEST(Bf16CodecTest, EncodesHandCheckedBitPatterns) {
  EXPECT_EQ(EncodeBits(0x00000000u), 0x0000);  // 0
  EXPECT_EQ(EncodeBits(0x80000000u), 0x8000);  // -0
  EXPECT_EQ(EncodeBits(0x3f800000u), 0x3f80);  // 1
  EXPECT_EQ(EncodeBits(0xc0490fdbu), 0xc049);  // -pi
  EXPECT_EQ(EncodeBits(0x3f808000u), 0x3f80);  // tie, rounds to even
  EXPECT_EQ(EncodeBits(0x3f818000u), 0x3f82);  // tie, rounds to even
  EXPECT_EQ(EncodeBits(0x3f808001u), 0x3f81);  // above the tie
  EXPECT_EQ(EncodeBits(0x3f807fffu), 0x3f80);  // below the tie
  EXPECT_EQ(EncodeBits(0x7f800000u), 0x7f80);  // inf
  EXPECT_EQ(EncodeBits(0xff800000u), 0xff80);  // -inf
  EXPECT_EQ(EncodeBits(0x7f7fffffu), 0x7f80);  // largest float rounds past bfloat16's largest
  EXPECT_EQ(EncodeBits(0x00000001u), 0x0000);  // smallest float subnormal
  EXPECT_EQ(EncodeBits(0x00010000u), 0x0001);  // smallest bfloat16 subnormal
}

TEST(Bf16CodecTest, NanStaysNan) {
  EXPECT_EQ(EncodeBits(0x7fc00000u), 0x7fc0);
  EXPECT_EQ(EncodeBits(0xffc00000u), 0xffc0);
  EXPECT_EQ(EncodeBits(0x7f800001u), 0x7fc0);  // truncating would give inf
  EXPECT_EQ(EncodeBits(0x7fffffffu), 0x7fff);  // rounding would carry into the sign
  EXPECT_EQ(EncodeBits(0x7fa00000u), 0x7fe0);  // signalling: quieted, payload kept
}

TEST(Bf16CodecTest, DecodeIsExact) {
  const uint16_t words[] = {0x0000, 0x8000, 0x3f80, 0x7f80, 0x0001, 0xc049};
  float values[6];
  Bf16Codec().Decode(words, 6, values);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(values[i]), static_cast<uint32_t>(words[i]) << 16);
  }
}

TEST(Bf16CodecTest, RandomRoundTripStaysWithinHalfAnUlp) {
  std::mt19937 random(3);
  std::normal_distribution<float> normal(0.0f, 1e-3f);
  std::vector<float> values(100003);
  for (float& v : values) v = normal(random);
  std::vector<uint16_t> wire(values.size());
  std::vector<float> back(values.size());
  Bf16Codec codec;
  codec.Encode(values.data(), values.size(), wire.data());
  codec.Decode(wire.data(), values.size(), back.data());
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    ASSERT_LE(std::fabs(back[i] - v), std::fabs(v) * 0x1p-8f) << v;  // 2^-8 relative
    ASSERT_EQ(std::signbit(back[i]), std::signbit(v));
  }
}

}  // namespace
}  // namespace cohort
