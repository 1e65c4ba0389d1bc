// What the Orchestrator keeps of what trials report: trial logs (numbered, filtered, ending with
// the trial) and the state directory's files, the agent's own log lines, progress, every agent's
// GPU readings joined into the training report, and those readings through metrics.jsonl; reports
// sent again (an Ack lost) acknowledged and recorded once.
#include "test/orchestrator/orchestrator_fixture.h"

namespace cohort::orchestrator_test {
namespace {

// ---------------------------------------------------------------- logs and files

TEST_F(OrchestratorTest, LogsAreNumberedFilteredAndEndWithTheTrial) {
  Register("agent-1", 2);
  const uint64_t experiment_id = Submit(SingleYaml(2, 10));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const StartTask start = StartTasksSentTo("agent-1")[0];
  const uint64_t trial_id = start.trial_id;
  Accept(start.task_id);
  Running(start.task_id);

  LogBatch batch;
  batch.task_id = start.task_id;
  batch.lines = {LogLine{0, LogStream::kStdout, 1.0, "rank zero starts"},
                 LogLine{1, LogStream::kStdout, 1.0, "rank one starts"},
                 LogLine{1, LogStream::kStderr, 2.0, "rank one warns"},
                 LogLine{0, LogStream::kStdout, 3.0, "rank zero ends"}};
  FromAgent("agent-1", batch);

  // The orchestrator's line on how the task starts, then the ranks' lines in order.
  TrialLogs all = Logs(trial_id, -1, 0, 0);
  EXPECT_EQ(all.trial_id, trial_id);
  ASSERT_THAT(all.lines, SizeIs(5));
  for (size_t index = 0; index < all.lines.size(); ++index) {
    EXPECT_EQ(all.lines[index].sequence, index + 1);
    EXPECT_EQ(all.lines[index].attempt, 0u);
  }
  EXPECT_EQ(all.lines[0].text,
            absl::StrCat("[cohort] task ", start.task_id, " trains to batch 10 on agent-1"));
  EXPECT_EQ(all.lines[3].text, "rank one warns");
  EXPECT_TRUE(all.lines[3].stderr_stream);
  EXPECT_FALSE(all.trial_ended);

  const TrialLogs after = Logs(trial_id, -1, 3, 0);
  ASSERT_THAT(after.lines, SizeIs(2));
  EXPECT_EQ(after.lines[0].sequence, 4u);
  EXPECT_EQ(after.lines[1].text, "rank zero ends");

  const TrialLogs rank_one = Logs(trial_id, 1, 0, 0);
  ASSERT_THAT(rank_one.lines, SizeIs(2));
  EXPECT_EQ(rank_one.lines[0].sequence, 3u);
  EXPECT_EQ(rank_one.lines[1].sequence, 4u);
  for (const TrialLogLine& line : rank_one.lines) EXPECT_EQ(line.rank, 1u);

  const TrialLogs first_two = Logs(trial_id, -1, 0, 2);
  ASSERT_THAT(first_two.lines, SizeIs(2));
  EXPECT_EQ(first_two.lines[1].sequence, 2u);

  // Each metrics report adds a line of the orchestrator's, so a followed log shows the trial move.
  Validate(start.task_id, 10, 0.25);
  const TrialLogs validated = Logs(trial_id, -1, 5, 0);
  ASSERT_THAT(validated.lines, SizeIs(1));
  EXPECT_EQ(validated.lines[0].text,
            "[cohort] validation after 10 batches: validation_loss=0.25 accuracy=0.75");
  EXPECT_EQ(validated.lines[0].rank, 0u);
  ExitAll(start.task_id, 0);
  ASSERT_EQ(Describe(experiment_id).summary.state, ExperimentState::kCompleted);

  // Ended, but a reply cut short by max_lines has not delivered everything yet.
  const TrialLogs partial = Logs(trial_id, -1, 0, 2);
  EXPECT_THAT(partial.lines, SizeIs(2));
  EXPECT_FALSE(partial.trial_ended);
  const TrialLogs rest = Logs(trial_id, -1, partial.lines.back().sequence, 4);
  ASSERT_THAT(rest.lines, SizeIs(4));
  EXPECT_EQ(rest.lines.back().sequence, 6u);
  EXPECT_TRUE(rest.trial_ended);
  EXPECT_TRUE(Logs(trial_id, -1, 6, 0).trial_ended);

  const ClientMessage unknown = orchestrator_.OnClientRequest(TrialLogsRequest{999, -1, 0, 0});
  ASSERT_TRUE(std::holds_alternative<ClientError>(unknown));
  EXPECT_EQ(std::get<ClientError>(unknown).code, ClientErrorCode::kNotFound);

  const std::string experiment_folder = ExperimentFolder(experiment_id);
  const std::string trial_folder = absl::StrCat(experiment_folder, "/trials/", trial_id);
  EXPECT_TRUE(std::filesystem::exists(experiment_folder + "/config.yaml"));
  EXPECT_TRUE(std::filesystem::exists(experiment_folder + "/experiment.json"));
  EXPECT_TRUE(std::filesystem::exists(trial_folder + "/metrics.jsonl"));
  ASSERT_TRUE(std::filesystem::exists(trial_folder + "/log.txt"));
  absl::StatusOr<std::string> log = ReadWholeFile(trial_folder + "/log.txt");
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(*log, HasSubstr("rank one warns"));
  EXPECT_THAT(*log, HasSubstr("rank zero ends"));
  EXPECT_THAT(*log, HasSubstr("[cohort] validation after 10 batches"));
  absl::StatusOr<std::string> metrics = ReadWholeFile(trial_folder + "/metrics.jsonl");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(*metrics, HasSubstr("validation_loss"));
  absl::StatusOr<std::string> record = ReadWholeFile(experiment_folder + "/experiment.json");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_THAT(*record, HasSubstr(R"("state":"COMPLETED")"));
}

TEST_F(OrchestratorTest, AgentLinesAreNoticesAndMarkedInTheTrialLog) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1));
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  Accept(start.task_id);
  Running(start.task_id);
  orchestrator_.TakeEvents();
  FromAgent("agent-1",
            LogBatch{start.task_id,
                     {{0, LogStream::kStdout, 1.7e9, "batch 5"},
                      {0, LogStream::kAgent, 1.7e9, "warning: rank 0 has sent no heartbeat"}}});

  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].level, OrchestratorEvent::Level::kNotice);
  EXPECT_EQ(events[0].line,
            absl::StrCat("trial ", start.trial_id, ": warning: rank 0 has sent no heartbeat"));
  const std::string log =
      Slurp(absl::StrCat(ExperimentFolder(experiment_id), "/trials/", start.trial_id, "/log.txt"));
  // Under the rank it is about, so a restarted orchestrator reads it back as that rank's.
  EXPECT_THAT(
      log, HasSubstr("[rank 0] batch 5\n[rank 0] [agent] warning: rank 0 has sent no heartbeat"));
  const TrialLogs logs = Logs(start.trial_id, -1, 0, 10);
  ASSERT_THAT(logs.lines, SizeIs(3));  // after the orchestrator's line on the task's start
  EXPECT_EQ(logs.lines[2].text, "[agent] warning: rank 0 has sent no heartbeat");
  EXPECT_TRUE(logs.lines[2].stderr_stream);
}

