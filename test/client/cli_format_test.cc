// The client commands' pieces: the table printer, what `experiment list|describe`, `task list`,
// `agent list`, `trial logs` and `submit --follow` print for given answers, the shared argument
// parsing (the CURVE keys from options or the environment included), and OrchestratorClient
// against a ROUTER this test plays in a thread (replies matched by correlation id, stray and
// unreadable messages ignored, ClientError codes mapped, the timeout and its CURVE hint).
#include <stdlib.h>
#include <time.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/cohort/commands/client_args.h"
#include "harness/cohort/format/cluster_format.h"
#include "harness/cohort/format/experiment_changes.h"
#include "harness/cohort/format/experiment_format.h"
#include "harness/cohort/format/experiment_json.h"
#include "harness/cohort/format/text_table.h"
#include "harness/cohort/format/trial_format.h"
#include "runtime/client/orchestrator_client.h"
#include "runtime/security/curve_keys.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// 2024-05-01 12:00:00 UTC.
constexpr double kMayFirstNoon = 1714564800;

// Times print in the local zone; the tests pin it to UTC.
class CliFormatTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

ExperimentSummary Summary() {
  ExperimentSummary summary;
  summary.experiment_id = 3;
  summary.name = "mnist-grid";
  summary.state = ExperimentState::kActive;
  summary.searcher = "grid";
  summary.progress = 0.425;
  summary.slots_per_trial = 2;
  summary.trials = 6;
  summary.active_trials = 2;
  summary.completed_trials = 3;
  summary.errored_trials = 1;
  summary.submitted_unix_time = kMayFirstNoon;
  return summary;
}

TrialSummary Trial(uint64_t id, TrialState state) {
  TrialSummary trial;
  trial.trial_id = id;
  trial.request_id = id;
  trial.state = state;
  trial.hyperparameters_json = "{\"lr\":0.1}";
  trial.batches_trained = 1200;
  trial.target_batches = 5000;
  return trial;
}

ExperimentDescription Description() {
  ExperimentDescription description;
  description.summary = Summary();
  description.searcher_metric = "validation_loss";
  description.smaller_is_better = true;
  description.config_yaml = "name: mnist-grid\n";
  TrialSummary done = Trial(7, TrialState::kCompleted);
  done.batches_trained = 5000;
  done.has_best_metric = true;
  done.best_metric = 0.0812;
  done.best_metric_batches = 4000;
  done.best_checkpoint_id = "ckpt-7-4000";
  done.latest_checkpoint_id = "ckpt-7-5000";
  done.latest_validation = {{"validation_loss", 0.0812}, {"accuracy", 0.97}};
  done.latest_timings = {{"compute", 1.25}, {"exchange_wait", 0.0625}, {"optimizer", 0.0075}};
  done.records_per_second = 3210.4;
  TrialSummary failed = Trial(8, TrialState::kError);
  failed.restarts = 5;
  failed.error = "worker rank 1 exited with signal 11";
  description.trials = {done, failed, Trial(9, TrialState::kRunning)};
  return description;
}

// ---- TextTable

TEST(TrialFormatTest, SizesHaveThreeSignificantDigits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(999), "999 B");
  EXPECT_EQ(FormatBytes(1000), "1.00 KB");
  EXPECT_EQ(FormatBytes(28400), "28.4 KB");
  EXPECT_EQ(FormatBytes(1200000), "1.20 MB");
  EXPECT_EQ(FormatBytes(512300000000), "512 GB");
}

// A trial's description: its fields, a table of its validations with a column per metric (a
// metric one validation lacks is "-") and its checkpoints.
TEST(TrialFormatTest, DescribesATrialWithItsValidationsAndCheckpoints) {
  TrialDescription description;
  description.experiment_id = 3;
  description.experiment_name = "mnist";
  description.searcher_metric = "loss";
  description.trial.trial_id = 7;
  description.trial.state = TrialState::kRunning;
  description.trial.batches_trained = 600;
  description.trial.target_batches = 1000;
  description.trial.hyperparameters_json = R"({"lr":0.1})";
  description.trial.has_best_metric = true;
  description.trial.best_metric = 0.25;
  description.trial.best_metric_batches = 500;
  description.trial.best_checkpoint_id = "trial-7-batch-500";
  description.trial.latest_checkpoint_id = "trial-7-batch-600";
  description.validations = {{500, {{"loss", 0.25}, {"accuracy", 0.9}}}, {100, {{"loss", 0.5}}}};
  description.checkpoints = {{"trial-7-batch-500", 3, 7, 500, true, 0.25, "/ckpt/x", 28400,
                              CheckpointCondition::kWhole, ""}};
  const std::string text = FormatTrialDescription(description);
  EXPECT_THAT(text, HasSubstr("trial 7 (experiment 3: mnist)\n"));
  EXPECT_THAT(text, HasSubstr("  batches          600/1000\n"));
  EXPECT_THAT(text, HasSubstr("  best loss        0.25 after 500 batches (smaller is better)\n"
                              "  best checkpoint  trial-7-batch-500\n"
                              "  last checkpoint  trial-7-batch-600\n"));
  EXPECT_THAT(text, HasSubstr("BATCHES  loss  accuracy\n500      0.25  0.9\n100      0.5   -\n"));
  EXPECT_THAT(text,
              HasSubstr("trial-7-batch-500  7      500      0.25    28.4 KB  whole  /ckpt/x\n"));
  description.validations.clear();
  description.checkpoints.clear();
  EXPECT_THAT(FormatTrialDescription(description),
              HasSubstr("validations:\nnone yet\n\ncheckpoints:\nno checkpoints\n"));
}

// `checkpoint list --best N`: the N validated best, best first either way the metric goes; those
// without a metric (or a NaN, a diverged trial's) are not ranked.
TEST(TrialFormatTest, BestCheckpointsAreTheValidatedBestFirst) {
  CheckpointListing listing;
  listing.checkpoints = {
      {"trial-1-batch-4", 1, 1, 4, true, 0.5, "/c/a", 10, CheckpointCondition::kWhole, ""},
      {"trial-1-batch-8", 1, 1, 8, false, 0, "/c/b", 10, CheckpointCondition::kWhole, ""},
      {"trial-2-batch-4", 1, 2, 4, true, 0.2, "/c/c", 10, CheckpointCondition::kWhole, ""},
      {"trial-2-batch-8", 1, 2, 8, true, std::nan(""), "/c/d", 10, CheckpointCondition::kWhole, ""},
      {"trial-3-batch-4", 1, 3, 4, true, 0.5, "/c/e", 10, CheckpointCondition::kWhole, ""}};
  auto ids = [](const CheckpointListing& best) {
    std::vector<std::string> out;
    for (const CheckpointRow& row : best.checkpoints) out.push_back(row.checkpoint_id);
    return out;
  };
  EXPECT_THAT(ids(BestCheckpoints(listing, /*smaller_is_better=*/true, 2)),
              ElementsAre("trial-2-batch-4", "trial-1-batch-4"));
  EXPECT_THAT(ids(BestCheckpoints(listing, /*smaller_is_better=*/false, 10)),
              ElementsAre("trial-1-batch-4", "trial-3-batch-4", "trial-2-batch-4"));
  // One storage holds damaged, or not at all, is none to use: the next best stands.
  listing.checkpoints[2].condition = CheckpointCondition::kDamaged;
  listing.checkpoints[0].condition = CheckpointCondition::kMissing;
  EXPECT_THAT(ids(BestCheckpoints(listing, /*smaller_is_better=*/true, 2)),
              ElementsAre("trial-3-batch-4"));
  listing.checkpoints[4].condition = CheckpointCondition::kUnchecked;  // not looked at: kept
  EXPECT_THAT(ids(BestCheckpoints(listing, /*smaller_is_better=*/true, 2)),
              ElementsAre("trial-3-batch-4"));
}

