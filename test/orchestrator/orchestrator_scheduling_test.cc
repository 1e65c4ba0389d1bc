// The Orchestrator registering agents and scheduling trials: the Ack correlated with the hello,
// the agent table, refusals of unregistered agents, of a sender that is not the connection and of
// an agent the admission rule refuses; a grid search on a 2-slot agent (two tasks at a time, the
// others queued with a reason, each task's config, completion); the max_concurrent_trials limit;
// several experiments sharing an agent; the scaling comparison with a one-slot experiment; refused
// submissions (unschedulable, invalid field, relative entrypoint); mixed GPU models warned at
// placement; an adaptive ASHA search to completion with a promoted trial resuming its checkpoint.
#include "test/orchestrator/orchestrator_fixture.h"

namespace cohort::orchestrator_test {
namespace {

using ::testing::Contains;

// ---------------------------------------------------------------- registration

TEST_F(OrchestratorTest, HelloIsAcknowledgedAndTheAgentListed) {
  const uint64_t hello_id = Register("agent-1", 3);

  ASSERT_THAT(outbox_.sent(), SizeIs(1));
  const SentMessage& answer = outbox_.sent()[0];
  EXPECT_EQ(answer.agent_id, "agent-1");
  EXPECT_TRUE(std::holds_alternative<Ack>(answer.message));
  EXPECT_EQ(answer.correlation_id, hello_id);

  const std::vector<AgentRow> agents = Agents();
  ASSERT_THAT(agents, SizeIs(1));
  EXPECT_EQ(agents[0].agent_id, "agent-1");
  EXPECT_EQ(agents[0].hostname, "host-of-agent-1");
  EXPECT_EQ(agents[0].slots, 3u);
  EXPECT_EQ(agents[0].busy_slots, 0u);
  EXPECT_TRUE(agents[0].connected);
  EXPECT_DOUBLE_EQ(agents[0].last_seen_unix_time, clock_.UnixSeconds());
}

TEST_F(OrchestratorTest, UnregisteredAgentIsToldToSayHello) {
  const uint64_t heartbeat_id = FromAgent("stranger", AgentHeartbeat{"stranger", 0, 0, {}});

  ASSERT_THAT(outbox_.sent(), SizeIs(1));
  const SentMessage& answer = outbox_.sent()[0];
  EXPECT_EQ(answer.agent_id, "stranger");
  EXPECT_EQ(answer.correlation_id, heartbeat_id);
  ASSERT_TRUE(std::holds_alternative<ErrorReply>(answer.message));
  EXPECT_EQ(std::get<ErrorReply>(answer.message).code, ControlErrorCode::kNotRegistered);
  EXPECT_THAT(Agents(), IsEmpty());
}

TEST_F(OrchestratorTest, SenderOtherThanTheConnectionIsRefused) {
  // A hello claiming another agent's name registers nobody.
  const uint64_t hello_id = FromAgent("agent-1", Hello("agent-2", 2), 0, "agent-2");
  ASSERT_THAT(outbox_.sent(), SizeIs(1));
  EXPECT_EQ(outbox_.sent()[0].correlation_id, hello_id);
  ASSERT_TRUE(std::holds_alternative<ErrorReply>(outbox_.sent()[0].message));
  EXPECT_EQ(std::get<ErrorReply>(outbox_.sent()[0].message).code,
            ControlErrorCode::kInvalidRequest);
  EXPECT_THAT(std::get<ErrorReply>(outbox_.sent()[0].message).message, HasSubstr("agent-2"));
  EXPECT_THAT(Agents(), IsEmpty());

  // A registered agent's connection speaking for another is refused too, and changes nothing.
  Register("agent-1", 1);
  Submit(SingleYaml(1));
  ASSERT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  const uint64_t task_id = StartTasksSentTo("agent-1")[0].task_id;
  const size_t before = outbox_.sent().size();
  const uint64_t status_id =
      FromAgent("agent-1", TaskStatus{task_id, TaskState::kRunning, {}}, 0, "agent-9");
  ASSERT_THAT(outbox_.sent(), SizeIs(before + 1));
  EXPECT_EQ(outbox_.sent().back().correlation_id, status_id);
  EXPECT_TRUE(std::holds_alternative<ErrorReply>(outbox_.sent().back().message));
  const std::vector<TaskRow> tasks = Tasks();
  ASSERT_THAT(tasks, SizeIs(1));
  EXPECT_EQ(tasks[0].state, TaskRowState::kStarting);
}

TEST_F(OrchestratorTest, AnAgentTheAdmissionRuleRefusesIsAnsweredWhyAndTakesNothing) {
  OrchestratorOptions options = Options(folder_.path());
  std::vector<std::string> asked;
  options.admit_agent = [&asked](const std::string& agent_id) {
    asked.push_back(agent_id);
    return agent_id == "rank-0" ? absl::OkStatus()
                                : absl::FailedPreconditionError("no rank of this 1-rank launch");
  };
  RecordingOutbox outbox;
  Orchestrator admitting(options, outbox, clock_);
  HelloTo(admitting, "rank-2", 1);
  ASSERT_THAT(outbox.sent(), SizeIs(1));
  EXPECT_EQ(outbox.sent()[0].agent_id, "rank-2");
  EXPECT_EQ(outbox.sent()[0].correlation_id, 1u);  // the hello's: the agent matches its hello
  ASSERT_TRUE(std::holds_alternative<ErrorReply>(outbox.sent()[0].message));
  EXPECT_EQ(std::get<ErrorReply>(outbox.sent()[0].message).code, ControlErrorCode::kInvalidRequest);
  EXPECT_EQ(std::get<ErrorReply>(outbox.sent()[0].message).message,
            "no rank of this 1-rank launch");
  std::vector<std::string> notices;
  for (const OrchestratorEvent& event : admitting.TakeEvents()) {
    if (event.level == OrchestratorEvent::Level::kNotice) notices.push_back(event.line);
  }
  EXPECT_THAT(
      notices,
      ElementsAre("refused agent rank-2 (on host-of-rank-2): no rank of this 1-rank launch"));
  const ClientMessage listed = admitting.Query(ListAgents{});
  EXPECT_THAT(std::get<AgentTable>(listed).agents, IsEmpty());
  // Refused again as it tries again, but told once.
  HelloTo(admitting, "rank-2", 1);
  ASSERT_THAT(outbox.sent(), SizeIs(2));
  EXPECT_TRUE(std::holds_alternative<ErrorReply>(outbox.sent()[1].message));
  for (const OrchestratorEvent& event : admitting.TakeEvents()) {
    EXPECT_NE(event.level, OrchestratorEvent::Level::kNotice) << event.line;
  }

  // The admitted one registers.
  HelloTo(admitting, "rank-0", 1);
  EXPECT_THAT(asked, ElementsAre("rank-2", "rank-2", "rank-0"));
  ASSERT_THAT(outbox.sent(), SizeIs(3));
  EXPECT_TRUE(std::holds_alternative<Ack>(outbox.sent()[2].message));
  EXPECT_THAT(std::get<AgentTable>(admitting.Query(ListAgents{})).agents, SizeIs(1));
}

// ---------------------------------------------------------------- scheduling

TEST_F(OrchestratorTest, GridSearchRunsTwoTrialsAtATimeOnTwoSlots) {
  Register("agent-1", 2);
  const uint64_t experiment_id = Submit(GridYaml(10));
  ASSERT_NE(experiment_id, 0u);

  // Two tasks go out at once, on distinct slots; the other two wait naming the busy agent.
  std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  EXPECT_NE(starts[0].ranks.at(0).slot_index, starts[1].ranks.at(0).slot_index);
  const std::vector<TaskRow> queued = TasksIn(TaskRowState::kQueued);
  ASSERT_THAT(queued, SizeIs(2));
  for (const TaskRow& row : queued) {
    EXPECT_THAT(row.reason, HasSubstr("agent-1"));
    EXPECT_THAT(row.agents, IsEmpty());
  }
  const std::vector<TaskRow> starting = TasksIn(TaskRowState::kStarting);
  ASSERT_THAT(starting, SizeIs(2));
  for (const TaskRow& row : starting) {
    EXPECT_THAT(row.agents, ElementsAre("agent-1"));
    EXPECT_TRUE(row.reason.empty());
  }
  EXPECT_EQ(Agents().at(0).busy_slots, 2u);
  EXPECT_THAT(Agents().at(0).task_ids, SizeIs(2));

  // Every StartTask carries the trial's own config, trained to the target on one slot.
  std::set<std::pair<std::string, int64_t>> grid;
  std::set<uint64_t> handled;
  for (size_t round = 0; round < 8 && handled.size() < 4; ++round) {
    for (const StartTask& start : StartTasksSentTo("agent-1")) {
      if (handled.count(start.task_id) > 0) continue;
      EXPECT_LE(PlacedTaskCount(), 2u);
      EXPECT_EQ(start.experiment_id, experiment_id);
      EXPECT_EQ(start.attempt, 0u);
      EXPECT_EQ(start.world_size, 1u);
      EXPECT_EQ(start.cross_size, 1u);
      EXPECT_EQ(start.worker.plugin_path, kEntrypoint);
      EXPECT_TRUE(start.worker.resume_checkpoint_id.empty());
      ASSERT_THAT(start.ranks, SizeIs(1));
      EXPECT_EQ(start.ranks[0].rank, 0u);
      EXPECT_EQ(start.ranks[0].local_rank, 0u);
      EXPECT_LT(start.ranks[0].slot_index, 2u);

      absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(start.worker.config_yaml);
      ASSERT_TRUE(config.ok()) << config.status();
      EXPECT_EQ(config->searcher.max_length.unit, LengthUnit::kBatches);
      EXPECT_EQ(config->searcher.max_length.value, 10u);
      EXPECT_EQ(config->entrypoint, kEntrypoint);
      EXPECT_EQ(config->experiment_seed, 42u);
      absl::StatusOr<const std::string*> optimizer = config->hyperparameters.GetString("optimizer");
      absl::StatusOr<int64_t> hidden = config->hyperparameters.GetInt("hidden_size");
      ASSERT_TRUE(optimizer.ok()) << optimizer.status();
      ASSERT_TRUE(hidden.ok()) << hidden.status();
      grid.emplace(**optimizer, *hidden);
      EXPECT_EQ(config->hyperparameters.GetDouble("learning_rate").value_or(0), 0.01);

      const TrialSummary trial = TrialOf(experiment_id, start.trial_id);
      EXPECT_THAT(trial.hyperparameters_json, HasSubstr(**optimizer));
      EXPECT_EQ(trial.state, TrialState::kRunning);
      EXPECT_EQ(trial.task_id, start.task_id);

      handled.insert(start.task_id);
      const size_t starts_before = StartTasksSentTo("agent-1").size();
      TrainToTarget(start.task_id, 0.5);
      EXPECT_LE(PlacedTaskCount(), 2u);
      // A freed slot is taken at once while trials are waiting.
      if (handled.size() <= 2) {
        EXPECT_EQ(StartTasksSentTo("agent-1").size(), starts_before + 1);
      }
    }
  }
  EXPECT_THAT(grid, UnorderedElementsAre(std::pair<std::string, int64_t>{"sgd", 32},
                                         std::pair<std::string, int64_t>{"sgd", 64},
                                         std::pair<std::string, int64_t>{"adam", 32},
                                         std::pair<std::string, int64_t>{"adam", 64}));
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(4));

