// The Orchestrator's state across runs: a local submission (`cohort run`) keeping its record in
// the caller's folder, applying retention once completed, and resuming from its latest
// checkpoint (a trial that had validated its target keeping that validation, on a resume as on a
// restart); a new orchestrator on the same state directory continuing the active experiments
// (their killed and failed trials kept ended) and showing the ended ones, and what their trials
// printed (a trial's log.txt read back), and recording what an earlier task reported while no
// orchestrator heard it; experiment.json read back (ReadExperimentRecord).
#include <set>

#include "runtime/base/file_io.h"
#include "runtime/orchestrator/trial_log.h"
#include "test/orchestrator/orchestrator_fixture.h"

namespace cohort::orchestrator_test {
namespace {

using ::testing::Contains;
using ::testing::ElementsAreArray;

TEST_F(OrchestratorTest, LocalSubmissionKeepsItsRecordInTheCallersFolder) {
  Register("agent-1", 1);
  const std::string run = absl::StrCat(folder_.path(), "/my-run");
  absl::StatusOr<RunFolder> created = RunFolder::Create(run);
  ASSERT_TRUE(created.ok()) << created.status();
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(SingleYaml(1, 40, 0) + R"(
checkpoint_storage:
  save_trial_latest: 0
  save_trial_best: 0
  save_experiment_best: 0
)");
  ASSERT_TRUE(config.ok()) << config.status();
  const std::string root = absl::StrCat(run, "/checkpoints");
  const ClientMessage reply =
      orchestrator_.SubmitLocal(LocalSubmission{*config, *created, root, /*resume=*/false});
  ASSERT_TRUE(std::holds_alternative<ExperimentSubmitted>(reply));
  const uint64_t experiment_id = std::get<ExperimentSubmitted>(reply).experiment_id;
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  EXPECT_EQ(start.trial_id, 1u);
  EXPECT_EQ(start.worker.checkpoint_root, root);

  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage = OpenSharedFsStorage(root);
  ASSERT_TRUE(storage.ok()) << storage.status();
  WriteCheckpoint(**storage, 20);
  WriteCheckpoint(**storage, 40);
  Accept(start.task_id);
  Running(start.task_id);
  Checkpoint(start.task_id, "trial-1-batch-20", 20);
  Checkpoint(start.task_id, "trial-1-batch-40", 40);
  // While the trial may resume, its latest checkpoint stays whatever the policy says.
  EXPECT_THAT(*(*storage)->List(), SizeIs(1));
  Validate(start.task_id, 40, 0.25);
  ExitAll(start.task_id, 0);

  EXPECT_EQ(Describe(experiment_id).summary.state, ExperimentState::kCompleted);
  EXPECT_THAT(*(*storage)->List(), IsEmpty()) << "save_trial_latest 0 holds once it completed";
  EXPECT_THAT(Slurp(absl::StrCat(run, "/experiment.json")), HasSubstr("\"state\":\"COMPLETED\""));
  EXPECT_THAT(Slurp(absl::StrCat(run, "/trials/1/metrics.jsonl")), HasSubstr("\"batches\":40"));
  EXPECT_FALSE(std::filesystem::exists(ExperimentFolder(experiment_id)));
  const ExperimentRecord* record = orchestrator_.RecordOf(experiment_id);
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->state, RunState::kCompleted);
  EXPECT_EQ(orchestrator_.RecordOf(experiment_id + 1), nullptr);
}

// Shared storage (checkpoint_storage.host_path) holds experiment-1 and experiment-2 of another
// orchestrator: a new experiment here passes over their folders (it would take their
// checkpoints for its own, and resume a trial from them), says so, and claims the folder it
// takes. It used to be experiment 1 and write into theirs.
TEST_F(OrchestratorTest, ANewExperimentPassesOverCheckpointFoldersOfAnotherOrchestrator) {
  Register("agent-1", 1);
  const std::string shared = absl::StrCat(folder_.path(), "/shared");
  for (uint64_t other = 1; other <= 2; ++other) {
    absl::StatusOr<std::unique_ptr<CheckpointStorage>> theirs =
        OpenSharedFsStorage(absl::StrCat(shared, "/experiment-", other));
    ASSERT_TRUE(theirs.ok()) << theirs.status();
    WriteCheckpoint(**theirs, 40);
  }
  const std::string before =
      Slurp(absl::StrCat(shared, "/experiment-1/trial-1-batch-40/metadata.json"));
  const ClientMessage reply = orchestrator_.OnClientRequest(SubmitExperiment{
      SingleYaml(1, 40) + absl::StrCat("checkpoint_storage:\n  host_path: ", shared, "\n")});
  const auto* submitted = std::get_if<ExperimentSubmitted>(&reply);
  ASSERT_NE(submitted, nullptr) << ClientMessageName(reply);
  EXPECT_EQ(submitted->experiment_id, 3u);
  EXPECT_THAT(submitted->warnings,
              Contains(HasSubstr(absl::StrCat("checkpoint_storage: ", shared,
                                              "/experiment-1 to experiment-2 are not free: "
                                              "they hold what this orchestrator did not write"))));
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  EXPECT_EQ(start.worker.checkpoint_root, absl::StrCat(shared, "/experiment-3"));
  EXPECT_EQ(start.worker.resume_checkpoint_id, "");
  EXPECT_EQ(Slurp(absl::StrCat(shared, "/experiment-3/.cohort-run-folder")),
            ExperimentFolder(3) + "\n");
  EXPECT_EQ(Slurp(absl::StrCat(shared, "/experiment-1/trial-1-batch-40/metadata.json")), before);
  // The next one follows it; one without shared storage keeps to the orchestrator's own root.
  EXPECT_EQ(Submit(SingleYaml(1, 40)), 4u);
}

// What a stopped `cohort run` of SingleYaml(1, 100, 0) left in a run folder of the test's: trial
// 1's reports (kind, batches, validation_loss) and its checkpoints after `checkpoints` batches.
struct LeftReport {
  ReportKind kind;
  uint64_t batches;
  double metric;
};

class ResumeTest : public OrchestratorTest {
 protected:
  void LeaveStoppedRun(const std::vector<LeftReport>& reports,
                       const std::vector<uint64_t>& checkpoints) {
    absl::StatusOr<RunFolder> created = RunFolder::Create(absl::StrCat(folder_.path(), "/run"));
    ASSERT_TRUE(created.ok()) << created.status();
    run_.emplace(*std::move(created));
    ASSERT_TRUE(run_->PrepareTrial(1).ok());
    for (const LeftReport& r : reports) {
      MetricsReport report{
          1, r.kind, r.batches, r.batches * 32, 1.7e9, {{"validation_loss", r.metric}}};
      ASSERT_TRUE(AppendLine(run_->metrics_path(1), MetricsReportJson(report)).ok());
    }
    absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage = OpenSharedFsStorage(Root());
    ASSERT_TRUE(storage.ok()) << storage.status();
    for (const uint64_t batches : checkpoints) WriteCheckpoint(**storage, batches);
  }

