// The Orchestrator when things fail: restarts from the latest checkpoint up to max_restarts (and
// the record taken back with a worker that resumed from an older checkpoint), no restart for a
// failure before running, a crash before running restarted; a task placed again without using a
// restart when its agent stopped it, is lost, leaves its StartTask unanswered or re-registers
// without it; a task spanning two agents restarted on both after one rank failed; an agent that
// says it is shutting down taking no new task (gone at once when idle); killing an experiment.
#include "test/orchestrator/orchestrator_fixture.h"

namespace cohort::orchestrator_test {
namespace {

// ---------------------------------------------------------------- failures

// An agent's heartbeat saying it is shutting down: idle, it is gone at once, and a task submitted
// next goes elsewhere (it used to be placed there until the agent's heartbeats were missed for
// 15 s); still running a task, it takes no new one.
TEST_F(OrchestratorTest, AnAgentShuttingDownTakesNoNewTaskAndIsGoneOnceIdle) {
  Register("agent-1", 2);
  Register("agent-2", 1);
  Submit(SingleYaml(1, 100));  // best fit: agent-2
  const StartTask start = StartTasksSentTo("agent-2").at(0);
  Accept(start.task_id);
  Running(start.task_id);
  orchestrator_.TakeEvents();
  AgentHeartbeat idle{"agent-1", clock_.UnixSeconds(), 0, {}};
  idle.departing = true;
  AgentHeartbeat busy{"agent-2", clock_.UnixSeconds(), 1, {start.task_id}};
  busy.departing = true;
  FromAgent("agent-1", idle);
  FromAgent("agent-2", busy);
  std::vector<std::string> notices;
  for (const OrchestratorEvent& event : orchestrator_.TakeEvents()) notices.push_back(event.line);
  EXPECT_THAT(notices, ElementsAre("agent agent-1 left: it shut down, running no task",
                                   "agent agent-2 is shutting down: it stops its tasks, and no new "
                                   "task goes there"));
  std::map<std::string, bool> connected;
  for (const AgentRow& row : Agents()) connected[row.agent_id] = row.connected;
  EXPECT_EQ(connected, (std::map<std::string, bool>{{"agent-1", false}, {"agent-2", true}}));

  Submit(SingleYaml(1, 100));
  EXPECT_THAT(StartTasksSentTo("agent-1"), IsEmpty());
  EXPECT_THAT(StartTasksSentTo("agent-2"), SizeIs(1));
  const std::vector<TaskRow> queued = TasksIn(TaskRowState::kQueued);
  ASSERT_THAT(queued, SizeIs(1));
  EXPECT_THAT(queued[0].reason, HasSubstr("agent-2 is shutting down"));
}

TEST_F(OrchestratorTest, FailureAfterRunningRestartsFromTheLatestCheckpoint) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, /*batches=*/100, /*max_restarts=*/2));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const StartTask first = StartTasksSentTo("agent-1")[0];
  const uint64_t trial_id = first.trial_id;

  Accept(first.task_id);
  Running(first.task_id);
  Validate(first.task_id, 20, 0.5);
  Checkpoint(first.task_id, "ckpt-a", 20);
  Checkpoint(first.task_id, "ckpt-b", 40);
  Validate(first.task_id, 60, 0.4);  // after the latest checkpoint: trained again, forgotten
  ExitAll(first.task_id, 1);

  std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  EXPECT_NE(starts[1].task_id, first.task_id);
  EXPECT_EQ(starts[1].trial_id, trial_id);
  EXPECT_EQ(starts[1].attempt, 1u);
  EXPECT_EQ(starts[1].worker.resume_checkpoint_id, "ckpt-b");
  TrialSummary trial = TrialOf(experiment_id, trial_id);
  EXPECT_EQ(trial.restarts, 1u);
  EXPECT_EQ(trial.latest_checkpoint_id, "ckpt-b");
  EXPECT_EQ(trial.batches_trained, 40u);
  ASSERT_THAT(trial.latest_validation, Not(IsEmpty()));
  std::ifstream metrics_file(
      absl::StrCat(ExperimentFolder(experiment_id), "/trials/", trial_id, "/metrics.jsonl"));
  const std::string metrics((std::istreambuf_iterator<char>(metrics_file)),
                            std::istreambuf_iterator<char>());
  EXPECT_THAT(metrics, HasSubstr("\"batches\":20"));
  EXPECT_THAT(metrics, Not(HasSubstr("\"batches\":60"))) << metrics;
  EXPECT_THAT(trial.error, HasSubstr("exited with code 1"));
  EXPECT_EQ(Describe(experiment_id).summary.state, ExperimentState::kActive);

  // The second failure uses the last restart; the third ends the trial and its experiment.
  Accept(starts[1].task_id);
  Running(starts[1].task_id);
  ExitAll(starts[1].task_id, 1);
  starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(3));
  EXPECT_EQ(starts[2].attempt, 2u);
  EXPECT_EQ(starts[2].worker.resume_checkpoint_id, "ckpt-b");
  EXPECT_EQ(TrialOf(experiment_id, trial_id).restarts, 2u);

  Accept(starts[2].task_id);
  Running(starts[2].task_id);
  ExitAll(starts[2].task_id, 1);
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(3));
  trial = TrialOf(experiment_id, trial_id);
  EXPECT_EQ(trial.state, TrialState::kError);
  EXPECT_EQ(trial.restarts, 2u);
  const ExperimentDescription description = Describe(experiment_id);
  EXPECT_EQ(description.summary.state, ExperimentState::kError);
  EXPECT_EQ(description.summary.errored_trials, 1u);
  EXPECT_FALSE(description.summary.error.empty());
  EXPECT_THAT(Tasks(), IsEmpty());
  EXPECT_TRUE(orchestrator_.Idle());
  // The trial's log says where each attempt starts and how it ended, among what its ranks print.
  std::ifstream log_file(
      absl::StrCat(ExperimentFolder(experiment_id), "/trials/", trial_id, "/log.txt"));
  const std::string log((std::istreambuf_iterator<char>(log_file)),
                        std::istreambuf_iterator<char>());
  EXPECT_THAT(log, HasSubstr(absl::StrCat("[cohort] task ", first.task_id, " ended, failed: ")));
  EXPECT_THAT(log, HasSubstr("; restart 1 of 2 from ckpt-b\n"));
  EXPECT_THAT(log, HasSubstr(absl::StrCat("[cohort] task ", starts[1].task_id,
                                          " trains to batch 100 on agent-1, resuming from "
                                          "checkpoint ckpt-b")));
  EXPECT_THAT(log,
              HasSubstr(absl::StrCat("[cohort] task ", starts[2].task_id, " ended, failed: ")));
  EXPECT_THAT(log,
              HasSubstr("; the trial ends in error (its 2 restarts (max_restarts) are used)\n"));
}

