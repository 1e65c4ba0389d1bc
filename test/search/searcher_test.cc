// Every searcher from a parsed config, driven to the end by answering each TrainTrial with a
// scripted validation (or an early exit).
#include "runtime/search/searcher.h"

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kConfig[] = R"(
entrypoint: mlp
hyperparameters:
  global_batch_size: 32
  lr: {type: double, minval: 0.0, maxval: 1.0, count: 3}
  act: {type: categorical, vals: [relu, tanh]}
searcher:
  name: single
  metric: loss
  max_length: {batches: 16}
)";

ExperimentConfig Config(std::vector<std::string> overrides) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kConfig, overrides);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

std::unique_ptr<Searcher> Make(std::vector<std::string> overrides, uint64_t max_batches = 16) {
  absl::StatusOr<std::unique_ptr<Searcher>> searcher =
      CreateSearcher(Config(std::move(overrides)), max_batches);
  EXPECT_TRUE(searcher.ok()) << searcher.status();
  return searcher.ok() ? *std::move(searcher) : nullptr;
}

// Gives the validation metric of a trial trained to some batches, or nullopt to exit it instead.
using Script = std::function<std::optional<double>(uint64_t request_id, const Hyperparameters&,
                                                   uint64_t batches)>;

struct SearchRecord {
  std::map<uint64_t, Hyperparameters> created;
  std::map<uint64_t, uint64_t> trained_to;  // the last TrainTrial target
  std::vector<uint64_t> train_targets;
  std::set<uint64_t> closed;
  std::set<uint64_t> exited;
  std::vector<std::string> log;
  int shutdowns = 0;
  bool progress_monotone = true;
  double final_progress = 0;
};

// Carries out every op in order, answering each TrainTrial at once.
SearchRecord Drive(Searcher& searcher, const Script& script) {
  SearchRecord run;
  std::vector<SearcherOp> ops = searcher.Start();
  double progress = searcher.Progress();
  for (size_t next = 0; next < ops.size(); ++next) {
    EXPECT_EQ(run.shutdowns, 0) << "an op after Shutdown";
    std::vector<SearcherOp> more;
    if (auto* create = std::get_if<CreateTrial>(&ops[next])) {
      EXPECT_EQ(run.created.count(create->request_id), 0u);
      run.created[create->request_id] = create->hparams;
      run.log.push_back(absl::StrCat("create ", create->request_id));
    } else if (const auto* train = std::get_if<TrainTrial>(&ops[next])) {
      const uint64_t id = train->request_id;
      EXPECT_EQ(run.created.count(id), 1u);
      EXPECT_GT(train->batches, run.trained_to[id]);
      run.trained_to[id] = train->batches;
      run.train_targets.push_back(train->batches);
      run.log.push_back(absl::StrCat("train ", id, " to ", train->batches));
      if (std::optional<double> metric = script(id, run.created[id], train->batches)) {
        more = searcher.OnValidation(id, train->batches, *metric);
      } else {
        run.exited.insert(id);
        more = searcher.OnTrialExitedEarly(id);
      }
    } else if (const auto* close = std::get_if<CloseTrial>(&ops[next])) {
      EXPECT_TRUE(run.closed.insert(close->request_id).second);
      EXPECT_EQ(run.exited.count(close->request_id), 0u);
      run.log.push_back(absl::StrCat("close ", close->request_id));
    } else {
      ++run.shutdowns;
      run.log.push_back("shutdown");
    }
    for (SearcherOp& op : more) ops.push_back(std::move(op));
    run.progress_monotone &= searcher.Progress() >= progress;
    progress = searcher.Progress();
  }
  run.final_progress = progress;
  return run;
}

double Lr(const Hyperparameters& hp) { return *hp.GetDouble("lr"); }

