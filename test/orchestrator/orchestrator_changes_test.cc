// The requests that change an experiment or a trial after its submission: pause and activate,
// archive and unarchive, delete, killing one trial; and the trial and checkpoint queries.
#include "test/orchestrator/orchestrator_fixture.h"

namespace cohort::orchestrator_test {
namespace {

ClientMessage ChangeOf(Orchestrator& orchestrator, uint64_t experiment_id,
                       ExperimentChangeKind change) {
  return orchestrator.OnClientRequest(ChangeExperiment{experiment_id, change});
}

bool IsAck(const ClientMessage& reply) { return std::holds_alternative<ClientAck>(reply); }

// The refusal's code and message ("" and kUnspecified when it was not refused).
ClientError ErrorOf(const ClientMessage& reply) {
  const auto* error = std::get_if<ClientError>(&reply);
  return error == nullptr ? ClientError{} : *error;
}

class OrchestratorChangesTest : public OrchestratorTest {
 protected:
  ClientMessage Change(uint64_t experiment_id, ExperimentChangeKind change) {
    return ChangeOf(orchestrator_, experiment_id, change);
  }

  // Trains the one trial of a single experiment to its end: the experiment completes.
  uint64_t CompletedSingle() {
    const uint64_t id = Submit(SingleYaml(1, 10));
    const std::vector<StartTask> started = AllStartTasks();
    TrainToTarget(started.back().task_id, 0.25);
    EXPECT_EQ(Describe(id).summary.state, ExperimentState::kCompleted);
    return id;
  }

  // A clean stop: the agent says the task is stopping, then every rank exits 0 after its
  // checkpoint, as a worker asked to stop does.
  void StoppedCleanly(uint64_t task_id) {
    FromAgent(AgentOf(task_id), TaskStatus{task_id, TaskState::kStopping, {}});
    ExitAll(task_id, 0);
  }

  std::vector<ExperimentSummary> List(bool include_archived) {
    ListExperiments request;
    request.include_archived = include_archived;
    const ClientMessage reply = orchestrator_.OnClientRequest(request);
    return std::get<ExperimentList>(reply).experiments;
  }
};

TEST_F(OrchestratorChangesTest, PauseStopsRunningTrialsAndActivateResumesThemFromCheckpoints) {
  Register("agent-1", 1);
  const uint64_t id = Submit(GridYaml(50));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const StartTask placed = StartTasksSentTo("agent-1")[0];
  Accept(placed.task_id);
  Running(placed.task_id);
  const std::string checkpoint = absl::StrCat("trial-", placed.trial_id, "-batch-20");
  Checkpoint(placed.task_id, checkpoint, 20);
  ASSERT_THAT(TasksIn(TaskRowState::kQueued), SizeIs(3));

  EXPECT_TRUE(IsAck(Change(id, ExperimentChangeKind::kPause)));
  ASSERT_THAT(SentTo<KillTask>("agent-1"), SizeIs(1));
  EXPECT_EQ(SentTo<KillTask>("agent-1")[0].task_id, placed.task_id);
  EXPECT_EQ(SentTo<KillTask>("agent-1")[0].reason, "the experiment was paused");
  ASSERT_THAT(Tasks(), SizeIs(1)) << "the queued tasks are dropped";
  EXPECT_EQ(Tasks()[0].state, TaskRowState::kStopping);
  ExperimentDescription paused = Describe(id);
  EXPECT_EQ(paused.summary.state, ExperimentState::kPaused);
  for (const TrialSummary& trial : paused.trials) {
    EXPECT_EQ(trial.state,
              trial.trial_id == placed.trial_id ? TrialState::kRunning : TrialState::kPaused);
  }
  EXPECT_TRUE(IsAck(Change(id, ExperimentChangeKind::kPause)));  // paused already
  EXPECT_THAT(SentTo<KillTask>("agent-1"), SizeIs(1));

  StoppedCleanly(placed.task_id);
  EXPECT_THAT(Tasks(), IsEmpty());
  paused = Describe(id);
  EXPECT_EQ(paused.summary.state, ExperimentState::kPaused);
  for (const TrialSummary& trial : paused.trials) {
    EXPECT_EQ(trial.state, TrialState::kPaused);
    EXPECT_EQ(trial.restarts, 0u) << "a pause uses no restart";
  }
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1)) << "nothing trains while paused";
  orchestrator_.Tick();
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  EXPECT_FALSE(orchestrator_.Idle());