// A checkpoint a resume would pass over is marked in its row and named under the table with what
// is wrong; one the orchestrator could not look at shows a dash.
TEST(TrialFormatTest, CheckpointListingNamesWhatIsWrongWithACheckpoint) {
  CheckpointListing listing;
  listing.checkpoints = {
      {"trial-1-batch-4", 1, 1, 4, false, 0, "/c/a", 10, CheckpointCondition::kWhole, ""},
      {"trial-1-batch-8", 1, 1, 8, false, 0, "/c/b", 10, CheckpointCondition::kDamaged,
       "its file parameters holds 9 of its 10 bytes"},
      {"trial-1-batch-9", 1, 1, 9, false, 0, "/c/c", 0, CheckpointCondition::kMissing,
       "no folder /c/c"},
      {"trial-2-batch-4", 1, 2, 4, false, 0, "/c/d", 10, CheckpointCondition::kUnchecked, ""}};
  EXPECT_EQ(FormatCheckpointListing(listing),
            "CHECKPOINT       TRIAL  BATCHES  METRIC  SIZE  STATE    PATH\n"
            "trial-1-batch-4  1      4        -       10 B  whole    /c/a\n"
            "trial-1-batch-8  1      8        -       10 B  damaged  /c/b\n"
            "trial-1-batch-9  1      9        -       0 B   missing  /c/c\n"
            "trial-2-batch-4  2      4        -       10 B  -        /c/d\n"
            "trial-1-batch-8 is damaged: its file parameters holds 9 of its 10 bytes\n"
            "trial-1-batch-9 is missing: no folder /c/c\n"
            "a resume or restart passes over these, going on from the newest whole checkpoint "
            "before them\n");
}

TEST(TextTableTest, PadsColumnsToTheWidestCellWithoutTrailingSpaces) {
  TextTable table({"ID", "NAME", "STATE"});
  table.AddRow({"1", "mnist", "active"});
  table.AddRow({"12", "a", ""});
  EXPECT_EQ(table.rows(), 2u);
  EXPECT_EQ(table.Render(),
            "ID  NAME   STATE\n"
            "1   mnist  active\n"
            "12  a\n");
}

TEST(TextTableTest, ShortRowsArePaddedAndLongRowsCut) {
  TextTable table({"A", "B"});
  table.AddRow({"x"});
  table.AddRow({"1", "2", "dropped"});
  EXPECT_EQ(table.Render(), "A  B\nx\n1  2\n");
}

TEST(TextTableTest, CountsUtf8CodePointsNotBytes) {
  TextTable table({"NAME", "X"});
  table.AddRow({"\xC3\xA9t\xC3\xA9", "1"});  // "été": 3 code points, 5 bytes
  EXPECT_EQ(table.Render(), "NAME  X\n\xC3\xA9t\xC3\xA9   1\n");
}

TEST(TextTableTest, HeaderOnlyWhenEmpty) {
  EXPECT_EQ(TextTable({"TASK", "STATE"}).Render(), "TASK  STATE\n");
}

// ---- experiment list and describe

TEST_F(CliFormatTest, ProgressIsAWholePercentageRoundedDown) {
  EXPECT_EQ(FormatProgress(0), "0%");
  EXPECT_EQ(FormatProgress(0.425), "42%");
  EXPECT_EQ(FormatProgress(0.999), "99%");
  EXPECT_EQ(FormatProgress(1), "100%");
  EXPECT_EQ(FormatProgress(1.5), "100%");
  EXPECT_EQ(FormatProgress(-0.1), "0%");
  EXPECT_EQ(FormatProgress(std::nan("")), "?");
}

TEST_F(CliFormatTest, TimesAreLocalAndZeroIsNotYet) {
  EXPECT_EQ(FormatUnixTime(kMayFirstNoon + 62), "2024-05-01 12:01:02");
  EXPECT_EQ(FormatUnixTime(0), "-");
}

TEST_F(CliFormatTest, MetricsKeepTheirOrder) {
  EXPECT_EQ(FormatMetrics({{"loss", 0.0812}, {"accuracy", 0.97}}), "loss=0.0812 accuracy=0.97");
  EXPECT_EQ(FormatMetrics({}), "-");
}

TEST_F(CliFormatTest, ExperimentListHasOneRowPerExperiment) {
  ExperimentList list;
  list.experiments.push_back(Summary());
  ExperimentSummary second = Summary();
  second.experiment_id = 4;
  second.name = "cifar";
  second.state = ExperimentState::kError;
  second.searcher = "single";
  second.progress = 1;
  second.trials = 1;
  second.active_trials = 0;
  second.completed_trials = 0;
  second.errored_trials = 1;
  second.submitted_unix_time = 0;
  list.experiments.push_back(second);
  // A killed grid of 4: 2 completed, 2 stopped; the counts add up to its trials.
  ExperimentSummary killed = Summary();
  killed.experiment_id = 5;
  killed.name = "killed";
  killed.state = ExperimentState::kStopped;
  killed.trials = 4;
  killed.active_trials = 0;
  killed.completed_trials = 2;
  killed.errored_trials = 0;
  list.experiments.push_back(killed);
  EXPECT_THAT(
      Lines(FormatExperimentList(list)),
      ElementsAre("ID  NAME        STATE    SEARCHER  PROGRESS  TRIALS   SUBMITTED",
                  "3   mnist-grid  active   grid      42%       2/3/0/1  2024-05-01 12:00:00",
                  "4   cifar       error    single    100%      0/0/0/1  -",
                  "5   killed      stopped  grid      42%       0/2/2/0  2024-05-01 12:00:00"));
  // With an archived experiment among them (`--all`), a column marks which.
  list.experiments.back().archived = true;
  EXPECT_THAT(
      Lines(FormatExperimentList(list)),
      ElementsAre(
          "ID  NAME        STATE    SEARCHER  PROGRESS  TRIALS   SUBMITTED            "
          "ARCHIVED",
          "3   mnist-grid  active   grid      42%       2/3/0/1  2024-05-01 12:00:00",
          "4   cifar       error    single    100%      0/0/0/1  -",
          "5   killed      stopped  grid      42%       0/2/2/0  2024-05-01 12:00:00  yes"));
}