// A checkpoint written whole in the background, but whose task failed before reporting it (its
// worker stuck, then killed): the trial goes on from it, and the record names it as its latest,
// as a resume from the run folder would find it. Restarts used to go back to the older one.
TEST_F(OrchestratorTest, ACheckpointWrittenButNotReportedBeforeAFailureIsWhereTheTrialGoesOn) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, /*batches=*/100, /*max_restarts=*/2));
  const StartTask first = StartTasksSentTo("agent-1")[0];
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(first.worker.checkpoint_root);
  ASSERT_TRUE(storage.ok()) << storage.status();
  Accept(first.task_id);
  Running(first.task_id);
  Train(first.task_id, 20, 100);
  WriteCheckpoint(**storage, 20);
  Checkpoint(first.task_id, "trial-1-batch-20", 20);
  Validate(first.task_id, 40, 0.4);
  WriteCheckpoint(**storage, 40);  // never reported
  ExitAll(first.task_id, 1);

  const StartTask second = StartTasksSentTo("agent-1").at(1);
  EXPECT_EQ(second.worker.resume_checkpoint_id, "trial-1-batch-40");
  const TrialSummary trial = TrialOf(experiment_id, first.trial_id);
  EXPECT_EQ(trial.latest_checkpoint_id, "trial-1-batch-40");
  EXPECT_EQ(trial.batches_trained, 40u);
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return absl::StrContains(event.line,
                             "trial 1: checkpoint trial-1-batch-40 was written whole but its task "
                             "ended before reporting it: it is the trial's latest");
  }));
  // The validation at its batch is kept: it is no longer after the latest checkpoint.
  EXPECT_THAT(RecordedReports(ExperimentFolder(experiment_id), first.trial_id),
              ElementsAre("T20", "V40"));
}

