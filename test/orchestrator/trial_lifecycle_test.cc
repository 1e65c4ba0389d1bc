// TrialLifecycle alone: every event in every stage, as a table of the stage it leads to (or
// "ignored"), and the paths a trial takes through the orchestrator.
#include "runtime/orchestrator/trial_lifecycle.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cohort {
namespace {

constexpr TrialStage kEveryStage[] = {
    TrialStage::kIdle,    TrialStage::kWaiting, TrialStage::kQueued,   TrialStage::kRunning,
    TrialStage::kPausing, TrialStage::kClosing, TrialStage::kStopping, TrialStage::kCompleted,
    TrialStage::kStopped, TrialStage::kError,
};

// A lifecycle brought to `stage` through events alone.
TrialLifecycle At(TrialStage stage) {
  TrialLifecycle lifecycle;
  auto to_running = [&] {
    lifecycle.Train();
    lifecycle.TaskCreated();
    lifecycle.TaskLaunched();
  };
  switch (stage) {
    case TrialStage::kIdle:
      break;
    case TrialStage::kWaiting:
      lifecycle.Train();
      break;
    case TrialStage::kQueued:
      lifecycle.Train();
      lifecycle.TaskCreated();
      break;
    case TrialStage::kRunning:
      to_running();
      break;
    case TrialStage::kPausing:
      to_running();
      lifecycle.Pause();
      break;
    case TrialStage::kClosing:
      to_running();
      lifecycle.Close();
      break;
    case TrialStage::kStopping:
      to_running();
      lifecycle.Stop();
      break;
    case TrialStage::kCompleted:
      lifecycle.End(TrialState::kCompleted);
      break;
    case TrialStage::kStopped:
      lifecycle.End(TrialState::kStopped);
      break;
    case TrialStage::kError:
      lifecycle.End(TrialState::kError);
      break;
  }
  EXPECT_EQ(lifecycle.stage(), stage) << TrialStageName(stage);
  return lifecycle;
}

TrialDecision Decision(TrialNext next, TrialState end_state = TrialState::kCompleted) {
  TrialDecision decision;
  decision.next = next;
  decision.end_state = end_state;
  return decision;
}

struct Event {
  const char* name;
  std::function<bool(TrialLifecycle&)> apply;
  // What it leads to from each stage of kEveryStage, in order; "" where it is ignored.
  std::vector<std::string> to;
};

TEST(TrialLifecycleTest, EveryEventInEveryPhase) {
  const std::vector<Event> events = {
      // from: idle, waiting, queued, running, pausing, closing, stopping, completed, stopped,
      // error
      {"Train",
       [](TrialLifecycle& l) { return l.Train(); },
       {"waiting", "waiting", "", "", "", "", "", "", "", ""}},
      {"Replayed",
       [](TrialLifecycle& l) { return l.Replayed(); },
       {"", "idle", "", "", "", "", "", "", "", ""}},
      {"TaskCreated",
       [](TrialLifecycle& l) { return l.TaskCreated(); },
       {"", "queued", "", "", "", "", "", "", "", ""}},
      {"TaskLaunched",
       [](TrialLifecycle& l) { return l.TaskLaunched(); },
       {"", "", "running", "", "", "", "", "", "", ""}},
      {"TaskEnded(segment done)",
       [](TrialLifecycle& l) { return l.TaskEnded(Decision(TrialNext::kSegmentDone)); },
       {"", "", "", "idle", "idle", "completed", "stopped", "", "", ""}},
      {"TaskEnded(restart)",
       [](TrialLifecycle& l) { return l.TaskEnded(Decision(TrialNext::kRestart)); },
       {"", "", "", "waiting", "waiting", "completed", "stopped", "", "", ""}},
      {"TaskEnded(place again)",
       [](TrialLifecycle& l) { return l.TaskEnded(Decision(TrialNext::kPlaceAgain)); },
       {"", "", "", "waiting", "waiting", "completed", "stopped", "", "", ""}},
      {"TaskEnded(pause)",
       [](TrialLifecycle& l) { return l.TaskEnded(Decision(TrialNext::kPause)); },
       {"", "", "", "waiting", "waiting", "completed", "stopped", "", "", ""}},
      {"TaskEnded(end stopped)",
       [](TrialLifecycle& l) {
         return l.TaskEnded(Decision(TrialNext::kEnd, TrialState::kStopped));
       },
       {"", "", "", "stopped", "stopped", "completed", "stopped", "", "", ""}},
      {"TaskEnded(fail)",
       [](TrialLifecycle& l) { return l.TaskEnded(Decision(TrialNext::kFail)); },
       {"", "", "", "error", "error", "completed", "stopped", "", "", ""}},
      {"Pause",
       [](TrialLifecycle& l) { return l.Pause(); },
       {"", "", "waiting", "pausing", "", "", "", "", "", ""}},
      {"Close",
       [](TrialLifecycle& l) { return l.Close(); },
       {"completed", "completed", "completed", "closing", "closing", "", "closing", "", "", ""}},
      {"Stop",
       [](TrialLifecycle& l) { return l.Stop(); },
       {"stopped", "stopped", "stopped", "stopping", "stopping", "", "", "", "", ""}},
      {"End(error)",
       [](TrialLifecycle& l) { return l.End(TrialState::kError); },
       {"error", "error", "error", "error", "error", "error", "error", "", "", ""}},
  };
  for (const Event& event : events) {
    ASSERT_EQ(event.to.size(), std::size(kEveryStage)) << event.name;
    for (size_t i = 0; i < event.to.size(); ++i) {
      TrialLifecycle lifecycle = At(kEveryStage[i]);
      const bool applied = event.apply(lifecycle);
      const std::string where = std::string(event.name) + " from " + TrialStageName(kEveryStage[i]);
      if (event.to[i].empty()) {
        EXPECT_FALSE(applied) << where;
        EXPECT_EQ(lifecycle.stage(), kEveryStage[i]) << where << ": an ignored event changed it";
      } else {
        EXPECT_TRUE(applied) << where;
        EXPECT_EQ(TrialStageName(lifecycle.stage()), event.to[i]) << where;
      }
    }
  }
}

TEST(TrialLifecycleTest, ClientsSeeQueuedRunningPausedOrTheEnd) {
  const TrialState seen[] = {TrialState::kPaused,  TrialState::kQueued,    TrialState::kQueued,
                             TrialState::kRunning, TrialState::kRunning,   TrialState::kRunning,
                             TrialState::kRunning, TrialState::kCompleted, TrialState::kStopped,
                             TrialState::kError};
  for (size_t i = 0; i < std::size(kEveryStage); ++i) {
    const TrialLifecycle lifecycle = At(kEveryStage[i]);
    EXPECT_EQ(lifecycle.state(), seen[i]) << TrialStageName(kEveryStage[i]);
    EXPECT_EQ(lifecycle.ended(), i >= 7) << TrialStageName(kEveryStage[i]);
    EXPECT_EQ(lifecycle.wants_task(), kEveryStage[i] == TrialStage::kWaiting);
  }
}

// Two segments, a restart between them, then the searcher closes it while it is idle.
TEST(TrialLifecycleTest, SegmentsAndARestartThenClosed) {
  TrialLifecycle trial;
  EXPECT_EQ(trial.state(), TrialState::kPaused);
  ASSERT_TRUE(trial.Train() && trial.TaskCreated() && trial.TaskLaunched());
  ASSERT_TRUE(trial.TaskEnded(Decision(TrialNext::kRestart)));
  EXPECT_TRUE(trial.wants_task());  // trains again from its latest checkpoint
  ASSERT_TRUE(trial.TaskCreated() && trial.TaskLaunched());
  ASSERT_TRUE(trial.TaskEnded(Decision(TrialNext::kSegmentDone)));
  EXPECT_EQ(trial.stage(), TrialStage::kIdle);
  ASSERT_TRUE(trial.Train() && trial.TaskCreated() && trial.TaskLaunched());
  ASSERT_TRUE(trial.TaskEnded(Decision(TrialNext::kSegmentDone)));
  ASSERT_TRUE(trial.Close());
  EXPECT_EQ(trial.state(), TrialState::kCompleted);
  EXPECT_FALSE(trial.Train());  // an ended trial trains no more
}

// Closed while its task runs, then its experiment is killed: it still completes.
TEST(TrialLifecycleTest, AClosingTrialCompletesEvenWhenItsExperimentIsKilled) {
  TrialLifecycle trial = At(TrialStage::kRunning);
  ASSERT_TRUE(trial.Close());
  EXPECT_TRUE(trial.closing());
  EXPECT_FALSE(trial.Stop());
  ASSERT_TRUE(trial.TaskEnded(Decision(TrialNext::kEnd, TrialState::kStopped)));
  EXPECT_EQ(trial.state(), TrialState::kCompleted);
}

}  // namespace
}  // namespace cohort