  // `cohort run --resume` of it: the experiment's id, 0 and a failure when refused.
  uint64_t Resume() {
    absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(SingleYaml(1, 100, 0));
    EXPECT_TRUE(config.ok()) << config.status();
    const ClientMessage reply =
        orchestrator_.SubmitLocal(LocalSubmission{*config, *run_, Root(), /*resume=*/true});
    const auto* submitted = std::get_if<ExperimentSubmitted>(&reply);
    EXPECT_NE(submitted, nullptr) << ClientMessageName(reply);
    return submitted == nullptr ? 0 : submitted->experiment_id;
  }

  // The task starts, runs and ends well without a report: it had nothing to train or validate.
  void RunsWithNothingToDo(uint64_t task_id) {
    Accept(task_id);
    Running(task_id);
    ExitAll(task_id, 0);
  }

  std::string Root() const { return absl::StrCat(folder_.path(), "/run/checkpoints"); }
  std::string Metrics() const { return Slurp(run_->metrics_path(1)); }

 private:
  std::optional<RunFolder> run_;
};

TEST_F(ResumeTest, ResumedLocalSubmissionContinuesFromTheLatestCheckpoint) {
  Register("agent-1", 1);
  // What the stopped run left: reports up to batch 30, checkpoints at 10 and 20.
  LeaveStoppedRun({{ReportKind::kValidation, 10, 0.5},
                   {ReportKind::kValidation, 20, 0.3},
                   {ReportKind::kTraining, 30, 0.2}},
                  {10, 20});
  const uint64_t experiment_id = Resume();
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  EXPECT_EQ(start.worker.resume_checkpoint_id, "trial-1-batch-20");
  const std::string metrics = Metrics();
  EXPECT_THAT(metrics, HasSubstr("\"batches\":20"));
  EXPECT_THAT(metrics, Not(HasSubstr("\"batches\":30"))) << "trained again after the resume";
  const TrialSummary trial = TrialOf(experiment_id, 1);
  EXPECT_EQ(trial.batches_trained, 20u);
  EXPECT_EQ(trial.latest_checkpoint_id, "trial-1-batch-20");
  const ExperimentRecord* record = orchestrator_.RecordOf(experiment_id);
  ASSERT_NE(record, nullptr);
  ASSERT_THAT(record->trials, SizeIs(1));
  ASSERT_THAT(record->trials[0].checkpoints, SizeIs(2));
  EXPECT_EQ(record->trials[0].checkpoints[1].metric, 0.3);
  ASSERT_TRUE(record->trials[0].best_validation.has_value());
  EXPECT_EQ(record->trials[0].best_validation->batches, 20u);
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return event.level == OrchestratorEvent::Level::kNotice &&
           event.line.find("resuming from checkpoint trial-1-batch-20") != std::string::npos;
  }));
}

