// The restart policy alone: how a task's parts' exits read (EndingOf), and what its trial does
// next for each way a task can end (NextForTrial).
#include "runtime/orchestrator/task_ending.h"

#include <csignal>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TaskExit Exit(int32_t rank, int32_t code, int32_t signal = 0, bool killed_by_agent = false,
              std::string reason = "") {
  TaskExit exit;
  exit.rank = rank;
  exit.exit_code = code;
  exit.signal = signal;
  exit.killed_by_agent = killed_by_agent;
  exit.reason = std::move(reason);
  return exit;
}

std::map<std::string, AgentPart> Parts(std::vector<std::pair<std::string, TaskExit>> exits) {
  std::map<std::string, AgentPart> parts;
  for (auto& [agent, exit] : exits) parts[agent].exits[exit.rank] = exit;
  return parts;
}

TaskFlags Flags(bool reached_running, bool stopping = false, bool agent_lost = false,
                std::string failure = "") {
  TaskFlags flags;
  flags.reached_running = reached_running;
  flags.stopping = stopping;
  flags.agent_lost = agent_lost;
  flags.failure = std::move(failure);
  return flags;
}

TrialStanding Standing(uint32_t restarts = 0, uint32_t max_restarts = 5) {
  TrialStanding standing;
  standing.restarts = restarts;
  standing.max_restarts = max_restarts;
  return standing;
}

TEST(TaskEndingTest, CleanExitsAreASegmentDone) {
  const TaskEnding ending =
      EndingOf(Parts({{"a", Exit(0, 0)}, {"b", Exit(1, 0)}}), Flags(/*reached_running=*/true));
  EXPECT_FALSE(ending.failed);
  EXPECT_EQ(NextForTrial(ending, Standing()).next, TrialNext::kSegmentDone);
}

TEST(TaskEndingTest, AFailureAfterRunningRestartsWithinMaxRestarts) {
  const TaskFlags flags = Flags(true, false, false, "rank 1: exit code 1");
  const TaskEnding ending = EndingOf(Parts({{"a", Exit(1, 1)}}), flags);
  TrialDecision decision = NextForTrial(ending, Standing(/*restarts=*/4, /*max_restarts=*/5));
  EXPECT_EQ(decision.next, TrialNext::kRestart);
  EXPECT_EQ(decision.reason, "rank 1: exit code 1");
  EXPECT_TRUE(decision.not_restarted.empty());
  decision = NextForTrial(ending, Standing(5, 5));
  EXPECT_EQ(decision.next, TrialNext::kFail);
  EXPECT_EQ(decision.not_restarted, "its 5 restarts (max_restarts) are used");
  EXPECT_EQ(NextForTrial(ending, Standing(0, 0)).not_restarted, "max_restarts is 0");
  EXPECT_EQ(NextForTrial(ending, Standing(1, 1)).not_restarted,
            "its 1 restart (max_restarts) is used");
}

TEST(TaskEndingTest, AFailureBeforeRunningEndsTheTrialUnlessAProcessCrashed) {
  const TaskEnding before = EndingOf(Parts({{"a", Exit(0, 1)}}), Flags(false));
  const TrialDecision decision = NextForTrial(before, Standing());
  EXPECT_EQ(decision.next, TrialNext::kFail);
  EXPECT_EQ(decision.reason, "a worker failed");
  EXPECT_EQ(decision.not_restarted,
            "it failed before its workers started training, as another attempt would: not "
            "restarted");
  // A signal its agent did not send: a crash, which a restart may not meet again.
  const TaskEnding crashed = EndingOf(Parts({{"a", Exit(0, 0, SIGSEGV)}}), Flags(false));
  EXPECT_TRUE(crashed.crashed);
  EXPECT_EQ(NextForTrial(crashed, Standing()).next, TrialNext::kRestart);
}

TEST(TaskEndingTest, TheRanksThatEndedOutsideCohortAreTheFlightDiagnosisCauses) {
  TaskExit stopped = Exit(3, 0, SIGKILL, /*killed_by_agent=*/true, "found stopped");
  stopped.stopped = true;
  const TaskEnding ending =
      EndingOf(Parts({{"a", Exit(0, 1, 0, false, "Connection reset by peer")},
                      {"a", Exit(1, 0, SIGKILL)},
                      {"b", Exit(2, 0, SIGKILL, /*killed_by_agent=*/true, "another rank failed")},
                      {"b", stopped}}),
               Flags(true));
  // Rank 0's error and the kill its agent sent rank 2 are consequences: not named.
  EXPECT_THAT(ending.ended_outside,
              ElementsAre(Pair(1u, "was killed by signal 9"),
                          Pair(3u, "was killed by signal 9 (found stopped)")));
  // A lost agent's ranks that never exited ended with it; one that exited first ended its own way.
  std::map<std::string, AgentPart> with_lost =
      Parts({{"a", Exit(0, 1, 0, false, "reset")}, {"b", Exit(2, 0)}});
  with_lost["b"].ranks = {1, 2};
  with_lost["b"].lost = true;
  EXPECT_THAT(EndingOf(with_lost, Flags(true, false, /*agent_lost=*/true)).ended_outside,
              ElementsAre(Pair(1u, "ended with its agent b (lost)")));
  EXPECT_EQ(HowItEnded(Exit(0, 1, 0, false, "Connection reset by peer")),
            "exited with code 1 (Connection reset by peer)");
  // The agent's reason for a signal names it: not said twice.
  EXPECT_EQ(HowItEnded(Exit(1, 0, SIGKILL, false, "killed by signal 9 (SIGKILL)")),
            "was killed by signal 9 (SIGKILL)");
}

