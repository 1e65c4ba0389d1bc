// PhaseTimer: seconds per phase between two Takes, by the phases' timing keys.
#include "runtime/trial/phase_timer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(PhaseTimerTest, CountsEachPhaseUntilTheNextAndStartsAgainAfterATake) {
  PhaseTimer timer;
  timer.Enter(TrialPhase::kStarting, 10.0);  // not counted: no timing key
  timer.Enter(TrialPhase::kPreparing, 12.0);
  timer.Enter(TrialPhase::kTraining, 12.5);
  timer.Enter(TrialPhase::kExchanging, 14.5);
  timer.Enter(TrialPhase::kStepping, 15.0);
  timer.Enter(TrialPhase::kPreparing, 15.25);
  timer.Enter(TrialPhase::kTraining, 15.75);
  EXPECT_THAT(timer.Take(16.75),
              ElementsAre(NamedValue{"data", 1.0}, NamedValue{"compute", 3.0},
                          NamedValue{"exchange_wait", 0.5}, NamedValue{"optimizer", 0.25}));
  EXPECT_THAT(timer.Take(16.75), IsEmpty()) << "no time passed since the last Take";
  timer.Enter(TrialPhase::kCheckpointing, 17.75);  // training went on until here
  EXPECT_THAT(timer.Take(18.0),
              ElementsAre(NamedValue{"compute", 1.0}, NamedValue{"checkpoint", 0.25}));
}

TEST(PhaseTimerTest, EveryCountedPhaseHasAKey) {
  for (TrialPhase phase : {TrialPhase::kPreparing, TrialPhase::kTraining, TrialPhase::kExchanging,
                           TrialPhase::kStepping, TrialPhase::kReporting, TrialPhase::kValidating,
                           TrialPhase::kCheckpointing}) {
    EXPECT_STRNE(TrialPhaseTimingKey(phase), "") << TrialPhaseName(phase);
  }
  EXPECT_STREQ(TrialPhaseTimingKey(TrialPhase::kStarting), "");
  EXPECT_STREQ(TrialPhaseTimingKey(TrialPhase::kDone), "");
}

}  // namespace
}  // namespace cohort
