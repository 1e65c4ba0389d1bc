// What the Orchestrator's tests share: they drive it directly, playing the agents
// (OnAgentMessage), the clients (OnClientRequest) and time (a manual Clock with Tick), and read
// what it sends from a recording AgentOutbox (OrchestratorTest).
#ifndef COHORT_TEST_ORCHESTRATOR_ORCHESTRATOR_FIXTURE_H_
#define COHORT_TEST_ORCHESTRATOR_ORCHESTRATOR_FIXTURE_H_

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
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/experiment_record_reader.h"
#include "runtime/record/run_folder.h"
#include "test/common/manual_clock.h"
#include "test/common/temp_folder.h"

namespace cohort::orchestrator_test {

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
inline std::string GridYaml(uint64_t batches) {
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
inline std::string SingleYaml(uint32_t slots, uint64_t batches = 10, uint32_t max_restarts = 5) {
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

// Four adaptive_asha trials of 1 slot over a learning rate, in 2 rungs to 8 batches.
inline std::string AshaYaml() {
  return R"(name: asha
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
}

class OrchestratorTest : public ::testing::Test {
 protected:
  // With a provisioner, tasks go on its jobs' agents (agent_provisioner.h); it must outlive the
  // fixture. Its commands run at once, unless `in_background`.
  explicit OrchestratorTest(AgentProvisioner* provisioner = nullptr, bool in_background = false)
      : orchestrator_(Options(folder_.path(), provisioner, in_background), outbox_, clock_) {}

  static OrchestratorOptions Options(const std::string& state_dir,
                                     AgentProvisioner* provisioner = nullptr,
                                     bool in_background = false) {
    OrchestratorOptions options;
    options.provisioner = provisioner;
    options.provisioner_in_background = in_background;
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

  // `agent_id`'s first hello, with `slots` CPU slots, to another orchestrator (a restarted one).
  static void HelloTo(Orchestrator& orchestrator, const std::string& agent_id, uint32_t slots) {
    DecodedControl hello;
    hello.version = ControlVersion{kControlProtocolMajor, kControlProtocolMinor};
    hello.header = ControlHeader{1, 0, agent_id};
    hello.message = Hello(agent_id, slots);
    orchestrator.OnAgentMessage(agent_id, hello);
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

  // A single-trial experiment of `batches` at `slots` slots on agent-1, registered with that many,
  // its task accepted and running: the experiment's id, and the task's StartTask.
  std::pair<uint64_t, StartTask> RunOneTrial(uint64_t batches, uint32_t slots = 1) {
    Register("agent-1", slots);
    const uint64_t experiment_id = Submit(SingleYaml(slots, batches));
    const std::vector<StartTask> starts = StartTasksSentTo("agent-1");
    EXPECT_THAT(starts, SizeIs(1));
    if (starts.empty()) return {experiment_id, StartTask{}};
    Accept(starts[0].task_id);
    Running(starts[0].task_id);
    return {experiment_id, starts[0]};
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

// The file's text; "" when it cannot be read.
inline std::string Slurp(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// A checkpoint of `trial_id` at `batches`, whole in `storage`.
inline void WriteCheckpoint(CheckpointStorage& storage, uint64_t batches, uint64_t trial_id = 1) {
  CheckpointInfo info;
  info.id = absl::StrCat("trial-", trial_id, "-batch-", batches);
  info.trial_id = trial_id;
  info.batches_trained = batches;
  ASSERT_TRUE(storage.Write(info, {{"parameters", std::string(64, 'p')}}).ok());
}

// The reports in trial `trial_id`'s metrics.jsonl in `experiment_folder`, in file order, each as
// its kind and batch: "T20" (training at batch 20), "V40" (validation at batch 40).
inline std::vector<std::string> RecordedReports(const std::string& experiment_folder,
                                                uint64_t trial_id) {
  std::vector<std::string> reports;
  const std::string text =
      Slurp(absl::StrCat(experiment_folder, "/trials/", trial_id, "/metrics.jsonl"));
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    absl::StatusOr<MetricsReport> report = ParseMetricsReportJson(line, trial_id);
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) continue;
    reports.push_back(
        absl::StrCat(report->kind == ReportKind::kTraining ? "T" : "V", report->batches));
  }
  return reports;
}

}  // namespace cohort::orchestrator_test

#endif  // COHORT_TEST_ORCHESTRATOR_ORCHESTRATOR_FIXTURE_H_