TEST(SearcherTest, SingleTrainsTheSingleSearchersChoiceOnce) {
  std::unique_ptr<Searcher> searcher = Make({});
  ASSERT_NE(searcher, nullptr);
  std::vector<SearcherOp> ops = searcher->Start();
  ASSERT_EQ(ops.size(), 2u);
  const CreateTrial& create = std::get<CreateTrial>(ops[0]);
  EXPECT_EQ(create.request_id, 1u);
  EXPECT_EQ(*create.hparams.GetDouble("lr"), 0.5);
  EXPECT_EQ(**create.hparams.GetString("act"), "relu");
  EXPECT_EQ(*create.hparams.GetInt("global_batch_size"), 32);
  EXPECT_EQ(std::get<TrainTrial>(ops[1]).batches, 16u);
  EXPECT_EQ(searcher->Progress(), 0);
  EXPECT_THAT(searcher->OnValidation(1, 8, 0.7), IsEmpty());   // a periodic validation
  EXPECT_THAT(searcher->OnValidation(2, 16, 0.7), IsEmpty());  // no such trial
  ops = searcher->OnValidation(1, 16, 0.3);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(std::get<CloseTrial>(ops[0]).request_id, 1u);
  EXPECT_TRUE(std::holds_alternative<Shutdown>(ops[1]));
  EXPECT_EQ(searcher->Progress(), 1);
  EXPECT_THAT(searcher->OnValidation(1, 16, 0.3), IsEmpty());
  EXPECT_THAT(searcher->OnTrialExitedEarly(1), IsEmpty());
}

TEST(SearcherTest, GridTrainsEveryPointInOrderToTheFullLength) {
  std::unique_ptr<Searcher> searcher = Make({"searcher.name=grid"});
  ASSERT_NE(searcher, nullptr);
  // Exit the trial with id 4; the others report.
  const SearchRecord run = Drive(*searcher, [](uint64_t id, const Hyperparameters&, uint64_t) {
    return id == 4 ? std::nullopt : std::optional<double>(1.0);
  });
  std::vector<std::string> points;
  for (const auto& [id, hp] : run.created) {
    points.push_back(absl::StrCat(id, ":", **hp.GetString("act"), "/", Lr(hp)));
    EXPECT_EQ(*hp.GetInt("global_batch_size"), 32);
  }
  EXPECT_THAT(points, ElementsAre("1:relu/0", "2:relu/0.5", "3:relu/1", "4:tanh/0", "5:tanh/0.5",
                                  "6:tanh/1"));
  for (uint64_t batches : run.train_targets) EXPECT_EQ(batches, 16u);
  EXPECT_THAT(run.closed, ElementsAre(1, 2, 3, 5, 6));
  EXPECT_EQ(run.shutdowns, 1);
  EXPECT_EQ(run.log.back(), "shutdown");
  EXPECT_TRUE(run.progress_monotone);
  EXPECT_EQ(run.final_progress, 1);
}

TEST(SearcherTest, GridProgressCountsFinishedTrials) {
  std::unique_ptr<Searcher> searcher = Make({"searcher.name=grid"});
  ASSERT_NE(searcher, nullptr);
  searcher->Start();
  searcher->OnValidation(1, 16, 0.1);
  searcher->OnTrialExitedEarly(2);
  searcher->OnTrialExitedEarly(2);  // counted once
  EXPECT_DOUBLE_EQ(searcher->Progress(), 2.0 / 6);
}

TEST(SearcherTest, RandomDrawsMaxTrialsReproduciblyBySeed) {
  const std::vector<std::string> random = {"searcher.name=random", "searcher.max_trials=5",
                                           "reproducibility.experiment_seed=11"};
  auto draws = [](std::vector<std::string> overrides) {
    std::unique_ptr<Searcher> searcher = Make(std::move(overrides));
    std::vector<std::string> values;
    for (const SearcherOp& op : searcher->Start()) {
      if (const auto* create = std::get_if<CreateTrial>(&op)) {
        const double lr = Lr(create->hparams);
        EXPECT_GE(lr, 0.0);
        EXPECT_LE(lr, 1.0);
        values.push_back(
            absl::StrCat(create->request_id, ":", **create->hparams.GetString("act"), "/", lr));
      } else {
        EXPECT_EQ(std::get<TrainTrial>(op).batches, 16u);
      }
    }
    return values;
  };
  const std::vector<std::string> first = draws(random);
  ASSERT_EQ(first.size(), 5u);
  EXPECT_EQ(draws(random), first);
  std::vector<std::string> other_seed = random;
  other_seed.back() = "reproducibility.experiment_seed=12";
  EXPECT_NE(draws(other_seed), first);
  // No seed: the same as seed 0.
  EXPECT_EQ(draws({"searcher.name=random", "searcher.max_trials=5"}),
            draws({"searcher.name=random", "searcher.max_trials=5",
                   "reproducibility.experiment_seed=0"}));
}