TEST_F(CliFormatTest, DescribeShowsSummaryTrialTableMetricsAndErrors) {
  const std::string text = FormatExperimentDescription(Description(), kMayFirstNoon + 3723);
  EXPECT_THAT(text, HasSubstr("experiment 3: mnist-grid\n"));
  EXPECT_THAT(text, HasSubstr("  state            active\n"));
  EXPECT_THAT(text,
              HasSubstr("  searcher         grid, metric validation_loss (smaller is better)\n"));
  EXPECT_THAT(text, HasSubstr("  progress         42%\n"));
  EXPECT_THAT(text,
              HasSubstr("  trials           6: 2 active, 3 completed, 0 stopped, 1 errored\n"));
  EXPECT_THAT(text, HasSubstr("  best trial       7 (validation_loss 0.0812 after 4000 batches, "
                              "checkpoint ckpt-7-4000)\n"));
  EXPECT_THAT(text, HasSubstr("  slots per trial  2\n"));
  EXPECT_THAT(text, HasSubstr("  submitted        2024-05-01 12:00:00\n"));
  EXPECT_THAT(text, HasSubstr("  duration         1:02:03\n"));  // still running: up to now
  EXPECT_THAT(text, Not(HasSubstr("ended")));
  EXPECT_THAT(text,
              HasSubstr("TRIAL  STATE      BATCHES    RESTARTS  BEST-METRIC  BEST-CHECKPOINT  "
                        "LATEST-CHECKPOINT  HYPERPARAMETERS\n"
                        "7      completed  5000/5000  0         0.0812       ckpt-7-4000      "
                        "ckpt-7-5000        {\"lr\":0.1}\n"
                        "8      error      1200/5000  5         -            -                "
                        "-                  {\"lr\":0.1}\n"
                        "9      running    1200/5000  0         -            -                "
                        "-                  {\"lr\":0.1}\n"));
  EXPECT_THAT(text, HasSubstr("latest validation metrics:\n"
                              "  trial 7: validation_loss=0.0812 accuracy=0.97\n"));
  EXPECT_THAT(text, HasSubstr("throughput and where the time went, since the previous training "
                              "report:\n  trial 7: 3210 records/s, compute 1.25 s, exchange_wait "
                              "0.0625 s, optimizer 0.0075 s\n"));
  EXPECT_THAT(text, HasSubstr("trial errors:\n  trial 8: worker rank 1 exited with signal 11\n"));
}

// An orchestrator before client minor 8 tells neither where the best metric was validated nor the
// best checkpoint: the best trial is named without them.
TEST_F(CliFormatTest, DescribeOfAnOlderOrchestratorNamesTheBestTrialWithoutItsCheckpoint) {
  ExperimentDescription description = Description();
  description.trials.front().best_metric_batches = 0;
  description.trials.front().best_checkpoint_id.clear();
  const std::string text = FormatExperimentDescription(description, kMayFirstNoon);
  EXPECT_THAT(text, HasSubstr("  best trial       7 (validation_loss 0.0812)\n"));
}

TEST_F(CliFormatTest, DescribeComparesAWiderTrialWithItsOneSlotBaseline) {
  ExperimentDescription description = Description();
  TrialSummary& running = description.trials.back();
  running.records_per_second = 5000;
  running.scaling_efficiency = 0.834;
  running.baseline_experiment_id = 4;
  const std::string text = FormatExperimentDescription(description, kMayFirstNoon);
  EXPECT_THAT(text, HasSubstr("  trial 9: 5000 records/s (scaling efficiency 0.83 against "
                              "experiment 4 at 1 slot)\n"));
  EXPECT_THAT(text, HasSubstr("  trial 7: 3210 records/s, compute 1.25 s"));  // no baseline
}

TEST_F(CliFormatTest, DescribeShowsEachRanksGpu) {
  ExperimentDescription description = Description();
  TrialSummary& running = description.trials.back();
  running.latest_gpus = {{0, 2, "NVIDIA H100", 97.4, uint64_t{40} << 30, uint64_t{80} << 30},
                         {1, 3, "NVIDIA H100", 61, uint64_t{3} << 29, uint64_t{80} << 30}};
  const std::string text = FormatExperimentDescription(description, kMayFirstNoon);
  EXPECT_THAT(text, HasSubstr("GPUs, since the previous training report:\n"
                              "  trial 9 rank 0: GPU 2 (NVIDIA H100) 97% busy, 40.0 of 80.0 GiB\n"
                              "  trial 9 rank 1: GPU 3 (NVIDIA H100) 61% busy, 1.5 of 80.0 GiB\n"));
  const YAML::Node root = YAML::Load(ExperimentDescriptionJson(description));
  const YAML::Node gpus = root["trials"][2]["latest_gpus"];
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1]["gpu"].as<int>(), 3);
  EXPECT_DOUBLE_EQ(gpus[0]["utilization"].as<double>(), 97.4);
  EXPECT_EQ(gpus[0]["memory_used"].as<uint64_t>(), uint64_t{40} << 30);
  EXPECT_FALSE(root["trials"][0]["latest_gpus"].IsDefined());  // off GPUs: none
}

TEST_F(CliFormatTest, DescribeOfAnEndedExperimentShowsItsEndAndError) {
  ExperimentDescription description = Description();
  description.summary.state = ExperimentState::kError;
  description.summary.ended_unix_time = kMayFirstNoon + 90;
  description.summary.error = "every trial failed";
  description.smaller_is_better = false;
  description.trials.clear();
  const std::string text = FormatExperimentDescription(description, kMayFirstNoon + 100000);
  EXPECT_THAT(text, HasSubstr("(larger is better)"));
  EXPECT_THAT(text, HasSubstr("  ended            2024-05-01 12:01:30\n"));
  EXPECT_THAT(text, HasSubstr("  duration         1:30\n"));
  EXPECT_THAT(text, HasSubstr("  error            every trial failed\n"));
  EXPECT_THAT(text, HasSubstr("\nno trials yet\n"));
  EXPECT_THAT(text, Not(HasSubstr("TRIAL ")));
}