// A restarted worker that finds the latest checkpoint damaged resumes from an older one and says
// so: the record goes back there with it, so what it trains again is not recorded twice, and the
// next restart asks for the checkpoint it used.
TEST_F(OrchestratorTest, AWorkerResumingFromAnOlderCheckpointTakesTheRecordBackWithIt) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, /*batches=*/100, /*max_restarts=*/2));
  const StartTask first = StartTasksSentTo("agent-1")[0];
  const uint64_t trial_id = first.trial_id;
  Accept(first.task_id);
  Running(first.task_id);
  Train(first.task_id, 20, 100);
  Checkpoint(first.task_id, "ckpt-a", 20);
  Train(first.task_id, 40, 100);
  Validate(first.task_id, 40, 0.4);
  Checkpoint(first.task_id, "ckpt-b", 40);
  ExitAll(first.task_id, 1);

  const StartTask second = StartTasksSentTo("agent-1")[1];
  ASSERT_EQ(second.worker.resume_checkpoint_id, "ckpt-b");
  Accept(second.task_id);
  Running(second.task_id);
  TaskCheckpointReport restored;
  restored.task_id = second.task_id;
  restored.trial_id = trial_id;
  restored.checkpoint_id = "ckpt-a";
  restored.batches = 20;
  restored.records = 320;
  restored.restored = true;
  FromAgent("agent-1", restored);
  Train(second.task_id, 40, 100);
  Validate(second.task_id, 40, 0.4);

  std::ifstream metrics_file(
      absl::StrCat(ExperimentFolder(experiment_id), "/trials/", trial_id, "/metrics.jsonl"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(metrics_file, line);) lines.push_back(line);
  ASSERT_THAT(lines, SizeIs(3)) << absl::StrJoin(lines, "\n");
  EXPECT_THAT(lines[0], HasSubstr("\"batches\":20"));
  EXPECT_THAT(lines[1], HasSubstr("\"batches\":40"));
  EXPECT_THAT(lines[2], HasSubstr("\"batches\":40"));
  EXPECT_THAT(lines[1], HasSubstr("\"kind\":\"training\""));
  EXPECT_THAT(lines[2], HasSubstr("\"kind\":\"validation\""));
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return event.level == OrchestratorEvent::Level::kNotice &&
           absl::StrContains(event.line, "resumed from ckpt-a at batch 20, not from ckpt-b");
  }));
  const TrialSummary trial = TrialOf(experiment_id, trial_id);
  EXPECT_EQ(trial.latest_checkpoint_id, "ckpt-a");
  EXPECT_EQ(trial.batches_trained, 40u);

  // A restored report at or past the latest checkpoint changes nothing.
  restored.checkpoint_id = "ckpt-a";
  FromAgent("agent-1", restored);
  ExitAll(second.task_id, 1);
  EXPECT_EQ(StartTasksSentTo("agent-1")[2].worker.resume_checkpoint_id, "ckpt-a");
}

// A restarted trial goes ahead of a later experiment's queued task (the queue goes by
// experiment, as Determined orders its jobs), not behind it.
TEST_F(OrchestratorTest, ARestartedTrialGoesAheadOfALaterExperimentsTasks) {
  Register("agent-1", 1);
  const uint64_t earlier = Submit(SingleYaml(1, /*batches=*/100, /*max_restarts=*/2));
  const StartTask first = StartTasksSentTo("agent-1")[0];
  const uint64_t later = Submit(SingleYaml(1));
  ASSERT_THAT(TasksIn(TaskRowState::kQueued), SizeIs(1));
  Accept(first.task_id);
  Running(first.task_id);
  ExitAll(first.task_id, 1);
  const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  EXPECT_EQ(starts[1].trial_id, first.trial_id);
  EXPECT_EQ(starts[1].attempt, 1u);
  const std::vector<TaskRow> queued = TasksIn(TaskRowState::kQueued);
  ASSERT_THAT(queued, SizeIs(1));
  EXPECT_EQ(queued[0].experiment_id, later);
  EXPECT_NE(earlier, later);
}

TEST_F(OrchestratorTest, FailureBeforeRunningIsNotRestarted) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, 100, /*max_restarts=*/5));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const StartTask start = StartTasksSentTo("agent-1")[0];

  Accept(start.task_id);
  ExitAll(start.task_id, 1);

  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const TrialSummary trial = TrialOf(experiment_id, start.trial_id);
  EXPECT_EQ(trial.state, TrialState::kError);
  EXPECT_EQ(trial.restarts, 0u);
  EXPECT_THAT(trial.error, HasSubstr("exited with code 1"));
  EXPECT_EQ(Describe(experiment_id).summary.state, ExperimentState::kError);
  // The trial's log says why it was not restarted, though max_restarts would allow it.
  EXPECT_THAT(
      Slurp(absl::StrCat(ExperimentFolder(experiment_id), "/trials/", start.trial_id, "/log.txt")),
      HasSubstr("; the trial ends in error (it failed before its workers started "
                "training, as another attempt would: not restarted)\n"));
}