  EXPECT_TRUE(IsAck(Change(id, ExperimentChangeKind::kActivate)));
  EXPECT_EQ(Describe(id).summary.state, ExperimentState::kActive);
  const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  EXPECT_EQ(starts[1].trial_id, placed.trial_id);
  EXPECT_EQ(starts[1].worker.resume_checkpoint_id, checkpoint);
  EXPECT_THAT(TasksIn(TaskRowState::kQueued), SizeIs(3));
  EXPECT_TRUE(IsAck(Change(id, ExperimentChangeKind::kActivate)));  // active already
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(2));
}

// A trial whose task finished its segment as the pause came is done with it, not trained again.
TEST_F(OrchestratorChangesTest, ATrialThatValidatedItsTargetAsThePauseCameFinishesItsSegment) {
  Register("agent-1", 1);
  const uint64_t id = Submit(SingleYaml(1, 10));
  const StartTask placed = StartTasksSentTo("agent-1")[0];
  Accept(placed.task_id);
  Running(placed.task_id);
  Validate(placed.task_id, 10, 0.25);
  EXPECT_TRUE(IsAck(Change(id, ExperimentChangeKind::kPause)));
  ExitAll(placed.task_id, 0);
  // The searcher had its validation: the single trial is complete, and so is the experiment.
  EXPECT_EQ(Describe(id).summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(TrialOf(id, placed.trial_id).state, TrialState::kCompleted);
}

TEST_F(OrchestratorChangesTest, PausingOrActivatingAnEndedExperimentIsRefused) {
  Register("agent-1", 1);
  const uint64_t id = CompletedSingle();
  for (ExperimentChangeKind change :
       {ExperimentChangeKind::kPause, ExperimentChangeKind::kActivate}) {
    const ClientError error = ErrorOf(Change(id, change));
    EXPECT_EQ(error.code, ClientErrorCode::kInvalidRequest);
    EXPECT_THAT(error.message, HasSubstr(absl::StrCat("experiment ", id, " is completed")));
  }
  EXPECT_EQ(Describe(id).summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(ErrorOf(Change(999, ExperimentChangeKind::kPause)).code, ClientErrorCode::kNotFound);
}

TEST_F(OrchestratorChangesTest, AKilledPausedExperimentStops) {
  const uint64_t id = Submit(GridYaml(50));  // no agent: every trial waits
  EXPECT_TRUE(IsAck(Change(id, ExperimentChangeKind::kPause)));
  EXPECT_THAT(Tasks(), IsEmpty());
  EXPECT_TRUE(IsAck(orchestrator_.OnClientRequest(KillExperiment{id})));
  EXPECT_EQ(Describe(id).summary.state, ExperimentState::kStopped);
}

TEST_F(OrchestratorChangesTest, APausedExperimentStaysPausedAcrossARestart) {
  const uint64_t id = Submit(SingleYaml(1, 10));
  EXPECT_TRUE(IsAck(Change(id, ExperimentChangeKind::kPause)));
  EXPECT_THAT(Slurp(ExperimentFolder(id) + "/experiment.json"), HasSubstr("\"PAUSED\""));

  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  const std::vector<OrchestratorEvent> events = restarted.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const OrchestratorEvent& event) {
    return absl::StrContains(event.line, absl::StrCat("experiment ", id, " is paused"));
  }));
  HelloTo(restarted, "agent-1", 1);
  auto starts = [&outbox] {
    size_t count = 0;
    for (const SentMessage& sent : outbox.sent())
      count += sent.message.index() == ControlMessage(StartTask{}).index();
    return count;
  };
  EXPECT_EQ(starts(), 0u);
  const ClientMessage described = restarted.OnClientRequest(DescribeExperiment{id});
  EXPECT_EQ(std::get<ExperimentDescription>(described).summary.state, ExperimentState::kPaused);
  EXPECT_TRUE(IsAck(ChangeOf(restarted, id, ExperimentChangeKind::kActivate)));
  EXPECT_EQ(starts(), 1u);
}

