// ParseCompressionOptions: Determined's booleans, strings, topk and powersgd maps, errors.
#include "runtime/config/compression_options.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using Form = GradientCompressionSetting::Form;

GradientCompressionSetting Bool(bool enabled) {
  GradientCompressionSetting s;
  s.form = Form::kBool;
  s.enabled = enabled;
  return s;
}

GradientCompressionSetting String(const char* type) {
  GradientCompressionSetting s;
  s.form = Form::kString;
  s.type = type;
  return s;
}

GradientCompressionSetting Map(const char* type) {
  GradientCompressionSetting s = String(type);
  s.form = Form::kMap;
  return s;
}

CompressionOptions::Kind KindOf(const GradientCompressionSetting& s) {
  absl::StatusOr<CompressionOptions> options = ParseCompressionOptions(s);
  EXPECT_TRUE(options.ok()) << options.status();
  return options.ok() ? options->kind : CompressionOptions::kNone;
}

void ExpectError(const GradientCompressionSetting& s, const char* part) {
  absl::Status status = ParseCompressionOptions(s).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("optimizations.gradient_compression"));
  EXPECT_THAT(status.message(), HasSubstr("allowed:"));
  EXPECT_THAT(status.message(), HasSubstr(part));
}

TEST(CompressionOptionsTest, DeterminedBooleansAndAbsence) {
  EXPECT_EQ(KindOf(GradientCompressionSetting{}), CompressionOptions::kNone);
  EXPECT_EQ(KindOf(Bool(false)), CompressionOptions::kNone);
  EXPECT_EQ(KindOf(Bool(true)), CompressionOptions::kFp16);
}

TEST(CompressionOptionsTest, Strings) {
  EXPECT_EQ(KindOf(String("fp16")), CompressionOptions::kFp16);
  EXPECT_EQ(KindOf(String("bf16")), CompressionOptions::kBf16);
  ExpectError(String("int8"), "\"int8\"");
  ExpectError(String("topk"), "map");
}

TEST(CompressionOptionsTest, TopK) {
  GradientCompressionSetting s = Map("topk");
  s.ratio = 0.01;
  absl::StatusOr<CompressionOptions> options = ParseCompressionOptions(s);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->kind, CompressionOptions::kTopK);
  EXPECT_EQ(options->topk_ratio, 0.01);
  s.ratio = 1.0;
  EXPECT_TRUE(ParseCompressionOptions(s).ok());
  for (double bad : {0.0, -0.1, 1.5, std::nan("")}) {
    s.ratio = bad;
    ExpectError(s, "gradient_compression.ratio");
  }
  s.ratio.reset();
  ExpectError(s, "required");
  s.ratio = 0.1;
  s.rank = 2;
  ExpectError(s, "rank: does not apply to type topk");
}

TEST(CompressionOptionsTest, PowerSgd) {
  GradientCompressionSetting s = Map("powersgd");
  s.rank = 4;
  s.start_iter = 0;
  absl::StatusOr<CompressionOptions> options = ParseCompressionOptions(s);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->kind, CompressionOptions::kPowerSgd);
  EXPECT_EQ(options->powersgd_rank, 4u);
  EXPECT_EQ(options->powersgd_start_iter, 0u);
  options = ParseCompressionOptions(Map("powersgd"));
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->powersgd_rank, 1u);
  EXPECT_EQ(options->powersgd_start_iter, 1000u);
  s.rank = 0;
  ExpectError(s, "gradient_compression.rank");
  s.rank = 1.5;
  ExpectError(s, "whole number");
  s.rank = 1;
  s.start_iter = -1;
  ExpectError(s, "gradient_compression.start_iter");
  s.start_iter = 10;
  s.ratio = 0.5;
  ExpectError(s, "ratio: does not apply to type powersgd");
}

TEST(CompressionOptionsTest, MapTypes) {
  EXPECT_EQ(KindOf(Map("fp16")), CompressionOptions::kFp16);
  EXPECT_EQ(KindOf(Map("bf16")), CompressionOptions::kBf16);
  ExpectError(Map(""), "type: missing");
  ExpectError(Map("qsgd"), "unknown compression \"qsgd\"");
}

TEST(CompressionOptionsTest, KindNames) {
  EXPECT_EQ(CompressionKindName(CompressionOptions::kTopK), "topk");
  EXPECT_EQ(CompressionKindName(CompressionOptions::kPowerSgd), "powersgd");
}

TEST(CompressionOptionsTest, DescriptionsNameTheSettings) {
  CompressionOptions options;
  EXPECT_EQ(DescribeCompression(options), "none");
  options.kind = CompressionOptions::kBf16;
  EXPECT_EQ(DescribeCompression(options), "bf16");
  options.kind = CompressionOptions::kTopK;
  options.topk_ratio = 0.01;
  EXPECT_EQ(DescribeCompression(options), "topk (ratio 0.01)");
  options.kind = CompressionOptions::kPowerSgd;
  options.powersgd_rank = 2;
  options.powersgd_start_iter = 1000;
  EXPECT_EQ(DescribeCompression(options), "powersgd (rank 2, start_iter 1000)");
}

}  // namespace
}  // namespace cohort