TEST_F(OrchestratorTest, CrashBeforeRunningIsRestarted) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, 100, /*max_restarts=*/1));
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  Accept(start.task_id);
  TaskExit crash;  // SIGSEGV before the worker said hello: it may not happen again
  crash.task_id = start.task_id;
  crash.rank = 0;
  crash.signal = 11;
  FromAgent("agent-1", crash);

  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(2));
  EXPECT_EQ(TrialOf(experiment_id, start.trial_id).restarts, 1u);
  EXPECT_THAT(TrialOf(experiment_id, start.trial_id).error, HasSubstr("signal 11"));
}

TEST_F(OrchestratorTest, TaskItsAgentStoppedIsPlacedAgainWithoutUsingARestart) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, 100, /*max_restarts=*/0));
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  Accept(start.task_id);
  Running(start.task_id);
  Checkpoint(start.task_id, "ckpt-40", 40);
  // The agent is shutting down (its machine is preempted): the worker checkpoints and exits.
  Checkpoint(start.task_id, "ckpt-47", 47);
  TaskExit stopped;
  stopped.task_id = start.task_id;
  stopped.rank = 0;
  stopped.killed_by_agent = true;
  stopped.reason = "stopped: the agent is shutting down";
  FromAgent("agent-1", stopped);

  // agent-1 is shutting down: the trial waits for another agent, saying so.
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  ASSERT_THAT(Tasks(), SizeIs(1));
  EXPECT_EQ(Tasks()[0].reason,
            "no agent takes a task now; agent-1 is shutting down (it stopped its tasks on its "
            "own): no task goes there until it registers again");
  TrialSummary trial = TrialOf(experiment_id, start.trial_id);
  EXPECT_EQ(trial.restarts, 0u);
  EXPECT_EQ(trial.batches_trained, 47u) << "not trained to its target";
  Register("agent-2", 1);
  const std::vector<StartTask> moved = StartTasksSentTo("agent-2");
  ASSERT_THAT(moved, SizeIs(1));
  EXPECT_EQ(moved[0].worker.resume_checkpoint_id, "ckpt-47");
  EXPECT_EQ(TrialOf(experiment_id, start.trial_id).state, TrialState::kRunning);
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return event.line.find(
               "agent agent-1 stopped it (stopped: the agent is shutting down); "
               "placing it again from ckpt-47") != std::string::npos;
  }));
}

// The orchestrator's own pause (stopped, starved) is not its agents' silence: they are given the
// whole timeout again from its end, to be read.
TEST_F(OrchestratorTest, ItsOwnPauseIsNotHeldAgainstItsAgents) {
  Register("agent-1", 1);
  Submit(SingleYaml(1, 100));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  Accept(StartTasksSentTo("agent-1")[0].task_id);
  clock_.Advance(20);
  orchestrator_.ExcuseOwnPause(20);
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return event.line.find("the orchestrator's loop was held up for 20 s") != std::string::npos;
  }));
  orchestrator_.Tick();
  EXPECT_TRUE(Agents().at(0).connected);
  clock_.Advance(14);
  orchestrator_.Tick();
  EXPECT_TRUE(Agents().at(0).connected);
  EXPECT_THAT(TasksIn(TaskRowState::kQueued), SizeIs(0));
  clock_.Advance(2);  // silent for 16 s since the pause ended
  orchestrator_.Tick();
  EXPECT_FALSE(Agents().at(0).connected);
}