// The tasks `outbox` was sent, as (trial, target batches, checkpoint resumed from), less those of
// `finished` tasks.
std::set<std::tuple<uint64_t, uint64_t, std::string>> LiveTasks(
    const RecordingOutbox& outbox, const std::set<uint64_t>& finished = {}) {
  std::set<std::tuple<uint64_t, uint64_t, std::string>> live;
  for (const SentMessage& sent : outbox.sent()) {
    const auto* start = std::get_if<StartTask>(&sent.message);
    if (start == nullptr || finished.contains(start->task_id)) continue;
    absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(start->worker.config_yaml);
    EXPECT_TRUE(config.ok()) << config.status();
    live.emplace(start->trial_id, config.ok() ? config->searcher.max_length.value : 0,
                 start->worker.resume_checkpoint_id);
  }
  return live;
}

// An active adaptive_asha experiment continues across a restart from the decisions its searcher
// made: the searcher hears the record's events again, so the restarted orchestrator trains what
// the first would have (a promoted trial from its rung's checkpoint), and no trial that reported
// at its rung trains for it again.
TEST_F(OrchestratorChangesTest, AnActiveAdaptiveAshaExperimentContinuesAtARestart) {
  Register("agent-1", 8);
  const uint64_t id = Submit(AshaYaml());
  ASSERT_NE(id, 0u);
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(absl::StrCat(folder_.path(), "/checkpoints/experiment-", id));
  ASSERT_TRUE(storage.ok()) << storage.status();
  // The first two trials to start train to their rung and checkpoint there, the second better.
  const std::vector<StartTask> first = StartTasksSentTo("agent-1");
  ASSERT_GE(first.size(), 2u);
  std::set<uint64_t> finished;
  for (size_t i = 0; i < 2; ++i) {
    const StartTask& task = first[i];
    const uint64_t target = TargetOf(task);
    Accept(task.task_id);
    Running(task.task_id);
    Validate(task.task_id, target, i == 0 ? 0.9 : 0.1);
    WriteCheckpoint(**storage, target, task.trial_id);
    Checkpoint(task.task_id, absl::StrCat("trial-", task.trial_id, "-batch-", target), target);
    ExitAll(task.task_id, 0);
    finished.insert(task.task_id);
  }
  const auto live = LiveTasks(outbox_, finished);
  // The better of the two was promoted (divisor 2): it goes on from its rung's checkpoint.
  const uint64_t promoted = first[1].trial_id;
  const uint64_t rung = TargetOf(first[1]);
  EXPECT_TRUE(
      live.contains({promoted, rung * 2, absl::StrCat("trial-", promoted, "-batch-", rung)}));
  clock_.Advance(5);
  orchestrator_.Tick();
  EXPECT_THAT(Slurp(ExperimentFolder(id) + "/experiment.json"), HasSubstr("\"searcher_events\""));

  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  EXPECT_EQ(std::get<ExperimentDescription>(restarted.OnClientRequest(DescribeExperiment{id}))
                .summary.state,
            ExperimentState::kActive);
  const std::vector<OrchestratorEvent> events = restarted.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const OrchestratorEvent& event) {
    return event.line == absl::StrCat("experiment ", id,
                                      ": its searcher heard again the 2 results it had been told, "
                                      "and goes on from the decisions it made");
  }));
  HelloTo(restarted, "agent-1", 8);
  // The same tasks as the first orchestrator left running; the finished trials' rung checkpoints
  // are where a promoted one goes on from.
  EXPECT_EQ(LiveTasks(outbox), live);
}