TEST_F(ResumeTest, AResumedTrialThatHadValidatedItsTargetKeepsThatValidation) {
  Register("agent-1", 1);
  // The run had trained its 100 batches, validated and checkpointed there, when it stopped.
  LeaveStoppedRun({{ReportKind::kValidation, 50, 0.5}, {ReportKind::kValidation, 100, 0.125}},
                  {100});
  const uint64_t experiment_id = Resume();
  // Its task checks the checkpoint against the settings, then ends, training and validating
  // nothing; the searcher takes the validation the record kept (it ranked the trial worst, for
  // want of a metric, before).
  const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(1));
  EXPECT_EQ(starts[0].worker.resume_checkpoint_id, "trial-1-batch-100");
  RunsWithNothingToDo(starts[0].task_id);
  EXPECT_EQ(Describe(experiment_id).summary.state, ExperimentState::kCompleted);
  const TrialSummary trial = TrialOf(experiment_id, 1);
  EXPECT_EQ(trial.state, TrialState::kCompleted);
  EXPECT_EQ(trial.batches_trained, 100u);
  EXPECT_TRUE(trial.has_best_metric);
  EXPECT_EQ(trial.best_metric, 0.125);
  const std::string metrics = Metrics();
  EXPECT_EQ(metrics.find("\"batches\":100"), metrics.rfind("\"batches\":100")) << metrics;
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::none_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return event.line.find("reported no") != std::string::npos;
  }));
}

TEST_F(ResumeTest, ATrialRestartedFromACheckpointAtItsValidatedTargetKeepsItsMetric) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, 100, /*max_restarts=*/1));
  const StartTask first = StartTasksSentTo("agent-1").at(0);
  Accept(first.task_id);
  Running(first.task_id);
  Validate(first.task_id, 100, 0.125);
  Checkpoint(first.task_id, "trial-1-batch-100", 100);
  // It crashed on its way out, after its last checkpoint.
  TaskExit crash;
  crash.task_id = first.task_id;
  crash.rank = 0;
  crash.signal = 11;
  FromAgent("agent-1", crash);
  const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  EXPECT_EQ(starts[1].worker.resume_checkpoint_id, "trial-1-batch-100");
  // The restart has nothing to train or validate, and the validation kept is the segment's.
  RunsWithNothingToDo(starts[1].task_id);
  EXPECT_EQ(Describe(experiment_id).summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(TrialOf(experiment_id, first.trial_id).state, TrialState::kCompleted);
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::none_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return event.line.find("reported no") != std::string::npos;
  }));
}

