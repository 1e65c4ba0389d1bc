// Orchestrator, driven directly: the test plays the agents (OnAgentMessage), the clients
// (OnClientRequest) and time (a manual Clock with Tick), and reads what the orchestrator sends
// from a recording AgentOutbox.
//
// Covered: registration (Ack correlated with the hello, the agent table, refusals of unregistered
// agents and of a sender that is not the connection); a grid search on a 2-slot agent (two tasks
// at a time, the others queued with a reason, each task's config, completion); the
// max_concurrent_trials limit; several experiments sharing an agent; refused submissions
// (unschedulable, invalid field, relative entrypoint); restarts from the latest checkpoint up to
// max_restarts, and no restart for a failure before running; a task spanning two agents
// restarted on both after one rank failed; a task placed again without using a restart when its
// agent is lost, when its StartTask goes unanswered, or when its agent re-registers without it;
// killing an experiment; trial logs and the state directory's files; an adaptive ASHA search to
// completion with a promoted trial resuming its checkpoint; a crash before running restarted;
// progress and the agent's own log lines; a task its agent stopped placed again; a local submission
// (`cohort run`) keeping its record in the caller's folder, applying retention once completed, and
// resuming from its latest checkpoint; a new orchestrator on the same state directory continuing
// the active experiments and showing the ended ones; experiment.json read back
// (ReadExperimentRecord).
#include "runtime/orchestrator/orchestrator.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/base/clock.h"
#include "runtime/base/file_io.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/client/client_messages.h"
#include "runtime/config/experiment_config.h"
#include "runtime/control/control_messages.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/experiment_record_reader.h"
#include "runtime/record/run_folder.h"
#include "test/common/manual_clock.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

struct SentMessage {
  std::string agent_id;
  ControlMessage message;
  uint64_t correlation_id = 0;
  uint64_t message_id = 0;
};

// Keeps every message the orchestrator sends, numbering them 1, 2, 3, ...
class RecordingOutbox : public AgentOutbox {
 public:
  uint64_t Send(const std::string& agent_id, const ControlMessage& message,
                uint64_t correlation_id) override {
    sent_.push_back(SentMessage{agent_id, message, correlation_id, ++last_message_id_});
    return last_message_id_;
  }

  const std::vector<SentMessage>& sent() const { return sent_; }

 private:
  std::vector<SentMessage> sent_;
  uint64_t last_message_id_ = 0;
};

constexpr char kEntrypoint[] = "/opt/plugins/libmlp.so";

// A grid over optimizer x hidden_size (4 trials) training to `batches`.
std::string GridYaml(uint64_t batches) {
  return absl::StrCat(R"(name: grid-search
entrypoint: /opt/plugins/libmlp.so
hyperparameters:
  global_batch_size: 16
  learning_rate: 0.01
  optimizer:
    type: categorical
    vals: [sgd, adam]
  hidden_size:
    type: categorical
    vals: [32, 64]
resources:
  slots_per_trial: 1
searcher:
  name: grid
  metric: validation_loss
  max_length:
    batches: )",
                      batches, R"(
reproducibility:
  experiment_seed: 42
)");
}

// One trial (single searcher) of `slots` slots training to `batches`.
std::string SingleYaml(uint32_t slots, uint64_t batches = 10, uint32_t max_restarts = 5) {
  return absl::StrCat(R"(name: single
entrypoint: /opt/plugins/libmlp.so
hyperparameters:
  global_batch_size: 32
  learning_rate: 0.01
resources:
  slots_per_trial: )",
                      slots, R"(
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: )",
                      batches, R"(
max_restarts: )",
                      max_restarts, R"(
reproducibility:
  experiment_seed: 7
)");
}

class OrchestratorTest : public ::testing::Test {
 protected:
  OrchestratorTest() : orchestrator_(Options(folder_.path()), outbox_, clock_) {}

  static OrchestratorOptions Options(const std::string& state_dir) {
    OrchestratorOptions options;
    options.state_dir = state_dir;
    options.agent_timeout_seconds = 15;
    options.start_timeout_seconds = 30;
    return options;
  }

  // ---- playing agents

  // Delivers `message` from the connection `agent_id`, sent as `sender` (the agent itself unless
  // given). Returns the message's id.
  uint64_t FromAgent(const std::string& agent_id, ControlMessage message,
                     uint64_t correlation_id = 0, const std::string& sender = "") {
    DecodedControl decoded;
    decoded.version = ControlVersion{kControlProtocolMajor, kControlProtocolMinor};
    decoded.header =
        ControlHeader{++last_agent_message_id_, correlation_id, sender.empty() ? agent_id : sender};
    decoded.message = std::move(message);
    orchestrator_.OnAgentMessage(agent_id, decoded);
    return decoded.header.message_id;
  }

