// Retention rules, table-driven: latest, best, experiment best, their combinations, ties,
// larger-is-better metrics and checkpoints without metrics.
#include "runtime/checkpoint/retention.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAreArray;

CheckpointRecord R(const char* id, uint64_t trial, uint64_t batches,
                   std::optional<double> metric = {}) {
  return CheckpointRecord{id, trial, batches, metric};
}

RetentionPolicy Policy(uint32_t latest, uint32_t best, uint32_t experiment_best,
                       bool smaller = true) {
  return RetentionPolicy{latest, best, experiment_best, smaller};
}

struct RetentionCase {
  const char* name;
  RetentionPolicy policy;
  std::vector<CheckpointRecord> checkpoints;
  std::vector<std::string> deleted;
};

// One trial whose newest checkpoint is not its best: a@100 0.5, b@200 0.3 (best), c@300 0.4.
const std::vector<CheckpointRecord> kOneTrial = {R("a", 1, 100, 0.5), R("b", 1, 200, 0.3),
                                                 R("c", 1, 300, 0.4)};

// Two trials: trial 1 holds the experiment's best (0.1) in an old checkpoint.
const std::vector<CheckpointRecord> kTwoTrials = {R("t1-a", 1, 100, 0.1), R("t1-b", 1, 200, 0.5),
                                                  R("t2-a", 2, 100, 0.3), R("t2-b", 2, 200, 0.2)};

const double kNaN = std::numeric_limits<double>::quiet_NaN();

const RetentionCase kCases[] = {
    {"defaults keep the newest and the best", RetentionPolicy{}, kOneTrial, {"a"}},
    {"latest only", Policy(1, 0, 0), kOneTrial, {"a", "b"}},
    {"two latest", Policy(2, 0, 0), kOneTrial, {"a"}},
    {"best only", Policy(0, 1, 0), kOneTrial, {"a", "c"}},
    {"two best", Policy(0, 2, 0), kOneTrial, {"a"}},
    {"keep nothing", Policy(0, 0, 0), kOneTrial, {"a", "b", "c"}},
    {"more than there are", Policy(5, 5, 5), kOneTrial, {}},
    {"larger is better", Policy(1, 1, 0, false), kOneTrial, {"b"}},
    {"larger is better, best only", Policy(0, 1, 0, false), kOneTrial, {"b", "c"}},
    {"latest is per trial", Policy(1, 0, 0), kTwoTrials, {"t1-a", "t2-a"}},
    {"best is per trial", Policy(0, 1, 0), kTwoTrials, {"t1-b", "t2-a"}},
    {"experiment best across trials", Policy(0, 0, 1), kTwoTrials, {"t1-b", "t2-a", "t2-b"}},
    {"experiment best two", Policy(0, 0, 2), kTwoTrials, {"t1-b", "t2-a"}},
    {"latest plus experiment best", Policy(1, 0, 1), kTwoTrials, {"t2-a"}},
    {"experiment best, larger is better",
     Policy(0, 0, 1, false),
     kTwoTrials,
     {"t1-a", "t2-a", "t2-b"}},
    {"equal metrics prefer the older",
     Policy(0, 1, 0),
     {R("old", 1, 100, 0.2), R("new", 1, 200, 0.2)},
     {"new"}},
    {"equal metrics across trials prefer the lower trial",
     Policy(0, 0, 1),
     {R("x", 1, 300, 0.2), R("y", 2, 100, 0.2)},
     {"y"}},
    {"equal metrics across trials, lower trial whatever its batches",
     Policy(0, 0, 1),
     {R("x", 2, 100, 0.2), R("y", 1, 300, 0.2)},
     {"x"}},
    {"equal metrics and batches prefer the least id",
     Policy(0, 1, 0),
     {R("q", 1, 100, 0.2), R("p", 1, 100, 0.2)},
     {"q"}},
    {"equal batches prefer the greater id",
     Policy(1, 0, 0),
     {R("m", 1, 100), R("n", 1, 100)},
     {"m"}},
    {"no metric is never best", Policy(0, 2, 2), {R("a", 1, 100), R("b", 1, 200)}, {"a", "b"}},
    {"NaN is never best",
     Policy(0, 1, 1),
     {R("nan", 1, 200, kNaN), R("real", 1, 100, 9.0)},
     {"nan"}},
    {"best skips unmeasured newer ones",
     Policy(1, 1, 0),
     {R("measured", 1, 100, 1.0), R("mid", 1, 200), R("newest", 1, 300)},
     {"mid"}},
    {"negative and infinite metrics rank",
     Policy(0, 1, 0),
     {R("inf", 1, 100, -std::numeric_limits<double>::infinity()), R("neg", 1, 200, -5.0)},
     {"neg"}},
    {"empty", RetentionPolicy{}, {}, {}},
};

class RetentionTest : public ::testing::TestWithParam<RetentionCase> {};

TEST_P(RetentionTest, DeletesWhatNoRuleKeeps) {
  const RetentionCase& c = GetParam();
  EXPECT_THAT(CheckpointsToDelete(c.checkpoints, c.policy), ElementsAreArray(c.deleted)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, RetentionTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<RetentionCase>& info) {
                           std::string name;
                           for (const char* p = info.param.name; *p; ++p) {
                             name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
                           }
                           return name;
                         });

TEST(RetentionOrderTest, ResultIsSortedByTrialBatchesAndIdWhateverTheInputOrder) {
  const std::vector<CheckpointRecord> shuffled = {R("t2-x", 2, 50), R("t1-c", 1, 30),
                                                  R("t2-y", 2, 10), R("t1-a", 1, 10),
                                                  R("t1-b", 1, 10), R("t3", 3, 1)};
  EXPECT_THAT(CheckpointsToDelete(shuffled, Policy(0, 0, 0)),
              ElementsAreArray({"t1-a", "t1-b", "t1-c", "t2-y", "t2-x", "t3"}));
}

TEST(RetentionOrderTest, AnIdKeptByOneRecordIsNeverDeleted) {
  const std::vector<CheckpointRecord> duplicated = {R("same", 1, 100), R("same", 1, 50),
                                                    R("gone", 1, 10), R("gone", 1, 20)};
  EXPECT_THAT(CheckpointsToDelete(duplicated, Policy(1, 0, 0)), ElementsAreArray({"gone"}));
}

}  // namespace
}  // namespace cohort