TEST(TaskEndingTest, ARankThatFailedOnItsOwnIsMoreToBlameThanOneThatFailedInACollective) {
  EXPECT_EQ(BlameOf(Exit(0, 0)), FailureBlame::kNone);
  EXPECT_EQ(BlameOf(Exit(0, kCollectiveFailureExitCode)), FailureBlame::kInCollective);
  EXPECT_EQ(BlameOf(Exit(0, 0, SIGKILL, /*killed_by_agent=*/true)), FailureBlame::kInCollective);
  EXPECT_EQ(BlameOf(Exit(0, 1)), FailureBlame::kOwn);
  // Its own error came first; the agent's signal, sent as a peer failed, found it exiting.
  EXPECT_EQ(BlameOf(Exit(0, 1, 0, /*killed_by_agent=*/true)), FailureBlame::kOwn);
  EXPECT_EQ(BlameOf(Exit(0, kPermanentFailureExitCode)), FailureBlame::kOwn);
  // A process that exited 4 without finishing its trial (a plugin's exit(4)) said nothing of a
  // collective.
  TaskExit unfinished = Exit(0, kCollectiveFailureExitCode);
  unfinished.unfinished = true;
  EXPECT_EQ(BlameOf(unfinished), FailureBlame::kOwn);
  EXPECT_EQ(BlameOf(Exit(0, 0, SIGSEGV)), FailureBlame::kOutside);
  TaskExit stopped = Exit(0, 0, SIGKILL, /*killed_by_agent=*/true);
  stopped.stopped = true;
  EXPECT_EQ(BlameOf(stopped), FailureBlame::kOutside);
}

TEST(TaskEndingTest, AJobLostBeforeItsAgentsRegisteredRestartsWithinMaxRestarts) {
  TaskFlags flags = Flags(false, false, false,
                          "Slurm job 12 ended (NODE_FAIL) before its agents "
                          "registered");
  flags.job_lost = true;
  const TaskEnding ending = EndingOf({}, flags);
  EXPECT_TRUE(ending.job_lost);
  const TrialDecision decision = NextForTrial(ending, Standing(0, 1));
  EXPECT_EQ(decision.next, TrialNext::kRestart);
  EXPECT_EQ(decision.reason, "Slurm job 12 ended (NODE_FAIL) before its agents registered");
  EXPECT_EQ(NextForTrial(ending, Standing(1, 1)).next, TrialNext::kFail);
}

TEST(TaskEndingTest, APermanentFailureIsNeverRestarted) {
  const TaskEnding ending = EndingOf(Parts({{"a", Exit(0, kPermanentFailureExitCode)}}),
                                     Flags(true, false, false, "no metric"));
  EXPECT_TRUE(ending.permanent);
  const TrialDecision decision = NextForTrial(ending, Standing());
  EXPECT_EQ(decision.next, TrialNext::kFail);
  EXPECT_EQ(decision.reason, "no metric (every attempt would fail the same way: not restarted)");
  EXPECT_TRUE(decision.not_restarted.empty());  // the reason says it
}

TEST(TaskEndingTest, AnExitBeforeTheTrialFinishedFailsWhateverItsCode) {
  TaskExit early = Exit(0, 0);
  early.unfinished = true;  // a plugin's exit(0) in the middle of training
  const TaskEnding ending = EndingOf(Parts({{"a", early}}), Flags(true));
  EXPECT_TRUE(ending.failed);
  EXPECT_EQ(NextForTrial(ending, Standing()).next, TrialNext::kRestart);
  EXPECT_EQ(NextForTrial(ending, Standing(5, 5)).next, TrialNext::kFail);
}

TEST(TaskEndingTest, OnlyAWorkerThatToldItsTrialFailedMeansAPermanentFailure) {
  TaskExit early = Exit(0, kPermanentFailureExitCode);
  early.unfinished = true;  // a plugin's own exit(3)
  const TaskEnding ending = EndingOf(Parts({{"a", early}}), Flags(true));
  EXPECT_TRUE(ending.failed);
  EXPECT_FALSE(ending.permanent);
  EXPECT_EQ(NextForTrial(ending, Standing()).next, TrialNext::kRestart);
}