TEST_F(CliFormatTest, DescribeJsonIsOneObjectWithEveryField) {
  const std::string json = ExperimentDescriptionJson(Description());
  EXPECT_EQ(json.find('\n'), std::string::npos);  // one line: newlines inside are escaped
  const YAML::Node root = YAML::Load(json);       // JSON is YAML's flow subset
  ASSERT_TRUE(root.IsMap());
  EXPECT_EQ(root["id"].as<int>(), 3);
  EXPECT_EQ(root["name"].as<std::string>(), "mnist-grid");
  EXPECT_EQ(root["state"].as<std::string>(), "active");
  EXPECT_EQ(root["metric"].as<std::string>(), "validation_loss");
  EXPECT_TRUE(root["smaller_is_better"].as<bool>());
  EXPECT_DOUBLE_EQ(root["progress"].as<double>(), 0.425);
  EXPECT_DOUBLE_EQ(root["submitted_unix_time"].as<double>(), kMayFirstNoon);
  EXPECT_TRUE(root["ended_unix_time"].IsNull());
  EXPECT_EQ(root["trial_counts"]["errored"].as<int>(), 1);
  EXPECT_EQ(root["trial_counts"]["stopped"].as<int>(), 0);
  EXPECT_EQ(root["config_yaml"].as<std::string>(), "name: mnist-grid\n");
  ASSERT_EQ(root["trials"].size(), 3u);
  const YAML::Node done = root["trials"][0];
  EXPECT_EQ(done["id"].as<int>(), 7);
  EXPECT_EQ(done["state"].as<std::string>(), "completed");
  EXPECT_DOUBLE_EQ(done["hyperparameters"]["lr"].as<double>(), 0.1);
  EXPECT_DOUBLE_EQ(done["best_metric"].as<double>(), 0.0812);
  EXPECT_EQ(done["best_metric_batches"].as<int>(), 4000);
  EXPECT_EQ(done["best_checkpoint"].as<std::string>(), "ckpt-7-4000");
  EXPECT_EQ(done["latest_checkpoint"].as<std::string>(), "ckpt-7-5000");
  EXPECT_DOUBLE_EQ(done["latest_validation"]["accuracy"].as<double>(), 0.97);
  EXPECT_TRUE(done["task_id"].IsNull());
  const YAML::Node running = root["trials"][2];
  EXPECT_TRUE(running["best_metric"].IsNull());
  EXPECT_TRUE(running["best_metric_batches"].IsNull());
  EXPECT_TRUE(running["best_checkpoint"].IsNull());
  EXPECT_TRUE(running["latest_checkpoint"].IsNull());
  EXPECT_EQ(root["trials"][1]["error"].as<std::string>(), "worker rank 1 exited with signal 11");
}

// ---- submit --follow

TEST_F(CliFormatTest, FollowFirstReportsEveryTrial) {
  ExperimentDescription now = Description();
  now.trials.resize(1);
  now.trials[0] = Trial(7, TrialState::kQueued);
  EXPECT_THAT(ExperimentChanges(nullptr, now),
              ElementsAre("trial 7 queued, hyperparameters {\"lr\":0.1}"));
}

TEST_F(CliFormatTest, FollowReportsStateChangesRestartsAndTheEnd) {
  const ExperimentDescription before = Description();
  ExperimentDescription now = before;
  now.trials[2].state = TrialState::kCompleted;  // trial 9
  now.trials[2].batches_trained = 5000;
  now.trials[2].has_best_metric = true;
  now.trials[2].best_metric = 0.25;
  now.trials.push_back(Trial(10, TrialState::kRunning));
  EXPECT_THAT(ExperimentChanges(&before, now),
              ElementsAre("trial 9 completed after 5000 batches, best validation_loss 0.25",
                          "trial 10 running, hyperparameters {\"lr\":0.1}"));

  ExperimentDescription restarted = now;
  restarted.trials[3].restarts = 1;
  restarted.trials[3].state = TrialState::kPaused;
  restarted.trials[3].error = "agent node-2 lost";
  EXPECT_THAT(
      ExperimentChanges(&now, restarted),
      ElementsAre("trial 10 restart 1: agent node-2 lost",
                  "trial 10 paused after 1200 batches; waiting for the searcher to promote or "
                  "close it"));
  // A trial its experiment's pause stopped is not waiting for the searcher.
  ExperimentDescription paused = now;
  paused.summary.state = ExperimentState::kPaused;
  paused.trials[3].state = TrialState::kPaused;
  EXPECT_THAT(ExperimentChanges(&now, paused),
              ElementsAre("trial 10 paused after 1200 batches; paused with its experiment (`cohort "
                          "experiment activate 3` lets it go on)",
                          "experiment 3 paused"));

  ExperimentDescription ended = restarted;
  ended.summary.state = ExperimentState::kError;
  ended.summary.error = "every trial failed";
  EXPECT_THAT(ExperimentChanges(&restarted, ended),
              ElementsAre("experiment 3 error: every trial failed; best trial 7 "
                          "(validation_loss 0.0812 after 4000 batches, checkpoint ckpt-7-4000)"));
  EXPECT_THAT(ExperimentChanges(&ended, ended), ElementsAre());
}

// An ended experiment names its best trial and that trial's best checkpoint, as describe does.
TEST_F(CliFormatTest, FollowEndsNamingTheBestTrial) {
  const ExperimentDescription before = Description();
  ExperimentDescription now = before;
  for (TrialSummary& trial : now.trials) trial.has_best_metric = false;
  now.summary.state = ExperimentState::kCompleted;
  EXPECT_THAT(ExperimentChanges(&before, now), ElementsAre("experiment 3 completed"));
  now.trials[1].has_best_metric = true;
  now.trials[1].best_metric = 0.12;
  now.trials[1].best_metric_batches = 800;
  now.trials[1].best_checkpoint_id = "trial-8-batch-800";
  EXPECT_THAT(ExperimentChanges(&before, now),
              ElementsAre("experiment 3 completed, best trial 8 (validation_loss 0.12 after 800 "
                          "batches, checkpoint trial-8-batch-800)"));
}

// The latest training report stands among the validations by its batch.
TEST_F(CliFormatTest, FollowPutsTheTrainingReportAmongTheValidationsByBatch) {
  ExperimentDescription now = Description();
  now.trials = {Trial(9, TrialState::kRunning)};
  now.trials[0].latest_training = {{"loss", 0.35}};
  now.trials[0].latest_training_batches = 250;
  now.trials[0].latest_validation = {{"loss", 0.3}};
  now.trials[0].latest_validation_batches = 300;
  const TrialValidations validations = [](uint64_t) {
    return std::vector<ValidationRow>{
        {100, {{"loss", 0.5}}}, {200, {{"loss", 0.4}}}, {300, {{"loss", 0.3}}}};
  };
  EXPECT_THAT(ExperimentChanges(nullptr, now, validations),
              ElementsAre("trial 9 running, hyperparameters {\"lr\":0.1}",
                          "trial 9 validation after 100 batches: loss=0.5",
                          "trial 9 validation after 200 batches: loss=0.4",
                          "trial 9 at batch 250/5000: loss=0.35",
                          "trial 9 validation after 300 batches: loss=0.3"));
}

