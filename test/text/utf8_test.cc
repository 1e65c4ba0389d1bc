// FirstInvalidUtf8Byte against RFC 3629's grammar: every length of well-formed sequence, and
// each way a sequence can be ill-formed, at the offset where it starts.
#include "runtime/text/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(Utf8Test, AcceptsWellFormedTextOfEveryLength) {
  EXPECT_EQ(FirstInvalidUtf8Byte(""), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8Byte("plain ascii\n\t"), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8Byte("caf\xc3\xa9"), std::nullopt);          // U+00E9
  EXPECT_EQ(FirstInvalidUtf8Byte("\xe2\x82\xac 5"), std::nullopt);       // U+20AC
  EXPECT_EQ(FirstInvalidUtf8Byte("\xef\xbb\xbfname: x"), std::nullopt);  // a BOM
  EXPECT_EQ(FirstInvalidUtf8Byte("\xf0\x9f\x98\x80"), std::nullopt);     // U+1F600
  EXPECT_EQ(FirstInvalidUtf8Byte("\xf4\x8f\xbf\xbf"), std::nullopt);     // U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8Byte(std::string("nul\0inside", 10)), std::nullopt);
}

TEST(Utf8Test, NamesTheFirstByteOfEachIllFormedSequence) {
  EXPECT_EQ(FirstInvalidUtf8Byte("ab\xff"), 2u);            // never valid
  EXPECT_EQ(FirstInvalidUtf8Byte("a\x80z"), 1u);            // a lone continuation byte
  EXPECT_EQ(FirstInvalidUtf8Byte("x\xc3"), 1u);             // cut short at the end
  EXPECT_EQ(FirstInvalidUtf8Byte("\xe2\x82z"), 0u);         // cut short by a new character
  EXPECT_EQ(FirstInvalidUtf8Byte("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8Byte("\xe0\x80\xaf"), 0u);      // overlong, 3 bytes
  EXPECT_EQ(FirstInvalidUtf8Byte("\xf0\x80\x80\xaf"), 0u);  // overlong, 4 bytes
  EXPECT_EQ(FirstInvalidUtf8Byte("ok \xed\xa0\x80"), 3u);   // surrogate U+D800
  EXPECT_EQ(FirstInvalidUtf8Byte("\xf4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(FirstInvalidUtf8Byte("\xf5\x80\x80\x80"), 0u);  // lead byte beyond F4
  EXPECT_EQ(FirstInvalidUtf8Byte("\xc3\xa9\xc3"), 2u);      // after a good sequence
}

}  // namespace
}  // namespace cohort
