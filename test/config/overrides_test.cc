// `--set dotted.path=value` overrides, and QuotedYamlScalar, which writes any string as one.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"
#include "runtime/config/yaml_quoting.h"
#include "yaml-cpp/yaml.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

constexpr char kOverrideBase[] = R"(
entrypoint: mlp
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 100
hyperparameters:
  global_batch_size: 32
  lr: {type: double, minval: 0.01, maxval: 0.03}
  layers: [64, 32]
)";

ExperimentConfig MustParseWithSets(std::vector<std::string> sets) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kOverrideBase, sets);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *std::move(config) : ExperimentConfig{};
}

std::string ErrorOf(std::vector<std::string> sets) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kOverrideBase, sets);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

TEST(OverridesTest, ReplaceExistingValues) {
  const ExperimentConfig c =
      MustParseWithSets({"searcher.metric=accuracy", "searcher.max_length=250",
                         "hyperparameters.global_batch_size=64"});
  EXPECT_EQ(c.searcher.metric, "accuracy");
  EXPECT_EQ(c.searcher.max_length.value, 250u);
  EXPECT_EQ(c.global_batch_size, 64u);
  EXPECT_EQ(*c.hyperparameters.GetInt("global_batch_size"), 64);
}

TEST(OverridesTest, CreateKeysAlongThePath) {
  const ExperimentConfig c = MustParseWithSets(
      {"hyperparameters.momentum=0.9", "optimizations.aggregation_frequency=4",
       "min_validation_period.records=640", "checkpoint_storage.host_path=/tmp/ckpt",
       "reproducibility.experiment_seed=7", "hyperparameters.optimizer.beta1=0.5"});
  EXPECT_DOUBLE_EQ(*c.hyperparameters.GetDouble("momentum"), 0.9);
  EXPECT_DOUBLE_EQ(*c.hyperparameters.GetDouble("optimizer.beta1"), 0.5);
  EXPECT_EQ(c.optimizations.aggregation_frequency, 4u);
  ASSERT_TRUE(c.min_validation_period.has_value());
  EXPECT_EQ(c.min_validation_period->unit, LengthUnit::kRecords);
  EXPECT_EQ(c.min_validation_period->value, 640u);
  EXPECT_EQ(c.checkpoint_storage.host_path, "/tmp/ckpt");
  EXPECT_EQ(c.experiment_seed, 7u);
}

// A length is counted in one unit: setting another unit replaces it, as the docs' examples do
// (`--set searcher.max_length.batches=500` on a config counting epochs).
TEST(OverridesTest, SettingAnotherUnitOfALengthReplacesTheLength) {
  ExperimentConfig c = MustParseWithSets({"searcher.max_length.records=640"});
  EXPECT_EQ(c.searcher.max_length.unit, LengthUnit::kRecords);
  EXPECT_EQ(c.searcher.max_length.value, 640u);
  // From a bare integer (batches) too, and for the periods.
  c = MustParseWithSets({"searcher.max_length=250", "searcher.max_length.records=64",
                         "min_validation_period.batches=5", "min_validation_period.records=96"});
  EXPECT_EQ(c.searcher.max_length.unit, LengthUnit::kRecords);
  EXPECT_EQ(c.searcher.max_length.value, 64u);
  ASSERT_TRUE(c.min_validation_period.has_value());
  EXPECT_EQ(c.min_validation_period->unit, LengthUnit::kRecords);
  EXPECT_EQ(c.min_validation_period->value, 96u);
  // The same unit again just sets it.
  c = MustParseWithSets({"searcher.max_length.batches=500"});
  EXPECT_EQ(c.searcher.max_length.unit, LengthUnit::kBatches);
  EXPECT_EQ(c.searcher.max_length.value, 500u);
  // A map that is not a length keeps its other keys.
  c = MustParseWithSets({"hyperparameters.schedule.epochs=3", "hyperparameters.schedule.warmup=1",
                         "hyperparameters.schedule.batches=9"});
  EXPECT_EQ(*c.hyperparameters.GetInt("schedule.warmup"), 1);
  EXPECT_EQ(*c.hyperparameters.GetInt("schedule.epochs"), 3);
}

TEST(OverridesTest, ReplaceOrReshapeASearchSpace) {
  ExperimentConfig c = MustParseWithSets({"hyperparameters.lr=0.05"});
  EXPECT_EQ(c.hyperparameter_spaces.at("lr").kind, HyperparameterSpace::Kind::kConst);
  EXPECT_DOUBLE_EQ(*c.hyperparameters.GetDouble("lr"), 0.05);

  c = MustParseWithSets({"hyperparameters.lr.maxval=0.05"});
  EXPECT_EQ(c.hyperparameter_spaces.at("lr").kind, HyperparameterSpace::Kind::kDouble);
  EXPECT_DOUBLE_EQ(*c.hyperparameters.GetDouble("lr"), 0.03);
}

TEST(OverridesTest, ValuesAreReadAsYaml) {
  const ExperimentConfig c = MustParseWithSets(
      {"hyperparameters.tag='3'", "hyperparameters.layers=[128, 64, 32]",
       "hyperparameters.flag=true", "hyperparameters.name=resnet 50", "max_restarts="});
  EXPECT_EQ(**c.hyperparameters.GetString("tag"), "3");
  EXPECT_EQ(std::get<Hyperparameters::Other>(c.hyperparameters.values().at("layers")).text,
            "[128, 64, 32]");
  EXPECT_TRUE(*c.hyperparameters.GetBool("flag"));
  EXPECT_EQ(**c.hyperparameters.GetString("name"), "resnet 50");
  EXPECT_EQ(c.max_restarts, 5u);  // an empty value is null: the default
  EXPECT_EQ(ErrorOf({"description=a: b"}), "description: expected a string; got {a: b}");
  EXPECT_EQ(MustParseWithSets({"description='a: b'"}).description, "a: b");
}