TEST(SearcherTest, RandomShutsDownAfterEveryTrial) {
  std::unique_ptr<Searcher> searcher = Make({"searcher.name=random", "searcher.max_trials=4"});
  ASSERT_NE(searcher, nullptr);
  const SearchRecord run = Drive(*searcher, [](uint64_t, const Hyperparameters& hp, uint64_t) {
    return std::optional<double>(Lr(hp));
  });
  EXPECT_EQ(run.created.size(), 4u);
  EXPECT_EQ(run.closed.size(), 4u);
  EXPECT_EQ(run.shutdowns, 1);
  EXPECT_EQ(run.final_progress, 1);
}

// 16 trials in one aggressive bracket of rungs at 1, 4 and 16 batches.
const std::vector<std::string> kAsha = {
    "searcher.name=adaptive_asha", "searcher.max_trials=16", "searcher.mode=aggressive",
    "searcher.max_concurrent_trials=4", "hyperparameters.lr={type: double, minval: 0, maxval: 1}"};

TEST(SearcherTest, AshaTrainsTheBestTrialToTheEndSmallerIsBetter) {
  std::unique_ptr<Searcher> searcher = Make(kAsha);
  ASSERT_NE(searcher, nullptr);
  const SearchRecord run =
      Drive(*searcher, [](uint64_t, const Hyperparameters& hp, uint64_t batches) {
        return std::optional<double>(Lr(hp) + 1.0 / static_cast<double>(batches));
      });
  ASSERT_EQ(run.created.size(), 16u);
  uint64_t best = 0;
  for (const auto& [id, hp] : run.created) {
    if (best == 0 || Lr(hp) < Lr(run.created.at(best))) best = id;
  }
  EXPECT_EQ(run.trained_to.at(best), 16u);
  for (uint64_t batches : run.train_targets) {
    EXPECT_THAT(std::set<uint64_t>({1, 4, 16}), ::testing::Contains(batches));
  }
  EXPECT_EQ(run.closed.size(), 16u);
  EXPECT_EQ(run.shutdowns, 1);
  EXPECT_EQ(run.log.back(), "shutdown");
  EXPECT_TRUE(run.progress_monotone);
  EXPECT_EQ(run.final_progress, 1);
}

TEST(SearcherTest, AshaLargerIsBetterPromotesTheLargest) {
  std::vector<std::string> overrides = kAsha;
  overrides.push_back("searcher.smaller_is_better=false");
  std::unique_ptr<Searcher> searcher = Make(overrides);
  ASSERT_NE(searcher, nullptr);
  const SearchRecord run = Drive(*searcher, [](uint64_t, const Hyperparameters& hp, uint64_t) {
    return std::optional<double>(Lr(hp));
  });
  uint64_t best = 0;
  for (const auto& [id, hp] : run.created) {
    if (best == 0 || Lr(hp) > Lr(run.created.at(best))) best = id;
  }
  EXPECT_EQ(run.trained_to.at(best), 16u);
  EXPECT_EQ(run.shutdowns, 1);
}

TEST(SearcherTest, AshaStartsItsShareOfConcurrentTrialsAndNoMoreThanMaxTrials) {
  std::unique_ptr<Searcher> searcher = Make(kAsha);
  ASSERT_NE(searcher, nullptr);
  const std::vector<SearcherOp> start = searcher->Start();
  ASSERT_EQ(start.size(), 8u);  // 4 trials, each created and trained to the first rung
  for (size_t i = 0; i < start.size(); i += 2) {
    EXPECT_EQ(std::get<CreateTrial>(start[i]).request_id, i / 2 + 1);
    EXPECT_EQ(std::get<TrainTrial>(start[i + 1]).batches, 1u);
  }
}

TEST(SearcherTest, AshaSurvivesEarlyExitsAndNaNMetrics) {
  std::vector<std::string> overrides = {"searcher.name=adaptive_asha", "searcher.max_trials=30",
                                        "searcher.max_concurrent_trials=5"};
  std::unique_ptr<Searcher> searcher = Make(overrides, 64);
  ASSERT_NE(searcher, nullptr);
  auto script = [](uint64_t id, const Hyperparameters& hp, uint64_t batches) {
    if (id % 3 == 0 && batches >= 16) return std::optional<double>();  // some once promoted
    if (id % 7 == 0) return std::optional<double>(std::nan(""));
    return std::optional<double>(Lr(hp));
  };
  const SearchRecord run = Drive(*searcher, script);
  EXPECT_EQ(run.created.size(), 30u);
  EXPECT_EQ(run.closed.size() + run.exited.size(), 30u);
  EXPECT_EQ(run.shutdowns, 1);
  EXPECT_EQ(run.log.back(), "shutdown");
  EXPECT_TRUE(run.progress_monotone);
  EXPECT_EQ(run.final_progress, 1);
  // Request ids are 1 .. 30 across the brackets.
  EXPECT_EQ(run.created.begin()->first, 1u);
  EXPECT_EQ(run.created.rbegin()->first, 30u);
}