// One whose record was written before searcher events were kept cannot continue (its promotions
// are unknown): it ends in error saying so, its record as well as its description, ending then.
TEST_F(OrchestratorChangesTest, AnAdaptiveAshaExperimentWithAnOlderRecordEndsAtARestartSayingWhy) {
  const uint64_t id = Submit(AshaYaml());
  ASSERT_NE(id, 0u);
  const std::string path = ExperimentFolder(id) + "/experiment.json";
  std::string older = Slurp(path);
  const size_t events = older.find(",\"searcher_events\"");
  ASSERT_NE(events, std::string::npos) << older;
  older = older.substr(0, events) + "}";
  ASSERT_TRUE(WriteFileAtomically(path, older).ok());
  clock_.Advance(100);
  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  const ExperimentSummary summary =
      std::get<ExperimentDescription>(restarted.OnClientRequest(DescribeExperiment{id})).summary;
  EXPECT_EQ(summary.state, ExperimentState::kError);
  EXPECT_EQ(summary.error,
            "adaptive_asha was active when the orchestrator stopped and cannot continue: its "
            "record was written before searcher events were kept, so its promotions are unknown; "
            "submit the experiment again");
  EXPECT_EQ(summary.ended_unix_time, clock_.UnixSeconds());  // the restart's time
  const std::string record = Slurp(path);
  EXPECT_THAT(record, HasSubstr("\"ERROR\""));
  EXPECT_THAT(record, Not(HasSubstr("\"ACTIVE\"")));
}

TEST_F(OrchestratorChangesTest, KillingOneTrialStopsItAndTheSearchGoesOn) {
  Register("agent-1", 1);
  const uint64_t id = Submit(GridYaml(50));
  const StartTask first = StartTasksSentTo("agent-1")[0];
  Accept(first.task_id);
  Running(first.task_id);
  const std::vector<TaskRow> queued = TasksIn(TaskRowState::kQueued);
  ASSERT_THAT(queued, SizeIs(3));

  // A queued trial stops at once, its task dropped.
  EXPECT_TRUE(IsAck(orchestrator_.OnClientRequest(KillTrial{queued.back().trial_id})));
  EXPECT_EQ(TrialOf(id, queued.back().trial_id).state, TrialState::kStopped);
  EXPECT_THAT(TasksIn(TaskRowState::kQueued), SizeIs(2));

  // A running one is stopped through its agent, then ends stopped; the next trial takes its slot.
  EXPECT_TRUE(IsAck(orchestrator_.OnClientRequest(KillTrial{first.trial_id})));
  ASSERT_THAT(SentTo<KillTask>("agent-1"), SizeIs(1));
  EXPECT_EQ(SentTo<KillTask>("agent-1")[0].reason, "the trial was killed");
  StoppedCleanly(first.task_id);
  EXPECT_EQ(TrialOf(id, first.trial_id).state, TrialState::kStopped);
  EXPECT_EQ(Describe(id).summary.state, ExperimentState::kActive);
  std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  EXPECT_TRUE(IsAck(orchestrator_.OnClientRequest(KillTrial{first.trial_id})));  // ended already
  EXPECT_EQ(ErrorOf(orchestrator_.OnClientRequest(KillTrial{999})).code,
            ClientErrorCode::kNotFound);

  // The two trials left train to their end: the experiment completes, two trials stopped.
  TrainToTarget(starts[1].task_id, 0.5);
  starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(3));
  TrainToTarget(starts[2].task_id, 0.4);
  const ExperimentDescription done = Describe(id);
  EXPECT_EQ(done.summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(done.summary.completed_trials, 2u);
  EXPECT_EQ(done.summary.trials, 4u);
}