// A worker's own warning (a hyperparameter nothing read) reaches whoever follows the trial too;
// its other lines stay in the log.
TEST_F(OrchestratorTest, AWorkersWarningIsANotice) {
  Register("agent-1", 1);
  Submit(SingleYaml(1));
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  Accept(start.task_id);
  Running(start.task_id);
  orchestrator_.TakeEvents();
  FromAgent("agent-1", LogBatch{start.task_id,
                                {{0, LogStream::kStderr, 1.7e9,
                                  "warning: hyperparameter lr was "
                                  "not read"},
                                 {0, LogStream::kStderr, 1.7e9, "a warning: in the middle"}}});
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].level, OrchestratorEvent::Level::kNotice);
  EXPECT_EQ(events[0].line, absl::StrCat("trial ", start.trial_id,
                                         ": rank 0 warning: hyperparameter lr was not read"));
}

// A plugin's error lines are told as its warnings are, up to 20 a trial: one that logs an error
// every batch does not drown the console (its log keeps every line).
TEST_F(OrchestratorTest, APluginsErrorLinesAreNoticesUpToTwentyATrial) {
  const StartTask start = RunOneTrial(100).second;
  orchestrator_.TakeEvents();
  LogBatch batch{start.task_id, {}};
  for (int line = 1; line <= 25; ++line) {
    batch.lines.push_back(
        {1, LogStream::kStderr, 1.7e9, absl::StrCat("error: tiny: no data for batch ", line)});
  }
  FromAgent("agent-1", batch);
  std::vector<std::string> notices;
  for (const OrchestratorEvent& event : orchestrator_.TakeEvents()) {
    if (event.level == OrchestratorEvent::Level::kNotice) notices.push_back(event.line);
  }
  ASSERT_THAT(notices, SizeIs(21));
  EXPECT_EQ(notices[0],
            absl::StrCat("trial ", start.trial_id, ": rank 1 error: tiny: no data for batch 1"));
  EXPECT_EQ(notices[19],
            absl::StrCat("trial ", start.trial_id, ": rank 1 error: tiny: no data for batch 20"));
  EXPECT_EQ(notices[20],
            absl::StrCat("trial ", start.trial_id,
                         ": more warnings and errors than 20 in this attempt are in its "
                         "log only"));
}