TEST(SearcherTest, AshaIsDeterministic) {
  auto script = [](uint64_t, const Hyperparameters& hp, uint64_t batches) {
    return std::optional<double>(Lr(hp) * static_cast<double>(batches % 5));
  };
  const std::vector<std::string> asha = {"searcher.name=adaptive_asha", "searcher.max_trials=40"};
  std::unique_ptr<Searcher> a = Make(asha, 256);
  std::unique_ptr<Searcher> b = Make(asha, 256);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const SearchRecord first = Drive(*a, script);
  const SearchRecord second = Drive(*b, script);
  EXPECT_EQ(first.log, second.log);
  ASSERT_EQ(first.created.size(), 40u);
  for (const auto& [id, hp] : first.created) EXPECT_EQ(Lr(hp), Lr(second.created.at(id)));
}

TEST(SearcherTest, AshaIgnoresUnknownTrialsAndStaleReports) {
  std::unique_ptr<Searcher> searcher = Make(kAsha);
  ASSERT_NE(searcher, nullptr);
  searcher->Start();
  EXPECT_THAT(searcher->OnValidation(99, 1, 0.5), IsEmpty());
  EXPECT_THAT(searcher->OnTrialExitedEarly(99), IsEmpty());
  EXPECT_THAT(searcher->OnValidation(1, 0, 0.5), IsEmpty());  // before its rung
  EXPECT_FALSE(searcher->OnValidation(1, 1, 0.5).empty());    // a new trial replaces it
  EXPECT_THAT(searcher->OnValidation(1, 1, 0.5), IsEmpty());  // reported already
}

// Searches whose trials all train max_length know their batches from the start (progress in
// batches); ASHA's depend on the results.
TEST(SearcherTest, TotalBatchesAreKnownWhereEveryTrialTrainsMaxLength) {
  EXPECT_EQ(Make({})->TotalBatches(), 16u);
  EXPECT_EQ(Make({"searcher.name=grid"})->TotalBatches(), 6u * 16);  // 3 lr x 2 act
  EXPECT_EQ(Make({"searcher.name=random", "searcher.max_trials=5"})->TotalBatches(), 5u * 16);
  EXPECT_EQ(Make({"searcher.name=adaptive_asha", "searcher.max_trials=4"})->TotalBatches(),
            std::nullopt);
  // A sum past 64 bits saturates.
  EXPECT_EQ(Make({"searcher.name=grid"}, UINT64_MAX / 2)->TotalBatches(), UINT64_MAX);
}

TEST(SearcherTest, CreateSearcherRejectsWhatCannotRun) {
  absl::StatusOr<std::unique_ptr<Searcher>> searcher = CreateSearcher(Config({}), 0);
  ASSERT_FALSE(searcher.ok());
  EXPECT_THAT(std::string(searcher.status().message()),
              HasSubstr("searcher.max_length: 16 batches comes to 0 batches"));

  searcher = CreateSearcher(Config({"searcher.name=grid",
                                    "hyperparameters.a={type: int, minval: 0, maxval: 999, "
                                    "count: 1000}",
                                    "hyperparameters.b={type: double, minval: 0, maxval: 1, "
                                    "count: 1000}"}),
                            16);
  ASSERT_FALSE(searcher.ok());
  EXPECT_THAT(std::string(searcher.status().message()), HasSubstr("exceeds 100000 trials"));

  searcher = CreateSearcher(Config({"searcher.name=random", "searcher.max_trials=100001"}), 16);
  ASSERT_FALSE(searcher.ok());
  EXPECT_THAT(std::string(searcher.status().message()),
              HasSubstr("searcher.max_trials: expected an integer between 1 and 100000"));
}

}  // namespace
}  // namespace cohort