TEST_F(OrchestratorTest, RestartedOrchestratorContinuesActiveExperiments) {
  Register("agent-1", 2);
  const uint64_t done = Submit(SingleYaml(1, 10, 0));
  TrainToTarget(StartTasksSentTo("agent-1").at(0).task_id, 0.5);
  ASSERT_EQ(Describe(done).summary.state, ExperimentState::kCompleted);
  const uint64_t grid = Submit(GridYaml(100));
  const std::vector<StartTask> running = StartTasksSentTo("agent-1");
  ASSERT_THAT(running, SizeIs(3));
  const StartTask& first = running[1];
  Accept(first.task_id);
  Running(first.task_id);
  Validate(first.task_id, 40, 0.7);
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(absl::StrCat(folder_.path(), "/checkpoints/experiment-", grid));
  ASSERT_TRUE(storage.ok()) << storage.status();
  WriteCheckpoint(**storage, 40, first.trial_id);
  Checkpoint(first.task_id, absl::StrCat("trial-", first.trial_id, "-batch-40"), 40);
  Validate(first.task_id, 50, 0.6);  // after the checkpoint: trained again after the restart
  orchestrator_.Tick();
  std::vector<uint64_t> grid_trials;
  for (const TrialSummary& trial : Describe(grid).trials) grid_trials.push_back(trial.trial_id);
  ASSERT_THAT(grid_trials, SizeIs(4));

  // The orchestrator stops (its memory is gone) and a new one starts on the same state dir.
  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  std::vector<OrchestratorEvent> events = restarted.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const OrchestratorEvent& event) {
    return event.level == OrchestratorEvent::Level::kNotice &&
           event.line == absl::StrCat("experiment ", grid,
                                      " was active when the orchestrator stopped: it continues, "
                                      "each trial from its latest checkpoint");
  }));
  HelloTo(restarted, "agent-1", 2);

  std::vector<StartTask> resumed;
  for (const SentMessage& sent : outbox.sent()) {
    if (const auto* start = std::get_if<StartTask>(&sent.message)) resumed.push_back(*start);
  }
  ASSERT_THAT(resumed, SizeIs(2));
  EXPECT_EQ(resumed[0].experiment_id, grid);
  EXPECT_EQ(resumed[0].trial_id, first.trial_id);
  EXPECT_EQ(resumed[0].worker.resume_checkpoint_id,
            absl::StrCat("trial-", first.trial_id, "-batch-40"));
  EXPECT_GT(resumed[0].task_id, running.back().task_id) << "task ids are never reused";
  EXPECT_EQ(resumed[1].worker.resume_checkpoint_id, "");
  const ClientMessage described = restarted.OnClientRequest(DescribeExperiment{grid});
  ASSERT_TRUE(std::holds_alternative<ExperimentDescription>(described));
  std::vector<uint64_t> recovered_trials;
  for (const TrialSummary& trial : std::get<ExperimentDescription>(described).trials) {
    recovered_trials.push_back(trial.trial_id);
  }
  EXPECT_EQ(recovered_trials, grid_trials);
  // Submitted when its config.yaml was written, not when this orchestrator loaded it.
  struct stat config_file {};
  ASSERT_EQ(::stat(absl::StrCat(ExperimentFolder(grid), "/config.yaml").c_str(), &config_file), 0);
  EXPECT_EQ(std::get<ExperimentDescription>(described).summary.submitted_unix_time,
            static_cast<double>(config_file.st_mtime));
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const OrchestratorEvent& event) {
    return event.line == absl::StrCat("experiment ", grid,
                                      " (grid-search) resumed: grid searcher, 1 slot per trial");
  }));
  const std::string metrics =
      Slurp(absl::StrCat(ExperimentFolder(grid), "/trials/", first.trial_id, "/metrics.jsonl"));
  EXPECT_THAT(metrics, HasSubstr("\"batches\":40"));
  EXPECT_THAT(metrics, Not(HasSubstr("\"batches\":50")));
  // The completed experiment is described as it ended; a new one gets the next ids.
  const ClientMessage old = restarted.OnClientRequest(DescribeExperiment{done});
  ASSERT_TRUE(std::holds_alternative<ExperimentDescription>(old));
  const ExperimentDescription& ended = std::get<ExperimentDescription>(old);
  EXPECT_EQ(ended.summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(ended.summary.progress, 1.0);
  ASSERT_THAT(ended.trials, SizeIs(1));
  EXPECT_EQ(ended.trials[0].state, TrialState::kCompleted);
  EXPECT_EQ(ended.trials[0].batches_trained, 10u);
  EXPECT_TRUE(ended.trials[0].has_best_metric);
  EXPECT_EQ(ended.trials[0].best_metric, 0.5);
  EXPECT_THAT(ended.trials[0].hyperparameters_json, HasSubstr("\"global_batch_size\":32"));
  const ClientMessage listed = restarted.OnClientRequest(ListExperiments{});
  ASSERT_TRUE(std::holds_alternative<ExperimentList>(listed));
  EXPECT_THAT(std::get<ExperimentList>(listed).experiments, SizeIs(2));
  EXPECT_TRUE(std::holds_alternative<ClientAck>(restarted.OnClientRequest(KillExperiment{done})));
  const ClientMessage next = restarted.OnClientRequest(SubmitExperiment{SingleYaml(1)});
  ASSERT_TRUE(std::holds_alternative<ExperimentSubmitted>(next));
  EXPECT_EQ(std::get<ExperimentSubmitted>(next).experiment_id, grid + 1);
}