// A trial that ran between two looks and is past running at the first shows its metrics before
// the state they led to, as they happened.
TEST_F(CliFormatTest, FollowShowsAFastTrialsMetricsBeforeItsEnd) {
  ExperimentDescription now = Description();
  now.trials.resize(1);
  now.trials[0] = Trial(12, TrialState::kPaused);
  now.trials[0].batches_trained = 400;
  now.trials[0].target_batches = 400;
  now.trials[0].latest_training = {{"loss", 1.88}};
  now.trials[0].latest_training_batches = 400;
  now.trials[0].latest_validation = {{"validation_loss", 1.8}};
  now.trials[0].latest_validation_batches = 400;
  now.trials[0].has_best_metric = true;
  now.trials[0].best_metric = 1.8;
  EXPECT_THAT(
      ExperimentChanges(nullptr, now),
      ElementsAre("trial 12 hyperparameters {\"lr\":0.1}", "trial 12 at batch 400/400: loss=1.88",
                  "trial 12 validation after 400 batches: validation_loss=1.8",
                  "trial 12 paused after 400 batches, best validation_loss 1.8; waiting "
                  "for the searcher to promote or close it"));
}

// A running trial's metrics are shown as they come, each report once.
TEST_F(CliFormatTest, FollowShowsMetricsAsTheyCome) {
  const ExperimentDescription before = Description();
  ExperimentDescription now = before;
  TrialSummary& running = now.trials[2];  // trial 9
  running.latest_training = {{"loss", 0.31}};
  running.records_per_second = 51234.4;
  EXPECT_THAT(ExperimentChanges(&before, now),
              ElementsAre("trial 9 at batch 1200/5000: loss=0.31 (51234 records/s)"));
  ExperimentDescription later = now;
  later.trials[2].batches_trained = 2500;
  later.trials[2].latest_validation = {{"validation_loss", 0.29}, {"accuracy", 0.91}};
  EXPECT_THAT(ExperimentChanges(&now, later),
              ElementsAre("trial 9 validation: validation_loss=0.29 accuracy=0.91"));
  // A report is labelled with its own batch, not the trial's progress since.
  ExperimentDescription labelled = later;
  labelled.trials[2].batches_trained = 2680;
  labelled.trials[2].latest_training = {{"loss", 0.28}};
  labelled.trials[2].latest_training_batches = 2650;
  labelled.trials[2].latest_validation = {{"validation_loss", 0.27}, {"accuracy", 0.92}};
  labelled.trials[2].latest_validation_batches = 2500;
  // The validation after batch 2500 came before the training report of batch 2650.
  EXPECT_THAT(ExperimentChanges(&later, labelled),
              ElementsAre("trial 9 validation after 2500 batches: validation_loss=0.27 "
                          "accuracy=0.92",
                          "trial 9 at batch 2650/5000: loss=0.28 (51234 records/s)"));
  EXPECT_THAT(ExperimentChanges(&later, later), ElementsAre());
}

// A trial that validated more than once between two looks (a fast one) has each validation shown,
// in order, once; after a rewind (a restart from a checkpoint) its latest is shown alone.
TEST_F(CliFormatTest, FollowShowsEveryValidationOfAFastTrial) {
  ExperimentDescription before = Description();
  TrialSummary& trial = before.trials[2];  // trial 9
  trial.latest_validation = {{"loss", 0.5}};
  trial.latest_validation_batches = 100;
  int asked = 0;
  const TrialValidations validations = [&](uint64_t trial_id) {
    ++asked;
    EXPECT_EQ(trial_id, 9u);
    return std::vector<ValidationRow>{{100, {{"loss", 0.5}}},
                                      {200, {{"loss", 0.4}}},
                                      {300, {{"loss", 0.3}}},
                                      {400, {{"loss", 0.2}}}};
  };
  ExperimentDescription now = before;
  now.trials[2].latest_validation = {{"loss", 0.2}};
  now.trials[2].latest_validation_batches = 400;
  EXPECT_THAT(ExperimentChanges(&before, now, validations),
              ElementsAre("trial 9 validation after 200 batches: loss=0.4",
                          "trial 9 validation after 300 batches: loss=0.3",
                          "trial 9 validation after 400 batches: loss=0.2"));
  EXPECT_EQ(asked, 1);
  EXPECT_THAT(ExperimentChanges(&now, now, validations), ElementsAre());
  EXPECT_EQ(asked, 1);  // nothing new: nothing asked

  // Seen first with validations behind it (it ran between submission and the first look).
  ExperimentDescription first = now;
  first.trials = {now.trials[2]};
  first.trials[0].latest_validation_batches = 300;
  first.trials[0].latest_validation = {{"loss", 0.3}};
  EXPECT_THAT(ExperimentChanges(nullptr, first, validations),
              ElementsAre("trial 9 running, hyperparameters {\"lr\":0.1}",
                          "trial 9 validation after 100 batches: loss=0.5",
                          "trial 9 validation after 200 batches: loss=0.4",
                          "trial 9 validation after 300 batches: loss=0.3"));

  ExperimentDescription rewound = now;
  rewound.trials[2].latest_validation = {{"loss", 0.31}};
  rewound.trials[2].latest_validation_batches = 300;
  asked = 0;
  EXPECT_THAT(ExperimentChanges(&now, rewound, validations),
              ElementsAre("trial 9 validation after 300 batches: loss=0.31"));
  EXPECT_EQ(asked, 0);

  // Without an answer (the orchestrator did not give one), the latest still shows.
  EXPECT_THAT(
      ExperimentChanges(&before, now, [](uint64_t) { return std::vector<ValidationRow>{}; }),
      ElementsAre("trial 9 validation after 400 batches: loss=0.2"));
}

TEST_F(CliFormatTest, FollowExitStatusByHowTheExperimentEnded) {
  EXPECT_FALSE(ExperimentEnded(ExperimentState::kActive));
  EXPECT_FALSE(ExperimentEnded(ExperimentState::kStopping));
  EXPECT_TRUE(ExperimentEnded(ExperimentState::kCompleted));
  EXPECT_TRUE(ExperimentEnded(ExperimentState::kStopped));
  EXPECT_TRUE(ExperimentEnded(ExperimentState::kError));
  EXPECT_EQ(ExitStatusForEnded(ExperimentState::kCompleted), 0);
  EXPECT_EQ(ExitStatusForEnded(ExperimentState::kError), 1);
  EXPECT_EQ(ExitStatusForEnded(ExperimentState::kStopped), 130);
}

// ---- task list, agent list, trial logs

