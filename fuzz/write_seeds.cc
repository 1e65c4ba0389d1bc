// Writes the binary seed corpora of the fuzz targets: one valid input per message type, a few
// manifests and a few orchestrator and rendezvous conversations, under <corpus root>/<target>/. Run
// it after a schema change (scripts/fuzz --write-seeds) and commit what changed; the config seeds
// are plain YAML files kept by hand.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/message_script.h"
#include "runtime/checkpoint/manifest.h"
#include "runtime/client/client_messages.h"
#include "runtime/control/control_messages.h"
#include "runtime/control/worker_messages.h"

namespace cohort::fuzz {
namespace {

struct Seed {
  std::string name;
  std::string bytes;
};

void WriteSeeds(const std::filesystem::path& folder, const std::vector<Seed>& seeds) {
  std::filesystem::create_directories(folder);
  for (const Seed& seed : seeds) {
    std::ofstream(folder / seed.name, std::ios::binary) << seed.bytes;
  }
  std::printf("%zu seeds in %s\n", seeds.size(), folder.c_str());
}

std::vector<Seed> WorkerSeeds() {
  MetricsReport metrics{1, ReportKind::kValidation, 40, 1280, 1.7e9, {{"validation_loss", 0.5}}};
  MetricsReport training{1,
                         ReportKind::kTraining,
                         20,
                         640,
                         1.7e9,
                         {{"loss", 0.7}},
                         {{"compute", 0.5}, {"exchange_wait", 0.125}},
                         1280.0};
  return {
      {"hello", EncodeWorkerMessage(WorkerHello{1, 0, 2, 1, 0})},
      {"metrics", EncodeWorkerMessage(metrics)},
      {"training_metrics", EncodeWorkerMessage(training)},
      {"progress", EncodeWorkerMessage(ProgressReport{1, 20, 40, 640, 0.25, 3000.0})},
      {"checkpoint", EncodeWorkerMessage(CheckpointReport{1, "trial-1-batch-20", 20, 640, 4096})},
      {"finished", EncodeWorkerMessage(TrialFinished{1, TrialExit::kFailed, 9, "out of memory"})},
      {"rendezvous_set", EncodeWorkerMessage(RendezvousSet{"gloo/rank/1", "127.0.0.1:4000"})},
      {"rendezvous_get", EncodeWorkerMessage(RendezvousGet{"gloo/rank/0", 42})},
      {"heartbeat", EncodeWorkerMessage(Heartbeat{1, 1, 1.7e9, 250})},
      {"stop", EncodeWorkerCommand(StopCommand{"searcher closed the trial"})},
      {"rendezvous_value", EncodeWorkerCommand(RendezvousValue{42, "gloo/rank/0", true, "addr"})},
  };
}

AgentHello Hello(const std::string& agent_id, uint32_t slots) {
  AgentHello hello{agent_id, "0.1.0", "host-" + agent_id, {}, {}};
  for (uint32_t index = 0; index < slots; ++index) {
    hello.slots.push_back(AgentSlot{index, SlotKind::kCpu, -1, "cpu"});
  }
  return hello;
}

// Agent messages from "node-0" about task 1 (trial 1, experiment 1), the ids a fresh
// orchestrator gives its first experiment's first task.
struct AgentSpeaker {
  std::string agent_id;
  uint64_t last_id = 0;