TEST(OverridesTest, LaterOverridesWin) {
  const ExperimentConfig c = MustParseWithSets({"max_restarts=1", "max_restarts=2"});
  EXPECT_EQ(c.max_restarts, 2u);
}

TEST(OverridesTest, EffectiveYamlRecordsTheOverrides) {
  const ExperimentConfig c = MustParseWithSets({"hyperparameters.lr=0.05", "scheduling_unit=10"});
  EXPECT_THAT(c.effective_yaml, HasSubstr("lr: 0.05"));
  EXPECT_THAT(c.effective_yaml, HasSubstr("scheduling_unit: 10"));
  absl::StatusOr<ExperimentConfig> again = ParseExperimentConfig(c.effective_yaml);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->scheduling_unit, 10u);
  EXPECT_EQ(TrainingFingerprint(*again), TrainingFingerprint(c));
}

TEST(OverridesTest, BadSyntaxIsNamed) {
  EXPECT_EQ(ErrorOf({"max_restarts"}),
            "--set 'max_restarts': expected PATH=VALUE, e.g. searcher.max_length.batches=500");
  EXPECT_EQ(ErrorOf({"=5"}),
            "--set '=5': expected a dotted path of non-empty keys before '=', e.g. "
            "hyperparameters.lr=0.1");
  EXPECT_EQ(ErrorOf({"searcher..metric=x"}),
            "--set 'searcher..metric=x': expected a dotted path of non-empty keys before '=', "
            "e.g. hyperparameters.lr=0.1");
  EXPECT_THAT(ErrorOf({"hyperparameters.layers=[1,"}),
              HasSubstr("--set 'hyperparameters.layers=[1,': the value is not valid YAML: "));
  EXPECT_EQ(ErrorOf({"entrypoint.name=x"}),
            "--set 'entrypoint.name=x': cannot set a key inside entrypoint: it is 'mlp', not a "
            "map");
  EXPECT_EQ(ErrorOf({"hyperparameters.layers.first=1"}),
            "--set 'hyperparameters.layers.first=1': cannot set a key inside "
            "hyperparameters.layers: it is [64, 32], not a map");
}

TEST(OverridesTest, OverridesAreValidatedLikeTheFile) {
  EXPECT_EQ(ErrorOf({"searchr.metric=x"}), "searchr: unknown key; did you mean 'searcher'?");
}

TEST(QuotedYamlScalarTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(QuotedYamlScalar(""), R"("")");
  EXPECT_EQ(QuotedYamlScalar(R"(say "hi" \ bye)"), R"("say \"hi\" \\ bye")");
  EXPECT_EQ(QuotedYamlScalar("a\nb\tc"), R"("a\nb\tc")");
  EXPECT_EQ(QuotedYamlScalar(std::string("\0\r\x1f\x7f", 4)), R"("\x00\x0d\x1f\x7f")");
  EXPECT_EQ(QuotedYamlScalar("\xC3\xA9t\xC3\xA9"), "\"\xC3\xA9t\xC3\xA9\"");
}

TEST(QuotedYamlScalarTest, ReadsBackAsExactlyTheText) {
  std::vector<std::string> texts = {"",    "123",   "0x1f",         "true",     "null",       "~",
                                    "- a", "[1,2]", "{a: b}",       "a: b",     "#x",         "'q'",
                                    "\"",  "\\",    "two\nlines\n", " padded ", "caf\xC3\xA9"};
  for (int byte = 0; byte < 0x80; ++byte) {
    texts.push_back(std::string(1, static_cast<char>(byte)) + "x");
  }
  for (const std::string& text : texts) {
    const YAML::Node node = YAML::Load(QuotedYamlScalar(text));
    ASSERT_TRUE(node.IsScalar()) << QuotedYamlScalar(text);
    EXPECT_EQ(node.as<std::string>(), text) << QuotedYamlScalar(text);
  }
}

TEST(QuotedYamlScalarTest, KeepsAnOverrideAString) {
  const ExperimentConfig c =
      MustParseWithSets({"name=" + QuotedYamlScalar("2024"),
                         "hyperparameters.tag=" + QuotedYamlScalar("yes\nno \"maybe\"")});
  EXPECT_EQ(c.name, "2024");
  absl::StatusOr<const std::string*> tag = c.hyperparameters.GetString("tag");
  ASSERT_TRUE(tag.ok()) << tag.status();
  EXPECT_EQ(**tag, "yes\nno \"maybe\"");
}

TEST(OverridesTest, EveryPolicyNameReadsAsItsValue) {
  for (absl::string_view name : PolicyNames<NonfiniteGradients>::kNames) {
    const ExperimentConfig c =
        MustParseWithSets({absl::StrCat("optimizations.nonfinite_gradients=", name)});
    EXPECT_EQ(PolicyName(c.optimizations.nonfinite_gradients), name);
  }
  for (absl::string_view name : PolicyNames<CheckpointPolicy>::kNames) {
    const ExperimentConfig c = MustParseWithSets({absl::StrCat("checkpoint_policy=", name)});
    EXPECT_EQ(PolicyName(c.checkpoint_policy), name);
  }
  for (absl::string_view name : PolicyNames<AshaMode>::kNames) {
    const ExperimentConfig c =
        MustParseWithSets({"searcher.name=adaptive_asha", "searcher.max_trials=4",
                           absl::StrCat("searcher.mode=", name)});
    EXPECT_EQ(PolicyName(c.searcher.mode), name);
  }
}

}  // namespace
}  // namespace cohort