  static AgentHello Hello(const std::string& agent_id, uint32_t slots) {
    AgentHello hello;
    hello.agent_id = agent_id;
    hello.cohort_version = "test";
    hello.hostname = "host-of-" + agent_id;
    for (uint32_t index = 0; index < slots; ++index) {
      hello.slots.push_back(AgentSlot{index, SlotKind::kCpu, -1, "cpu"});
    }
    return hello;
  }

  // Registers the agent with `slots` CPU slots; returns the hello's message id.
  uint64_t Register(const std::string& agent_id, uint32_t slots) {
    return FromAgent(agent_id, Hello(agent_id, slots));
  }

  // The messages of type T sent to `agent_id` so far, oldest first.
  template <class T>
  std::vector<T> SentTo(const std::string& agent_id) const {
    std::vector<T> found;
    for (const SentMessage& sent : outbox_.sent()) {
      if (sent.agent_id != agent_id) continue;
      if (const auto* message = std::get_if<T>(&sent.message)) found.push_back(*message);
    }
    return found;
  }

  std::vector<StartTask> StartTasksSentTo(const std::string& agent_id) const {
    return SentTo<StartTask>(agent_id);
  }

  std::vector<StartTask> AllStartTasks() const {
    std::vector<StartTask> found;
    for (const SentMessage& sent : outbox_.sent()) {
      if (const auto* start = std::get_if<StartTask>(&sent.message)) found.push_back(*start);
    }
    return found;
  }

  // The agent that was sent the StartTask of `task_id` (the task runs on one agent here).
  std::string AgentOf(uint64_t task_id) const {
    for (const SentMessage& sent : outbox_.sent()) {
      const auto* start = std::get_if<StartTask>(&sent.message);
      if (start != nullptr && start->task_id == task_id) return sent.agent_id;
    }
    ADD_FAILURE() << "no StartTask was sent for task " << task_id;
    return "";
  }

  StartTask StartOf(uint64_t task_id) const {
    for (const StartTask& start : AllStartTasks()) {
      if (start.task_id == task_id) return start;
    }
    ADD_FAILURE() << "no StartTask was sent for task " << task_id;
    return StartTask{};
  }

  // The agent accepts the task's StartTask (Ack correlated with it).
  void Accept(uint64_t task_id) {
    for (const SentMessage& sent : outbox_.sent()) {
      const auto* start = std::get_if<StartTask>(&sent.message);
      if (start != nullptr && start->task_id == task_id) {
        FromAgent(sent.agent_id, Ack{}, sent.message_id);
        return;
      }
    }
    ADD_FAILURE() << "no StartTask was sent for task " << task_id;
  }

  void Running(uint64_t task_id) {
    FromAgent(AgentOf(task_id), TaskStatus{task_id, TaskState::kRunning, {}});
  }

  // Every rank of the task exits with `exit_code`.
  void ExitAll(uint64_t task_id, int32_t exit_code) {
    const StartTask start = StartOf(task_id);
    for (const RankAssignment& rank : start.ranks) {
      TaskExit exit;
      exit.task_id = task_id;
      exit.rank = static_cast<int32_t>(rank.rank);
      exit.exit_code = exit_code;
      FromAgent(AgentOf(task_id), exit);
    }
  }

  // A report of `kind` from `task_id`'s worker at `batches`.
  void Report(uint64_t task_id, ReportKind kind, uint64_t batches, std::vector<NamedValue> metrics,
              double records_per_second = 0) {
    MetricsReport report;
    report.trial_id = StartOf(task_id).trial_id;
    report.kind = kind;
    report.batches = batches;
    report.records = batches * 16;
    report.unix_time = clock_.UnixSeconds();
    report.metrics = std::move(metrics);
    report.records_per_second = records_per_second;
    FromAgent(AgentOf(task_id), TaskMetricsReport{task_id, report});
  }

  // A training report at `batches` with a throughput.
  void Train(uint64_t task_id, uint64_t batches, double records_per_second) {
    Report(task_id, ReportKind::kTraining, batches, {{"loss", 0.5}}, records_per_second);
  }

  // A validation report at `batches` carrying the searcher metric.
  void Validate(uint64_t task_id, uint64_t batches, double metric) {
    Report(task_id, ReportKind::kValidation, batches,
           {{"validation_loss", metric}, {"accuracy", 1 - metric}});
  }