// What a task reported while no orchestrator heard it (its agent sends it again once registered
// with the next one) fills its trial's record up to the checkpoint the trial goes on from: the
// record has no gap there. What came after that checkpoint is trained again and reported anew,
// and a report the predecessor had recorded (its Ack lost) is left out.
TEST_F(OrchestratorTest, ARestartedOrchestratorRecordsWhatAnEarlierTaskReportedUpToItsCheckpoint) {
  const std::pair<uint64_t, StartTask> run = RunOneTrial(1000);
  const uint64_t experiment_id = run.first;
  const StartTask& start = run.second;  // captured below, which a structured binding cannot be
  Train(start.task_id, 20, 100);
  Validate(start.task_id, 20, 0.9);
  orchestrator_.Tick();
  // The orchestrator stops; the task trains on, and writes a checkpoint that no one hears of.
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(absl::StrCat(folder_.path(), "/checkpoints/experiment-", experiment_id));
  ASSERT_TRUE(storage.ok()) << storage.status();
  WriteCheckpoint(**storage, 60, start.trial_id);

  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  uint64_t message_id = 0;
  auto from_agent = [&](ControlMessage message) {
    DecodedControl decoded;
    decoded.version = ControlVersion{kControlProtocolMajor, kControlProtocolMinor};
    decoded.header = ControlHeader{++message_id, 0, "agent-1"};
    decoded.message = std::move(message);
    restarted.OnAgentMessage("agent-1", decoded);
    return decoded.header.message_id;
  };
  auto report = [&](ReportKind kind, uint64_t batches) {
    MetricsReport metrics;
    metrics.trial_id = start.trial_id;
    metrics.kind = kind;
    metrics.batches = batches;
    metrics.records = batches * 32;
    metrics.metrics = {{kind == ReportKind::kTraining ? "loss" : "validation_loss", 0.5}};
    return from_agent(TaskMetricsReport{start.task_id, metrics});
  };
  AgentHello hello = Hello("agent-1", 2);  // the earlier task holds slot 0 until it exits
  hello.tasks.push_back(
      TaskEntry{start.task_id, start.trial_id, experiment_id, TaskState::kRunning, {0}, {0}});
  from_agent(hello);
  // Sent again: the validation at 20 (recorded; its Ack was lost), then what came after it.
  std::vector<uint64_t> ids = {
      report(ReportKind::kValidation, 20),
      report(ReportKind::kTraining, 40),
      report(ReportKind::kValidation, 40),
      report(ReportKind::kTraining, 60),
      from_agent(TaskCheckpointReport{start.task_id,
                                      start.trial_id,
                                      absl::StrCat("trial-", start.trial_id, "-batch-60"),
                                      60,
                                      1920,
                                      64,
                                      {},
                                      false}),
      report(ReportKind::kTraining, 80),
      report(ReportKind::kValidation, 80)};

  EXPECT_THAT(RecordedReports(ExperimentFolder(experiment_id), start.trial_id),
              ElementsAre("T20", "V20", "T40", "V40", "T60"));
  std::set<uint64_t> acknowledged;
  bool killed = false;
  for (const SentMessage& sent : outbox.sent()) {
    if (std::holds_alternative<Ack>(sent.message)) acknowledged.insert(sent.correlation_id);
    if (const auto* kill = std::get_if<KillTask>(&sent.message)) {
      killed = killed || kill->task_id == start.task_id;
    }
  }
  for (const uint64_t id : ids) EXPECT_EQ(acknowledged.count(id), 1u) << "report " << id;
  EXPECT_TRUE(killed) << "the earlier task is still stopped";
  // Its end is in the trial's log, once though the agent registered twice.
  from_agent(hello);
  const std::string log =
      Slurp(absl::StrCat(ExperimentFolder(experiment_id), "/trials/", start.trial_id, "/log.txt"));
  const std::string ended = absl::StrCat("[cohort] task ", start.task_id,
                                         " on agent-1, placed before this orchestrator started, "
                                         "is stopped");
  EXPECT_THAT(log, HasSubstr(ended));
  EXPECT_EQ(log.find(ended), log.rfind(ended)) << log;
  std::vector<OrchestratorEvent> events = restarted.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const OrchestratorEvent& event) {
    return event.line == absl::StrCat("trial ", start.trial_id, ": recording what task ",
                                      start.task_id,
                                      " reported while no orchestrator heard it, up to batch 60");
  }));
  // The new task trains from batch 60 on: its reports follow these.
  std::vector<StartTask> resumed;
  for (const SentMessage& sent : outbox.sent()) {
    if (const auto* task = std::get_if<StartTask>(&sent.message)) resumed.push_back(*task);
  }
  ASSERT_THAT(resumed, SizeIs(1));
  EXPECT_EQ(resumed[0].worker.resume_checkpoint_id,
            absl::StrCat("trial-", start.trial_id, "-batch-60"));
}