TEST(TaskEndingTest, ALostAgentPlacesTheTrialAgainWithoutARestart) {
  const TaskEnding ending = EndingOf(Parts({{"a", Exit(0, 0)}}),
                                     Flags(true, false, /*agent_lost=*/true, "agent b was lost"));
  const TrialDecision decision = NextForTrial(ending, Standing(5, 5));
  EXPECT_EQ(decision.next, TrialNext::kPlaceAgain);
  EXPECT_EQ(decision.reason, "agent b was lost");
}

TEST(TaskEndingTest, AnAgentThatStoppedATaskOnItsOwnDrainsAndTheTrialIsPlacedAgain) {
  const TaskEnding ending = EndingOf(
      Parts({{"a", Exit(0, 0)}, {"b", Exit(1, 0, 0, /*killed_by_agent=*/true, "shutting down")}}),
      Flags(/*reached_running=*/true));
  EXPECT_THAT(ending.draining_agents, ElementsAre("b"));
  const TrialDecision decision = NextForTrial(ending, Standing());
  EXPECT_EQ(decision.next, TrialNext::kPlaceAgain);
  EXPECT_EQ(decision.reason, "agent b stopped it (shutting down)");
  // Asked by the orchestrator, the same exit is no agent's own doing.
  EXPECT_TRUE(
      EndingOf(Parts({{"b", Exit(1, 0, 0, true, "killed")}}), Flags(false, /*stopping=*/true))
          .draining_agents.empty());
}

TEST(TaskEndingTest, AStoppingExperimentOrAClosedTrialEndsIt) {
  const TaskEnding stopped = EndingOf(Parts({{"a", Exit(0, 0)}}), Flags(false, /*stopping=*/true));
  TrialStanding closed = Standing();
  closed.closed = true;
  TrialDecision decision = NextForTrial(stopped, closed);
  EXPECT_EQ(decision.next, TrialNext::kEnd);
  EXPECT_EQ(decision.end_state, TrialState::kCompleted);
  TrialStanding stopping = Standing();
  stopping.experiment_stopping = true;
  decision =
      NextForTrial(EndingOf(Parts({{"a", Exit(0, 1)}}), Flags(false, false, false, "x")), stopping);
  EXPECT_EQ(decision.next, TrialNext::kEnd);
  EXPECT_EQ(decision.end_state, TrialState::kStopped);
}

// A task stopped for its experiment's pause waits to go on, using no restart; one that failed
// meanwhile is a failure as any other.
TEST(TaskEndingTest, APausedTaskThatStoppedCleanlyWaitsAndAFailedOneRestarts) {
  TrialStanding pausing = Standing();
  pausing.pausing = true;
  pausing.max_restarts = 1;
  const TaskEnding clean = EndingOf(Parts({{"a", Exit(0, 0)}}), Flags(true, /*stopping=*/true));
  EXPECT_EQ(NextForTrial(clean, pausing).next, TrialNext::kPause);
  const TaskEnding failed =
      EndingOf(Parts({{"a", Exit(0, 1)}}), Flags(/*reached_running=*/true, true, false, "x"));
  EXPECT_EQ(NextForTrial(failed, pausing).next, TrialNext::kRestart);
}

TEST(TaskEndingTest, AnElasticTaskStoppedToGrowIsPlacedAgainUnlessItFailedOrPaused) {
  TrialStanding growing = Standing();
  growing.regrowing = true;
  const TaskEnding clean = EndingOf(Parts({{"a", Exit(0, 0)}}), Flags(true, /*stopping=*/true));
  const TrialDecision decision = NextForTrial(clean, growing);
  EXPECT_EQ(decision.next, TrialNext::kPlaceAgain);
  EXPECT_EQ(decision.reason, "stopped after a checkpoint to grow back to more slots");
  const TaskEnding failed =
      EndingOf(Parts({{"a", Exit(0, 1)}}), Flags(/*reached_running=*/true, true, false, "x"));
  EXPECT_EQ(NextForTrial(failed, growing).next, TrialNext::kRestart);
  growing.pausing = true;  // its experiment was paused meanwhile: the pause wins
  EXPECT_EQ(NextForTrial(clean, growing).next, TrialNext::kPause);
}

// A closed trial whose task failed before the stop reached it is not restarted: the searcher is
// done with it (it would otherwise wait for training nobody asks for, and its experiment with it).
TEST(TaskEndingTest, AClosedTrialWhoseTaskFailedCompletes) {
  const TaskEnding failed =
      EndingOf(Parts({{"a", Exit(0, 1)}}), Flags(/*reached_running=*/true, false, false, "x"));
  TrialStanding closed = Standing();
  closed.closed = true;
  const TrialDecision decision = NextForTrial(failed, closed);
  EXPECT_EQ(decision.next, TrialNext::kEnd);
  EXPECT_EQ(decision.end_state, TrialState::kCompleted);
}

}  // namespace
}  // namespace cohort