  const ExperimentDescription description = Describe(experiment_id);
  EXPECT_EQ(description.summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(description.summary.trials, 4u);
  EXPECT_EQ(description.summary.completed_trials, 4u);
  EXPECT_EQ(description.summary.active_trials, 0u);
  EXPECT_DOUBLE_EQ(description.summary.progress, 1.0);
  EXPECT_GT(description.summary.ended_unix_time, 0);
  for (const TrialSummary& trial : description.trials) {
    EXPECT_EQ(trial.state, TrialState::kCompleted);
    EXPECT_EQ(trial.batches_trained, 10u);
    EXPECT_TRUE(trial.has_best_metric);
    EXPECT_DOUBLE_EQ(trial.best_metric, 0.5);
    EXPECT_EQ(trial.task_id, 0u);
  }
  EXPECT_THAT(Tasks(), IsEmpty());
  EXPECT_EQ(Agents().at(0).busy_slots, 0u);
  EXPECT_TRUE(orchestrator_.Idle());
}

// A grid range that gives fewer values than its count: the submission is told, and the grid has
// the values there are (one trial, not three).
TEST_F(OrchestratorTest, AGridCountTheRangeCannotGiveIsAWarning) {
  Register("agent-1", 4);
  std::string yaml = GridYaml(6);
  yaml.replace(yaml.find("  learning_rate: 0.01\n"), std::string("  learning_rate: 0.01\n").size(),
               "  learning_rate: {type: double, minval: 0.01, maxval: 0.01, count: 3}\n");
  const ClientMessage reply = orchestrator_.OnClientRequest(SubmitExperiment{yaml});
  ASSERT_TRUE(std::holds_alternative<ExperimentSubmitted>(reply));
  EXPECT_THAT(std::get<ExperimentSubmitted>(reply).warnings,
              Contains("hyperparameters.learning_rate: count 3, but its range gives 1 distinct "
                       "value (0.01): the grid takes it once"));
  EXPECT_EQ(Describe(std::get<ExperimentSubmitted>(reply).experiment_id).trials.size(), 4u);
}

TEST_F(OrchestratorTest, MaxConcurrentTrialsLimitsTasksToOne) {
  Register("agent-1", 4);
  const std::string yaml = R"(name: one-at-a-time
entrypoint: /opt/plugins/libmlp.so
hyperparameters:
  global_batch_size: 16
  optimizer:
    type: categorical
    vals: [sgd, adam, adagrad]
searcher:
  name: grid
  metric: validation_loss
  max_concurrent_trials: 1
  max_length:
    batches: 6
reproducibility:
  experiment_seed: 3
)";
  const uint64_t experiment_id = Submit(yaml);
  ASSERT_NE(experiment_id, 0u);