// A trial killed (`cohort trial kill`) or failed in an experiment that goes on stays so when a
// new orchestrator continues the experiment, with what it trained: it used to train again from
// its checkpoint. The trials that had not ended go on, and the searcher without the ended ones.
TEST_F(OrchestratorTest, ARestartedOrchestratorKeepsKilledAndFailedTrialsEnded) {
  Register("agent-1", 2);
  const uint64_t grid = Submit(GridYaml(100));
  const std::vector<StartTask> running = StartTasksSentTo("agent-1");
  ASSERT_THAT(running, SizeIs(2));
  const StartTask& killed = running[0];
  Accept(killed.task_id);
  Running(killed.task_id);
  Validate(killed.task_id, 30, 0.7);
  ASSERT_TRUE(
      std::holds_alternative<ClientAck>(orchestrator_.OnClientRequest(KillTrial{killed.trial_id})));
  FromAgent("agent-1", TaskStatus{killed.task_id, TaskState::kStopping, {}});
  ExitAll(killed.task_id, 0);
  ASSERT_EQ(TrialOf(grid, killed.trial_id).state, TrialState::kStopped);
  // The other fails, again at each of its restarts (max_restarts 5), until it ends in error.
  const uint64_t failed_trial = running[1].trial_id;
  for (int attempt = 0; attempt < 6; ++attempt) {
    uint64_t task_id = 0;
    for (const StartTask& start : StartTasksSentTo("agent-1")) {
      if (start.trial_id == failed_trial) task_id = start.task_id;
    }
    Accept(task_id);
    ExitAll(task_id, 1);
    clock_.Advance(60);
    orchestrator_.Tick();
  }
  ASSERT_EQ(TrialOf(grid, failed_trial).state, TrialState::kError);

  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  HelloTo(restarted, "agent-1", 2);
  std::set<uint64_t> started;
  for (const SentMessage& sent : outbox.sent()) {
    if (const auto* start = std::get_if<StartTask>(&sent.message)) started.insert(start->trial_id);
  }
  EXPECT_THAT(started, SizeIs(2));
  EXPECT_EQ(started.count(killed.trial_id), 0u) << "the killed trial trains again";
  EXPECT_EQ(started.count(failed_trial), 0u) << "the failed trial trains again";
  const ClientMessage described = restarted.OnClientRequest(DescribeExperiment{grid});
  ASSERT_TRUE(std::holds_alternative<ExperimentDescription>(described));
  for (const TrialSummary& trial : std::get<ExperimentDescription>(described).trials) {
    if (trial.trial_id == killed.trial_id) {
      EXPECT_EQ(trial.state, TrialState::kStopped);
      EXPECT_EQ(trial.batches_trained, 30u);
      EXPECT_TRUE(trial.has_best_metric);
    } else if (trial.trial_id == failed_trial) {
      EXPECT_EQ(trial.state, TrialState::kError);
      EXPECT_FALSE(trial.error.empty());
    }
  }
}

// An experiment that ended in error as its trial failed says so after a restart too: the error
// comes from its trials' states (it used to read "ended before the orchestrator restarted").
TEST_F(OrchestratorTest, AnExperimentWhoseTrialFailedSaysSoAfterARestart) {
  Register("agent-1", 1);
  const uint64_t failed = Submit(SingleYaml(1, 10, 0));
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  Accept(start.task_id);
  ExitAll(start.task_id, 1);
  ASSERT_EQ(Describe(failed).summary.state, ExperimentState::kError);
  EXPECT_EQ(Describe(failed).summary.error, "its trial failed");

  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  const ClientMessage described = restarted.OnClientRequest(DescribeExperiment{failed});
  ASSERT_TRUE(std::holds_alternative<ExperimentDescription>(described));
  EXPECT_EQ(std::get<ExperimentDescription>(described).summary.state, ExperimentState::kError);
  EXPECT_EQ(std::get<ExperimentDescription>(described).summary.error, "its trial failed");
}

