// Fp16Codec: hand-checked IEEE half bit patterns, exhaustive decode/encode, random round trips.
#include "runtime/exchange/compression/wire/fp16_codec.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace cohort {
namespace {

uint16_t Encode(float value) {
  Fp16Codec codec;
  uint16_t half = 0;
  codec.Encode(&value, 1, &half);
  return half;
}

float Decode(uint16_t half) {
  Fp16Codec codec;
  float value = 0;
  codec.Decode(&half, 1, &value);
  return value;
}

bool IsNanHalf(uint16_t half) { return (half & 0x7c00) == 0x7c00 && (half & 0x03ff) != 0; }

TEST(Fp16CodecTest, NameAndSize) {
  Fp16Codec codec;
  EXPECT_EQ(codec.name(), "fp16");
  EXPECT_EQ(codec.EncodedBytes(10), 20u);
}

TEST(Fp16CodecTest, EncodesHandCheckedBitPatterns) {
  EXPECT_EQ(Encode(0.0f), 0x0000);
  EXPECT_EQ(Encode(-0.0f), 0x8000);
  EXPECT_EQ(Encode(1.0f), 0x3c00);
  EXPECT_EQ(Encode(-2.0f), 0xc000);
  EXPECT_EQ(Encode(0.5f), 0x3800);
  EXPECT_EQ(Encode(65504.0f), 0x7bff);                        // largest half
  EXPECT_EQ(Encode(std::nextafter(65520.0f, 0.0f)), 0x7bff);  // just below the midpoint
  EXPECT_EQ(Encode(65520.0f), 0x7c00);                        // midpoint, ties to 2^16 = inf
  EXPECT_EQ(Encode(-65520.0f), 0xfc00);
  EXPECT_EQ(Encode(1e10f), 0x7c00);
  EXPECT_EQ(Encode(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(Encode(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(Encode(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(Encode(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(Encode(-0x1p-24f), 0x8001);
  EXPECT_EQ(Encode(1023 * 0x1p-24f), 0x03ff);  // largest subnormal
  EXPECT_EQ(Encode(0x1p-25f), 0x0000);         // tie between 0 and 2^-24
  EXPECT_EQ(Encode(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(Encode(3 * 0x1p-25f), 0x0002);  // tie between 1 and 2 steps
  EXPECT_EQ(Encode(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(Encode(1.0f + 0x1p-11f), 0x3c00);             // tie, rounds to even 0x3c00
  EXPECT_EQ(Encode(1.0f + 3 * 0x1p-11f), 0x3c02);         // tie, rounds to even 0x3c02
  EXPECT_EQ(Encode(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // above the tie
  EXPECT_EQ(Encode(2047 * 0x1p-25f), 0x0400);             // rounds up into the normals
}

TEST(Fp16CodecTest, NanStaysQuietNanWithItsSign) {
  EXPECT_EQ(Encode(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(Encode(-std::numeric_limits<float>::quiet_NaN()), 0xfe00);
  // A NaN whose payload lies only in the dropped bits must not become infinity.
  EXPECT_TRUE(IsNanHalf(Encode(std::bit_cast<float>(0x7f800001u))));
  EXPECT_EQ(Encode(std::bit_cast<float>(0x7f800001u)), 0x7e00);
}

TEST(Fp16CodecTest, DecodesHandCheckedBitPatterns) {
  EXPECT_EQ(std::bit_cast<uint32_t>(Decode(0x0000)), 0x00000000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(Decode(0x8000)), 0x80000000u);
  EXPECT_EQ(Decode(0x3c00), 1.0f);
  EXPECT_EQ(Decode(0x7bff), 65504.0f);
  EXPECT_EQ(Decode(0x0001), 0x1p-24f);
  EXPECT_EQ(Decode(0x83ff), -1023 * 0x1p-24f);
  EXPECT_EQ(Decode(0x0400), 0x1p-14f);
  EXPECT_EQ(Decode(0x3555), 0.333251953125f);
  EXPECT_EQ(Decode(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(Decode(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Decode(0x7e00)));
  EXPECT_TRUE(std::isnan(Decode(0x7c01)));
}

TEST(Fp16CodecTest, EveryHalfSurvivesDecodeThenEncode) {
  std::vector<uint16_t> halves(65536), again(65536);
  for (uint32_t i = 0; i < 65536; ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> floats(65536);
  Fp16Codec codec;
  codec.Decode(halves.data(), halves.size(), floats.data());
  codec.Encode(floats.data(), floats.size(), again.data());
  for (uint32_t i = 0; i < 65536; ++i) {
    if (IsNanHalf(halves[i])) {
      EXPECT_TRUE(IsNanHalf(again[i])) << std::hex << i;
      EXPECT_EQ(again[i], halves[i] | 0x0200) << std::hex << i;  // quieted, payload kept
    } else {
      ASSERT_EQ(again[i], halves[i]) << std::hex << i;
    }
  }
}

TEST(Fp16CodecTest, RandomRoundTripStaysWithinHalfAnUlp) {
  std::mt19937 random(42);
  std::uniform_real_distribution<float> exponent(-30.0f, 16.0f);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::vector<float> values(100003);  // odd, so the vector loops' scalar tail runs too
  for (float& v : values) v = mantissa(random) * std::exp2(exponent(random));
  std::vector<uint16_t> wire(values.size());
  std::vector<float> back(values.size());
  Fp16Codec codec;
  codec.Encode(values.data(), values.size(), wire.data());
  codec.Decode(wire.data(), values.size(), back.data());
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = values[i], magnitude = std::fabs(v);
    // Half a unit in the last place: 2^-11 relative for normals, 2^-25 absolute below 2^-14.
    const float bound =
        magnitude < 0x1p-14f ? 0x1p-25f : std::exp2(std::floor(std::log2(magnitude)) - 11);
    ASSERT_LE(std::fabs(back[i] - v), bound) << v;
    ASSERT_EQ(std::signbit(back[i]), std::signbit(v)) << v;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's own float -> _Float16 conversion is correctly rounded; ours must agree everywhere.
TEST(Fp16CodecTest, AgreesWithTheCompilersConversionOnRandomBits) {
  std::mt19937 random(7);
  std::vector<float> values(200000);
  for (float& v : values) v = std::bit_cast<float>(static_cast<uint32_t>(random()));
  std::vector<uint16_t> wire(values.size());
  Fp16Codec().Encode(values.data(), values.size(), wire.data());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    const _Float16 expected = static_cast<_Float16>(values[i]);
    ASSERT_EQ(wire[i], std::bit_cast<uint16_t>(expected)) << values[i];
  }
}
#endif

}  // namespace
}  // namespace cohort