  std::set<uint64_t> trials;
  for (size_t trained = 0; trained < 3; ++trained) {
    const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
    ASSERT_THAT(starts, SizeIs(trained + 1));
    // One task exists at a time, although three slots are idle.
    EXPECT_THAT(Tasks(), SizeIs(1));
    EXPECT_EQ(Agents().at(0).busy_slots, 1u);
    trials.insert(starts.back().trial_id);
    TrainToTarget(starts.back().task_id, 0.1 * static_cast<double>(trained + 1));
  }
  EXPECT_THAT(trials, SizeIs(3));
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(3));
  const ExperimentDescription description = Describe(experiment_id);
  EXPECT_EQ(description.summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(description.summary.completed_trials, 3u);
}

// Three 1-slot experiments and a 2-slot one (5 slots) fill a 5-slot agent in one placement round;
// a fifth experiment waits.
TEST_F(OrchestratorTest, ExperimentsShareAnAgentOnDistinctSlots) {
  // Submitted before any agent: accepted with a warning, waiting for one.
  const ClientMessage reply = orchestrator_.OnClientRequest(SubmitExperiment{SingleYaml(1)});
  ASSERT_TRUE(std::holds_alternative<ExperimentSubmitted>(reply));
  EXPECT_THAT(std::get<ExperimentSubmitted>(reply).warnings,
              ElementsAre(HasSubstr("no agent is connected")));
  Submit(SingleYaml(2));
  Submit(SingleYaml(1));
  Submit(SingleYaml(1));
  ASSERT_THAT(TasksIn(TaskRowState::kQueued), SizeIs(4));
  EXPECT_THAT(TasksIn(TaskRowState::kQueued)[0].reason, HasSubstr("no agent"));
  EXPECT_THAT(AllStartTasks(), IsEmpty());

  Register("agent-1", 5);
  const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(4));
  std::set<uint32_t> slots;
  std::set<uint64_t> experiments;
  for (const StartTask& start : starts) {
    EXPECT_EQ(start.world_size, start.ranks.size());
    for (const RankAssignment& rank : start.ranks) {
      EXPECT_TRUE(slots.insert(rank.slot_index).second) << "slot " << rank.slot_index << " twice";
    }
    experiments.insert(start.experiment_id);
  }
  EXPECT_THAT(slots, ElementsAre(0u, 1u, 2u, 3u, 4u));
  EXPECT_THAT(experiments, SizeIs(4));
  EXPECT_THAT(TasksIn(TaskRowState::kQueued), IsEmpty());

