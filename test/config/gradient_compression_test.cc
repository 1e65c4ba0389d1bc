// optimizations.gradient_compression: every accepted form, the errors for bad ones, and the
// round trip through effective_yaml.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

constexpr char kMinimalForCompression[] = R"(
entrypoint: mlp
searcher: {name: single, metric: loss, max_length: {batches: 10}}
hyperparameters: {global_batch_size: 8}
)";

absl::StatusOr<CompressionOptions> CompressionFrom(const std::string& value) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(absl::StrCat(
      kMinimalForCompression, "optimizations:\n  gradient_compression: ", value, "\n"));
  if (!config.ok()) return config.status();
  return config->optimizations.gradient_compression;
}

CompressionOptions MustRead(const std::string& value) {
  absl::StatusOr<CompressionOptions> options = CompressionFrom(value);
  EXPECT_TRUE(options.ok()) << value << ": " << options.status();
  return options.ok() ? *options : CompressionOptions{};
}

TEST(GradientCompressionTest, AbsentAndFalseMeanNone) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kMinimalForCompression);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->optimizations.gradient_compression.kind, CompressionOptions::kNone);
  EXPECT_EQ(MustRead("false").kind, CompressionOptions::kNone);
  EXPECT_EQ(MustRead("null").kind, CompressionOptions::kNone);
  EXPECT_EQ(MustRead("{type: none}").kind, CompressionOptions::kNone);
}

TEST(GradientCompressionTest, TrueIsDeterminedsFp16) {
  EXPECT_EQ(MustRead("true").kind, CompressionOptions::kFp16);
  EXPECT_EQ(MustRead("True").kind, CompressionOptions::kFp16);
}

TEST(GradientCompressionTest, StringsNameTheHalfPrecisionCodecs) {
  EXPECT_EQ(MustRead("fp16").kind, CompressionOptions::kFp16);
  EXPECT_EQ(MustRead("\"bf16\"").kind, CompressionOptions::kBf16);
  EXPECT_EQ(MustRead("{type: bf16}").kind, CompressionOptions::kBf16);
}

TEST(GradientCompressionTest, TopKMapCarriesItsRatio) {
  const CompressionOptions options = MustRead("{type: topk, ratio: 0.01}");
  EXPECT_EQ(options.kind, CompressionOptions::kTopK);
  EXPECT_DOUBLE_EQ(options.topk_ratio, 0.01);
  EXPECT_DOUBLE_EQ(MustRead("{type: topk, ratio: 1}").topk_ratio, 1.0);
}

TEST(GradientCompressionTest, PowerSgdMapCarriesRankAndStartIter) {
  const CompressionOptions options =
      MustRead("\n    type: powersgd\n    rank: 4\n    start_iter: 0");
  EXPECT_EQ(options.kind, CompressionOptions::kPowerSgd);
  EXPECT_EQ(options.powersgd_rank, 4u);
  EXPECT_EQ(options.powersgd_start_iter, 0u);
  const CompressionOptions defaults = MustRead("{type: powersgd}");
  EXPECT_EQ(defaults.powersgd_rank, 1u);
  EXPECT_EQ(defaults.powersgd_start_iter, 1000u);
}

TEST(GradientCompressionTest, OverrideReplacesTheFileValue) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(
      absl::StrCat(kMinimalForCompression, "optimizations: {gradient_compression: true}\n"),
      {"optimizations.gradient_compression={type: topk, ratio: 0.5}"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->optimizations.gradient_compression.kind, CompressionOptions::kTopK);
  EXPECT_DOUBLE_EQ(config->optimizations.gradient_compression.topk_ratio, 0.5);
}

TEST(GradientCompressionTest, EffectiveYamlKeepsEveryForm) {
  for (const char* value :
       {"true", "bf16", "{type: topk, ratio: 0.25}", "{type: powersgd, rank: 3, start_iter: 7}"}) {
    absl::StatusOr<ExperimentConfig> first = ParseExperimentConfig(absl::StrCat(
        kMinimalForCompression, "optimizations:\n  gradient_compression: ", value, "\n"));
    ASSERT_TRUE(first.ok()) << value << ": " << first.status();
    absl::StatusOr<ExperimentConfig> second = ParseExperimentConfig(first->effective_yaml);
    ASSERT_TRUE(second.ok()) << value << ": " << second.status();
    const CompressionOptions& a = first->optimizations.gradient_compression;
    const CompressionOptions& b = second->optimizations.gradient_compression;
    EXPECT_EQ(b.kind, a.kind) << value;
    EXPECT_EQ(b.topk_ratio, a.topk_ratio) << value;
    EXPECT_EQ(b.powersgd_rank, a.powersgd_rank) << value;
    EXPECT_EQ(b.powersgd_start_iter, a.powersgd_start_iter) << value;
    EXPECT_EQ(second->effective_yaml, first->effective_yaml) << value;
    EXPECT_EQ(TrainingFingerprint(*second), TrainingFingerprint(*first)) << value;
  }
}

struct BadCase {
  const char* value;
  std::vector<std::string> message_parts;  // each appears in the error message
};

TEST(GradientCompressionTest, BadFormsNameTheFieldAndWhatIsAllowed) {
  const std::string allowed =
      "allowed: true, false, \"none\", \"fp16\", \"bf16\" (or {type: none | fp16 | bf16}), "
      "{type: topk";
  const std::vector<BadCase> cases = {
      {"zip", {"optimizations.gradient_compression: unknown compression \"zip\"", allowed}},
      {"'true'", {"optimizations.gradient_compression: unknown compression \"true\"", allowed}},
      {"topk", {"optimizations.gradient_compression: \"topk\" needs its parameters", allowed}},
      {"{type: topk, ratio: 0}",
       {"optimizations.gradient_compression.ratio: 0 is not in (0, 1]", allowed}},
      {"{type: topk, ratio: 2}",
       {"optimizations.gradient_compression.ratio: 2 is not in (0, 1]", allowed}},
      {"{type: topk}", {"optimizations.gradient_compression.ratio: required", allowed}},
      {"{type: topk, ratio: many}",
       {"optimizations.gradient_compression.ratio: expected a number; got 'many'"}},
      {"{type: powersgd, rank: 0}",
       {"optimizations.gradient_compression.rank: 0 is not a whole number from 1 to 4294967295",
        allowed}},
      {"{type: powersgd, rank: 1.5}", {"optimizations.gradient_compression.rank", allowed}},
      {"{type: powersgd, start_iter: -1}",
       {"optimizations.gradient_compression.start_iter", allowed}},
      {"{type: powersgd, start_iter: 99999999999999999999}",
       {"optimizations.gradient_compression.start_iter: 1e+20 is not a whole number from 0 to "
        "9223372036854775808",
        allowed}},
      {"{type: powersgd, ratio: 0.1}",
       {"optimizations.gradient_compression.ratio: does not apply to type powersgd"}},
      {"{type: topk, ratio: 0.1, level: 3}",
       {"optimizations.gradient_compression.level: unknown key"}},
      {"{type: zip}", {"optimizations.gradient_compression.type: unknown compression \"zip\""}},
      {"{ratio: 0.1}", {"optimizations.gradient_compression.type: missing"}},
      {"[fp16]", {"optimizations.gradient_compression: expected true, false", "got [fp16]"}},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<CompressionOptions> options = CompressionFrom(c.value);
    ASSERT_FALSE(options.ok()) << c.value;
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument) << c.value;
    for (const std::string& part : c.message_parts) {
      EXPECT_THAT(options.status().message(), HasSubstr(part)) << c.value;
    }
  }
}

}  // namespace
}  // namespace cohort