TEST_F(CliFormatTest, TaskTableShowsWhyAQueuedTaskWaits) {
  TaskListing table;
  table.tasks.push_back({4, 2, 7, 2, TaskRowState::kRunning, {"node-1", "node-2"}, "", 0, ""});
  table.tasks.push_back(
      {5, 3, 9, 8, TaskRowState::kQueued, {}, "needs 8 slots; the largest agent has 4", 0, ""});
  table.tasks.push_back({6, 3, 10, 1, TaskRowState::kStarting, {"node-1"}, "stale", 0, ""});
  EXPECT_THAT(
      Lines(FormatTaskListing(table)),
      ElementsAre("TASK  EXPERIMENT  TRIAL  SLOTS  STATE     AGENTS         REASON",
                  "4     2           7      2      running   node-1,node-2",
                  "5     3           9      8      queued    -              needs 8 slots; the "
                  "largest agent has 4",
                  "6     3           10     1      starting  node-1"));
}

TEST_F(CliFormatTest, TaskTableShowsTheSlurmJobOfEachTaskOnSlurm) {
  TaskListing table;
  table.tasks.push_back({4, 2, 7, 1, TaskRowState::kRunning, {"slurm-12-0"}, "", 0, "12"});
  table.tasks.push_back(
      {5, 2, 8, 1, TaskRowState::kQueued, {}, "Slurm job 13 pending: Resources", 0, "13"});
  EXPECT_THAT(Lines(FormatTaskListing(table)),
              ElementsAre("TASK  EXPERIMENT  TRIAL  SLOTS  STATE    AGENTS      JOB  REASON",
                          "4     2           7      1      running  slurm-12-0  12",
                          "5     2           8      1      queued   -           13   Slurm job 13 "
                          "pending: Resources"));
}

TEST_F(CliFormatTest, AgentTableShowsSlotsAndTasks) {
  AgentTable table;
  table.agents.push_back({"node-1", "host-a", 4, 3, true, kMayFirstNoon, {4, 6}});
  table.agents.push_back({"node-2", "host-b", 8, 0, false, kMayFirstNoon, {}});
  EXPECT_THAT(Lines(FormatAgentTable(table)),
              ElementsAre("AGENT   HOST    SLOTS  BUSY  CONNECTED  TASKS",
                          "node-1  host-a  4      3     yes        4,6",
                          "node-2  host-b  8      0     no         -"));
}

// --json on the lists: an array of one object per row, for scripts.
TEST_F(CliFormatTest, ListsAsJsonHaveOneObjectPerRow) {
  ExperimentList experiments;
  experiments.experiments.push_back(Summary());
  YAML::Node list = YAML::Load(ExperimentListJson(experiments));
  ASSERT_TRUE(list.IsSequence());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"].as<int>(), 3);
  EXPECT_EQ(list[0]["state"].as<std::string>(), "active");
  EXPECT_EQ(list[0]["trial_counts"]["completed"].as<int>(), 3);
  EXPECT_EQ(ExperimentListJson(ExperimentList{}), "[]");

  TaskListing tasks;
  tasks.tasks.push_back({5, 3, 9, 8, TaskRowState::kQueued, {}, "needs 8 slots", 0, "4711"});
  tasks.tasks.push_back({4, 2, 7, 2, TaskRowState::kRunning, {"node-1", "node-2"}, "", 0, ""});
  YAML::Node rows = YAML::Load(TaskListingJson(tasks));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["state"].as<std::string>(), "queued");
  EXPECT_EQ(rows[0]["reason"].as<std::string>(), "needs 8 slots");
  EXPECT_TRUE(rows[0]["queued_unix_time"].IsNull());
  EXPECT_EQ(rows[0]["job"].as<std::string>(), "4711");
  EXPECT_EQ(rows[1]["agents"][1].as<std::string>(), "node-2");
  EXPECT_EQ(rows[1]["job"].as<std::string>(), "");

  AgentTable agents;
  agents.agents.push_back({"node-1", "host-a", 4, 3, true, kMayFirstNoon, {4, 6}});
  YAML::Node table = YAML::Load(AgentTableJson(agents));
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0]["id"].as<std::string>(), "node-1");
  EXPECT_EQ(table[0]["busy_slots"].as<int>(), 3);
  EXPECT_TRUE(table[0]["connected"].as<bool>());
  EXPECT_EQ(table[0]["task_ids"][1].as<int>(), 6);
}

TEST_F(CliFormatTest, LogLinesNameTheirRankWhateverTheStream) {
  EXPECT_EQ(FormatLogLine({12, 1, 0, false, kMayFirstNoon, "epoch 1 done"}),
            "[rank 1] epoch 1 done");
  EXPECT_EQ(FormatLogLine({13, 0, 2, true, kMayFirstNoon, "warning: slow"}),
            "[rank 0] warning: slow");
}

TEST_F(CliFormatTest, TheOrchestratorsOwnLinesBelongToNoRank) {
  EXPECT_EQ(FormatLogLine({14, 0, 0, false, kMayFirstNoon, "[cohort] task 4 ended", true}),
            "[cohort] task 4 ended");
}

// ---- argument parsing

ClientCommandSpec LogsLikeSpec() {
  return {"cohort trial logs",
          "usage: cohort trial logs TRIAL_ID\n",
          {"TRIAL_ID"},
          {"--rank", "--set"},
          {"--follow"}};
}

TEST_F(CliFormatTest, ArgumentsTakeValuesFlagsAndTheOrchestrator) {
  setenv("COHORT_ORCHESTRATOR", "tcp://10.0.0.5:29401", 1);
  int exit_code = -1;
  std::optional<ClientArgs> args = ParseClientArgs(
      LogsLikeSpec(), {"7", "--set", "a=1", "--follow", "--set", "b=2"}, &exit_code);
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->orchestrator, "tcp://10.0.0.5:29401");
  EXPECT_THAT(args->positionals, ElementsAre("7"));
  EXPECT_THAT(args->values["--set"], ElementsAre("a=1", "b=2"));
  EXPECT_EQ(args->Value("--set"), "b=2");
  EXPECT_EQ(args->Value("--rank"), std::nullopt);
  EXPECT_TRUE(args->Has("--follow"));

  args = ParseClientArgs(LogsLikeSpec(), {"--orchestrator", "tcp://h:1", "7"}, &exit_code);
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->orchestrator, "tcp://h:1");

  unsetenv("COHORT_ORCHESTRATOR");
  args = ParseClientArgs(LogsLikeSpec(), {"7"}, &exit_code);
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->orchestrator, "tcp://127.0.0.1:29401");
}