// A restarted orchestrator shows what trials printed before it: the tail of each trial's log.txt,
// of an ended experiment and of one that goes on alike, with each worker line under its rank and
// the orchestrator's own lines under none ("-" below), as the first orchestrator showed them.
TEST_F(OrchestratorTest, ARestartedOrchestratorShowsWhatTrialsPrintedBefore) {
  Register("agent-1", 2);
  const uint64_t ended = Submit(SingleYaml(1, 10, 0));
  const StartTask first = StartTasksSentTo("agent-1").at(0);
  Accept(first.task_id);
  Running(first.task_id);
  FromAgent("agent-1", LogBatch{first.task_id, {{0, LogStream::kStdout, 1.7e9, "ended's line"}}});
  TrainToTarget(first.task_id, 0.5);
  ASSERT_EQ(Describe(ended).summary.state, ExperimentState::kCompleted);
  Submit(SingleYaml(2, 100, 0));  // goes on after the restart
  const StartTask second = StartTasksSentTo("agent-1").back();
  Accept(second.task_id);
  Running(second.task_id);
  FromAgent("agent-1", LogBatch{second.task_id,
                                {{0, LogStream::kStdout, 1.7e9, "rank 0's line"},
                                 {1, LogStream::kStderr, 1.7e9, "rank 1's [bracketed] line"},
                                 {1, LogStream::kAgent, 1.7e9, "rank 1 is slow"}}});
  Validate(second.task_id, 40, 0.7);
  orchestrator_.Tick();

  const auto texts_of = [](Orchestrator& orchestrator, uint64_t trial_id, int32_t rank) {
    const ClientMessage reply =
        orchestrator.OnClientRequest(TrialLogsRequest{trial_id, rank, 0, 100});
    std::vector<std::string> found;
    for (const TrialLogLine& line : std::get<TrialLogs>(reply).lines) {
      found.push_back(
          absl::StrCat(line.orchestrator_line ? "-" : absl::StrCat(line.rank), ": ", line.text));
    }
    return found;
  };
  const std::vector<std::string> expected = {
      absl::StrCat("-: [cohort] task ", second.task_id, " trains to batch 100 on agent-1"),
      "0: rank 0's line", "1: rank 1's [bracketed] line", "1: [agent] rank 1 is slow",
      "-: [cohort] validation after 40 batches: validation_loss=0.7 accuracy=0.3"};
  EXPECT_THAT(texts_of(orchestrator_, second.trial_id, -1), ElementsAreArray(expected));
  EXPECT_THAT(texts_of(orchestrator_, second.trial_id, 0), ElementsAre("0: rank 0's line"));

  RecordingOutbox outbox;
  Orchestrator restarted(Options(folder_.path()), outbox, clock_);
  EXPECT_THAT(texts_of(restarted, first.trial_id, -1), Contains("0: ended's line"));
  EXPECT_THAT(texts_of(restarted, second.trial_id, -1), ElementsAreArray(expected));
  EXPECT_THAT(texts_of(restarted, second.trial_id, 0), ElementsAre("0: rank 0's line"));
  EXPECT_THAT(texts_of(restarted, second.trial_id, 1),
              ElementsAre("1: rank 1's [bracketed] line", "1: [agent] rank 1 is slow"));
}

TEST(TrialLogTest, AppendRecordedKeepsTheLastLinesOfALongLog) {
  TempFolder folder;
  const std::string path = absl::StrCat(folder.path(), "/log.txt");
  std::string text;
  for (int i = 0; i < 50000; ++i) absl::StrAppend(&text, "[rank ", i % 4, "] line ", i, "\n");
  text += "[rank x] not a rank\n[rank 2]no space\nno newline at the end";
  ASSERT_TRUE(WriteWholeFile(path, text).ok());
  TrialLog log(4);
  log.AppendRecorded(path);
  const std::vector<TrialLogLine> lines = log.After(0, -1, 10);
  std::vector<std::string> texts;
  for (const TrialLogLine& line : lines) texts.push_back(absl::StrCat(line.rank, ": ", line.text));
  EXPECT_THAT(texts, ElementsAre("3: line 49999", "0: [rank x] not a rank", "0: [rank 2]no space",
                                 "0: no newline at the end"));
  EXPECT_EQ(lines.front().sequence, 1u);

  TrialLog missing(4);
  missing.AppendRecorded(absl::StrCat(folder.path(), "/none.txt"));
  EXPECT_EQ(missing.last_sequence(), 0u);
}