TEST_F(OrchestratorChangesTest, ArchivingHidesAnEndedExperimentFromTheList) {
  Register("agent-1", 1);
  const uint64_t active = Submit(GridYaml(50));
  const ClientError refused = ErrorOf(Change(active, ExperimentChangeKind::kArchive));
  EXPECT_EQ(refused.code, ClientErrorCode::kInvalidRequest);
  EXPECT_THAT(refused.message, HasSubstr("only an ended experiment can be archived"));
  EXPECT_TRUE(IsAck(orchestrator_.OnClientRequest(KillExperiment{active})));
  const std::vector<StartTask> started = AllStartTasks();
  StoppedCleanly(started.back().task_id);
  ASSERT_EQ(Describe(active).summary.state, ExperimentState::kStopped);

  EXPECT_TRUE(IsAck(Change(active, ExperimentChangeKind::kArchive)));
  EXPECT_THAT(List(false), IsEmpty());
  ASSERT_THAT(List(true), SizeIs(1));
  EXPECT_TRUE(List(true)[0].archived);
  EXPECT_THAT(Slurp(ExperimentFolder(active) + "/experiment.json"), HasSubstr("\"archived\":true"));

  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  const ClientMessage listed = restarted.OnClientRequest(ListExperiments{});
  EXPECT_THAT(std::get<ExperimentList>(listed).experiments, IsEmpty()) << "archived on disk";

  EXPECT_TRUE(IsAck(Change(active, ExperimentChangeKind::kUnarchive)));
  ASSERT_THAT(List(false), SizeIs(1));
  EXPECT_FALSE(List(false)[0].archived);
}

TEST_F(OrchestratorChangesTest, DeletingRemovesAnEndedExperimentAndItsIdsAreNeverReused) {
  Register("agent-1", 1);
  const uint64_t running = Submit(SingleYaml(1, 10));
  const ClientError refused = ErrorOf(Change(running, ExperimentChangeKind::kDelete));
  EXPECT_EQ(refused.code, ClientErrorCode::kInvalidRequest);
  EXPECT_THAT(refused.message, HasSubstr("kill it first"));
  EXPECT_TRUE(std::filesystem::exists(ExperimentFolder(running) + "/config.yaml"));

  const StartTask placed = StartTasksSentTo("agent-1")[0];
  const std::string storage_root =
      absl::StrCat(folder_.path(), "/checkpoints/experiment-", running);
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage = OpenSharedFsStorage(storage_root);
  ASSERT_TRUE(storage.ok()) << storage.status();
  WriteCheckpoint(**storage, 10, placed.trial_id);
  Accept(placed.task_id);
  Running(placed.task_id);
  Checkpoint(placed.task_id, absl::StrCat("trial-", placed.trial_id, "-batch-10"), 10);
  Validate(placed.task_id, 10, 0.3);
  ExitAll(placed.task_id, 0);
  ASSERT_EQ(Describe(running).summary.state, ExperimentState::kCompleted);

  EXPECT_TRUE(IsAck(Change(running, ExperimentChangeKind::kDelete)));
  EXPECT_FALSE(std::filesystem::exists(ExperimentFolder(running)));
  EXPECT_FALSE(std::filesystem::exists(storage_root));
  EXPECT_EQ(ErrorOf(orchestrator_.OnClientRequest(DescribeExperiment{running})).code,
            ClientErrorCode::kNotFound);
  EXPECT_EQ(ErrorOf(orchestrator_.OnClientRequest(DescribeTrial{placed.trial_id})).code,
            ClientErrorCode::kNotFound);
  EXPECT_THAT(List(true), IsEmpty());
  EXPECT_EQ(ErrorOf(Change(running, ExperimentChangeKind::kDelete)).code,
            ClientErrorCode::kNotFound);

  // A new orchestrator on the same state directory gives new experiments and trials new ids.
  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  const ClientMessage submitted = restarted.OnClientRequest(SubmitExperiment{SingleYaml(1, 10)});
  ASSERT_TRUE(std::holds_alternative<ExperimentSubmitted>(submitted));
  const uint64_t next = std::get<ExperimentSubmitted>(submitted).experiment_id;
  EXPECT_GT(next, running);
  const ClientMessage described = restarted.OnClientRequest(DescribeExperiment{next});
  ASSERT_THAT(std::get<ExperimentDescription>(described).trials, SizeIs(1));
  EXPECT_GT(std::get<ExperimentDescription>(described).trials[0].trial_id, placed.trial_id);
}