TEST_F(CliFormatTest, KeysComeFromOptionsOrTheEnvironment) {
  TempFolder folder;
  const CurveKeyPair cli = GenerateCurveKeyPair().value();
  const CurveKeyPair orchestrator = GenerateCurveKeyPair().value();
  ASSERT_TRUE(WriteSecretKeyFile(folder / "cli.key", "cli", cli).ok());
  ASSERT_TRUE(
      WritePublicKeyFile(folder / "orchestrator.pub", "orchestrator", orchestrator.public_key)
          .ok());
  unsetenv("COHORT_KEY");
  unsetenv("COHORT_ORCHESTRATOR_KEY");
  int exit_code = -1;
  std::optional<ClientArgs> args = ParseClientArgs(LogsLikeSpec(), {"7"}, &exit_code);
  ASSERT_TRUE(args.has_value());
  EXPECT_FALSE(args->curve.has_value());

  args = ParseClientArgs(
      LogsLikeSpec(),
      {"7", "--key", folder / "cli.key", "--orchestrator-key", orchestrator.public_key},
      &exit_code);
  ASSERT_TRUE(args.has_value());
  ASSERT_TRUE(args->curve.has_value());
  EXPECT_EQ(args->curve->keys.secret_key, cli.secret_key);
  EXPECT_EQ(args->curve->server_public_key, orchestrator.public_key);

  setenv("COHORT_KEY", (folder / "cli.key").c_str(), 1);
  setenv("COHORT_ORCHESTRATOR_KEY", (folder / "orchestrator.pub").c_str(), 1);
  args = ParseClientArgs(LogsLikeSpec(), {"7"}, &exit_code);
  ASSERT_TRUE(args.has_value());
  ASSERT_TRUE(args->curve.has_value());
  EXPECT_EQ(args->curve->keys.public_key, cli.public_key);
  EXPECT_EQ(args->curve->server_public_key, orchestrator.public_key);

  // Only one of the two is a usage problem; a key that cannot be read is an error.
  unsetenv("COHORT_ORCHESTRATOR_KEY");
  exit_code = -1;
  EXPECT_FALSE(ParseClientArgs(LogsLikeSpec(), {"7"}, &exit_code).has_value());
  EXPECT_EQ(exit_code, 2);
  exit_code = -1;
  EXPECT_FALSE(ParseClientArgs(LogsLikeSpec(),
                               {"7", "--key", folder / "missing.key", "--orchestrator-key",
                                orchestrator.public_key},
                               &exit_code)
                   .has_value());
  EXPECT_EQ(exit_code, 1);
  unsetenv("COHORT_KEY");
}

TEST_F(CliFormatTest, UsageProblemsExitTwoAndHelpZero) {
  int exit_code = -1;
  EXPECT_FALSE(ParseClientArgs(LogsLikeSpec(), {"--help"}, &exit_code).has_value());
  EXPECT_EQ(exit_code, 0);
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {}, {"7", "8"}, {"7", "--bogus"}, {"7", "--rank"}, {"7", "--orchestrator", ""}}) {
    exit_code = -1;
    EXPECT_FALSE(ParseClientArgs(LogsLikeSpec(), bad, &exit_code).has_value());
    EXPECT_EQ(exit_code, 2);
  }
  EXPECT_EQ(ParseUnsigned("42"), 42u);
  EXPECT_EQ(ParseUnsigned("-1"), std::nullopt);
  EXPECT_EQ(ParseUnsigned("+1"), std::nullopt);
  EXPECT_EQ(ParseUnsigned("4x"), std::nullopt);
  EXPECT_EQ(ParseUnsigned(""), std::nullopt);
}

// ---- OrchestratorClient

// A ROUTER on loopback answering in a thread of its own: `answer` gets each decoded request and
// returns the raw frames to send back to its sender, in order.
class FakeOrchestrator {
 public:
  using Answer = std::function<std::vector<std::string>(const DecodedClient& request)>;

  explicit FakeOrchestrator(Answer answer)
      : router_(context_, zmq::socket_type::router), answer_(std::move(answer)) {
    router_.set(zmq::sockopt::linger, 0);
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeOrchestrator() {
    stop_ = true;
    thread_.join();
  }

  const std::string& endpoint() const { return endpoint_; }
  std::vector<DecodedClient> requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(20));
      zmq::message_t identity, payload;
      if (!router_.recv(identity, zmq::recv_flags::dontwait)) continue;
      if (!router_.recv(payload, zmq::recv_flags::dontwait)) continue;
      absl::StatusOr<DecodedClient> request =
          DecodeClientMessage(absl::string_view(payload.data<char>(), payload.size()));
      if (!request.ok()) continue;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back(*request);
      }
      for (const std::string& reply : answer_(*request)) {
        router_.send(zmq::buffer(identity.to_string()), zmq::send_flags::sndmore);
        router_.send(zmq::buffer(reply), zmq::send_flags::none);
      }
    }
  }

  zmq::context_t context_;
  zmq::socket_t router_;
  std::string endpoint_;
  Answer answer_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<DecodedClient> requests_;
  std::thread thread_;
};

// An orchestrator's message answering `correlation_id`.
std::string Reply(const ClientMessage& message, uint64_t correlation_id) {
  static std::atomic<uint64_t> next_id{1};
  return EncodeClientMessage(ClientHeader{next_id++, correlation_id, "orchestrator"}, message);
}

ExperimentList ListNamed(const std::string& name) {
  ExperimentList list;
  list.experiments.push_back(Summary());
  list.experiments.back().name = name;
  return list;
}

TEST(OrchestratorClientTest, ReturnsTheReplyWithTheRequestsIdIgnoringStrayOnes) {
  FakeOrchestrator orchestrator([](const DecodedClient& request) {
    const uint64_t id = request.header.message_id;
    return std::vector<std::string>{
        "not a client envelope",
        Reply(ListNamed("stale"), id + 100),  // answers some other request
        Reply(ListNamed(absl::StrCat("answer to ", id)), id),
    };
  });
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
      OrchestratorClient::Connect(orchestrator.endpoint());
  ASSERT_TRUE(client.ok()) << client.status();
  for (uint64_t round = 1; round <= 2; ++round) {
    absl::StatusOr<ExperimentList> list =
        (*client)->RequestReply<ExperimentList>(ListExperiments{}, 10);
    ASSERT_TRUE(list.ok()) << list.status();
    ASSERT_EQ(list->experiments.size(), 1u);
    EXPECT_EQ(list->experiments[0].name, absl::StrCat("answer to ", round));
  }
  const std::vector<DecodedClient> requests = orchestrator.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header, (ClientHeader{1, 0, "cohort-cli"}));
  EXPECT_EQ(requests[1].header, (ClientHeader{2, 0, "cohort-cli"}));
  EXPECT_EQ(requests[0].message, ClientMessage(ListExperiments{}));
}

