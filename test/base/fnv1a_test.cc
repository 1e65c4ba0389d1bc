// Fnv1a64 gives FNV-1a's published 64-bit values, so what it wrote to disk reads back the same on
// every build and host.
#include "runtime/base/fnv1a.h"

#include <string>

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(Fnv1a64, MatchesThePublishedValues) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(Fnv1a64, ReadsBytesAboveSevenBitsAndZerosAsThemselves) {
  // A signed char must not sign-extend into the hash; an embedded zero is a byte like any other.
  const std::string high("\xff\x80", 2);
  const std::string with_zero("a\0b", 3);
  EXPECT_NE(Fnv1a64(high), Fnv1a64(std::string("\x7f\x00", 2)));
  EXPECT_NE(Fnv1a64(with_zero), Fnv1a64("ab"));
  EXPECT_EQ(Fnv1a64(high),
            (((0xcbf29ce484222325ull ^ 0xff) * 0x100000001b3ull) ^ 0x80) * 0x100000001b3ull);
}

}  // namespace
}  // namespace cohort