  const uint64_t fifth = Submit(SingleYaml(1));
  ASSERT_NE(fifth, 0u);
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(4));
  const std::vector<TaskRow> queued = TasksIn(TaskRowState::kQueued);
  ASSERT_THAT(queued, SizeIs(1));
  EXPECT_EQ(queued[0].experiment_id, fifth);
  EXPECT_THAT(queued[0].reason, HasSubstr("agent-1"));
  EXPECT_EQ(Agents().at(0).busy_slots, 5u);
}

TEST_F(OrchestratorTest, AWiderExperimentIsComparedWithAOneSlotOneOfTheSameConfig) {
  Register("agent-1", 5);
  const uint64_t one = Submit(SingleYaml(1));
  const uint64_t two = Submit(SingleYaml(2));
  std::string other_yaml = SingleYaml(2);
  other_yaml.replace(other_yaml.find("0.01"), 4, "0.02");  // another learning rate
  const uint64_t other = Submit(other_yaml);
  std::map<uint64_t, uint64_t> task_of;  // experiment -> task
  for (const StartTask& start : StartTasksSentTo("agent-1")) {
    Accept(start.task_id);
    Running(start.task_id);
    task_of[start.experiment_id] = start.task_id;
  }
  ASSERT_THAT(task_of, SizeIs(3));

  Train(task_of[two], 10, 1500);  // no baseline has a throughput yet
  Train(task_of[one], 10, 1000);
  Train(task_of[two], 20, 1600);
  Train(task_of[other], 10, 1700);  // its one-slot twin never ran
  EXPECT_EQ(TrialOf(one, 1).scaling_efficiency, 0.0);
  const TrialSummary wide = Describe(two).trials.at(0);
  EXPECT_DOUBLE_EQ(wide.scaling_efficiency, 0.8);
  EXPECT_EQ(wide.baseline_experiment_id, one);
  EXPECT_EQ(Describe(other).trials.at(0).scaling_efficiency, 0.0);

  std::ifstream metrics_file(
      absl::StrCat(ExperimentFolder(two), "/trials/", wide.trial_id, "/metrics.jsonl"));
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(metrics_file, line)) lines.push_back(line);
  ASSERT_THAT(lines, SizeIs(2));
  EXPECT_THAT(lines[0], Not(HasSubstr("scaling_efficiency")));
  EXPECT_THAT(lines[1], HasSubstr("\"scaling_efficiency\":0.8"));
}