  std::string Say(const ControlMessage& message, uint64_t correlation_id = 0) {
    return EncodeControlMessage(ControlHeader{++last_id, correlation_id, agent_id}, message);
  }
};

std::vector<Seed> ControlSeeds() {
  AgentSpeaker agent{"node-0"};
  StartTask start;
  start.task_id = 1;
  start.trial_id = 1;
  start.experiment_id = 1;
  start.worker.plugin_path = "/opt/plugins/libmlp.so";
  start.worker.config_yaml = "name: x\n";
  start.ranks = {RankAssignment{0, 0, 0}, RankAssignment{1, 1, 1}};
  start.world_size = 2;
  start.cross_size = 1;
  start.environment = {{"OMP_NUM_THREADS", "1"}};
  AgentHello hello = Hello("node-0", 2);
  hello.tasks.push_back(TaskEntry{1, 1, 1, TaskState::kRunning, {0, 1}, {0, 1}});
  return {
      {"hello", agent.Say(hello)},
      {"heartbeat", agent.Say(AgentHeartbeat{"node-0", 1.7e9, 2, {1}})},
      {"start_task", EncodeControlMessage(ControlHeader{1, 0, "orchestrator"}, start)},
      {"kill_task", EncodeControlMessage(ControlHeader{2, 0, "orchestrator"},
                                         KillTask{1, "experiment killed", 30})},
      {"task_status", agent.Say(TaskStatus{1, TaskState::kRunning, {{0, 100}, {1, 101}}})},
      {"task_exit", agent.Say(TaskExit{1, 1, 0, 9, "killed", false})},
      {"metrics", agent.Say(TaskMetricsReport{1,
                                              {1,
                                               ReportKind::kTraining,
                                               10,
                                               320,
                                               1.7e9,
                                               {{"loss", 0.7}},
                                               {{"compute", 0.25}},
                                               640.0}})},
      {"checkpoint", agent.Say(TaskCheckpointReport{
                         1, 1, "trial-1-batch-10", 10, 320, 4096, {{"framework", "cohort"}}})},
      {"log_batch", agent.Say(LogBatch{1, {{0, LogStream::kStderr, 1.7e9, "warning: x"}}})},
      {"task_list_request",
       EncodeControlMessage(ControlHeader{3, 0, "orchestrator"}, TaskListRequest{})},
      {"task_list",
       agent.Say(TaskList{{TaskEntry{1, 1, 1, TaskState::kExited, {0, 1}, {0, 1}}}}, 3)},
      {"ack", EncodeControlMessage(ControlHeader{4, 1, "orchestrator"}, Ack{})},
      {"error_reply", agent.Say(ErrorReply{ControlErrorCode::kUnspecified, "unknown task"}, 2)},
      {"progress", agent.Say(TaskProgress{1, {1, 20, 40, 640, 0.3, 2500.0}})},
  };
}

ClientHeader Request(uint64_t id) { return ClientHeader{id, 0, "cohort-cli"}; }
ClientHeader Reply(uint64_t id) { return ClientHeader{id, id, "orchestrator"}; }

std::vector<Seed> ClientSeeds() {
  return {
      {"submit", EncodeClientMessage(Request(1), SubmitExperiment{"name: x\nentrypoint: /p.so\n"})},
      {"list", EncodeClientMessage(Request(2), ListExperiments{})},
      {"describe", EncodeClientMessage(Request(3), DescribeExperiment{1})},
      {"kill", EncodeClientMessage(Request(4), KillExperiment{1})},
      {"list_tasks", EncodeClientMessage(Request(5), ListTasks{})},
      {"list_agents", EncodeClientMessage(Request(6), ListAgents{})},
      {"trial_logs", EncodeClientMessage(Request(7), TrialLogsRequest{1, -1, 0, 100})},
      {"submitted", EncodeClientMessage(Reply(1), ExperimentSubmitted{1, {"a warning"}})},
      {"ack", EncodeClientMessage(Reply(4), ClientAck{})},
      {"error", EncodeClientMessage(Reply(3), ClientError{ClientErrorCode::kNotFound, "no 9"})},
  };
}

std::vector<Seed> ManifestSeeds() {
  CheckpointInfo info;
  info.id = "trial-1-batch-20";
  info.trial_id = 1;
  info.batches_trained = 20;
  info.records_trained = 640;
  info.config_fingerprint = "3f2a";
  info.abi_major = 1;
  info.created_unix_ms = 1700000000000;
  CheckpointInfo empty = info;
  info.files = {{"model.bin", 4096, 0x1234abcd}, {"optimizer.bin", 8192, 0xdeadbeef}};
  return {{"two_files", EncodeManifest(info)}, {"no_files", EncodeManifest(empty)}};
}

std::vector<Seed> OrchestratorSeeds() {
  // A whole trial: node-0 registers 2 slots, the task starts, reports and finishes.
  AgentSpeaker node{"node-0"};
  const std::vector<ScriptStep> finished = {
      AgentStep(0, node.Say(Hello("node-0", 2))),
      TickStep(1),
      AgentStep(0, node.Say(TaskStatus{1, TaskState::kRunning, {{0, 100}, {1, 101}}})),
      AgentStep(0, node.Say(TaskProgress{1, {1, 20, 40, 640, 0.3, 2500.0}})),
      AgentStep(0, node.Say(TaskMetricsReport{
                       1, {1, ReportKind::kTraining, 20, 640, 1.7e9, {{"loss", 0.7}}}})),
      AgentStep(0, node.Say(TaskCheckpointReport{1, 1, "trial-1-batch-20", 20, 640, 4096, {}})),
      AgentStep(0, node.Say(LogBatch{1, {{0, LogStream::kStdout, 1.7e9, "batch 20"}}})),
      AgentStep(0,
                node.Say(TaskMetricsReport{
                    1, {1, ReportKind::kValidation, 40, 1280, 1.7e9, {{"validation_loss", 0.5}}}})),
      AgentStep(0, node.Say(TaskExit{1, 0, 0, 0, "", false})),
      AgentStep(0, node.Say(TaskExit{1, 1, 0, 0, "", false})),
      TickStep(1),
  };
  // A rank killed after a checkpoint: the trial restarts; then the agent falls silent.
  AgentSpeaker crashed{"node-0"};
  const std::vector<ScriptStep> restarted = {
      AgentStep(0, crashed.Say(Hello("node-0", 2))),
      TickStep(1),
      AgentStep(0, crashed.Say(TaskStatus{1, TaskState::kRunning, {{0, 100}, {1, 101}}})),
      AgentStep(0, crashed.Say(TaskCheckpointReport{1, 1, "trial-1-batch-10", 10, 320, 64, {}})),
      AgentStep(0, crashed.Say(TaskExit{1, 1, 0, 9, "killed by signal 9", false})),
      AgentStep(0, crashed.Say(TaskExit{1, 0, 1, 0, "connection closed", true})),
      TickStep(1),
      AgentStep(0, crashed.Say(AgentHeartbeat{"node-0", 1.7e9, 2, {2}})),
      TickStep(40),
  };
  // Two agents of one slot each, and every client request along the way.
  AgentSpeaker first{"node-0"}, second{"node-1"};
  uint64_t request = 0;
  const std::vector<ScriptStep> clients = {
      AgentStep(0, first.Say(Hello("node-0", 1))),
      AgentStep(1, second.Say(Hello("node-1", 1))),
      TickStep(1),
      ClientStep(EncodeClientMessage(Request(++request), ListAgents{})),
      ClientStep(EncodeClientMessage(Request(++request), ListTasks{})),
      ClientStep(EncodeClientMessage(Request(++request), ListExperiments{})),
      ClientStep(EncodeClientMessage(Request(++request), DescribeExperiment{1})),
      ClientStep(EncodeClientMessage(Request(++request), TrialLogsRequest{1, -1, 0, 100})),
      ClientStep(EncodeClientMessage(Request(++request), KillExperiment{1})),
      TickStep(1),
      AgentStep(0, first.Say(TaskExit{1, 0, 0, 15, "", true})),
      AgentStep(1, second.Say(TaskExit{1, 1, 0, 15, "", true})),
      TickStep(1),
  };
  return {{"trial_finished", WriteScript(finished)},
          {"rank_killed", WriteScript(restarted)},
          {"two_agents_and_clients", WriteScript(clients)}};
}

// Rendezvous scripts (rendezvous_fuzzer.cc): tag 3p + 0 is a message from peer p, 3(t-1) + 1
// starts or ends task t, 3(t-1) + 2 is a burst of sets for task t.
std::vector<Seed> RendezvousSeeds() {
  const auto message = [](uint8_t peer, const WorkerMessage& m) {
    return ScriptStep{static_cast<uint8_t>(3 * peer), EncodeWorkerMessage(m)};
  };
  const auto toggle = [](uint8_t task) {
    return ScriptStep{static_cast<uint8_t>(3 * (task - 1) + 1), ""};
  };
  // Two ranks of task 1 meet, then the task ends.
  const std::vector<ScriptStep> meet = {
      toggle(1),
      message(0, RendezvousSet{"task-1/attempt-0/rank-0", "10.0.0.1:29500"}),
      message(1, RendezvousSet{"task-1/attempt-0/rank-1", "10.0.0.2:29500"}),
      message(0, RendezvousGet{"task-1/attempt-0/rank-1", 1}),
      message(1, RendezvousGet{"task-1/attempt-0/rank-0", 2}),
      toggle(1),
  };
  // Sets no live task owns, a respelled prefix, and a message this endpoint does not serve.
  const std::vector<ScriptStep> strangers = {
      toggle(1),
      message(0, RendezvousSet{"task-3/rank-0", "x"}),
      message(0, RendezvousSet{"task-01/rank-0", "x"}),
      message(0, RendezvousSet{"no-task", "x"}),
      message(2, WorkerHello{1, 0, 2, 1, 0}),
  };
  // 66,000 sets for task 2: past the 65,536 keys a task may hold.
  std::string burst = {static_cast<char>(33000 & 0xff), static_cast<char>(33000 >> 8)};
  burst += "10.0.0.3:29500";
  const std::vector<ScriptStep> bounded = {toggle(2), ScriptStep{5, burst}, toggle(2)};
  return {{"two_ranks_meet", WriteScript(meet)},
          {"strangers", WriteScript(strangers)},
          {"burst_past_the_bound", WriteScript(bounded)}};
}

}  // namespace
}  // namespace cohort::fuzz

int main(int argc, char** argv) {
  using namespace cohort::fuzz;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  WriteSeeds(root / "worker_message", WorkerSeeds());
  WriteSeeds(root / "control_message", ControlSeeds());
  WriteSeeds(root / "client_message", ClientSeeds());
  WriteSeeds(root / "manifest", ManifestSeeds());
  WriteSeeds(root / "orchestrator", OrchestratorSeeds());
  WriteSeeds(root / "rendezvous", RendezvousSeeds());
  return 0;
}