TEST_F(OrchestratorTest, LostAgentsTaskIsPlacedElsewhereWithoutUsingARestart) {
  Register("agent-1", 2);
  const uint64_t experiment_id = Submit(SingleYaml(2, 100));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const StartTask first = StartTasksSentTo("agent-1")[0];
  Accept(first.task_id);
  Running(first.task_id);
  Checkpoint(first.task_id, "ckpt-30", 30);

  // Heard from within the timeout: nothing happens.
  clock_.Advance(10);
  orchestrator_.Tick();
  EXPECT_TRUE(Agents().at(0).connected);
  EXPECT_THAT(TasksIn(TaskRowState::kRunning), SizeIs(1));

  clock_.Advance(6);  // 16 s of silence
  orchestrator_.Tick();
  EXPECT_FALSE(Agents().at(0).connected);
  EXPECT_EQ(Agents().at(0).busy_slots, 0u);
  std::vector<TaskRow> tasks = Tasks();
  ASSERT_THAT(tasks, SizeIs(1));
  EXPECT_NE(tasks[0].task_id, first.task_id);
  EXPECT_EQ(tasks[0].state, TaskRowState::kQueued);
  EXPECT_THAT(tasks[0].reason, HasSubstr("no agent"));
  TrialSummary trial = TrialOf(experiment_id, first.trial_id);
  EXPECT_EQ(trial.restarts, 0u);
  EXPECT_NE(trial.state, TrialState::kError);
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return event.line.find("agent-1 lost") != std::string::npos &&
           event.level == OrchestratorEvent::Level::kNotice;
  }));

  Register("agent-2", 2);
  const std::vector<StartTask> moved = StartTasksSentTo("agent-2");
  ASSERT_THAT(moved, SizeIs(1));
  EXPECT_EQ(moved[0].task_id, tasks[0].task_id);
  EXPECT_EQ(moved[0].trial_id, first.trial_id);
  EXPECT_EQ(moved[0].attempt, 1u);
  EXPECT_EQ(moved[0].worker.resume_checkpoint_id, "ckpt-30");
  EXPECT_EQ(moved[0].world_size, 2u);
  EXPECT_THAT(moved[0].ranks, SizeIs(2));
  trial = TrialOf(experiment_id, first.trial_id);
  EXPECT_EQ(trial.restarts, 0u);
  EXPECT_EQ(trial.state, TrialState::kRunning);

  // The lost agent comes back still holding the old task: it is told to kill it, and is given
  // nothing new (the trial already runs elsewhere).
  const size_t kills_before = SentTo<KillTask>("agent-1").size();
  AgentHello hello = Hello("agent-1", 2);
  hello.tasks.push_back(
      TaskEntry{first.task_id, first.trial_id, experiment_id, TaskState::kRunning, {0, 1}, {0, 1}});
  FromAgent("agent-1", hello);
  const std::vector<KillTask> kills = SentTo<KillTask>("agent-1");
  ASSERT_THAT(kills, SizeIs(kills_before + 1));
  EXPECT_EQ(kills.back().task_id, first.task_id);
  // Said as what happened: this orchestrator ended the task, none other placed it.
  EXPECT_EQ(kills.back().reason,
            "ended by the orchestrator meanwhile (this agent taken for lost, or the task's start "
            "unanswered)");
  EXPECT_THAT(
      Slurp(absl::StrCat(ExperimentFolder(experiment_id), "/trials/", first.trial_id, "/log.txt")),
      HasSubstr(absl::StrCat("[cohort] task ", first.task_id,
                             " on agent-1, which this orchestrator ended meanwhile (its agent "
                             "taken for lost, or its start unanswered), is stopped: the agent "
                             "still held it")));
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  EXPECT_TRUE(Agents().at(0).connected);
  // Its slots count as busy until both of the old task's ranks have exited.
  EXPECT_EQ(Agents().at(0).busy_slots, 2u);
  for (const int32_t rank : {0, 1}) {
    TaskExit exit;
    exit.task_id = first.task_id;
    exit.rank = rank;
    exit.signal = 9;
    exit.killed_by_agent = true;
    FromAgent("agent-1", exit);
    EXPECT_EQ(Agents().at(0).busy_slots, rank == 0 ? 2u : 0u);
  }
}