TEST_F(OrchestratorChangesTest, ATrialIsDescribedWithItsValidationsAndCheckpoints) {
  Register("agent-1", 1);
  const uint64_t id = Submit(SingleYaml(1, 20));
  const StartTask placed = StartTasksSentTo("agent-1")[0];
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(absl::StrCat(folder_.path(), "/checkpoints/experiment-", id));
  ASSERT_TRUE(storage.ok()) << storage.status();
  WriteCheckpoint(**storage, 10, placed.trial_id);
  Accept(placed.task_id);
  Running(placed.task_id);
  Validate(placed.task_id, 10, 0.5);
  Checkpoint(placed.task_id, absl::StrCat("trial-", placed.trial_id, "-batch-10"), 10);
  Validate(placed.task_id, 20, 0.25);

  const ClientMessage reply = orchestrator_.OnClientRequest(DescribeTrial{placed.trial_id});
  ASSERT_TRUE(std::holds_alternative<TrialDescription>(reply)) << ErrorOf(reply).message;
  const TrialDescription& trial = std::get<TrialDescription>(reply);
  EXPECT_EQ(trial.experiment_id, id);
  EXPECT_EQ(trial.experiment_name, "single");
  EXPECT_EQ(trial.searcher_metric, "validation_loss");
  EXPECT_EQ(trial.trial.trial_id, placed.trial_id);
  EXPECT_EQ(trial.trial.state, TrialState::kRunning);
  ASSERT_THAT(trial.validations, SizeIs(2));
  EXPECT_EQ(trial.validations[0].batches, 10u);
  EXPECT_EQ(trial.validations[1].batches, 20u);
  EXPECT_THAT(trial.validations[1].metrics,
              ElementsAre(NamedValue{"validation_loss", 0.25}, NamedValue{"accuracy", 0.75}));
  ASSERT_THAT(trial.checkpoints, SizeIs(1));
  const CheckpointRow& row = trial.checkpoints[0];
  EXPECT_EQ(row.checkpoint_id, absl::StrCat("trial-", placed.trial_id, "-batch-10"));
  EXPECT_EQ(row.batches, 10u);
  EXPECT_TRUE(row.has_metric);
  EXPECT_EQ(row.metric, 0.5);
  EXPECT_TRUE(std::filesystem::exists(row.path + "/manifest")) << row.path;
  EXPECT_GT(row.bytes, 64u) << "the parameters file and the manifest";

  const ClientMessage by_experiment = orchestrator_.OnClientRequest(ListCheckpoints{id, 0});
  ASSERT_TRUE(std::holds_alternative<CheckpointListing>(by_experiment));
  EXPECT_EQ(std::get<CheckpointListing>(by_experiment).checkpoints, trial.checkpoints);
  const ClientMessage by_trial = orchestrator_.OnClientRequest(ListCheckpoints{0, placed.trial_id});
  EXPECT_EQ(std::get<CheckpointListing>(by_trial).checkpoints, trial.checkpoints);
  EXPECT_EQ(ErrorOf(orchestrator_.OnClientRequest(ListCheckpoints{id + 1, placed.trial_id})).code,
            ClientErrorCode::kNotFound);
  EXPECT_EQ(ErrorOf(orchestrator_.OnClientRequest(ListCheckpoints{999, 0})).code,
            ClientErrorCode::kNotFound);
  EXPECT_EQ(ErrorOf(orchestrator_.OnClientRequest(DescribeTrial{999})).code,
            ClientErrorCode::kNotFound);
}

}  // namespace
}  // namespace cohort::orchestrator_test