// A training loss that is not finite is said once per trial, as a NaN validation is (it used to
// pass in silence: `loss nan` in the progress line, null in metrics.jsonl, a COMPLETED run).
TEST_F(OrchestratorTest, ANonFiniteTrainingLossIsSaidOnce) {
  const auto [experiment_id, start] = RunOneTrial(100);
  orchestrator_.TakeEvents();
  Train(start.task_id, 20, 100);
  Report(start.task_id, ReportKind::kTraining, 40, {{"loss", std::nan("")}}, 100);
  Report(start.task_id, ReportKind::kTraining, 60, {{"loss", std::nan("")}}, 100);
  std::vector<std::string> warnings;
  for (const OrchestratorEvent& event : orchestrator_.TakeEvents()) {
    if (event.level == OrchestratorEvent::Level::kNotice) warnings.push_back(event.line);
  }
  EXPECT_THAT(
      warnings,
      ElementsAre(absl::StrCat(
          "warning: trial ", start.trial_id,
          "'s training loss is nan in its report after batch 40 (over the batches since its "
          "report before: one of them or more): its training diverged, or its plugin computes "
          "the loss wrongly "
          "(optimizations.nonfinite_gradients: skip or fail guards "
          "the steps against non-finite gradients)")));
}

// A NaN validation beside a training loss still finite at its latest report may be the
// validation's own: said so, rather than only blamed on a diverged training.
TEST_F(OrchestratorTest, ANanValidationBesideAFiniteTrainingLossIsPutOnTheValidation) {
  const auto [experiment_id, start] = RunOneTrial(100);
  Report(start.task_id, ReportKind::kTraining, 20, {{"loss", 0.5}}, 100);
  orchestrator_.TakeEvents();
  Report(start.task_id, ReportKind::kValidation, 20, {{"loss", std::nan("")}}, 100);
  std::vector<std::string> warnings;
  for (const OrchestratorEvent& event : orchestrator_.TakeEvents()) {
    if (event.level == OrchestratorEvent::Level::kNotice) warnings.push_back(event.line);
  }
  EXPECT_THAT(warnings,
              ElementsAre(absl::StrCat("warning: trial ", start.trial_id,
                                       " validated validation_loss=nan after 20 batches: its "
                                       "training loss was finite at its latest report (0.5 after "
                                       "batch 20): the steps since diverged, or its evaluate_batch "
                                       "computes the NaN; a NaN is never its best validation")));
}

TEST_F(OrchestratorTest, ProgressCountsTheTrialsBatches) {
  const auto [experiment_id, start] = RunOneTrial(100);
  FromAgent("agent-1", TaskProgress{start.task_id, {start.trial_id, 37, 100, 37 * 32, 0.5, 900}});
  EXPECT_EQ(TrialOf(experiment_id, start.trial_id).batches_trained, 37u);
  EXPECT_THAT(SentTo<ErrorReply>("agent-1"), IsEmpty());
}

// A trial over two agents: the agent without rank 0 sends its GPU readings in its heartbeat, and
// the orchestrator adds them to the next training report rank 0's agent forwards, warning when
// the GPUs of both agents together are unbalanced.
TEST_F(OrchestratorTest, GpuReadingsOfEveryAgentJoinTheTrainingReport) {
  Register("agent-1", 1);
  Register("agent-2", 1);
  const uint64_t experiment_id = Submit(SingleYaml(2));
  ASSERT_THAT(StartTasksSentTo("agent-2"), SizeIs(1));
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  ASSERT_EQ(start.ranks.at(0).rank, 0u);
  orchestrator_.TakeEvents();

  AgentHeartbeat beat{"agent-2", clock_.UnixSeconds(), 1, {start.task_id}};
  beat.task_gpus = {{start.task_id, {{1, 0, "NVIDIA H100", 40, 1 << 20, 1 << 30}}}};
  FromAgent("agent-2", beat);
  MetricsReport report{start.trial_id,       ReportKind::kTraining, 10, 320,
                       clock_.UnixSeconds(), {{"loss", 1.0}}};
  report.gpus = {{0, 0, "NVIDIA H100", 98, 2 << 20, 1 << 30}};
  FromAgent("agent-1", TaskMetricsReport{start.task_id, report});
  report.batches = 20;
  FromAgent("agent-1", TaskMetricsReport{start.task_id, report});  // no heartbeat in between

  const std::string metrics = Slurp(
      absl::StrCat(ExperimentFolder(experiment_id), "/trials/", start.trial_id, "/metrics.jsonl"));
  const std::vector<std::string> lines = absl::StrSplit(metrics, '\n', absl::SkipEmpty());
  ASSERT_THAT(lines, SizeIs(2));
  absl::StatusOr<MetricsReport> first = ParseMetricsReportJson(lines[0], start.trial_id);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_THAT(first->gpus, SizeIs(2));
  EXPECT_EQ(first->gpus[0].rank, 0u);
  EXPECT_EQ(first->gpus[1], (GpuReading{1, 0, "NVIDIA H100", 40, 1 << 20, 1 << 30}));
  absl::StatusOr<MetricsReport> second = ParseMetricsReportJson(lines[1], start.trial_id);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(second->gpus, SizeIs(1));  // agent-2's readings went with the first report

  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_EQ(std::count_if(events.begin(), events.end(),
                          [](const OrchestratorEvent& event) {
                            return event.line.find(
                                       "unbalanced GPUs: rank 0 (GPU 0, NVIDIA H100) at 98%, "
                                       "rank 1 (GPU 0, NVIDIA H100) at 40%") != std::string::npos;
                          }),
            1);
}