// An agent killed under a trial spanning two agents takes its rank with it unseen, and the rank on
// the other agent fails first (its peer's connection closed): the lost agent is named as the
// cause, before that consequence, and the trial is placed again without using a restart.
TEST_F(OrchestratorTest, ALostAgentIsNamedBeforeThePeerRankThatFailedFirst) {
  Register("agent-1", 1);
  Register("agent-2", 1);
  const uint64_t experiment_id = Submit(SingleYaml(2, 100));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  ASSERT_THAT(StartTasksSentTo("agent-2"), SizeIs(1));
  const StartTask start = StartTasksSentTo("agent-1")[0];
  for (const SentMessage& sent : outbox_.sent()) {
    if (std::holds_alternative<StartTask>(sent.message)) {
      FromAgent(sent.agent_id, Ack{}, sent.message_id);
    }
  }
  for (const char* agent : {"agent-1", "agent-2"}) {
    FromAgent(agent, TaskStatus{start.task_id, TaskState::kRunning, {}});
  }
  TaskExit peer;
  peer.task_id = start.task_id;
  peer.rank = 0;
  peer.exit_code = 1;
  peer.reason = "gradient exchange: Connection closed by peer";
  FromAgent("agent-1", peer);
  orchestrator_.TakeEvents();

  clock_.Advance(16);  // agent-2 silent past the timeout; agent-1 heard from
  FromAgent("agent-1", AgentHeartbeat{});
  orchestrator_.Tick();
  const std::string expected =
      "trial 1: agent agent-2 was lost, and rank 1 with it; then rank 0 exited with code 1 "
      "(gradient exchange: Connection closed by peer); placing it again";
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const OrchestratorEvent& event) {
    return event.line.find(expected) != std::string::npos;
  })) << ::testing::PrintToString(events.size()) << " events, none with: " << expected;
  const TrialSummary trial = TrialOf(experiment_id, start.trial_id);
  EXPECT_EQ(trial.restarts, 0u);
  EXPECT_NE(trial.state, TrialState::kError);
}

// Rank 1's plugin failed; rank 0, in the gradient exchange with it, lost its connection and was
// heard first: the trial's error names rank 1 first, then rank 0.
TEST_F(OrchestratorTest, ARankThatFailedOnItsOwnIsNamedBeforeThePeerThatFailedInACollective) {
  const auto [experiment_id, start] = RunOneTrial(100, /*slots=*/2);
  TaskExit peer;
  peer.task_id = start.task_id;
  peer.rank = 0;
  peer.exit_code = kCollectiveFailureExitCode;
  peer.reason = "failed: batch 121, gradient exchange: Connection reset by peer";
  FromAgent("agent-1", peer);
  TaskExit cause = peer;
  cause.rank = 1;
  cause.exit_code = 1;
  cause.reason = "failed: plugin tiny: train_batch (batch_index 120): deliberate";
  FromAgent("agent-1", cause);
  const TrialSummary trial = TrialOf(experiment_id, start.trial_id);
  EXPECT_THAT(trial.error,
              HasSubstr("rank 1 exited with code 1 (failed: plugin tiny: train_batch (batch_index "
                        "120): deliberate); then rank 0 exited with code 4 (failed: batch 121, "
                        "gradient exchange: Connection reset by peer)"));
  EXPECT_EQ(trial.restarts, 1u);
}

TEST_F(OrchestratorTest, NothingIsPlacedOnSlotsHeldByATaskItToldTheAgentToKill) {
  // An orchestrator that started again meets an agent still running a task of the one before.
  AgentHello hello = Hello("agent-1", 1);
  hello.tasks.push_back(TaskEntry{41, 3, 2, TaskState::kRunning, {0}, {0}});
  FromAgent("agent-1", hello);
  ASSERT_THAT(SentTo<KillTask>("agent-1"), SizeIs(1));
  EXPECT_EQ(SentTo<KillTask>("agent-1")[0].task_id, 41u);

  // A trial submitted meanwhile waits for the slot instead of being refused by the agent.
  Submit(SingleYaml(1, 100));
  EXPECT_THAT(StartTasksSentTo("agent-1"), IsEmpty());
  ASSERT_THAT(Tasks(), SizeIs(1));
  EXPECT_EQ(Tasks()[0].state, TaskRowState::kQueued);
  EXPECT_THAT(Tasks()[0].reason, HasSubstr("task 41"));

  TaskExit exit;
  exit.task_id = 41;
  exit.rank = 0;
  exit.signal = 9;
  exit.killed_by_agent = true;
  FromAgent("agent-1", exit);
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
}