TEST_F(OrchestratorTest, RefusedSubmissionsSayWhy) {
  Register("agent-1", 8);
  Register("agent-2", 8);

  const ClientError unschedulable = SubmitRefused(SingleYaml(12));
  EXPECT_EQ(unschedulable.code, ClientErrorCode::kUnschedulable);
  EXPECT_THAT(unschedulable.message, HasSubstr("12 is not a multiple of 8"));

  std::string no_metric = SingleYaml(1);
  no_metric.erase(no_metric.find("  metric: validation_loss\n"),
                  std::string("  metric: validation_loss\n").size());
  const ClientError invalid = SubmitRefused(no_metric);
  EXPECT_EQ(invalid.code, ClientErrorCode::kInvalidRequest);
  EXPECT_THAT(invalid.message, HasSubstr("searcher.metric"));

  std::string zero_slots = SingleYaml(1);
  zero_slots.replace(zero_slots.find("slots_per_trial: 1"), 18, "slots_per_trial: 0");
  const ClientError no_slots = SubmitRefused(zero_slots);
  EXPECT_EQ(no_slots.code, ClientErrorCode::kInvalidRequest);
  EXPECT_THAT(no_slots.message, HasSubstr("resources.slots_per_trial"));

  std::string relative = SingleYaml(1);
  relative.replace(relative.find(kEntrypoint), std::string(kEntrypoint).size(), "libmlp.so");
  const ClientError not_absolute = SubmitRefused(relative);
  EXPECT_EQ(not_absolute.code, ClientErrorCode::kInvalidRequest);
  EXPECT_THAT(not_absolute.message, HasSubstr("entrypoint"));

  // Each agent's workers would take it from their own working folder.
  const ClientError relative_storage = SubmitRefused(
      SingleYaml(1) + "checkpoint_storage:\n  type: shared_fs\n  host_path: relstore\n");
  EXPECT_EQ(relative_storage.code, ClientErrorCode::kInvalidRequest);
  EXPECT_THAT(relative_storage.message,
              HasSubstr("checkpoint_storage.host_path: expected an absolute path"));
  EXPECT_THAT(relative_storage.message, HasSubstr("got 'relstore'"));
  EXPECT_FALSE(std::filesystem::exists("relstore"));

  // Nothing was created.
  const ClientMessage list = orchestrator_.OnClientRequest(ListExperiments{});
  ASSERT_TRUE(std::holds_alternative<ExperimentList>(list));
  EXPECT_THAT(std::get<ExperimentList>(list).experiments, IsEmpty());
  EXPECT_THAT(Tasks(), IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(ExperimentFolder(1)));
}