TEST(OrchestratorClientTest, ClientErrorsBecomeStatusesWithTheirMessage) {
  FakeOrchestrator orchestrator([](const DecodedClient& request) {
    const auto* describe = std::get_if<DescribeExperiment>(&request.message);
    const ClientErrorCode code = describe == nullptr
                                     ? ClientErrorCode::kUnspecified
                                     : static_cast<ClientErrorCode>(describe->experiment_id);
    return std::vector<std::string>{Reply(ClientError{code, "refused"}, request.header.message_id)};
  });
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
      OrchestratorClient::Connect(orchestrator.endpoint());
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<std::pair<ClientErrorCode, absl::StatusCode>> expected = {
      {ClientErrorCode::kNotFound, absl::StatusCode::kNotFound},
      {ClientErrorCode::kInvalidRequest, absl::StatusCode::kInvalidArgument},
      {ClientErrorCode::kUnschedulable, absl::StatusCode::kFailedPrecondition},
      {ClientErrorCode::kUnsupportedVersion, absl::StatusCode::kUnimplemented},
      {ClientErrorCode::kUnspecified, absl::StatusCode::kUnknown},
  };
  for (const auto& [code, status_code] : expected) {
    absl::StatusOr<ClientMessage> reply =
        (*client)->Request(DescribeExperiment{static_cast<uint64_t>(code)}, 10);
    EXPECT_EQ(reply.status().code(), status_code) << static_cast<int>(code);
    EXPECT_EQ(reply.status().message(), "refused");
  }
}

TEST(OrchestratorClientTest, AnUnexpectedReplyTypeIsInternal) {
  FakeOrchestrator orchestrator([](const DecodedClient& request) {
    return std::vector<std::string>{Reply(ClientAck{}, request.header.message_id)};
  });
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
      OrchestratorClient::Connect(orchestrator.endpoint());
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<TaskListing> table = (*client)->RequestReply<TaskListing>(ListTasks{}, 10);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(table.status().message(), "the orchestrator answered ListTasks with ClientAck");
}

TEST(OrchestratorClientTest, NoAnswerInTimeIsUnavailableAndNamesTheEndpoint) {
  FakeOrchestrator orchestrator([](const DecodedClient& request) {
    // Only a reply to some other request, and bytes that do not decode.
    return std::vector<std::string>{Reply(ClientAck{}, request.header.message_id + 1), "garbage"};
  });
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
      OrchestratorClient::Connect(orchestrator.endpoint());
  ASSERT_TRUE(client.ok()) << client.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ClientMessage> reply = (*client)->Request(ListAgents{}, 0.3);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reply.status().message(),
              HasSubstr(absl::StrCat("no answer from the orchestrator at ", orchestrator.endpoint(),
                                     " within 0.3 s (the connection was made: has `cohort "
                                     "orchestrator` stopped, or is this its agents' port "
                                     "(--listen) rather than its clients' (--client-listen)?)")));
  EXPECT_THAT(reply.status().message(), HasSubstr("dropped a message that could not be read"));
  // It was connected without CURVE: a CURVE mismatch would have refused the handshake.
  EXPECT_THAT(reply.status().message(), Not(HasSubstr(kCurveHint)));
  EXPECT_GE(waited, 0.29);
  EXPECT_LT(waited, 5.0);
}

// Nothing listens: the refused connection is told at once, not after the whole timeout.
TEST(OrchestratorClientTest, NothingListeningIsToldAtOnce) {
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
      OrchestratorClient::Connect("tcp://127.0.0.1:1");
  ASSERT_TRUE(client.ok()) << client.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ClientMessage> reply = (*client)->Request(ListTasks{}, 10);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(reply.status(), absl::UnavailableError(
                                "no orchestrator at tcp://127.0.0.1:1: nothing listens there (the "
                                "connection was refused) (is `cohort orchestrator` running?)"));
  EXPECT_LT(waited, 5.0);
}

// A CURVE server of a key of its own on loopback, that answers nothing.
struct CurveRouter {
  CurveRouter() {
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::curve_server, true);
    socket.set(zmq::sockopt::curve_secretkey, GenerateCurveKeyPair().value().secret_key);
    socket.bind("tcp://127.0.0.1:*");
    endpoint = socket.get(zmq::sockopt::last_endpoint);
  }
  zmq::context_t context;
  zmq::socket_t socket{context, zmq::socket_type::router};
  std::string endpoint;
};

// A CURVE orchestrator and a plain client (or the reverse): the refusal says so, at once.
TEST(OrchestratorClientTest, ARefusedHandshakeIsToldAtOnceWithTheCurveHint) {
  CurveRouter router;
  const std::string& endpoint = router.endpoint;

  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
      OrchestratorClient::Connect(endpoint);
  ASSERT_TRUE(client.ok()) << client.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ClientMessage> reply = (*client)->Request(ListTasks{}, 10);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reply.status().message(),
              HasSubstr(absl::StrCat("the orchestrator at ", endpoint,
                                     " refused the connection: it refused the handshake")));
  EXPECT_THAT(reply.status().message(), HasSubstr(kCurveHint));
  EXPECT_THAT(reply.status().message(), Not(HasSubstr("running")));
  EXPECT_LT(waited, 5.0);
}

// A CURVE client that names another server key than the orchestrator's is told that may be why.
TEST(OrchestratorClientTest, AWrongServerKeyIsNamedAsAPossibleCause) {
  CurveRouter router;
  const std::string& endpoint = router.endpoint;
  const CurveClientConfig wrong{GenerateCurveKeyPair().value(), "cli",
                                GenerateCurveKeyPair().value().public_key};
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
      OrchestratorClient::Connect(endpoint, wrong);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ClientMessage> reply = (*client)->Request(ListTasks{}, 10);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reply.status().message(),
              HasSubstr("the server's public key given, --orchestrator-key, is not its own"));
}

TEST(OrchestratorClientTest, ACurveClientGetsNoCurveHint) {
  const CurveClientConfig curve{GenerateCurveKeyPair().value(), "cli",
                                GenerateCurveKeyPair().value().public_key};
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
      OrchestratorClient::Connect("tcp://127.0.0.1:1", curve);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ClientMessage> reply = (*client)->Request(ListTasks{}, 0.2);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reply.status().message(), Not(HasSubstr("CURVE")));

  const CurveClientConfig mismatched{
      {curve.keys.public_key, curve.server_public_key}, "cli", curve.server_public_key};
  EXPECT_EQ(OrchestratorClient::Connect("tcp://127.0.0.1:1", mismatched).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(OrchestratorClientTest, AMalformedEndpointIsInvalidArgument) {
  EXPECT_EQ(OrchestratorClient::Connect("not an endpoint").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OrchestratorClient::Connect("tcp://127.0.0.1:99999").status(),
            absl::InvalidArgumentError("the orchestrator's endpoint tcp://127.0.0.1:99999 has no "
                                       "valid port (1 to 65535): '99999'"));
}

// A host that does not resolve is told at once, not as "nothing listens there" (ZeroMQ would
// retry it in silence).
TEST(OrchestratorClientTest, AHostThatDoesNotResolveIsNamed) {
  const absl::Status status =
      OrchestratorClient::Connect("tcp://nosuchhost.invalid:29401").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("no orchestrator at tcp://nosuchhost.invalid:29401: its "
                                          "host 'nosuchhost.invalid' does not resolve"));
}

}  // namespace
}  // namespace cohort