TEST_F(OrchestratorTest, UnansweredStartTaskIsPlacedAgainWithoutUsingARestart) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, 100));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const StartTask first = StartTasksSentTo("agent-1")[0];

  // The agent stays alive (heartbeats) but never answers the StartTask.
  for (int step = 0; step < 3; ++step) {
    clock_.Advance(10);
    FromAgent("agent-1", AgentHeartbeat{"agent-1", clock_.UnixSeconds(), 0, {}});
    orchestrator_.Tick();
  }
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));  // 30 s: not yet past the timeout
  clock_.Advance(2);
  FromAgent("agent-1", AgentHeartbeat{"agent-1", clock_.UnixSeconds(), 0, {}});
  orchestrator_.Tick();

  const std::vector<KillTask> kills = SentTo<KillTask>("agent-1");
  ASSERT_THAT(kills, SizeIs(1));
  EXPECT_EQ(kills[0].task_id, first.task_id);
  const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  EXPECT_NE(starts[1].task_id, first.task_id);
  EXPECT_EQ(starts[1].trial_id, first.trial_id);
  EXPECT_EQ(starts[1].attempt, 1u);
  EXPECT_EQ(TrialOf(experiment_id, first.trial_id).restarts, 0u);

  // Once answered, the task is left alone however long it runs.
  Accept(starts[1].task_id);
  for (int step = 0; step < 6; ++step) {
    clock_.Advance(10);
    FromAgent("agent-1", AgentHeartbeat{"agent-1", clock_.UnixSeconds(), 1, {starts[1].task_id}});
    orchestrator_.Tick();
  }
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(2));
  EXPECT_THAT(SentTo<KillTask>("agent-1"), SizeIs(1));
}

TEST_F(OrchestratorTest, TaskSpanningTwoAgentsRestartsOnBothWhenOneRankFails) {
  Register("agent-1", 8);
  Register("agent-2", 8);
  const uint64_t experiment_id = Submit(SingleYaml(16, 100, /*max_restarts=*/1));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  ASSERT_THAT(StartTasksSentTo("agent-2"), SizeIs(1));
  const StartTask one = StartTasksSentTo("agent-1")[0];
  const StartTask two = StartTasksSentTo("agent-2")[0];
  EXPECT_EQ(one.task_id, two.task_id);
  EXPECT_EQ(one.world_size, 16u);
  EXPECT_EQ(one.cross_size, 2u);
  EXPECT_EQ(one.cross_rank, 0u);
  EXPECT_EQ(two.cross_rank, 1u);
  EXPECT_EQ(one.rendezvous.prefix, two.rendezvous.prefix);
  ASSERT_THAT(one.ranks, SizeIs(8));
  ASSERT_THAT(two.ranks, SizeIs(8));
  for (uint32_t index = 0; index < 8; ++index) {
    EXPECT_EQ(one.ranks[index], (RankAssignment{index, index, index}));
    EXPECT_EQ(two.ranks[index], (RankAssignment{8 + index, index, index}));
  }
  const uint64_t task_id = one.task_id;
  for (const SentMessage& sent : outbox_.sent()) {
    if (std::holds_alternative<StartTask>(sent.message)) {
      FromAgent(sent.agent_id, Ack{}, sent.message_id);
    }
  }

  // Running only once both agents say so.
  FromAgent("agent-1", TaskStatus{task_id, TaskState::kRunning, {}});
  EXPECT_THAT(TasksIn(TaskRowState::kRunning), IsEmpty());
  FromAgent("agent-2", TaskStatus{task_id, TaskState::kRunning, {}});
  EXPECT_THAT(TasksIn(TaskRowState::kRunning), SizeIs(1));

  // Rank 9 fails: both agents are told to stop the task.
  TaskExit failed;
  failed.task_id = task_id;
  failed.rank = 9;
  failed.exit_code = 1;
  FromAgent("agent-2", failed);
  ASSERT_THAT(SentTo<KillTask>("agent-1"), SizeIs(1));
  EXPECT_EQ(SentTo<KillTask>("agent-1")[0].task_id, task_id);
  EXPECT_THAT(SentTo<KillTask>("agent-2"), SizeIs(1));
  for (const StartTask& start : {one, two}) {
    const std::string agent_id = start.cross_rank == 0 ? "agent-1" : "agent-2";
    for (const RankAssignment& rank : start.ranks) {
      if (rank.rank == 9) continue;
      TaskExit exit;
      exit.task_id = task_id;
      exit.rank = static_cast<int32_t>(rank.rank);
      exit.signal = 9;
      exit.killed_by_agent = true;
      FromAgent(agent_id, exit);
    }
  }

  // Restarted on both agents as one new task.
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(2));
  ASSERT_THAT(StartTasksSentTo("agent-2"), SizeIs(2));
  const StartTask again = StartTasksSentTo("agent-1")[1];
  EXPECT_EQ(StartTasksSentTo("agent-2")[1].task_id, again.task_id);
  EXPECT_NE(again.task_id, task_id);
  EXPECT_EQ(again.attempt, 1u);
  EXPECT_NE(again.rendezvous.prefix, one.rendezvous.prefix);
  // The ended task's keys may go; the new task's stay.
  EXPECT_THAT(orchestrator_.TakeEndedRendezvousPrefixes(), ElementsAre(one.rendezvous.prefix));
  EXPECT_THAT(orchestrator_.TakeEndedRendezvousPrefixes(), IsEmpty());
  const TrialSummary trial = TrialOf(experiment_id, one.trial_id);
  EXPECT_EQ(trial.restarts, 1u);
  EXPECT_THAT(trial.error, HasSubstr("rank 9 exited with code 1"));
}