// A trial placed on GPUs of two models runs at the slower's pace: the placement says so.
TEST_F(OrchestratorTest, MixedGpuModelsAreWarnedAtPlacement) {
  AgentHello hello = Hello("agent-1", 0);
  hello.slots = {AgentSlot{0, SlotKind::kGpu, 0, "NVIDIA H100"},
                 AgentSlot{1, SlotKind::kGpu, 1, "NVIDIA A100"}};
  FromAgent("agent-1", hello);
  orchestrator_.TakeEvents();
  Submit(SingleYaml(2));
  orchestrator_.Tick();
  const std::vector<OrchestratorEvent> events = orchestrator_.TakeEvents();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const OrchestratorEvent& event) {
    return event.level == OrchestratorEvent::Level::kNotice &&
           event.line.find("NVIDIA A100 (agent-1 slot 1); NVIDIA H100 (agent-1 slot 0)") !=
               std::string::npos &&
           event.line.find("slowest GPU") != std::string::npos;
  })) << "no warning about mixed GPU models";
}

TEST_F(OrchestratorTest, IdenticalGpusAreNotWarned) {
  AgentHello hello = Hello("agent-1", 0);
  hello.slots = {AgentSlot{0, SlotKind::kGpu, 0, "NVIDIA H100"},
                 AgentSlot{1, SlotKind::kGpu, 1, "NVIDIA H100"}};
  FromAgent("agent-1", hello);
  Submit(SingleYaml(2));
  orchestrator_.Tick();
  for (const OrchestratorEvent& event : orchestrator_.TakeEvents()) {
    EXPECT_EQ(event.line.find("slowest GPU"), std::string::npos) << event.line;
  }
}

// ---------------------------------------------------------------- adaptive search

