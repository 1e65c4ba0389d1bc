// AshaBracket with scripted results: asynchronous promotions, new trials, closing the unpromoted,
// early exits, stale reports, and progress.
#include "runtime/search/asha_bracket.h"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// "create 3", "train 3 to 10", "close 3", "shutdown".
std::string Describe(const SearcherOp& op) {
  if (const auto* create = std::get_if<CreateTrial>(&op)) {
    return absl::StrCat("create ", create->request_id);
  }
  if (const auto* train = std::get_if<TrainTrial>(&op)) {
    return absl::StrCat("train ", train->request_id, " to ", train->batches);
  }
  if (const auto* close = std::get_if<CloseTrial>(&op)) {
    return absl::StrCat("close ", close->request_id);
  }
  return "shutdown";
}

std::vector<std::string> Described(const std::vector<SearcherOp>& ops) {
  std::vector<std::string> lines;
  for (const SearcherOp& op : ops) lines.push_back(Describe(op));
  return lines;
}

// A bracket of rungs at 10 and 20 batches, divisor 2, whose trials get ids 1, 2, ...
class AshaBracketTest : public ::testing::Test {
 protected:
  AshaBracket MakeBracket(uint64_t max_trials, uint64_t initial_trials,
                          std::vector<uint64_t> rungs = {10, 20}) {
    return AshaBracket(AshaBracketPlan{std::move(rungs), max_trials, initial_trials}, 2);
  }
  std::vector<std::string> Start(AshaBracket& bracket) {
    return Described(bracket.Start([this] { return CreateTrial{++created_, {}}; }));
  }
  std::vector<std::string> Report(AshaBracket& bracket, uint64_t id, uint64_t batches,
                                  double loss) {
    return Described(bracket.OnValidation(id, batches, loss, [this] {
      return CreateTrial{++created_, {}};
    }));
  }
  std::vector<std::string> Exit(AshaBracket& bracket, uint64_t id) {
    return Described(bracket.OnTrialExitedEarly(id, [this] {
      return CreateTrial{++created_, {}};
    }));
  }

  uint64_t created_ = 0;
};

TEST_F(AshaBracketTest, PromotesAsSoonAsEnoughResultsAreIn) {
  AshaBracket bracket = MakeBracket(4, 2);
  EXPECT_THAT(Start(bracket),
              ElementsAre("create 1", "train 1 to 10", "create 2", "train 2 to 10"));
  // One result: floor(1/2) = 0 promotable, so a new trial starts instead.
  EXPECT_THAT(Report(bracket, 1, 10, 0.5), ElementsAre("create 3", "train 3 to 10"));
  // Two results: the best one is promotable and it is the newcomer.
  EXPECT_THAT(Report(bracket, 2, 10, 0.3), ElementsAre("train 2 to 20"));
  // Three results: still one promotable, already promoted.
  EXPECT_THAT(Report(bracket, 3, 10, 0.9), ElementsAre("create 4", "train 4 to 10"));
  // Four results: two promotable; the newcomer ranks first. All four are in, so the rung closes
  // the trials it did not promote.
  EXPECT_THAT(Report(bracket, 4, 10, 0.1), ElementsAre("train 4 to 20", "close 1", "close 3"));
  EXPECT_FALSE(bracket.done());
  EXPECT_THAT(Report(bracket, 2, 20, 0.2), ElementsAre("close 2"));
  EXPECT_THAT(Report(bracket, 4, 20, 0.05), ElementsAre("close 4"));
  EXPECT_TRUE(bracket.done());
  EXPECT_EQ(bracket.Progress(), 1.0);
  EXPECT_EQ(created_, 4u);
}

TEST_F(AshaBracketTest, ALateBetterResultPromotesTheBestWaitingTrial) {
  AshaBracket bracket = MakeBracket(4, 4);
  Start(bracket);
  EXPECT_THAT(Report(bracket, 1, 10, 0.4), IsEmpty());  // no trials left to start
  // Two results, one promotable: the newcomer (0.6) ranks second, so the waiting best (1) goes.
  EXPECT_THAT(Report(bracket, 2, 10, 0.6), ElementsAre("train 1 to 20"));
  EXPECT_THAT(Report(bracket, 3, 10, 0.7), IsEmpty());
  // Four results, two promotable: the best not yet promoted is 2.
  EXPECT_THAT(Report(bracket, 4, 10, 0.8), ElementsAre("train 2 to 20", "close 3", "close 4"));
}