  void Checkpoint(uint64_t task_id, const std::string& checkpoint_id, uint64_t batches) {
    TaskCheckpointReport report;
    report.task_id = task_id;
    report.trial_id = StartOf(task_id).trial_id;
    report.checkpoint_id = checkpoint_id;
    report.batches = batches;
    report.records = batches * 16;
    report.bytes = 1024;
    FromAgent(AgentOf(task_id), report);
  }

  // The task trains to its target: accepted, running, validated there, every rank exits 0.
  void TrainToTarget(uint64_t task_id, double metric) {
    const uint64_t target = TargetOf(StartOf(task_id));
    Accept(task_id);
    Running(task_id);
    Validate(task_id, target, metric);
    ExitAll(task_id, 0);
  }

  // searcher.max_length (batches) of the StartTask's config.
  static uint64_t TargetOf(const StartTask& start) {
    absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(start.worker.config_yaml);
    EXPECT_TRUE(config.ok()) << config.status();
    return config.ok() ? config->searcher.max_length.value : 0;
  }

  // ---- playing clients

  // Submits the config; returns the experiment id (0 and a failure when refused).
  uint64_t Submit(const std::string& yaml) {
    const ClientMessage reply = orchestrator_.OnClientRequest(SubmitExperiment{yaml});
    const auto* submitted = std::get_if<ExperimentSubmitted>(&reply);
    if (submitted == nullptr) {
      ADD_FAILURE() << "submission refused: "
                    << (std::holds_alternative<ClientError>(reply)
                            ? std::get<ClientError>(reply).message
                            : std::string(ClientMessageName(reply)));
      return 0;
    }
    return submitted->experiment_id;
  }

  ClientError SubmitRefused(const std::string& yaml) {
    const ClientMessage reply = orchestrator_.OnClientRequest(SubmitExperiment{yaml});
    const auto* error = std::get_if<ClientError>(&reply);
    if (error == nullptr) {
      ADD_FAILURE() << "expected ClientError, got " << ClientMessageName(reply);
      return ClientError{};
    }
    return *error;
  }

  ExperimentDescription Describe(uint64_t experiment_id) {
    const ClientMessage reply = orchestrator_.OnClientRequest(DescribeExperiment{experiment_id});
    const auto* description = std::get_if<ExperimentDescription>(&reply);
    if (description == nullptr) {
      ADD_FAILURE() << "expected ExperimentDescription, got " << ClientMessageName(reply);
      return ExperimentDescription{};
    }
    return *description;
  }

  TrialSummary TrialOf(uint64_t experiment_id, uint64_t trial_id) {
    for (const TrialSummary& trial : Describe(experiment_id).trials) {
      if (trial.trial_id == trial_id) return trial;
    }
    ADD_FAILURE() << "experiment " << experiment_id << " has no trial " << trial_id;
    return TrialSummary{};
  }

  std::vector<TaskRow> Tasks() {
    const ClientMessage reply = orchestrator_.OnClientRequest(ListTasks{});
    const auto* table = std::get_if<TaskListing>(&reply);
    if (table == nullptr) {
      ADD_FAILURE() << "expected TaskListing, got " << ClientMessageName(reply);
      return {};
    }
    return table->tasks;
  }

  std::vector<TaskRow> TasksIn(TaskRowState state) {
    std::vector<TaskRow> rows;
    for (const TaskRow& row : Tasks()) {
      if (row.state == state) rows.push_back(row);
    }
    return rows;
  }

  // Tasks placed on agents (starting, running or stopping).
  size_t PlacedTaskCount() { return Tasks().size() - TasksIn(TaskRowState::kQueued).size(); }

  std::vector<AgentRow> Agents() {
    const ClientMessage reply = orchestrator_.OnClientRequest(ListAgents{});
    const auto* table = std::get_if<AgentTable>(&reply);
    if (table == nullptr) {
      ADD_FAILURE() << "expected AgentTable, got " << ClientMessageName(reply);
      return {};
    }
    return table->agents;
  }

  TrialLogs Logs(uint64_t trial_id, int32_t rank, uint64_t after_sequence, uint32_t max_lines) {
    const ClientMessage reply =
        orchestrator_.OnClientRequest(TrialLogsRequest{trial_id, rank, after_sequence, max_lines});
    const auto* logs = std::get_if<TrialLogs>(&reply);
    if (logs == nullptr) {
      ADD_FAILURE() << "expected TrialLogs, got " << ClientMessageName(reply);
      return TrialLogs{};
    }
    return *logs;
  }

  std::string ExperimentFolder(uint64_t experiment_id) const {
    return absl::StrCat(folder_.path(), "/experiments/", experiment_id);
  }