TEST_F(OrchestratorTest, AdaptiveAshaRunsToCompletionResumingPromotedTrials) {
  Register("agent-1", 4);
  const uint64_t experiment_id = Submit(AshaYaml());
  ASSERT_NE(experiment_id, 0u);

  // Every task trains to what it was asked, checkpoints there and validates; the loss is the
  // learning rate, so the searcher's ranking is known.
  std::set<uint64_t> handled;
  std::map<uint64_t, std::string> checkpoint_of_task;
  for (size_t round = 0; round < 20; ++round) {
    bool progressed = false;
    for (const StartTask& start : StartTasksSentTo("agent-1")) {
      if (handled.count(start.task_id) > 0) continue;
      handled.insert(start.task_id);
      progressed = true;
      absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(start.worker.config_yaml);
      ASSERT_TRUE(config.ok()) << config.status();
      const uint64_t target = config->searcher.max_length.value;
      const double loss = config->hyperparameters.GetDouble("learning_rate").value_or(1);
      const std::string checkpoint = absl::StrCat("trial-", start.trial_id, "-at-", target);
      Accept(start.task_id);
      Running(start.task_id);
      Checkpoint(start.task_id, checkpoint, target);
      Validate(start.task_id, target, loss);
      checkpoint_of_task[start.task_id] = checkpoint;
      ExitAll(start.task_id, 0);
    }
    if (!progressed) break;
  }

  const ExperimentDescription description = Describe(experiment_id);
  EXPECT_EQ(description.summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(description.summary.trials, 4u);
  EXPECT_EQ(description.summary.errored_trials, 0u);
  EXPECT_DOUBLE_EQ(description.summary.progress, 1.0);
  EXPECT_THAT(Tasks(), IsEmpty());
  EXPECT_TRUE(orchestrator_.Idle());

  // A trial trained twice was promoted: its second task resumes the first one's checkpoint and
  // trains on to the top rung.
  std::map<uint64_t, std::vector<StartTask>> starts_of_trial;
  for (const StartTask& start : StartTasksSentTo("agent-1")) {
    starts_of_trial[start.trial_id].push_back(start);
  }
  size_t promoted = 0;
  for (const auto& [trial_id, starts] : starts_of_trial) {
    EXPECT_TRUE(starts[0].worker.resume_checkpoint_id.empty());
    EXPECT_EQ(starts[0].attempt, 0u);
    if (starts.size() < 2) continue;
    ++promoted;
    ASSERT_THAT(starts, SizeIs(2));
    EXPECT_EQ(starts[1].attempt, 1u);
    EXPECT_EQ(starts[1].worker.resume_checkpoint_id, checkpoint_of_task[starts[0].task_id]);
    EXPECT_LT(TargetOf(starts[0]), TargetOf(starts[1]));
    EXPECT_EQ(TargetOf(starts[1]), 8u);
    EXPECT_EQ(TrialOf(experiment_id, trial_id).batches_trained, 8u);
  }
  EXPECT_GE(promoted, 1u);
  for (const TrialSummary& trial : description.trials) {
    EXPECT_EQ(trial.state, TrialState::kCompleted) << "trial " << trial.trial_id;
    EXPECT_EQ(trial.restarts, 0u);
  }
}

// A search over global_batch_size with max_length in records: each trial trains the batches of
// its own size that hold the records (Determined's adaptive examples search the batch size), the
// searcher hears back in records, and progress counts records.
TEST_F(OrchestratorTest, ASearchOverTheBatchSizeTrainsTheSameRecordsInEachTrial) {
  Register("agent-1", 2);
  const uint64_t id = Submit(R"(name: batch-search
entrypoint: /opt/plugins/libmlp.so
hyperparameters:
  global_batch_size:
    type: categorical
    vals: [16, 64]
  learning_rate: 0.01
resources:
  slots_per_trial: 1
searcher:
  name: grid
  metric: validation_loss
  max_length:
    records: 6400
reproducibility:
  experiment_seed: 3
)");
  const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
  ASSERT_THAT(starts, SizeIs(2));
  std::map<int64_t, uint64_t> target_by_batch;
  for (const StartTask& start : starts) {
    absl::StatusOr<ExperimentConfig> trial = ParseExperimentConfig(start.worker.config_yaml);
    ASSERT_TRUE(trial.ok()) << trial.status();
    target_by_batch[static_cast<int64_t>(trial->global_batch_size)] = TargetOf(start);
  }
  EXPECT_THAT(target_by_batch, ElementsAre(std::pair<const int64_t, uint64_t>{16, 400},
                                           std::pair<const int64_t, uint64_t>{64, 100}));
  // Half way through each trial's records, progress is half.
  for (const StartTask& start : starts) {
    Accept(start.task_id);
    Running(start.task_id);
    Train(start.task_id, TargetOf(start) / 2, 1000);
  }
  EXPECT_EQ(Describe(id).summary.progress, 0.5);
  for (const StartTask& start : starts) {
    Validate(start.task_id, TargetOf(start), 0.5);
    ExitAll(start.task_id, 0);
  }
  EXPECT_EQ(Describe(id).summary.state, ExperimentState::kCompleted);
  EXPECT_EQ(Describe(id).summary.completed_trials, 2u);
}

// Settings accepted for Determined's sake that change nothing here are said so at submission, and
// a global batch that the slots do not divide says what each slot trains.
TEST_F(OrchestratorTest, WarnsOfSettingsThatChangeNothingAndOfARemainderDropped) {
  Register("agent-1", 2);
  std::string yaml = SingleYaml(2);
  yaml.replace(yaml.find("global_batch_size: 32"), 21, "global_batch_size: 3");
  const ClientMessage reply = orchestrator_.OnClientRequest(
      SubmitExperiment{yaml + "optimizations:\n  mixed_precision: O2\n"});
  const auto* submitted = std::get_if<ExperimentSubmitted>(&reply);
  ASSERT_NE(submitted, nullptr) << ClientMessageName(reply);
  EXPECT_THAT(submitted->warnings,
              Contains(HasSubstr("optimizations.mixed_precision O2 changes nothing")));
  EXPECT_THAT(submitted->warnings,
              Contains(HasSubstr("each slot trains 1 record, so a global batch holds 2")));
}

}  // namespace
}  // namespace cohort::orchestrator_test