TEST_F(AshaBracketTest, ValidationsBeforeTheRungAndStaleOnesAreIgnored) {
  AshaBracket bracket = MakeBracket(2, 2);
  Start(bracket);
  EXPECT_THAT(Report(bracket, 1, 5, 0.1), IsEmpty());   // a periodic validation at 5 batches
  EXPECT_THAT(Report(bracket, 9, 10, 0.1), IsEmpty());  // not a trial of this bracket
  EXPECT_THAT(Report(bracket, 1, 10, 0.4), IsEmpty());
  EXPECT_THAT(Report(bracket, 1, 10, 0.4), IsEmpty());  // reported already: waiting, not training
  EXPECT_THAT(Report(bracket, 2, 10, 0.2), ElementsAre("train 2 to 20", "close 1"));
  EXPECT_THAT(Exit(bracket, 1), IsEmpty());  // closed already
}

TEST_F(AshaBracketTest, LargerIsBetterIsTheCallersNegation) {
  // The bracket ranks smaller first; a searcher maximising a metric passes its negation.
  AshaBracket bracket = MakeBracket(2, 2);
  Start(bracket);
  Report(bracket, 1, 10, -0.9);
  EXPECT_THAT(Report(bracket, 2, 10, -0.1), ElementsAre("train 1 to 20", "close 2"));
}

TEST_F(AshaBracketTest, AnExitWhileTrainingRanksWorst) {
  AshaBracket bracket = MakeBracket(3, 2);
  Start(bracket);
  // The exit counts as a result: nobody promotable yet, so a third trial starts.
  EXPECT_THAT(Exit(bracket, 1), ElementsAre("create 3", "train 3 to 10"));
  // Two results: the newcomer beats the exited trial and is promoted.
  EXPECT_THAT(Report(bracket, 2, 10, 5.0), ElementsAre("train 2 to 20"));
  // Three results, all in: 3 is not promoted and closes; the exited trial gets no close.
  EXPECT_THAT(Report(bracket, 3, 10, 7.0), ElementsAre("close 3"));
  EXPECT_THAT(Report(bracket, 2, 20, 1.0), ElementsAre("close 2"));
  EXPECT_TRUE(bracket.done());
}

TEST_F(AshaBracketTest, AnExitedTrialPromotedAnywayReportsWorstAtOnce) {
  AshaBracket bracket = MakeBracket(2, 2, {10, 20, 40});
  Start(bracket);
  EXPECT_THAT(Report(bracket, 1, 10, 0.1), IsEmpty());
  EXPECT_THAT(Exit(bracket, 1), IsEmpty());  // exits while waiting: keeps its rank
  // Two results: the best is 1, which cannot train; it ranks worst at rung 20 at once, where it
  // is alone and nobody is promotable. Every trial has reported at rung 10, so 2 closes.
  EXPECT_THAT(Report(bracket, 2, 10, 0.5), ElementsAre("close 2"));
  EXPECT_TRUE(bracket.done());
  EXPECT_EQ(bracket.Progress(), 1.0);
}

TEST_F(AshaBracketTest, NeverStartsMoreThanMaxTrialsAndProgressNeverFalls) {
  AshaBracket bracket = MakeBracket(7, 3, {4, 8, 16});
  std::vector<std::string> ops = Start(bracket);
  double progress = bracket.Progress();
  EXPECT_EQ(progress, 0);
  // Answer every train with a loss that depends on the trial only; exit trial 5 when asked.
  for (size_t next = 0; next < ops.size(); ++next) {
    uint64_t id = 0, batches = 0;
    if (std::sscanf(ops[next].c_str(), "train %" SCNu64 " to %" SCNu64, &id, &batches) != 2) {
      continue;
    }
    std::vector<std::string> more =
        id == 5 ? Exit(bracket, id) : Report(bracket, id, batches, 1.0 / (1.0 + id % 4));
    ops.insert(ops.end(), more.begin(), more.end());
    EXPECT_GE(bracket.Progress(), progress);
    progress = bracket.Progress();
  }
  EXPECT_EQ(created_, 7u);
  EXPECT_TRUE(bracket.done());
  EXPECT_EQ(progress, 1.0);
  int closes = 0;
  for (const std::string& op : ops) closes += op.rfind("close ", 0) == 0;
  EXPECT_EQ(closes, 6) << absl::StrJoin(ops, "\n");  // all but the exited trial
}

}  // namespace
}  // namespace cohort
