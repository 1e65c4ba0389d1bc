// ExitOfRank: the reason line of each way a rank's process can end, as the orchestrator records it;
// ProcessIsStopped on a real stopped child.
#include "runtime/agent/rank_outcome.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "gtest/gtest.h"

namespace cohort {
namespace {

RankOutcome Spawned() {
  RankOutcome outcome;
  outcome.spawned = true;
  return outcome;
}

TrialFinished Finished(TrialExit how, std::string message = "") {
  TrialFinished finished;
  finished.exit = how;
  finished.message = std::move(message);
  return finished;
}

TEST(RankOutcomeTest, ARankNeverStartedSaysWhyWithExitCode127) {
  RankOutcome outcome;
  outcome.spawn_error = "cannot spawn /bin/cohort: no such file";
  TaskExit exit = ExitOfRank(7, 1, outcome, "");
  EXPECT_EQ(exit.task_id, 7u);
  EXPECT_EQ(exit.rank, 1);
  EXPECT_EQ(exit.exit_code, 127);
  EXPECT_EQ(exit.reason, "cannot spawn /bin/cohort: no such file");
  EXPECT_EQ(ExitOfRank(7, 0, RankOutcome{}, "").reason,
            "not started: another rank could not be started");
}

TEST(RankOutcomeTest, ASignalIsNamedAndAKillAfterTheGracePeriodSaysSo) {
  RankOutcome outcome = Spawned();
  outcome.term_signal = SIGKILL;
  TaskExit exit = ExitOfRank(3, 0, outcome, "");
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_EQ(exit.reason, "killed by signal 9 (SIGKILL)");
  outcome.killed_after_grace = true;
  outcome.signaled_by_agent = true;
  exit = ExitOfRank(3, 0, outcome, "");
  EXPECT_EQ(exit.reason, "killed after the grace period (signal 9 (SIGKILL))");
  EXPECT_TRUE(exit.killed_by_agent);
}

TEST(RankOutcomeTest, TheWorkersLastWordSaysHowTheTrialEnded) {
  RankOutcome outcome = Spawned();
  outcome.finished = Finished(TrialExit::kCompleted);
  EXPECT_EQ(ExitOfRank(1, 0, outcome, "").reason, "completed");
  outcome.finished = Finished(TrialExit::kStopped);
  EXPECT_EQ(ExitOfRank(1, 0, outcome, "").reason, "stopped");
  EXPECT_EQ(ExitOfRank(1, 0, outcome, "experiment paused").reason, "stopped: experiment paused");
  outcome.exit_status = 1;
  outcome.finished = Finished(TrialExit::kFailed, "plugin train_batch returned an error");
  TaskExit failed = ExitOfRank(1, 0, outcome, "");
  EXPECT_EQ(failed.reason, "failed: plugin train_batch returned an error");
  EXPECT_EQ(failed.exit_code, 1);
}

TEST(RankOutcomeTest, AnExitWithoutTheLastWordGivesTheExitCode) {
  RankOutcome outcome = Spawned();
  outcome.exit_status = 3;
  EXPECT_EQ(ExitOfRank(1, 0, outcome, "").reason, "exit code 3 without finishing the trial");
}

TEST(RankOutcomeTest, AStoppedProcessIsNamedAsTheRankTheOthersWaitedFor) {
  RankOutcome outcome = Spawned();
  outcome.term_signal = SIGKILL;
  outcome.was_stopped = true;
  TaskExit exit = ExitOfRank(1, 1, outcome, "");
  EXPECT_TRUE(exit.stopped);
  EXPECT_EQ(exit.reason,
            "killed by signal 9 (SIGKILL); its process was stopped (SIGSTOP or a debugger): it is "
            "the rank the others waited for");
}

// A rank seen stopped that then exits with a code of its own had gone on (a leak checker stops an
// exiting process for a moment): its exit is its own, not the stopped rank's.
TEST(RankOutcomeTest, ARankSeenStoppedThatExitsByItselfIsNotNamedStopped) {
  RankOutcome outcome = Spawned();
  outcome.exit_status = 4;
  outcome.was_stopped = true;
  outcome.finished = Finished(TrialExit::kFailed, "batch 31: gloo allreduce: connection closed");
  TaskExit exit = ExitOfRank(1, 0, outcome, "");
  EXPECT_FALSE(exit.stopped);
  EXPECT_EQ(exit.reason, "failed: batch 31: gloo allreduce: connection closed");
}

// A child stopped with SIGSTOP reads as stopped, and again as running once continued; a pid that
// names no process does not.
TEST(RankOutcomeTest, AStoppedProcessIsSeenInProc) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  bool stopped = false;
  for (int tries = 0; tries < 200 && !stopped; ++tries) {
    stopped = ProcessIsStopped(child);
    if (!stopped) usleep(5000);
  }
  EXPECT_TRUE(stopped);
  ASSERT_EQ(kill(child, SIGCONT), 0);
  bool running = false;
  for (int tries = 0; tries < 200 && !running; ++tries) {
    running = !ProcessIsStopped(child);
    if (!running) usleep(5000);
  }
  EXPECT_TRUE(running);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(ProcessIsStopped(child));
  EXPECT_FALSE(ProcessIsStopped(0));
}

}  // namespace
}  // namespace cohort