  TempFolder folder_;
  ManualClock clock_;
  RecordingOutbox outbox_;
  Orchestrator orchestrator_;
  uint64_t last_agent_message_id_ = 0;
};

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

  // Nothing was created.
  const ClientMessage list = orchestrator_.OnClientRequest(ListExperiments{});
  ASSERT_TRUE(std::holds_alternative<ExperimentList>(list));
  EXPECT_THAT(std::get<ExperimentList>(list).experiments, IsEmpty());
  EXPECT_THAT(Tasks(), IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(ExperimentFolder(1)));
}

// ---------------------------------------------------------------- failures

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

  // agent-1 is shutting down: the trial waits for another agent.
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
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
  EXPECT_THAT(StartTasksSentTo("agent-1"), SizeIs(1));
  EXPECT_TRUE(Agents().at(0).connected);
  EXPECT_EQ(Agents().at(0).busy_slots, 0u);
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

  TrialLogs all = Logs(trial_id, -1, 0, 0);
  EXPECT_EQ(all.trial_id, trial_id);
  ASSERT_THAT(all.lines, SizeIs(4));
  for (size_t index = 0; index < all.lines.size(); ++index) {
    EXPECT_EQ(all.lines[index].sequence, index + 1);
    EXPECT_EQ(all.lines[index].attempt, 0u);
  }
  EXPECT_EQ(all.lines[2].text, "rank one warns");
  EXPECT_TRUE(all.lines[2].stderr_stream);
  EXPECT_FALSE(all.trial_ended);

  const TrialLogs after = Logs(trial_id, -1, 2, 0);
  ASSERT_THAT(after.lines, SizeIs(2));
  EXPECT_EQ(after.lines[0].sequence, 3u);
  EXPECT_EQ(after.lines[1].text, "rank zero ends");

  const TrialLogs rank_one = Logs(trial_id, 1, 0, 0);
  ASSERT_THAT(rank_one.lines, SizeIs(2));
  EXPECT_EQ(rank_one.lines[0].sequence, 2u);
  EXPECT_EQ(rank_one.lines[1].sequence, 3u);
  for (const TrialLogLine& line : rank_one.lines) EXPECT_EQ(line.rank, 1u);

  const TrialLogs first_two = Logs(trial_id, -1, 0, 2);
  ASSERT_THAT(first_two.lines, SizeIs(2));
  EXPECT_EQ(first_two.lines[1].sequence, 2u);

  Validate(start.task_id, 10, 0.25);
  ExitAll(start.task_id, 0);
  ASSERT_EQ(Describe(experiment_id).summary.state, ExperimentState::kCompleted);

  // Ended, but a reply cut short by max_lines has not delivered everything yet.
  const TrialLogs partial = Logs(trial_id, -1, 0, 2);
  EXPECT_THAT(partial.lines, SizeIs(2));
  EXPECT_FALSE(partial.trial_ended);
  const TrialLogs rest = Logs(trial_id, -1, partial.lines.back().sequence, 2);
  ASSERT_THAT(rest.lines, SizeIs(2));
  EXPECT_EQ(rest.lines.back().sequence, 4u);
  EXPECT_TRUE(rest.trial_ended);
  EXPECT_TRUE(Logs(trial_id, -1, 4, 0).trial_ended);

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
  absl::StatusOr<std::string> metrics = ReadWholeFile(trial_folder + "/metrics.jsonl");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(*metrics, HasSubstr("validation_loss"));
  absl::StatusOr<std::string> record = ReadWholeFile(experiment_folder + "/experiment.json");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_THAT(*record, HasSubstr(R"("state":"COMPLETED")"));
}

// ---------------------------------------------------------------- adaptive search

TEST_F(OrchestratorTest, AdaptiveAshaRunsToCompletionResumingPromotedTrials) {
  Register("agent-1", 4);
  const std::string yaml = R"(name: asha
entrypoint: /opt/plugins/libmlp.so
hyperparameters:
  global_batch_size: 16
  learning_rate:
    type: double
    minval: 0.001
    maxval: 0.1
searcher:
  name: adaptive_asha
  metric: validation_loss
  max_trials: 4
  max_rungs: 2
  divisor: 2
  max_length:
    batches: 8
reproducibility:
  experiment_seed: 11
)";
  const uint64_t experiment_id = Submit(yaml);
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

// ---------------------------------------------------------------- embedding (cohort run)