// A training report's GPU readings go into metrics.jsonl and come back from it (a rewind rewrites
// the file from what it reads).
TEST(MetricsReportJsonTest, GpuReadingsRoundTrip) {
  MetricsReport report{4, ReportKind::kTraining, 100, 3200, 1.7e9, {{"loss", 0.5}}};
  report.gpus = {{0, 2, "NVIDIA H100 80GB HBM3", 97.25, uint64_t{40} << 30, uint64_t{80} << 30},
                 {1, 0, "NVIDIA H100 80GB HBM3", 60, 0, uint64_t{80} << 30}};
  const std::string line = MetricsReportJson(report);
  EXPECT_THAT(line,
              HasSubstr("\"gpus\":[{\"rank\":0,\"gpu\":2,\"name\":\"NVIDIA H100 80GB HBM3\""));
  absl::StatusOr<MetricsReport> back = ParseMetricsReportJson(line, 4);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->gpus, report.gpus);
}

// ---------------------------------------------------------------- reports sent again

// An agent sends again the reports whose Ack it may have lost with its connection: each is
// acknowledged again, and recorded once.
TEST_F(OrchestratorTest, AReportSentAgainIsAcknowledgedAndRecordedOnce) {
  const auto [experiment_id, start] = RunOneTrial(100);
  const std::string checkpoint = absl::StrCat("trial-", start.trial_id, "-batch-20");
  std::vector<uint64_t> report_ids;
  for (int round = 0; round < 2; ++round) {
    Train(start.task_id, 20, 100);
    report_ids.push_back(last_agent_message_id_);
    Validate(start.task_id, 20, 0.5);
    report_ids.push_back(last_agent_message_id_);
    Checkpoint(start.task_id, checkpoint, 20);
    report_ids.push_back(last_agent_message_id_);
  }
  std::set<uint64_t> acknowledged;
  for (const SentMessage& sent : outbox_.sent()) {
    if (sent.agent_id == "agent-1" && std::holds_alternative<Ack>(sent.message)) {
      acknowledged.insert(sent.correlation_id);
    }
  }
  for (const uint64_t id : report_ids) EXPECT_EQ(acknowledged.count(id), 1u) << "report " << id;
  EXPECT_THAT(RecordedReports(ExperimentFolder(experiment_id), start.trial_id),
              ElementsAre("T20", "V20"));
  const std::string record =
      Slurp(absl::StrCat(ExperimentFolder(experiment_id), "/experiment.json"));
  const std::string listed = absl::StrCat("\"id\":\"", checkpoint, "\"");
  ASSERT_THAT(record, HasSubstr(listed));
  EXPECT_EQ(record.find(listed), record.rfind(listed)) << "listed once: " << record;

  // An agent of an older minor keeps no report to send again: its reports get no Ack.
  DecodedControl older;
  older.version = ControlVersion{kControlProtocolMajor, kControlMinorWithAcknowledgedReports - 1};
  older.header = ControlHeader{++last_agent_message_id_, 0, "agent-1"};
  MetricsReport training;
  training.trial_id = start.trial_id;
  training.kind = ReportKind::kTraining;
  training.batches = 40;
  training.metrics = {{"loss", 0.4}};
  older.message = TaskMetricsReport{start.task_id, training};
  orchestrator_.OnAgentMessage("agent-1", older);
  EXPECT_FALSE(std::any_of(outbox_.sent().begin(), outbox_.sent().end(), [&](const SentMessage& m) {
    return m.correlation_id == older.header.message_id;
  }));
  EXPECT_THAT(RecordedReports(ExperimentFolder(experiment_id), start.trial_id),
              ElementsAre("T20", "V20", "T40"));
}

}  // namespace
}  // namespace cohort::orchestrator_test
