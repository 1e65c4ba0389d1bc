// Hyperparameters nothing reads are named once, after the first batch: the rule alone, then a
// real plugin (linreg) given a misspelled name, and the same trial without it, which warns of
// nothing.
#include "runtime/trial/unread_hyperparameters.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/trial/trial_harness.h"

namespace cohort::trial_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(UnreadHyperparametersTest, NamesWhatNeitherThePluginNorCohortRead) {
  Hyperparameters set;
  set.Set("global_batch_size", 8);
  set.Set("learning_rate", 0.1);
  set.Set("lr", 0.05);
  set.Set("hidden", 16);
  set.Set("dropout", 0.5);
  const std::vector<std::string> unread = UnreadHyperparameters(
      set, {"hidden", "absent_but_asked"}, {"global_batch_size", "learning_rate"});
  EXPECT_THAT(unread, ElementsAre("dropout", "lr"));
  EXPECT_EQ(UnreadHyperparametersNotice({"lr"}),
            "warning: hyperparameter lr was not read by the plugin during the first batch, nor by "
            "Cohort: check the name (a --set of a key the plugin does not know adds one)");
  EXPECT_THAT(UnreadHyperparametersNotice(unread),
              HasSubstr("hyperparameters dropout, lr were not read"));
}

// A slip of a name something asked for and found unset gets that name as a hint.
TEST(UnreadHyperparametersTest, AMisspelledNameIsToldWhatItWasMeantToBe) {
  Hyperparameters set;
  set.Set("global_batch_size", 8);
  set.Set("learnig_rate", 0.002);
  set.Set("dropout", 0.5);
  const std::vector<std::string> read_by_cohort = {"global_batch_size", "learning_rate", "beta1"};
  const std::set<std::string> read_by_plugin = {"hidden_size"};
  EXPECT_THAT(AskedButNotSet(set, read_by_plugin, read_by_cohort),
              ElementsAre("beta1", "hidden_size", "learning_rate"));
  const std::vector<std::string> unread =
      UnreadHyperparameters(set, read_by_plugin, read_by_cohort);
  EXPECT_THAT(
      UnreadHyperparametersNotice(unread, AskedButNotSet(set, read_by_plugin, read_by_cohort)),
      HasSubstr("hyperparameters dropout, learnig_rate (did you mean 'learning_rate'?) were "
                "not read"));
}

// The notices about unread hyperparameters among `notices`.
std::vector<std::string> UnreadNotices(const std::vector<std::string>& notices) {
  std::vector<std::string> found;
  for (const std::string& line : notices) {
    if (line.find("not read by the plugin") != std::string::npos) found.push_back(line);
  }
  return found;
}

TEST(UnreadHyperparametersTest, ATrialNamesAMisspelledHyperparameterOnce) {
  TempFolder folder;
  ExperimentConfig config = LinregConfig();
  config.hyperparameters.Set("lr", 0.5);  // linreg reads learning_rate through the optimizer
  absl::StatusOr<std::unique_ptr<TrialHarness>> trial =
      TrialHarness::Create(kLinregPlugin, config, folder.path());
  ASSERT_TRUE(trial.ok()) << trial.status();
  ASSERT_TRUE((*trial)->runner().Run().ok());
  EXPECT_THAT(UnreadNotices((*trial)->events().notices),
              ElementsAre(HasSubstr("warning: hyperparameter lr was not read")));
}

TEST(UnreadHyperparametersTest, ATrialReadingEveryHyperparameterWarnsOfNothing) {
  TempFolder folder;
  absl::StatusOr<std::unique_ptr<TrialHarness>> trial =
      TrialHarness::Create(kLinregPlugin, LinregConfig(), folder.path());
  ASSERT_TRUE(trial.ok()) << trial.status();
  ASSERT_TRUE((*trial)->runner().Run().ok());
  EXPECT_THAT(UnreadNotices((*trial)->events().notices), IsEmpty());
}

}  // namespace
}  // namespace cohort::trial_test