// The file's text; "" when it cannot be read.
std::string Slurp(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// A checkpoint of `trial_id` at `batches`, whole in `storage`.
void WriteCheckpoint(CheckpointStorage& storage, uint64_t batches, uint64_t trial_id = 1) {
  CheckpointInfo info;
  info.id = absl::StrCat("trial-", trial_id, "-batch-", batches);
  info.trial_id = trial_id;
  info.batches_trained = batches;
  ASSERT_TRUE(storage.Write(info, {{"parameters", std::string(64, 'p')}}).ok());
}

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

TEST_F(OrchestratorTest, ResumedLocalSubmissionContinuesFromTheLatestCheckpoint) {
  Register("agent-1", 1);
  const std::string run = absl::StrCat(folder_.path(), "/stopped-run");
  absl::StatusOr<RunFolder> created = RunFolder::Create(run);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_TRUE(created->PrepareTrial(1).ok());
  // What the stopped run left: reports up to batch 30, checkpoints at 10 and 20.
  for (const auto& [kind, batches, metric] :
       std::vector<std::tuple<ReportKind, uint64_t, double>>{{ReportKind::kValidation, 10, 0.5},
                                                             {ReportKind::kValidation, 20, 0.3},
                                                             {ReportKind::kTraining, 30, 0.2}}) {
    MetricsReport report{1, kind, batches, batches * 32, 1.7e9, {{"validation_loss", metric}}};
    ASSERT_TRUE(AppendLine(created->metrics_path(1), MetricsReportJson(report)).ok());
  }
  const std::string root = absl::StrCat(run, "/checkpoints");
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage = OpenSharedFsStorage(root);
  ASSERT_TRUE(storage.ok()) << storage.status();
  WriteCheckpoint(**storage, 10);
  WriteCheckpoint(**storage, 20);
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(SingleYaml(1, 100, 0));
  ASSERT_TRUE(config.ok()) << config.status();

  const ClientMessage reply =
      orchestrator_.SubmitLocal(LocalSubmission{*config, *created, root, /*resume=*/true});
  ASSERT_TRUE(std::holds_alternative<ExperimentSubmitted>(reply));
  const uint64_t experiment_id = std::get<ExperimentSubmitted>(reply).experiment_id;
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  EXPECT_EQ(start.worker.resume_checkpoint_id, "trial-1-batch-20");
  const std::string metrics = Slurp(created->metrics_path(1));
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
  EXPECT_THAT(log, HasSubstr("[rank 0] batch 5\n[agent] warning: rank 0 has sent no heartbeat"));
  const TrialLogs logs = Logs(start.trial_id, -1, 0, 10);
  ASSERT_THAT(logs.lines, SizeIs(2));
  EXPECT_EQ(logs.lines[1].text, "[agent] warning: rank 0 has sent no heartbeat");
  EXPECT_TRUE(logs.lines[1].stderr_stream);
}

TEST_F(OrchestratorTest, ProgressCountsTheTrialsBatches) {
  Register("agent-1", 1);
  const uint64_t experiment_id = Submit(SingleYaml(1, 100));
  const StartTask start = StartTasksSentTo("agent-1").at(0);
  Accept(start.task_id);
  Running(start.task_id);
  FromAgent("agent-1", TaskProgress{start.task_id, {start.trial_id, 37, 100, 37 * 32, 0.5, 900}});
  EXPECT_EQ(TrialOf(experiment_id, start.trial_id).batches_trained, 37u);
  EXPECT_THAT(SentTo<ErrorReply>("agent-1"), IsEmpty());
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
  DecodedControl hello;
  hello.version = ControlVersion{kControlProtocolMajor, kControlProtocolMinor};
  hello.header = ControlHeader{1, 0, "agent-1"};
  hello.message = Hello("agent-1", 2);
  restarted.OnAgentMessage("agent-1", hello);

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
  const std::string path = folder.path() + "/experiment.json";
  ASSERT_TRUE(WriteFileAtomically(path, record.ToJson()).ok());

  absl::StatusOr<ExperimentRecord> read = ReadExperimentRecord(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->ToJson(), record.ToJson());
  ASSERT_THAT(read->trials, SizeIs(2));
  EXPECT_EQ(read->trials[0].checkpoints[0].metric, 0.5);
  EXPECT_FALSE(read->trials[0].checkpoints[1].metric.has_value());

  EXPECT_TRUE(absl::IsNotFound(ReadExperimentRecord(folder.path() + "/none.json").status()));
  ASSERT_TRUE(WriteFileAtomically(path, R"({"name":"x","state":"PAUSED"})").ok());
  EXPECT_THAT(ReadExperimentRecord(path).status().message(), HasSubstr("state"));
  ASSERT_TRUE(WriteFileAtomically(path, "[1, 2").ok());
  EXPECT_THAT(ReadExperimentRecord(path).status().message(), HasSubstr(path));
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

}  // namespace
}  // namespace cohort