// ---------------------------------------------------------------- experiment.json read back

TEST(ExperimentRecordReaderTest, ReadsBackWhatItWrote) {
  TempFolder folder;
  ExperimentRecord record;
  record.name = "round \"trip\"";
  record.state = RunState::kStopped;
  record.searcher_metric = "validation_loss";
  record.smaller_is_better = false;
  record.experiment_seed = 123456789;
  record.fingerprint = "f5bda37d7ce32360";
  TrialRecord& trial = record.trial(7);
  trial.state = RunState::kError;
  trial.hyperparameters_json = R"({"lr":0.05,"name":"a \"b\"","layers":2,"on":true,"none":null})";
  trial.batches_trained = 120;
  trial.total_batches = 300;
  trial.records_trained = 3840;
  trial.restarts = 2;
  trial.latest_training =
      MetricsReport{7, ReportKind::kTraining, 120, 3840, 1.7e9 + 0.25, {{"loss", 0.125}}};
  trial.best_validation = MetricsReport{
      7, ReportKind::kValidation, 100, 3200, 1.7e9, {{"validation_loss", 0.5}, {"acc", 0.75}}};
  trial.latest_validation = trial.best_validation;
  trial.checkpoints = {{"trial-7-batch-100", 100, 0.5}, {"trial-7-batch-120", 120, std::nullopt}};
  trial.error = "rank 0 was killed by signal 9";
  record.trial(8).hyperparameters_json = "{}";
  record.searcher_events = {{8, false, 100, 0.25}, {7, true, 0, std::nullopt},
                            {8, false, 400, std::nullopt}};
  const std::string path = folder.path() + "/experiment.json";
  ASSERT_TRUE(WriteFileAtomically(path, record.ToJson()).ok());

  absl::StatusOr<ExperimentRecord> read = ReadExperimentRecord(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->ToJson(), record.ToJson());
  ASSERT_THAT(read->trials, SizeIs(2));
  EXPECT_EQ(read->trials[0].checkpoints[0].metric, 0.5);
  EXPECT_FALSE(read->trials[0].checkpoints[1].metric.has_value());
  ASSERT_THAT(read->searcher_events, SizeIs(3));
  EXPECT_TRUE(read->searcher_events_kept);
  EXPECT_EQ(read->searcher_events[0].units, 100u);
  EXPECT_EQ(read->searcher_events[0].metric, 0.25);
  EXPECT_TRUE(read->searcher_events[1].exited);
  EXPECT_EQ(read->searcher_events[1].trial_id, 7u);
  EXPECT_FALSE(read->searcher_events[2].metric.has_value());

  EXPECT_TRUE(absl::IsNotFound(ReadExperimentRecord(folder.path() + "/none.json").status()));
  ASSERT_TRUE(WriteFileAtomically(path, R"({"name":"x","state":"RESUMING"})").ok());
  EXPECT_THAT(ReadExperimentRecord(path).status().message(), HasSubstr("state"));
  // A paused, archived record reads back; one written before archiving existed is not archived.
  record.state = RunState::kPaused;
  record.archived = true;
  ASSERT_TRUE(WriteFileAtomically(path, record.ToJson()).ok());
  read = ReadExperimentRecord(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->state, RunState::kPaused);
  EXPECT_TRUE(read->archived);
  std::string older = record.ToJson();
  const std::string archived_field = "\"archived\":true,";
  ASSERT_NE(older.find(archived_field), std::string::npos) << older;
  older.erase(older.find(archived_field), archived_field.size());
  ASSERT_TRUE(WriteFileAtomically(path, older).ok());
  read = ReadExperimentRecord(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->archived);
  // One written before searcher events were kept has none, and says so.
  older = older.substr(0, older.find(",\"searcher_events\"")) + "}";
  ASSERT_TRUE(WriteFileAtomically(path, older).ok());
  read = ReadExperimentRecord(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(read->searcher_events, IsEmpty());
  EXPECT_FALSE(read->searcher_events_kept);
  ASSERT_TRUE(WriteFileAtomically(path, "[1, 2").ok());
  EXPECT_THAT(ReadExperimentRecord(path).status().message(), HasSubstr(path));
}

}  // namespace
}  // namespace cohort::orchestrator_test