TEST_F(OrchestratorTest, HelloNotListingAnAcknowledgedTaskLosesItWithoutUsingARestart) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, 100));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const StartTask first = StartTasksSentTo("agent-1")[0];
  Accept(first.task_id);
  Running(first.task_id);
  Checkpoint(first.task_id, "ckpt-10", 10);

  // The agent restarted and holds nothing: the task is placed again from its checkpoint.
  Register("agent-1", 1);
  const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  EXPECT_EQ(starts[1].trial_id, first.trial_id);
  EXPECT_EQ(starts[1].attempt, 1u);
  EXPECT_EQ(starts[1].worker.resume_checkpoint_id, "ckpt-10");
  EXPECT_EQ(TrialOf(experiment_id, first.trial_id).restarts, 0u);
  ASSERT_THAT(Tasks(), SizeIs(1));
  EXPECT_EQ(Tasks()[0].task_id, starts[1].task_id);
}

// ---------------------------------------------------------------- killing

TEST_F(OrchestratorTest, KillStopsPlacedTasksAndDropsQueuedOnes) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(GridYaml(50));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const StartTask placed = StartTasksSentTo("agent-1")[0];
  Accept(placed.task_id);
  Running(placed.task_id);
  ASSERT_THAT(TasksIn(TaskRowState::kQueued), SizeIs(3));

  EXPECT_TRUE(std::holds_alternative<ClientAck>(
      orchestrator_.OnClientRequest(KillExperiment{experiment_id})));
  const std::vector<KillTask> kills = SentTo<KillTask>("agent-1");
  ASSERT_THAT(kills, SizeIs(1));
  EXPECT_EQ(kills[0].task_id, placed.task_id);
  std::vector<TaskRow> tasks = Tasks();
  ASSERT_THAT(tasks, SizeIs(1));
  EXPECT_EQ(tasks[0].task_id, placed.task_id);
  EXPECT_EQ(tasks[0].state, TaskRowState::kStopping);
  EXPECT_EQ(Describe(experiment_id).summary.state, ExperimentState::kStopping);
  EXPECT_FALSE(orchestrator_.Idle());

  FromAgent("agent-1", TaskStatus{placed.task_id, TaskState::kStopping, {}});
  TaskExit exit;
  exit.task_id = placed.task_id;
  exit.rank = 0;
  exit.signal = 15;
  exit.killed_by_agent = true;
  FromAgent("agent-1", exit);

  const ExperimentDescription description = Describe(experiment_id);
  EXPECT_EQ(description.summary.state, ExperimentState::kStopped);
  EXPECT_EQ(description.summary.errored_trials, 0u);
  for (const TrialSummary& trial : description.trials) {
    EXPECT_EQ(trial.state, TrialState::kStopped);
  }
  EXPECT_THAT(Tasks(), IsEmpty());
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));  // the queued trials never started
  EXPECT_TRUE(orchestrator_.Idle());

  EXPECT_TRUE(std::holds_alternative<ClientAck>(
      orchestrator_.OnClientRequest(KillExperiment{experiment_id})));
  EXPECT_THAT(SentTo<KillTask>("agent-1"), SizeIs(1));

  const ClientMessage unknown = orchestrator_.OnClientRequest(DescribeExperiment{999});
  ASSERT_TRUE(std::holds_alternative<ClientError>(unknown));
  EXPECT_EQ(std::get<ClientError>(unknown).code, ClientErrorCode::kNotFound);
  const ClientMessage kill_unknown = orchestrator_.OnClientRequest(KillExperiment{999});
  ASSERT_TRUE(std::holds_alternative<ClientError>(kill_unknown));
  EXPECT_EQ(std::get<ClientError>(kill_unknown).code, ClientErrorCode::kNotFound);
}

}  // namespace
}  // namespace cohort::orchestrator_test
